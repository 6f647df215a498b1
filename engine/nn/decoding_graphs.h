// The two graphs a sequence-to-sequence model decodes with (SequenceDecoder runs them), meeting by
// their inputs' names:
//   encoder  inputs: the batch's, as a data source fills them (the sources and their lengths).
//            Marked outputs: what the step graph reads of the sources, "memory" in order.
//   step     one output position. Inputs: "tokens" i32 [batch], the tokens chosen last ([BOS]
//            at the first position); an input named as an encoder input gets its values (the
//            source lengths); "memory.<i>" gets the encoder's output i; "state.<i>" gets the
//            step's own output 1 + i of the position before (zeros at the first).
//            Marked outputs: the scores [rows, vocabulary] first, then each state's next value,
//            then with a beam above 1 the attention's probabilities f32 [rows, 1, sources].
// With a beam of K hypotheses per sentence the step graph runs rows = batch x K (row n * K + k):
// its memory [sources * rows, ...] and per-sentence inputs [rows] repeat each sentence's K times.
#pragma once

#include <cstdint>

#include "engine/data/translation_batch.h"
#include "engine/nn/graph.h"

namespace dlbench::nn {

struct DecodingGraphs {
  Graph encoder, step;
  std::int64_t max_length = 1;  // positions a sentence may take, its [EOS] included
  data::SentenceIds ids = {};
  // Hypotheses per sentence: 1 decodes greedily. Beam search ranks its finished hypotheses by
  // score / ((length_constant + length) / (length_constant + 1))^length_alpha
  //   + coverage_weight x sum over source positions s of log(min(attention summed at s, 1))
  // (positions never attended to count 0), as GNMT's reference does.
  int beam = 1;
  struct Penalties {
    float length_alpha = 0.6f, length_constant = 5.0f, coverage_weight = 0.1f;
  } penalties;
};

}  // namespace dlbench::nn
