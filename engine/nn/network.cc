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

// Brackets one part of a step for the observer, if there is one.
class Observed {
 public:
  Observed(LayerObserver* o, Pass pass, std::size_t node) : o_(o), pass_(pass), node_(node) {
    if (o_) o_->begin(pass_, node_);
  }
  ~Observed() {
    if (o_) o_->end(pass_, node_);
  }
  Observed(const Observed&) = delete;
  Observed& operator=(const Observed&) = delete;

 private:
  LayerObserver* o_;
  Pass pass_;
  std::size_t node_;
};

}  // namespace

const char* to_string(Pass pass) {
  switch (pass) {
    case Pass::kForward:
      return "forward";
    case Pass::kLoss:
      return "loss";
    case Pass::kBackward:
      return "backward";
    case Pass::kGradientSync:
      return "gradient sync";
    case Pass::kUpdate:
      return "update";
  }
  return "?";
}

Network::Network(Graph graph, backend::Backend& backend, const NetworkConfig& config)
    : graph_(std::move(graph)), backend_(backend), config_(config) {
  DLBENCH_CHECK(graph_.input() >= 0 && graph_.output() >= 0, "graph needs an input and logits");
  dtype_ = compute_dtype(config_.precision);
  graph_.set_dtype(dtype_);
  const backend::MathMode math =
      config_.precision == Precision::kTf32 ? backend::MathMode::kTf32 : backend::MathMode::kStrict;
  for (Node& n : graph_.nodes()) n.layer->set_math(math);
  loss_scale_ = config_.precision == Precision::kFp16 ? config_.initial_loss_scale : 1.0f;
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
    std::size_t bytes = checked_bytes(info.shape, info.dtype);
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
  // Order: compute params with decay, compute params without, then f32-only params; each
  // range is contiguous so casts and SGD run once per range.
  struct Slot {
    std::size_t node;
    ParamDecl decl;
    std::int64_t offset = 0;
  };
  auto rank = [](const ParamDecl& d) { return d.keep_f32 ? 2 : (d.weight_decay ? 0 : 1); };
  std::vector<Slot> slots;
  for (int r = 0; r < 3; ++r)
    for (std::size_t n = 0; n < graph_.nodes().size(); ++n)
      for (const ParamDecl& d : graph_.nodes()[n].layer->params())
        if (rank(d) == r) slots.push_back({n, d});
  std::int64_t count = 0;
  for (Slot& s : slots) {
    s.offset = count;
    count += s.decl.shape.numel();
    if (rank(s.decl) == 0) decayed_ = count;
    if (rank(s.decl) <= 1) compute_ = count;
  }
  parameter_count_ = count;
  if (config_.communicator != nullptr && config_.mode == Mode::kTrain) {
    std::vector<GradientSlot> grads;
    for (const Slot& s : slots) {
      const int group = rank(s.decl);
      const std::size_t bytes = group < 2 ? size_of(dtype_) : sizeof(float);
      grads.push_back({s.offset, s.decl.shape.numel(), s.node, group, bytes});
    }
    buckets_ = plan_gradient_buckets(std::move(grads), config_.bucket_bytes);
  }
  const std::size_t floats = static_cast<std::size_t>(std::max<std::int64_t>(count, 1));
  weights_ = Buffer(backend_.allocator(), floats * sizeof(float));
  if (mixed()) compute_weights_ = Buffer(backend_.allocator(), floats * size_of(dtype_));
  if (config_.mode == Mode::kTrain) {
    grads_ = Buffer(backend_.allocator(), floats * sizeof(float));
    velocity_ = Buffer(backend_.allocator(), floats * sizeof(float));
    backend_.fill(flat(grads_, DType::kF32, count), 0.0f);
    backend_.fill(flat(velocity_, DType::kF32, count), 0.0f);
    if (mixed()) compute_grads_ = Buffer(backend_.allocator(), floats * size_of(dtype_));
  }
  // Bind in declaration order per node (layers index their params as they declared them).
  for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
    for (const ParamDecl& d : graph_.nodes()[n].layer->params()) {
      for (std::size_t i = 0; i < slots.size(); ++i) {
        const Slot& s = slots[i];
        if (s.node != n || s.decl.name != d.name) continue;
        slices_.push_back({graph_.nodes()[n].name + "." + d.name, s.offset, d.shape.numel()});
        const bool compute = mixed() && !d.keep_f32;
        auto view = [&](const Buffer& b, DType t) {
          return Tensor(
              static_cast<char*>(b.data()) + s.offset * static_cast<std::int64_t>(size_of(t)),
              d.shape, t, backend_.device());
        };
        initialize(backend_, view(weights_, DType::kF32), d, config_.seed + kSeedStride * (i + 1));
        bindings_[n].params.push_back(compute ? view(compute_weights_, dtype_)
                                              : view(weights_, DType::kF32));
        if (config_.mode == Mode::kTrain)
          bindings_[n].grads.push_back(compute ? view(compute_grads_, dtype_)
                                               : view(grads_, DType::kF32));
        else
          bindings_[n].grads.push_back(Tensor());
      }
    }
  }
  // Replicas start from rank 0's weights (the same seed gives the same ones, but a replica
  // must not depend on every device's random generator agreeing bit for bit).
  if (config_.communicator != nullptr) {
    config_.communicator->broadcast(flat(weights_, DType::kF32, count), 0);
  }
  if (mixed() && compute_ > 0)
    backend_.cast(flat(weights_, DType::kF32, compute_), flat(compute_weights_, dtype_, compute_));
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

Tensor Network::flat(const Buffer& b, DType dtype, std::int64_t count, std::int64_t begin) const {
  return Tensor(static_cast<char*>(b.data()) + begin * static_cast<std::int64_t>(size_of(dtype)),
                {std::max<std::int64_t>(count, 1)}, dtype, backend_.device());
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
  for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
    Observed part(observer_, Pass::kForward, n);
    graph_.nodes()[n].layer->forward(context(n, inputs, grads));
  }
}

void Network::train_step(const Tensor& images, const Tensor& labels) {
  DLBENCH_CHECK(config_.mode == Mode::kTrain, "train_step on a network built for inference");
  // The first step runs eagerly: it measures convolution algorithms and grows workspaces,
  // which a recording may not do.
  StepGraphs* graphs = nullptr;
  if (graphs_wanted() && eager_steps_ > 0) {
    const StepKey key{images.data(), labels.data(), loss_scale_};
    if (!graphs_ || !(graphs_->key == key)) record_train_graphs(images, labels, key);
    graphs = graphs_.get();
  }
  const float step_scale = loss_scale_;  // what this step's gradients are scaled by
  if (graphs) {
    graphs->gradients->launch();
  } else {
    compute_gradients(images, labels);
    ++eager_steps_;
  }
  if (config_.precision == Precision::kFp16) {
    // Dynamic loss scaling: a step with inf/NaN gradients changes nothing but the scale.
    if (!backend_.all_finite(flat(grads_, DType::kF32, parameter_count_))) {
      ++skipped_steps_;
      clean_steps_ = 0;
      loss_scale_ = std::max(1.0f, loss_scale_ / 2);
      return;
    }
    if (++clean_steps_ >= config_.loss_scale_growth_interval) {
      clean_steps_ = 0;
      loss_scale_ *= 2;  // from the next step on
    }
  }
  if (graphs)
    graphs->update->launch();
  else
    update_weights(step_scale);
}

void Network::compute_gradients(const Tensor& images, const Tensor& labels) {
  forward(images);
  {
    Observed part(observer_, Pass::kLoss, 0);
    backend_.softmax_cross_entropy(logits(), labels, loss_, value_grads_[graph_.output()],
                                   loss_scale_);
  }
  std::vector<Tensor> inputs, grads;
  next_bucket_ = 0;
  // The first step measures every convolution's algorithms (cuDNN Find). An all-reduce in
  // flight then would spin on SMs while it waits for a slower replica and skew what Find
  // measures (on two H200s in one process it picked backward algorithms 2.5x slower), so
  // that step reduces after backward and the later ones overlap.
  const bool overlap = eager_steps_ > 0;
  for (std::size_t n = graph_.nodes().size(); n-- > 0;) {
    {
      Observed part(observer_, Pass::kBackward, n);
      graph_.nodes()[n].layer->backward(context(n, inputs, grads));
    }
    if (overlap) reduce_ready_buckets(n);
  }
  reduce_ready_buckets(0);  // whatever is left: everything, on the first step
  if (config_.communicator != nullptr) {
    // What the device waits here is the communication that backward did not hide.
    Observed part(observer_, Pass::kGradientSync, 0);
    config_.communicator->wait();
  }
  if (mixed() && compute_ > 0)
    backend_.cast(flat(compute_grads_, dtype_, compute_), flat(grads_, DType::kF32, compute_));
}

bool Network::graphs_wanted() const {
  return config_.device_graphs && backend_.can_capture() && observer_ == nullptr &&
         graph_failure_.empty();
}

void Network::record_train_graphs(const Tensor& images, const Tensor& labels, StepKey key) {
  graphs_.reset();
  try {
    auto recorded = std::make_unique<StepGraphs>();
    recorded->key = key;
    backend_.begin_capture();
    compute_gradients(images, labels);
    recorded->gradients = backend_.end_capture();
    backend_.begin_capture();
    update_weights(key.loss_scale);
    recorded->update = backend_.end_capture();
    graphs_ = std::move(recorded);
    ++recordings_;
  } catch (const Error& e) {
    // Every rank records the same collectives, so a rank that falls back to eager steps
    // still issues them in the same order as the others.
    backend_.abort_capture();
    graph_failure_ = e.what();
  }
}

void Network::record_infer_graph(const Tensor& images) {
  graphs_.reset();
  try {
    auto recorded = std::make_unique<StepGraphs>();
    recorded->key = {images.data(), nullptr, 0.0f};
    backend_.begin_capture();
    forward(images);
    recorded->gradients = backend_.end_capture();
    graphs_ = std::move(recorded);
    ++recordings_;
  } catch (const Error& e) {
    backend_.abort_capture();
    graph_failure_ = e.what();
  }
}

std::string Network::graph_status() const {
  if (!config_.device_graphs) return "off (--no-graphs)";
  if (!backend_.can_capture()) return "off (this backend runs each op as it is issued)";
  if (!graph_failure_.empty()) return "off after a failed recording: " + graph_failure_;
  if (recordings_ == 0) return "not yet recorded (the first step runs eagerly)";
  return "on (" + std::to_string(recordings_) + (recordings_ == 1 ? " recording" : " recordings") +
         "; the first step ran eagerly)";
}

void Network::reduce_ready_buckets(std::size_t node) {
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].ready_after >= node)
    config_.communicator->allreduce_sum(bucket_tensor(buckets_[next_bucket_++]));
}

Tensor Network::bucket_tensor(const GradientBucket& b) const {
  const bool compute_dtype = b.group < 2 && mixed();
  return compute_dtype ? flat(compute_grads_, dtype_, b.end - b.begin, b.begin)
                       : flat(grads_, DType::kF32, b.end - b.begin, b.begin);
}

void Network::update_weights(float step_scale) {
  Observed part(observer_, Pass::kUpdate, 0);
  backend::SgdParams sgd = config_.sgd;
  // The all-reduce summed the replicas' gradients: divide by their number here, for free.
  const float replicas =
      config_.communicator != nullptr ? static_cast<float>(config_.communicator->size()) : 1.0f;
  sgd.grad_scale = 1.0f / (step_scale * replicas);
  // One fused update per weight-decay range over the flat f32 buffers.
  auto range = [&](std::int64_t begin, std::int64_t end, float weight_decay) {
    if (end <= begin) return;
    backend::SgdParams p = sgd;
    p.weight_decay = weight_decay;
    backend_.sgd_momentum_update(p, flat(weights_, DType::kF32, end - begin, begin),
                                 flat(grads_, DType::kF32, end - begin, begin),
                                 flat(velocity_, DType::kF32, end - begin, begin));
  };
  range(0, decayed_, sgd.weight_decay);
  range(decayed_, parameter_count_, 0.0f);
  if (mixed() && compute_ > 0)
    backend_.cast(flat(weights_, DType::kF32, compute_), flat(compute_weights_, dtype_, compute_));
}

float Network::loss() {
  float value = 0.0f;
  backend_.to_host(loss_, &value);
  return value;
}

void Network::infer_step(const Tensor& images) {
  if (graphs_wanted() && eager_steps_ > 0) {
    if (!graphs_ || graphs_->key.images != images.data()) record_infer_graph(images);
    if (graphs_) {
      graphs_->gradients->launch();
      return;
    }
  }
  forward(images);
  ++eager_steps_;
}

std::int64_t Network::forward_macs() const {
  return nn::forward_macs(graph_);
}

std::int64_t Network::train_macs() const {
  return nn::train_macs(graph_);
}

MemoryReport Network::memory() const {
  MemoryReport r;
  r.parameters = weights_.bytes() + compute_weights_.bytes();
  r.optimizer = grads_.bytes() + velocity_.bytes() + compute_grads_.bytes();
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
