#include "engine/nn/greedy_decoder.h"

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

void expect_same(const ValueInfo& from, const ValueInfo& to, const std::string& what) {
  DLBENCH_CHECK(from.shape == to.shape && from.dtype == to.dtype,
                "decoding: the step graph's input " + to.name + " is not shaped as " + what);
}

}  // namespace

GreedyDecoder::GreedyDecoder(DecodingGraphs graphs, backend::Backend& backend, TrainerConfig config)
    : backend_(backend),
      encoder_(std::move(graphs.encoder), backend, inference(config)),
      step_(std::move(graphs.step), backend, inference(config)),
      max_length_(graphs.max_length),
      ids_(graphs.ids) {
  DLBENCH_CHECK(max_length_ >= 1, "decoding: max_length must be >= 1");
  const Graph& enc = encoder_.graph();
  const Graph& step = step_.graph();
  DLBENCH_CHECK(!step.outputs().empty(), "decoding: the step graph marks no scores");
  const ValueInfo& scores = step.value(step.outputs()[0]);
  DLBENCH_CHECK(scores.shape.rank() == 2, "decoding: the scores must be [batch, vocabulary]");
  batch_ = scores.shape[0];
  // Each step input by its name (the contract in the header).
  std::set<int> state_numbers;
  bool has_tokens = false;
  for (std::size_t i = 0; i < step.inputs().size(); ++i) {
    const ValueInfo& in = step.value(step.inputs()[i]);
    if (in.name == "tokens") {
      DLBENCH_CHECK(in.shape == Shape{batch_} && in.dtype == DType::kI32,
                    "decoding: tokens must be i32 [batch]");
      tokens_input_ = i, has_tokens = true;
    } else if (const int m = numbered(in.name, "memory."); m >= 0) {
      DLBENCH_CHECK(static_cast<std::size_t>(m) < enc.outputs().size(),
                    "decoding: the encoder has no output " + std::to_string(m));
      expect_same(enc.value(enc.outputs()[static_cast<std::size_t>(m)]), in,
                  "the encoder's output");
      memory_.push_back({i, static_cast<std::size_t>(m)});
    } else if (const int s = numbered(in.name, "state."); s >= 0) {
      DLBENCH_CHECK(static_cast<std::size_t>(s) + 1 < step.outputs().size(),
                    "decoding: the step graph gives no next " + in.name);
      expect_same(step.value(step.outputs()[static_cast<std::size_t>(s) + 1]), in,
                  "its next value");
      states_.push_back({i, static_cast<std::size_t>(s) + 1});
      state_numbers.insert(s);
    } else {
      bool found = false;
      for (std::size_t e = 0; e < enc.inputs().size() && !found; ++e)
        if (enc.value(enc.inputs()[e]).name == in.name) {
          expect_same(enc.value(enc.inputs()[e]), in, "the encoder's input");
          batch_inputs_.push_back({i, e});
          found = true;
        }
      DLBENCH_CHECK(found, "decoding: nothing feeds the step graph's input " + in.name);
    }
  }
  DLBENCH_CHECK(has_tokens, "decoding: the step graph has no tokens input");
  DLBENCH_CHECK(state_numbers.size() + 1 == step.outputs().size(),
                "decoding: every state the step graph gives must be carried back");
  // The step graph's shared parameters (the token table) start as the encoder's.
  step_.load_weights_by_name(encoder_, /*every=*/false);

  const auto b = static_cast<std::size_t>(batch_);
  const std::size_t token_bytes = align_up(static_cast<std::size_t>(max_length_) * b * 4);
  const std::size_t row_bytes = align_up(b * 4);
  buffer_ = Buffer(backend_.allocator(), token_bytes + 2 * row_bytes + align_up(4));
  auto* base = static_cast<std::byte*>(buffer_.data());
  const Device device = backend_.device();
  tokens_ = Tensor(base, {max_length_ * batch_}, DType::kI32, device);
  lengths_ = Tensor(base + token_bytes, {batch_}, DType::kI32, device);
  finished_ = Tensor(base + token_bytes + row_bytes, {batch_}, DType::kI32, device);
  open_ = Tensor(base + token_bytes + 2 * row_bytes, {1}, DType::kI32, device);
}

void GreedyDecoder::load_weights(const Trainer& trained) {
  encoder_.load_weights_by_name(trained, /*every=*/true);
  step_.load_weights_by_name(trained, /*every=*/true);
}

Tensor GreedyDecoder::row(std::int64_t position) const {
  return Tensor(tokens_.data_as<std::int32_t>() + position * batch_, {batch_}, DType::kI32,
                tokens_.device());
}

void GreedyDecoder::decode() {
  encoder_.infer_step();
  const std::span<const Tensor> in = step_.inputs();
  for (auto [s, e] : batch_inputs_) backend_.copy(encoder_.inputs()[e], in[s]);
  for (auto [s, e] : memory_) backend_.copy(encoder_.value(encoder_.graph().outputs()[e]), in[s]);
  for (auto [s, o] : states_) backend_.fill(in[s], 0.0f);
  backend_.fill(in[tokens_input_], static_cast<float>(ids_.bos));
  backend_.fill(tokens_, static_cast<float>(ids_.pad));
  backend_.fill(lengths_, 0.0f);
  backend_.fill(finished_, 0.0f);
  const backend::GreedyParams p{batch_, step_.logits().dim(1), ids_.eos, ids_.pad};
  positions_ = 0;
  while (positions_ < max_length_) {
    step_.infer_step();
    const Tensor chosen = row(positions_++);
    backend_.greedy_pick(p, step_.logits(), chosen, finished_, lengths_, open_);
    backend_.copy(chosen, in[tokens_input_]);
    for (auto [s, o] : states_) backend_.copy(step_.value(step_.graph().outputs()[o]), in[s]);
    std::int32_t open = 0;
    backend_.to_host(open_, &open);  // waits for the position
    if (open == 0) break;
  }
}

std::int64_t GreedyDecoder::produced_tokens() const {
  std::vector<std::int32_t> lengths(static_cast<std::size_t>(batch_));
  backend_.to_host(lengths_, lengths.data());
  std::int64_t total = 0;
  for (std::int32_t l : lengths) total += l;
  return total;
}

std::int64_t GreedyDecoder::parameter_count() const {
  std::set<std::string> encoder_names;
  std::int64_t total = 0;
  for (const ParameterSlice& s : encoder_.parameter_slices())
    encoder_names.insert(s.name), total += s.count;
  for (const ParameterSlice& s : step_.parameter_slices())
    if (!encoder_names.count(s.name)) total += s.count;
  return total;
}

std::int64_t GreedyDecoder::forward_macs() const {
  return encoder_.forward_macs() + max_length_ * step_.forward_macs();
}

MemoryReport GreedyDecoder::memory() const {
  MemoryReport a = encoder_.memory(), b = step_.memory();
  return {a.parameters + b.parameters, a.optimizer + b.optimizer,
          a.state + b.state + buffer_.bytes(), a.activations + b.activations};
}

std::string GreedyDecoder::graph_status() const {
  const std::string encoder = encoder_.graph_status(), step = step_.graph_status();
  return encoder == step ? encoder : "encoder " + encoder + "; step " + step;
}

std::vector<LayerSummary> GreedyDecoder::layer_summaries() const {
  std::vector<LayerSummary> out = encoder_.layer_summaries();
  for (LayerSummary& l : step_.layer_summaries()) out.push_back(std::move(l));
  return out;
}

}  // namespace dlbench::nn
