#include "engine/nn/network.h"

#include <cmath>

namespace dlbench::nn {
namespace {

constexpr std::uint64_t kSeedStride = 0x9E3779B97F4A7C15ull;  // decorrelates per-tensor seeds

void initialize(backend::Backend& be, const Tensor& t, const ParamDecl& d, std::uint64_t seed) {
  switch (d.init) {
    case Init::kZeros:
      be.fill(t, 0.0f);
      break;
    case Init::kOnes:
      be.fill(t, 1.0f);
      break;
    case Init::kKaimingNormal:
      // He et al. 2015: keeps activation variance constant through ReLU layers.
      be.fill_normal(t, 0.0f, std::sqrt(2.0f / static_cast<float>(d.fan_in)), seed);
      break;
    case Init::kNormal:
      be.fill_normal(t, 0.0f, d.stddev, seed);
      break;
  }
}

}  // namespace

Network::Network(Graph graph, backend::Backend& backend, const NetworkConfig& config)
    : graph_(std::move(graph)), backend_(backend), config_(config) {
  DLBENCH_CHECK(graph_.input() >= 0 && graph_.output() >= 0, "graph needs an input and logits");
  bindings_.resize(graph_.nodes().size());
  bind_parameters();
  bind_state();
  plan_ = plan_activations(graph_, config_.mode);
  arena_ =
      std::make_unique<Arena>(backend_.allocator(), std::max<std::size_t>(plan_.total_bytes, 1));
  const auto& values = graph_.values();
  values_.resize(values.size());
  value_grads_.resize(values.size());
  for (std::size_t v = 0; v < values.size(); ++v) {
    const ValueInfo& info = values[v];
    std::size_t bytes = static_cast<std::size_t>(info.shape.numel()) * size_of(info.dtype);
    if (plan_.value_offset[v] != kNoBuffer)
      values_[v] = Tensor(arena_->at(plan_.value_offset[v], bytes), info.shape, info.dtype,
                          backend_.device());
    if (plan_.grad_offset[v] != kNoBuffer)
      value_grads_[v] = Tensor(arena_->at(plan_.grad_offset[v], bytes), info.shape, info.dtype,
                               backend_.device());
  }
  loss_buffer_ = Buffer(backend_.allocator(), sizeof(float));
  loss_ = Tensor(loss_buffer_.data(), {1}, DType::kF32, backend_.device());
}

void Network::bind_parameters() {
  // Two passes: decayed tensors first, so weight decay applies to one contiguous prefix.
  struct Slot {
    std::size_t node;
    ParamDecl decl;
    std::size_t offset = 0;
  };
  std::vector<Slot> slots;
  for (bool decayed : {true, false})
    for (std::size_t n = 0; n < graph_.nodes().size(); ++n)
      for (const ParamDecl& d : graph_.nodes()[n].layer->params())
        if (d.weight_decay == decayed) slots.push_back({n, d});
  std::size_t floats = 0;
  for (Slot& s : slots) {
    s.offset = floats;
    floats += static_cast<std::size_t>(s.decl.shape.numel());
    if (s.decl.weight_decay) decayed_floats_ = floats;
  }
  parameter_count_ = static_cast<std::int64_t>(floats);
  const std::size_t bytes = std::max<std::size_t>(floats, 1) * sizeof(float);
  weights_ = Buffer(backend_.allocator(), bytes);
  if (config_.mode == Mode::kTrain) {
    grads_ = Buffer(backend_.allocator(), bytes);
    velocity_ = Buffer(backend_.allocator(), bytes);
    backend_.fill(flat(grads_), 0.0f);
    backend_.fill(flat(velocity_), 0.0f);
  }
  // Bind in declaration order per node (layers index their params as they declared them).
  for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
    for (const ParamDecl& d : graph_.nodes()[n].layer->params()) {
      for (std::size_t i = 0; i < slots.size(); ++i) {
        const Slot& s = slots[i];
        if (s.node != n || s.decl.name != d.name) continue;
        auto view = [&](const Buffer& b) {
          return Tensor(static_cast<float*>(b.data()) + s.offset, d.shape, DType::kF32,
                        backend_.device());
        };
        Tensor w = view(weights_);
        initialize(backend_, w, d, config_.seed + kSeedStride * (i + 1));
        bindings_[n].params.push_back(w);
        bindings_[n].grads.push_back(config_.mode == Mode::kTrain ? view(grads_) : Tensor());
      }
    }
  }
}

void Network::bind_state() {
  std::size_t total = 0;
  std::vector<std::vector<StateDecl>> decls(graph_.nodes().size());
  for (std::size_t n = 0; n < decls.size(); ++n) {
    decls[n] = graph_.nodes()[n].layer->state(backend_);
    for (const StateDecl& d : decls[n]) total += align_up(d.bytes);
  }
  state_ = Buffer(backend_.allocator(), std::max<std::size_t>(total, 1));
  std::size_t offset = 0;
  for (std::size_t n = 0; n < decls.size(); ++n) {
    for (const StateDecl& d : decls[n]) {
      std::int64_t floats =
          static_cast<std::int64_t>((d.bytes + sizeof(float) - 1) / sizeof(float));
      Tensor t(static_cast<char*>(state_.data()) + offset, {std::max<std::int64_t>(floats, 1)},
               DType::kF32, backend_.device());
      if (d.bytes > 0) backend_.fill(t, d.init == Init::kOnes ? 1.0f : 0.0f);
      bindings_[n].state.push_back(t);
      offset += align_up(d.bytes);
    }
  }
}

Tensor Network::flat(const Buffer& b) const {
  return Tensor(b.data(), {std::max<std::int64_t>(parameter_count_, 1)}, DType::kF32,
                backend_.device());
}

StepContext Network::context(std::size_t n, std::vector<Tensor>& inputs,
                             std::vector<Tensor>& grads) const {
  const Node& node = graph_.nodes()[n];
  inputs.clear();
  grads.clear();
  for (ValueId v : node.inputs) {
    inputs.push_back(values_[v]);
    grads.push_back(value_grads_[v]);
  }
  const NodeBinding& b = bindings_[n];
  return StepContext{backend_,
                     config_.mode,
                     inputs,
                     values_[node.output],
                     b.params,
                     b.state,
                     value_grads_[node.output],
                     grads,
                     plan_.input_grad_modes[n],
                     b.grads};
}

void Network::forward(const Tensor& images) {
  check_shape(images, graph_.value(graph_.input()).shape, "network", "images");
  values_[graph_.input()] = images;
  std::vector<Tensor> inputs, grads;
  for (std::size_t n = 0; n < graph_.nodes().size(); ++n)
    graph_.nodes()[n].layer->forward(context(n, inputs, grads));
}

void Network::train_step(const Tensor& images, const Tensor& labels) {
  DLBENCH_CHECK(config_.mode == Mode::kTrain, "train_step on a network built for inference");
  forward(images);
  backend_.softmax_cross_entropy(logits(), labels, loss_, value_grads_[graph_.output()], 1.0f);
  std::vector<Tensor> inputs, grads;
  for (std::size_t n = graph_.nodes().size(); n-- > 0;)
    graph_.nodes()[n].layer->backward(context(n, inputs, grads));
  // One fused update per weight-decay group over the flat buffers.
  auto group = [&](const Buffer& b, std::size_t begin, std::size_t end) {
    return Tensor(static_cast<float*>(b.data()) + begin, {static_cast<std::int64_t>(end - begin)},
                  DType::kF32, backend_.device());
  };
  const std::size_t all = static_cast<std::size_t>(parameter_count_);
  if (decayed_floats_ > 0)
    backend_.sgd_momentum_update(config_.sgd, group(weights_, 0, decayed_floats_),
                                 group(grads_, 0, decayed_floats_),
                                 group(velocity_, 0, decayed_floats_));
  if (all > decayed_floats_) {
    backend::SgdParams no_decay = config_.sgd;
    no_decay.weight_decay = 0.0f;
    backend_.sgd_momentum_update(no_decay, group(weights_, decayed_floats_, all),
                                 group(grads_, decayed_floats_, all),
                                 group(velocity_, decayed_floats_, all));
  }
}

float Network::loss() {
  float value = 0.0f;
  backend_.to_host(loss_, &value);
  return value;
}

void Network::infer_step(const Tensor& images) {
  forward(images);
}

std::int64_t Network::forward_macs() const {
  return nn::forward_macs(graph_);
}

std::int64_t Network::train_macs() const {
  return nn::train_macs(graph_);
}

MemoryReport Network::memory() const {
  MemoryReport r;
  r.parameters = weights_.bytes();
  r.optimizer = grads_.bytes() + velocity_.bytes();
  r.state = state_.bytes();
  r.activations = arena_->capacity();
  return r;
}

std::vector<LayerSummary> Network::layer_summaries() const {
  std::vector<LayerSummary> out;
  for (const Node& n : graph_.nodes()) {
    std::int64_t params = 0;
    for (const ParamDecl& d : n.layer->params()) params += d.shape.numel();
    out.push_back(
        {n.name, n.layer->kind(), graph_.value(n.output).shape, params, n.layer->forward_macs()});
  }
  return out;
}

}  // namespace dlbench::nn
