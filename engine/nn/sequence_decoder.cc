#include "engine/nn/sequence_decoder.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "engine/core/error.h"

namespace dlbench::nn {
namespace {

TrainerConfig inference(TrainerConfig config) {
  config.mode = Mode::kInfer;
  config.communicator = nullptr;  // each replica decodes its own batch
  return config;
}

// "state.3" -> 3 for prefix "state."; -1 for another name.
int numbered(const std::string& name, const std::string& prefix) {
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return -1;
  int n = 0;
  for (std::size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    n = n * 10 + (name[i] - '0');
  }
  return n;
}

// A step input fed from the encoder: the same dtype and row width, `beam` times the rows (each
// sentence's repeated for its hypotheses).
void expect_fed(const ValueInfo& from, const ValueInfo& to, int beam, const std::string& what) {
  bool same = from.dtype == to.dtype && from.shape.rank() == to.shape.rank() &&
              to.shape[0] == from.shape[0] * beam;
  for (int d = 1; same && d < from.shape.rank(); ++d) same = from.shape[d] == to.shape[d];
  DLBENCH_CHECK(same, "decoding: the step graph's input " + to.name + " is not shaped as " + what +
                          (beam > 1 ? " repeated per hypothesis" : ""));
}

}  // namespace

SequenceDecoder::SequenceDecoder(DecodingGraphs graphs, backend::Backend& backend,
                                 TrainerConfig config)
    : backend_(backend),
      encoder_(std::move(graphs.encoder), backend, inference(config)),
      step_(std::move(graphs.step), backend, inference(config)),
      max_length_(graphs.max_length),
      beam_(graphs.beam),
      penalties_(graphs.penalties),
      ids_(graphs.ids) {
  DLBENCH_CHECK(max_length_ >= 1, "decoding: max_length must be >= 1");
  DLBENCH_CHECK(
      beam_ >= 1 && beam_ <= backend::BeamParams::kMaxBeam,
      "decoding: the beam must be in [1, " + std::to_string(backend::BeamParams::kMaxBeam) + "]");
  const Graph& enc = encoder_.graph();
  const Graph& step = step_.graph();
  DLBENCH_CHECK(!step.outputs().empty(), "decoding: the step graph marks no scores");
  const ValueInfo& scores = step.value(step.outputs()[0]);
  DLBENCH_CHECK(scores.shape.rank() == 2, "decoding: the scores must be [rows, vocabulary]");
  rows_ = scores.shape[0];
  batch_ = rows_ / beam_;
  DLBENCH_CHECK(batch_ * beam_ == rows_, "decoding: the step's rows are not sentences x beam");
  // Each step input by its name (the contract in decoding_graphs.h).
  std::set<int> state_numbers;
  bool has_tokens = false;
  for (std::size_t i = 0; i < step.inputs().size(); ++i) {
    const ValueInfo& in = step.value(step.inputs()[i]);
    if (in.name == "tokens") {
      DLBENCH_CHECK(in.shape == Shape{rows_} && in.dtype == DType::kI32,
                    "decoding: tokens must be i32 [rows]");
      tokens_input_ = i, has_tokens = true;
    } else if (const int m = numbered(in.name, "memory."); m >= 0) {
      DLBENCH_CHECK(static_cast<std::size_t>(m) < enc.outputs().size(),
                    "decoding: the encoder has no output " + std::to_string(m));
      const ValueInfo& out = enc.value(enc.outputs()[static_cast<std::size_t>(m)]);
      expect_fed(out, in, beam_, "the encoder's output");
      sources_ = out.shape[0] / batch_;
      memory_.push_back({i, static_cast<std::size_t>(m)});
    } else if (const int s = numbered(in.name, "state."); s >= 0) {
      DLBENCH_CHECK(static_cast<std::size_t>(s) + 1 < step.outputs().size(),
                    "decoding: the step graph gives no next " + in.name);
      expect_fed(step.value(step.outputs()[static_cast<std::size_t>(s) + 1]), in, 1,
                 "its next value");
      states_.push_back({i, static_cast<std::size_t>(s) + 1});
      state_numbers.insert(s);
    } else {
      bool found = false;
      for (std::size_t e = 0; e < enc.inputs().size() && !found; ++e)
        if (enc.value(enc.inputs()[e]).name == in.name) {
          const ValueInfo& from = enc.value(enc.inputs()[e]);
          expect_fed(from, in, beam_, "the encoder's input");
          DLBENCH_CHECK(beam_ == 1 || (from.shape == Shape{batch_} && from.dtype == DType::kI32),
                        "decoding: a beam repeats only i32 [batch] inputs, not " + in.name);
          batch_inputs_.push_back({i, e});
          found = true;
        }
      DLBENCH_CHECK(found, "decoding: nothing feeds the step graph's input " + in.name);
    }
  }
  DLBENCH_CHECK(has_tokens, "decoding: the step graph has no tokens input");
  const std::size_t attention = beam_ > 1 ? 1 : 0;
  DLBENCH_CHECK(state_numbers.size() + 1 + attention == step.outputs().size(),
                "decoding: every state the step graph gives must be carried back");
  if (beam_ > 1) {
    DLBENCH_CHECK(sources_ >= 1, "decoding: a beam needs the encoder's memory");
    const ValueInfo& probs = step.value(step.outputs().back());
    DLBENCH_CHECK(probs.shape == (Shape{rows_, 1, sources_}) && probs.dtype == DType::kF32,
                  "decoding: a beam needs the attention's probabilities f32 [rows, 1, sources] "
                  "last");
  }
  // The step graph's shared parameters (the token table) start as the encoder's.
  step_.load_weights_by_name(encoder_, /*every=*/false);

  // One buffer: the translations, then per row (beam: the history, the parents, the scores, the
  // coverage and the memory's repeat ids).
  const bool beam = beam_ > 1;
  const std::int64_t B = batch_, R = rows_, L = max_length_;
  std::vector<std::pair<Tensor*, Shape>> parts = {
      {&tokens_, {L * B}}, {&lengths_, {B}}, {&finished_, {R}}, {&open_, {1}}};
  if (beam)
    parts.insert(parts.end(), {{&history_, {L * R}},
                               {&parents_, {L * R}},
                               {&row_lengths_, {R}},
                               {&scores_, {R}},
                               {&first_scores_, {R}},
                               {&coverage_, {R, sources_}},
                               {&expand_, {sources_ * R}}});
  std::size_t bytes = 0;
  for (const auto& [t, shape] : parts)
    bytes += align_up(static_cast<std::size_t>(shape.numel()) * 4);
  buffer_ = Buffer(backend_.allocator(), bytes);
  std::size_t offset = 0;
  for (const auto& [t, shape] : parts) {
    const bool f32 = t == &scores_ || t == &first_scores_ || t == &coverage_;
    *t = Tensor(static_cast<std::byte*>(buffer_.data()) + offset, shape,
                f32 ? DType::kF32 : DType::kI32, backend_.device());
    offset += align_up(static_cast<std::size_t>(shape.numel()) * 4);
  }
  if (!beam) {  // greedy writes its choices straight into the translations
    history_ = tokens_, row_lengths_ = lengths_;
    return;
  }
  // Each sentence starts from one hypothesis, [BOS] scoring 0: the others at -inf draw nothing
  // until the first position has expanded it.
  std::vector<float> first(static_cast<std::size_t>(R), -INFINITY);
  for (std::int64_t n = 0; n < B; ++n) first[static_cast<std::size_t>(n * beam_)] = 0.0f;
  backend_.from_host(first.data(), first_scores_);
  // Memory row t * rows + n * beam + k repeats the encoder's t * batch + n.
  std::vector<std::int32_t> repeat(static_cast<std::size_t>(sources_ * R));
  for (std::int64_t t = 0; t < sources_; ++t)
    for (std::int64_t r = 0; r < R; ++r)
      repeat[static_cast<std::size_t>(t * R + r)] = static_cast<std::int32_t>(t * B + r / beam_);
  backend_.from_host(repeat.data(), expand_);
}

std::int64_t best_hypothesis(std::span<const float> scores, std::span<const std::int32_t> lengths,
                             std::span<const float> coverage,
                             const DecodingGraphs::Penalties& penalties) {
  const auto k_count = static_cast<std::int64_t>(scores.size());
  DLBENCH_CHECK(
      k_count >= 1 && lengths.size() == scores.size() && coverage.size() % scores.size() == 0,
      "best_hypothesis: K scores, K lengths and K x sources coverage");
  const auto sources = static_cast<std::int64_t>(coverage.size() / scores.size());
  std::int64_t best = 0;
  double best_value = -INFINITY;
  for (std::int64_t k = 0; k < k_count; ++k) {
    const auto i = static_cast<std::size_t>(k);
    double penalty = 0;
    for (std::int64_t s = 0; s < sources; ++s) {
      const double c = coverage[static_cast<std::size_t>(k * sources + s)];
      if (c > 0) penalty += std::log(std::min(c, 1.0));
    }
    const double norm =
        std::pow((penalties.length_constant + lengths[i]) / (penalties.length_constant + 1.0),
                 static_cast<double>(penalties.length_alpha));
    const double value = scores[i] / norm + penalties.coverage_weight * penalty;
    if (value > best_value) best_value = value, best = k;  // the lower k on ties
  }
  return best;
}

void SequenceDecoder::load_weights(const Trainer& trained) {
  encoder_.load_weights_by_name(trained, /*every=*/true);
  step_.load_weights_by_name(trained, /*every=*/true);
}

Tensor SequenceDecoder::at(const Tensor& history, std::int64_t position) const {
  const std::int64_t rows = history.numel() / max_length_;
  return Tensor(history.data_as<std::int32_t>() + position * rows, {rows}, DType::kI32,
                history.device());
}

void SequenceDecoder::start() {
  encoder_.infer_step();
  const std::span<const Tensor> in = step_.inputs();
  for (auto [s, e] : batch_inputs_) {
    const Tensor& from = encoder_.inputs()[e];
    if (beam_ == 1) {
      backend_.copy(from, in[s]);
      continue;
    }
    std::vector<std::int32_t> sentence(static_cast<std::size_t>(batch_)), row;
    backend_.to_host(from, sentence.data());
    for (std::int32_t v : sentence) row.insert(row.end(), static_cast<std::size_t>(beam_), v);
    backend_.from_host(row.data(), in[s]);
  }
  for (auto [s, e] : memory_) {
    const Tensor out = encoder_.value(encoder_.graph().outputs()[e]);
    if (beam_ == 1)
      backend_.copy(out, in[s]);
    else
      backend_.embedding_forward(out, expand_, in[s]);
  }
  for (auto [s, o] : states_) backend_.fill(in[s], 0.0f);
  backend_.fill(in[tokens_input_], static_cast<float>(ids_.bos));
  backend_.fill(tokens_, static_cast<float>(ids_.pad));
  backend_.fill(lengths_, 0.0f);
  backend_.fill(finished_, 0.0f);
  if (beam_ > 1) {
    backend_.fill(row_lengths_, 0.0f);
    backend_.fill(coverage_, 0.0f);
    backend_.copy(first_scores_, scores_);
  }
  positions_ = 0;
}

void SequenceDecoder::decode() {
  start();
  if (beam_ == 1)
    decode_greedy();
  else
    decode_beam();
}

void SequenceDecoder::decode_greedy() {
  const std::span<const Tensor> in = step_.inputs();
  const backend::GreedyParams p{batch_, step_.logits().dim(1), ids_.eos, ids_.pad};
  while (positions_ < max_length_) {
    step_.infer_step();
    const Tensor chosen = at(tokens_, positions_++);
    backend_.greedy_pick(p, step_.logits(), chosen, finished_, lengths_, open_);
    backend_.copy(chosen, in[tokens_input_]);
    for (auto [s, o] : states_) backend_.copy(step_.value(step_.graph().outputs()[o]), in[s]);
    std::int32_t open = 0;
    backend_.to_host(open_, &open);  // waits for the position
    if (open == 0) break;
  }
}

void SequenceDecoder::decode_beam() {
  const std::span<const Tensor> in = step_.inputs();
  backend::BeamParams p;
  p.batch = batch_, p.beam = beam_, p.vocabulary = step_.logits().dim(1), p.sources = sources_;
  p.eos = ids_.eos, p.pad = ids_.pad;
  const Tensor probs = step_.value(step_.graph().outputs().back());
  const Tensor attention(probs.data(), {rows_, sources_}, DType::kF32, probs.device());
  const backend::BeamState state{scores_, finished_, row_lengths_, coverage_};
  while (positions_ < max_length_) {
    step_.infer_step();
    const Tensor chosen = at(history_, positions_), from = at(parents_, positions_);
    ++positions_;
    backend_.beam_pick(p, step_.logits(), attention, state, chosen, from, open_);
    backend_.copy(chosen, in[tokens_input_]);
    // Each row's states are those of the hypothesis it continues.
    for (auto [s, o] : states_)
      backend_.embedding_forward(step_.value(step_.graph().outputs()[o]), from, in[s]);
    std::int32_t open = 0;
    backend_.to_host(open_, &open);  // waits for the position
    if (open == 0) break;
  }
  trace_back();
}

void SequenceDecoder::trace_back() {
  const std::int64_t B = batch_, R = rows_, P = positions_, S = sources_, K = beam_;
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(P * R)), parents(tokens.size()),
      lengths(static_cast<std::size_t>(R));
  std::vector<float> scores(static_cast<std::size_t>(R)), coverage(static_cast<std::size_t>(R * S));
  backend_.to_host(Tensor(history_.data(), {P * R}, DType::kI32, history_.device()), tokens.data());
  backend_.to_host(Tensor(parents_.data(), {P * R}, DType::kI32, parents_.device()),
                   parents.data());
  backend_.to_host(row_lengths_, lengths.data());
  backend_.to_host(scores_, scores.data());
  backend_.to_host(coverage_, coverage.data());
  std::vector<std::int32_t> out(static_cast<std::size_t>(max_length_ * B), ids_.pad),
      best_lengths(static_cast<std::size_t>(B));
  for (std::int64_t n = 0; n < B; ++n) {
    const auto first = static_cast<std::size_t>(n * K);
    const std::int64_t best =
        n * K + best_hypothesis(std::span(scores).subspan(first, static_cast<std::size_t>(K)),
                                std::span(lengths).subspan(first, static_cast<std::size_t>(K)),
                                std::span(coverage).subspan(first * static_cast<std::size_t>(S),
                                                            static_cast<std::size_t>(K * S)),
                                penalties_);
    best_lengths[static_cast<std::size_t>(n)] = lengths[static_cast<std::size_t>(best)];
    std::int64_t r = best;
    for (std::int64_t t = P - 1; t >= 0; --t) {
      out[static_cast<std::size_t>(t * B + n)] = tokens[static_cast<std::size_t>(t * R + r)];
      r = parents[static_cast<std::size_t>(t * R + r)];
    }
  }
  backend_.from_host(out.data(), tokens_);
  backend_.from_host(best_lengths.data(), lengths_);
}

std::int64_t SequenceDecoder::produced_tokens() const {
  std::vector<std::int32_t> lengths(static_cast<std::size_t>(batch_));
  backend_.to_host(lengths_, lengths.data());
  std::int64_t total = 0;
  for (std::int32_t l : lengths) total += l;
  return total;
}

std::int64_t SequenceDecoder::parameter_count() const {
  std::set<std::string> encoder_names;
  std::int64_t total = 0;
  for (const ParameterSlice& s : encoder_.parameter_slices())
    encoder_names.insert(s.name), total += s.count;
  for (const ParameterSlice& s : step_.parameter_slices())
    if (!encoder_names.count(s.name)) total += s.count;
  return total;
}

std::int64_t SequenceDecoder::forward_macs() const {
  return encoder_.forward_macs() + max_length_ * step_.forward_macs();
}

MemoryReport SequenceDecoder::memory() const {
  MemoryReport a = encoder_.memory(), b = step_.memory();
  return {a.parameters + b.parameters, a.optimizer + b.optimizer,
          a.state + b.state + buffer_.bytes(), a.activations + b.activations,
          std::max(a.lent_workspace, b.lent_workspace)};
}

std::string SequenceDecoder::graph_status() const {
  const std::string encoder = encoder_.graph_status(), step = step_.graph_status();
  return encoder == step ? encoder : "encoder " + encoder + "; step " + step;
}

std::vector<LayerSummary> SequenceDecoder::layer_summaries() const {
  std::vector<LayerSummary> out = encoder_.layer_summaries();
  for (LayerSummary& l : step_.layer_summaries()) out.push_back(std::move(l));
  return out;
}

}  // namespace dlbench::nn
