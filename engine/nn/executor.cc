#include "engine/nn/executor.h"

#include <algorithm>
#include <map>
#include <string>

namespace dlbench::nn {

Executor::Executor(Graph graph, backend::Backend& backend, const ParameterStore& store, Mode mode,
                   Precision precision, bool lend)
    : graph_(std::move(graph)), backend_(backend), store_(store), mode_(mode), may_lend_(lend) {
  DLBENCH_CHECK(!graph_.inputs().empty() && !graph_.outputs().empty(),
                "a graph needs an input and a marked output");
  DLBENCH_CHECK(mode_ == Mode::kInfer || graph_.has_loss(), "training needs a loss node");
  DLBENCH_CHECK(graph_.compute_dtype() == compute_dtype(precision) &&
                    store_.compute_dtype() == graph_.compute_dtype(),
                std::string("the graph was built for ") + to_string(graph_.compute_dtype()) +
                    ", not for " + to_string(precision));
  const backend::MathMode math =
      precision == Precision::kTf32 ? backend::MathMode::kTf32 : backend::MathMode::kStrict;
  for (Node& n : graph_.nodes()) n.layer->set_math(math);
  bind_state();
  plan_ = plan_activations(graph_, mode_);
  forward_workspace_.resize(graph_.layer_count());
  backward_workspace_.resize(graph_.layer_count());
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
  const std::size_t loss_nodes = graph_.nodes().size() - graph_.layer_count();
  loss_buffer_ = Buffer(backend_.allocator(), std::max<std::size_t>(loss_nodes, 1) * sizeof(float));
  for (std::size_t n = graph_.layer_count(); n < graph_.nodes().size(); ++n) {
    const ValueId v = graph_.nodes()[n].output();
    losses_.push_back(Tensor(static_cast<float*>(loss_buffer_.data()) + losses_.size(), {1},
                             DType::kF32, backend_.device()));
    values_[v] = losses_.back();
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
      if (d.init == Init::kValues && !d.values.empty()) {
        DLBENCH_CHECK(d.values.size() * sizeof(float) <= d.bytes, "state values past its bytes");
        backend_.from_host(d.values.data(),
                           Tensor(t.data(), {static_cast<std::int64_t>(d.values.size())},
                                  DType::kF32, backend_.device()));
      }
      node_state_[n].push_back(t);
      offset += align_up(d.bytes);
    }
  }
  node_state_decls_ = std::move(decls);
}

namespace {

// The layers a node was made of: "down1.conv1+down1.bn1+down1.relu1" (a fused node) gives three.
std::vector<std::string> layer_names(const std::string& node) {
  std::vector<std::string> out;
  for (std::size_t start = 0;;) {
    const std::size_t plus = node.find('+', start);
    out.push_back(node.substr(start, plus - start));
    if (plus == std::string::npos) return out;
    start = plus + 1;
  }
}

}  // namespace

void Executor::copy_state_from(const Executor& other) {
  // Which of other's nodes holds each layer's state: graphs of one model fuse differently by
  // mode (training's "bn1+relu1", inference's "conv1+bn1+relu1"), but a layer is in one node.
  std::map<std::string, std::size_t> holder;
  for (std::size_t n = 0; n < other.node_state_.size(); ++n)
    if (!other.node_state_[n].empty())
      for (const std::string& layer : layer_names(other.graph_.nodes()[n].name)) holder[layer] = n;
  for (std::size_t n = 0; n < node_state_.size(); ++n) {
    const std::string& name = graph_.nodes()[n].name;
    for (std::size_t k = 0; k < node_state_[n].size(); ++k) {
      const StateDecl& want = node_state_decls_[n][k];
      if (!want.learned) continue;
      const Tensor* source = nullptr;
      for (const std::string& layer : layer_names(name)) {
        const auto it = holder.find(layer);
        if (it == holder.end() || source != nullptr) continue;
        const std::vector<StateDecl>& there = other.node_state_decls_[it->second];
        for (std::size_t j = 0; j < there.size(); ++j)
          if (there[j].learned && there[j].name == want.name && there[j].bytes == want.bytes)
            source = &other.node_state_[it->second][j];
      }
      DLBENCH_CHECK(source != nullptr, "copy_state_from: " + name + "'s " + want.name +
                                           " has no state of that name and size there");
      backend_.copy(*source, node_state_[n][k]);
    }
  }
}

StepContext Executor::context(std::size_t n, Scratch& scratch,
                              const backend::LossScale& loss_scale) const {
  const Node& node = graph_.nodes()[n];
  scratch.inputs.clear();
  scratch.input_grads.clear();
  scratch.outputs.clear();
  scratch.output_grads.clear();
  for (ValueId v : node.inputs) {
    scratch.inputs.push_back(values_[v]);
    scratch.input_grads.push_back(value_grads_[v]);
  }
  for (ValueId v : node.outputs) {
    scratch.outputs.push_back(values_[v]);
    scratch.output_grads.push_back(value_grads_[v]);
  }
  return StepContext{backend_,
                     mode_,
                     scratch.inputs,
                     scratch.outputs,
                     store_.weights(n),
                     node_state_[n],
                     scratch.output_grads,
                     scratch.input_grads,
                     plan_.input_grad_modes[n],
                     store_.grads(n),
                     plan_.param_grad_modes[n],
                     loss_scale,
                     store_.rows(n)};
}

void Executor::bind_input(ValueId input, const Tensor& tensor) {
  const ValueInfo& info = graph_.value(input);
  DLBENCH_CHECK(info.producer < 0, "bind_input: " + info.name + " is not a graph input");
  check_shape(tensor, info.shape, "network", info.name.c_str());
  DLBENCH_CHECK(tensor.dtype() == info.dtype, "bind_input: " + info.name + " must be " +
                                                  to_string(info.dtype) + ", not " +
                                                  to_string(tensor.dtype()));
  values_[input] = tensor;
}

void Executor::forward() {
  Scratch scratch;
  if (!prepared_) {
    for (std::size_t n = 0; n < graph_.layer_count(); ++n)
      graph_.nodes()[n].layer->prepare(context(n, scratch));
    prepared_ = true;
  }
  for (std::size_t n = 0; n < graph_.layer_count(); ++n) {
    ObservedPart part(observer_, StepPart::kForward, n);
    run_pass(forward_workspace_[n], [&] { graph_.nodes()[n].layer->forward(context(n, scratch)); });
  }
  if (mode_ == Mode::kInfer) finish_step();
}

void Executor::run_losses(const backend::LossScale& loss_scale) {
  DLBENCH_CHECK(mode_ == Mode::kTrain, "losses run in training only");
  Scratch scratch;
  // Last first, as backward runs: a loss writes its scores' gradient here, and the planner gave
  // the last reader of a value the overwrite (two losses on one value: U-Net's Dice and
  // cross-entropy).
  for (std::size_t n = graph_.nodes().size(); n-- > graph_.layer_count();)
    graph_.nodes()[n].layer->forward(context(n, scratch, loss_scale));
}

void Executor::backward(const std::function<void(std::size_t node)>& after) {
  Scratch scratch;
  for (std::size_t n = graph_.layer_count(); n-- > 0;) {
    {
      ObservedPart part(observer_, StepPart::kBackward, n);
      run_pass(backward_workspace_[n],
               [&] { graph_.nodes()[n].layer->backward(context(n, scratch)); });
    }
    if (after) after(n);
  }
  finish_step();
}

void Executor::run_pass(NodeWorkspace& workspace, const std::function<void()>& pass) {
  if (steps_ == 0) {
    // Ended even when the pass throws, so that later requests count for the backend's own.
    struct Watch {
      backend::Backend& backend;
      NodeWorkspace& workspace;
      ~Watch() { workspace.bytes = std::max(workspace.bytes, backend.end_workspace_watch()); }
    } watch{backend_, workspace};
    backend_.begin_workspace_watch();
    pass();
    return;
  }
  if (workspace.offset == kNoBuffer) {
    pass();
    return;
  }
  // Taken back even when the pass throws: the memory is the arena's again after it.
  struct Loan {
    backend::Backend& backend;
    ~Loan() { backend.lend_workspace(nullptr, 0); }
  } loan{backend_};
  backend_.lend_workspace(arena_->at(workspace.offset, workspace.bytes), workspace.bytes);
  pass();
}

void Executor::finish_step() {
  if (steps_++ > 0) return;
  auto place = [&](NodeWorkspace& w, int time) {
    if (w.bytes == 0) return;
    if (may_lend_) w.offset = free_offset_at(plan_, time, w.bytes);
    if (w.offset == kNoBuffer) backend_.keep_workspace(w.bytes);
  };
  for (std::size_t n = 0; n < graph_.layer_count(); ++n) {
    place(forward_workspace_[n], forward_time(graph_, n));
    place(backward_workspace_[n], backward_time(graph_, n));
  }
}

std::size_t Executor::lent_workspace_bytes() const {
  std::size_t most = 0;
  for (const auto* passes : {&forward_workspace_, &backward_workspace_})
    for (const NodeWorkspace& w : *passes)
      if (w.offset != kNoBuffer) most = std::max(most, w.bytes);
  return most;
}

std::vector<LayerSummary> Executor::layer_summaries() const {
  std::vector<LayerSummary> out;
  for (std::size_t i = 0; i < graph_.layer_count(); ++i) {
    const Node& n = graph_.nodes()[i];
    std::int64_t params = 0;
    for (ParamId p : n.params) params += graph_.params()[p].decl.shape.numel();
    out.push_back(
        {n.name, n.layer->kind(), graph_.value(n.output()).shape, params, n.layer->forward_macs()});
  }
  return out;
}

}  // namespace dlbench::nn
