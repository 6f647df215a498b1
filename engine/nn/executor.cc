#include "engine/nn/executor.h"

#include <algorithm>

namespace dlbench::nn {

Executor::Executor(Graph graph, backend::Backend& backend, const ParameterStore& store, Mode mode,
                   Precision precision)
    : graph_(std::move(graph)), backend_(backend), store_(store), mode_(mode) {
  DLBENCH_CHECK(graph_.input() >= 0 && graph_.output() >= 0, "graph needs an input and logits");
  DLBENCH_CHECK(store_.compute_dtype() == compute_dtype(precision),
                "the parameter store holds another compute dtype");
  graph_.set_dtype(compute_dtype(precision));
  const backend::MathMode math =
      precision == Precision::kTf32 ? backend::MathMode::kTf32 : backend::MathMode::kStrict;
  for (Node& n : graph_.nodes()) n.layer->set_math(math);
  bind_state();
  plan_ = plan_activations(graph_, mode_);
  arena_ =
      std::make_unique<Arena>(backend_.allocator(), std::max<std::size_t>(plan_.total_bytes, 1));
  const auto& values = graph_.values();
  values_.resize(values.size());
  value_grads_.resize(values.size());
  for (std::size_t v = 0; v < values.size(); ++v) {
    const ValueInfo& info = values[v];
    std::size_t bytes = checked_bytes(info.shape, info.dtype);
    if (plan_.value_offset[v] != kNoBuffer)
      values_[v] = Tensor(arena_->at(plan_.value_offset[v], bytes), info.shape, info.dtype,
                          backend_.device());
    if (plan_.grad_offset[v] != kNoBuffer)
      value_grads_[v] = Tensor(arena_->at(plan_.grad_offset[v], bytes), info.shape, info.dtype,
                               backend_.device());
  }
}

void Executor::bind_state() {
  std::size_t total = 0;
  std::vector<std::vector<StateDecl>> decls(graph_.nodes().size());
  for (std::size_t n = 0; n < decls.size(); ++n) {
    decls[n] = graph_.nodes()[n].layer->state(backend_);
    for (const StateDecl& d : decls[n]) total += align_up(d.bytes);
  }
  state_ = Buffer(backend_.allocator(), std::max<std::size_t>(total, 1));
  node_state_.resize(decls.size());
  std::size_t offset = 0;
  for (std::size_t n = 0; n < decls.size(); ++n) {
    for (const StateDecl& d : decls[n]) {
      std::int64_t floats =
          static_cast<std::int64_t>((d.bytes + sizeof(float) - 1) / sizeof(float));
      Tensor t(static_cast<char*>(state_.data()) + offset, {std::max<std::int64_t>(floats, 1)},
               DType::kF32, backend_.device());
      if (d.bytes > 0) backend_.fill(t, d.init == Init::kOnes ? 1.0f : 0.0f);
      node_state_[n].push_back(t);
      offset += align_up(d.bytes);
    }
  }
}

StepContext Executor::context(std::size_t n, std::vector<Tensor>& inputs,
                              std::vector<Tensor>& grads) const {
  const Node& node = graph_.nodes()[n];
  inputs.clear();
  grads.clear();
  for (ValueId v : node.inputs) {
    inputs.push_back(values_[v]);
    grads.push_back(value_grads_[v]);
  }
  return StepContext{backend_,
                     mode_,
                     inputs,
                     values_[node.output],
                     store_.weights(n),
                     node_state_[n],
                     value_grads_[node.output],
                     grads,
                     plan_.input_grad_modes[n],
                     store_.grads(n)};
}

void Executor::forward(const Tensor& images) {
  check_shape(images, graph_.value(graph_.input()).shape, "network", "images");
  values_[graph_.input()] = images;
  std::vector<Tensor> inputs, grads;
  for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
    ObservedPart part(observer_, StepPart::kForward, n);
    graph_.nodes()[n].layer->forward(context(n, inputs, grads));
  }
}

void Executor::backward(const std::function<void(std::size_t node)>& after) {
  std::vector<Tensor> inputs, grads;
  for (std::size_t n = graph_.nodes().size(); n-- > 0;) {
    {
      ObservedPart part(observer_, StepPart::kBackward, n);
      graph_.nodes()[n].layer->backward(context(n, inputs, grads));
    }
    if (after) after(n);
  }
}

std::vector<LayerSummary> Executor::layer_summaries() const {
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
