// SequenceDecoder: translation's inference, one token at a time. A sequence-to-sequence model gives
// two graphs (DecodingGraphs); the encoder runs once over the batch's sources, then the step graph
// runs once per output position on the tokens chosen at the position before, carrying its states
// from position to position, until every sentence has closed with [EOS] or max_length positions
// have run. With a beam of 1 every open sentence takes its highest-scoring token
// (Backend::greedy_pick); with a beam of K each keeps its K best hypotheses (Backend::beam_pick),
// the carried states following the hypotheses they continue, and at the end its best hypothesis
// by the length and coverage penalties (closed or, where max_length ended the search, not) is
// traced back through the positions.
//
// The graphs meet by their inputs' names (decoding_graphs.h). Parameters of the same name in the
// two graphs are one parameter (the token table): the step graph starts from the encoder's, and
// load_weights copies both from a trained model's graph.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/memory.h"
#include "engine/nn/decoding_graphs.h"
#include "engine/nn/trainer.h"

namespace dlbench::nn {

// The hypothesis beam search returns of one sentence's K: the k with the highest
//   scores[k] / ((c + lengths[k]) / (c + 1))^alpha + w x sum_s log(min(coverage[k, s], 1))
// (DecodingGraphs::Penalties; source positions never attended to count 0), the lower k on ties.
// coverage is [K, sources].
std::int64_t best_hypothesis(std::span<const float> scores, std::span<const std::int32_t> lengths,
                             std::span<const float> coverage,
                             const DecodingGraphs::Penalties& penalties);

class SequenceDecoder {
 public:
  // `config`'s mode is inference whatever it says.
  SequenceDecoder(DecodingGraphs graphs, backend::Backend& backend, TrainerConfig config);
  SequenceDecoder(const SequenceDecoder&) = delete;
  SequenceDecoder& operator=(const SequenceDecoder&) = delete;

  // The batch's inputs (the encoder's), which a data source fills before each decode().
  std::span<const Tensor> inputs() const { return encoder_.inputs(); }
  // Every parameter of both graphs from the one of the same name in `trained` (the model's
  // training graph), before the first decode().
  void load_weights(const Trainer& trained);

  // Translates the batch in inputs(). Waits for the device at each position (to know whether a
  // sentence is still open).
  void decode();
  // Of the last decode(): the translations, time-major i32 [max_length * batch] (position t of
  // sentence n at t * batch + n, padding after its [EOS] and after the last position run); each
  // translation's length i32 [batch] ([EOS] included); the positions run.
  Tensor tokens() const { return tokens_; }
  Tensor lengths() const { return lengths_; }
  std::int64_t positions() const { return positions_; }
  // The tokens the last decode() produced, [EOS] included, padding not (reads lengths()).
  std::int64_t produced_tokens() const;

  std::int64_t batch() const { return batch_; }
  int beam() const { return beam_; }
  const data::SentenceIds& ids() const { return ids_; }
  std::int64_t max_length() const { return max_length_; }
  // Parameters of both graphs, a shared one once.
  std::int64_t parameter_count() const;
  // The encoder's forward plus max_length positions of the step's (a bound: decoding may stop
  // sooner).
  std::int64_t forward_macs() const;
  MemoryReport memory() const;
  std::string graph_status() const;
  // The encoder's layers, then the step graph's.
  std::vector<LayerSummary> layer_summaries() const;
  const Trainer& encoder() const { return encoder_; }
  const Trainer& step() const { return step_; }

 private:
  void start();  // the encoder, and the step's inputs for the first position
  void decode_greedy();
  void decode_beam();
  // The best hypothesis of each sentence, traced back into tokens_ and lengths_.
  void trace_back();
  Tensor at(const Tensor& history, std::int64_t position) const;

  backend::Backend& backend_;
  Trainer encoder_, step_;
  std::int64_t batch_, rows_, sources_ = 0, max_length_;
  int beam_;
  DecodingGraphs::Penalties penalties_;
  data::SentenceIds ids_;
  // Which step input each source feeds: (step input, encoder input or step output) index pairs.
  std::vector<std::pair<std::size_t, std::size_t>> batch_inputs_, memory_, states_;
  std::size_t tokens_input_ = 0;
  Buffer buffer_;
  Tensor tokens_, lengths_;  // the translations
  // Each position's tokens and the rows they continue [max_length * rows] (greedy: history_ is
  // tokens_ and row_lengths_ is lengths_; no parents).
  Tensor history_, parents_;
  Tensor finished_, row_lengths_, open_;
  // Beam only: scores, the first position's scores, summed attention, the memory's repeat ids.
  Tensor scores_, first_scores_, coverage_, expand_;
  std::int64_t positions_ = 0;
};

}  // namespace dlbench::nn
