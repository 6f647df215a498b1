#include "engine/nn/trainer.h"

#include <string_view>
#include <unordered_map>

#include "engine/core/checked.h"
#include "engine/core/memory.h"

namespace dlbench::nn {

Trainer::PassedGraph Trainer::with_passes(Graph graph, const backend::Backend& backend,
                                          const TrainerConfig& config) {
  PassReport report = apply_passes(graph, {backend, config.mode}, config.fusion);
  return {std::move(graph), std::move(report)};
}

Trainer::Trainer(Graph graph, backend::Backend& backend, const TrainerConfig& config)
    : Trainer(with_passes(std::move(graph), backend, config), backend, config) {}

Trainer::Trainer(PassedGraph passed, backend::Backend& backend, const TrainerConfig& config)
    : config_(config),
      backend_(backend),
      passes_(std::move(passed.report)),
      store_(passed.graph, backend, config.mode, compute_dtype(config.precision), config.seed),
      executor_(std::move(passed.graph), backend, store_, config.mode, config.precision,
                config.lend_workspace),
      scaler_({config.precision == Precision::kFp16, config.initial_loss_scale,
               config.loss_scale_growth_interval},
              backend) {
  // The inputs, resident outside the arena at fixed addresses for the trainer's life.
  std::size_t bytes = 0;
  for (ValueId v : executor_.graph().inputs())
    bytes +=
        align_up(checked_bytes(executor_.graph().value(v).shape, executor_.graph().value(v).dtype));
  input_buffer_ = Buffer(backend_.allocator(), std::max<std::size_t>(bytes, 1));
  std::size_t offset = 0;
  for (ValueId v : executor_.graph().inputs()) {
    const ValueInfo& info = executor_.graph().value(v);
    inputs_.push_back(Tensor(static_cast<char*>(input_buffer_.data()) + offset, info.shape,
                             info.dtype, backend_.device()));
    executor_.bind_input(v, inputs_.back());
    offset += align_up(checked_bytes(info.shape, info.dtype));
  }
  const bool train = config_.mode == Mode::kTrain;
  if (train) optimizer_ = make_optimizer(config_.optimizer, backend_, store_);
  if (config_.communicator != nullptr) {
    if (train) reducer_.emplace(*config_.communicator, store_, config_.bucket_bytes);
    store_.broadcast(*config_.communicator, 0);
  }
}

void Trainer::train_step() {
  DLBENCH_CHECK(config_.mode == Mode::kTrain, "train_step on a trainer built for inference");
  // The first step runs eagerly: it measures convolution algorithms and grows workspaces,
  // which a recording may not do.
  fit_workspace_after_first_step();
  StepGraphs* graphs = nullptr;
  if (graphs_wanted() && eager_steps_ > 0) {
    if (!graphs_ || !graphs_->current()) {
      record_train_graphs();
    } else if (graphs_->loss_scale != scaler_.scale()) {
      // The losses read the scale on the device; only the update takes it as an argument.
      recording([&] { record_update(*graphs_); });
      if (graphs_) ++update_recordings_;
    }
    graphs = graphs_.get();
  }
  const float step_scale = scaler_.scale();  // what this step's gradients are scaled by
  if (graphs) {
    graphs->gradients->launch();
  } else {
    compute_gradients();
    ++eager_steps_;
  }
  // fp16: a step with inf/NaN gradients changes nothing but the scale.
  if (!scaler_.accept(backend_, store_.flat_grads())) return;
  if (graphs)
    graphs->update->launch();
  else
    update_weights(step_scale);
}

void Trainer::compute_gradients() {
  executor_.forward();
  {
    ObservedPart part(executor_.observer(), StepPart::kLoss, 0);
    executor_.run_losses(scaler_.loss_scale());
  }
  // The first step measures every convolution's algorithms (cuDNN Find). An all-reduce in
  // flight then would spin on SMs while it waits for a slower replica and skew what Find
  // measures (on two H200s in one process it picked backward algorithms 2.5x slower), so
  // that step reduces after backward and the later ones overlap.
  if (reducer_) reducer_->begin_step(eager_steps_ > 0);
  executor_.backward([this](std::size_t node) {
    if (reducer_) reducer_->node_done(node);
  });
  if (reducer_) reducer_->finish(executor_.observer());
  store_.gather_compute_grads();
}

void Trainer::update_weights(float step_scale) {
  ObservedPart part(executor_.observer(), StepPart::kUpdate, 0);
  // The all-reduce summed the replicas' gradients: divide by their number here, for free.
  const float replicas = reducer_ ? static_cast<float>(reducer_->replicas()) : 1.0f;
  optimizer_->update(store_, 1.0f / (step_scale * replicas));
  store_.refresh_compute_weights();
}

bool Trainer::graphs_wanted() const {
  return config_.device_graphs && backend_.can_capture() && executor_.observer() == nullptr &&
         graph_failure_.empty();
}

void Trainer::recording(const std::function<void()>& record) {
  try {
    record();
  } catch (const Error& e) {
    // Every rank records the same collectives, so a rank that falls back to eager steps
    // still issues them in the same order as the others.
    backend_.abort_capture();
    graphs_.reset();
    graph_failure_ = e.what();
  }
}

void Trainer::record_train_graphs() {
  graphs_.reset();
  recording([&] {
    auto recorded = std::make_unique<StepGraphs>();
    backend_.begin_capture();
    compute_gradients();
    recorded->gradients = backend_.end_capture();
    record_update(*recorded);
    graphs_ = std::move(recorded);
    ++recordings_;
  });
}

void Trainer::record_update(StepGraphs& graphs) {
  graphs.update.reset();
  graphs.loss_scale = scaler_.scale();
  backend_.begin_capture();
  update_weights(graphs.loss_scale);
  graphs.update = backend_.end_capture();
}

void Trainer::record_infer_graph() {
  graphs_.reset();
  recording([&] {
    auto recorded = std::make_unique<StepGraphs>();
    backend_.begin_capture();
    executor_.forward();
    recorded->gradients = backend_.end_capture();
    graphs_ = std::move(recorded);
    ++recordings_;
  });
}

std::string Trainer::graph_status() const {
  if (!config_.device_graphs) return "off (device graphs disabled)";
  if (!backend_.can_capture()) return "off (this backend runs each op as it is issued)";
  if (!graph_failure_.empty()) return "off after a failed recording: " + graph_failure_;
  if (recordings_ == 0) return "not yet recorded (the first step runs eagerly)";
  std::string update;
  if (update_recordings_ > 0)
    update = "; the update recorded again at " + std::to_string(update_recordings_) +
             (update_recordings_ == 1 ? " loss-scale change" : " loss-scale changes");
  return "on (" + std::to_string(recordings_) + (recordings_ == 1 ? " recording" : " recordings") +
         update + "; the first step ran eagerly)";
}

std::vector<GradientBucket> Trainer::gradient_buckets() const {
  return reducer_ ? reducer_->buckets() : std::vector<GradientBucket>{};
}

float Trainer::loss() {
  // The step's loss is the sum of its loss nodes', added in node order on the host.
  float total = 0.0f;
  for (const Tensor& t : executor_.losses()) {
    float value = 0.0f;
    backend_.to_host(t, &value);
    total += value;
  }
  return total;
}

void Trainer::fit_workspace_after_first_step() {
  if (workspace_fitted_ || eager_steps_ == 0) return;
  backend_.fit_workspace();
  workspace_fitted_ = true;
}

void Trainer::infer_step() {
  fit_workspace_after_first_step();
  if (graphs_wanted() && eager_steps_ > 0) {
    if (!graphs_ || !graphs_->current()) record_infer_graph();
    if (graphs_) {
      graphs_->gradients->launch();
      return;
    }
  }
  executor_.forward();
  ++eager_steps_;
}

void Trainer::load_weights(const Tensor& flat) {
  DLBENCH_CHECK(eager_steps_ == 0 && !graphs_, "load_weights after a step has run");
  DLBENCH_CHECK(flat.numel() == store_.count() && flat.dtype() == DType::kF32,
                "load_weights: " + std::to_string(flat.numel()) + " weights for a model of " +
                    std::to_string(store_.count()));
  backend_.copy(flat, store_.flat_weights());
  store_.refresh_compute_weights();
}

int Trainer::load_weights_by_name(const Trainer& from, bool every) {
  DLBENCH_CHECK(eager_steps_ == 0 && !graphs_, "load_weights_by_name after a step has run");
  std::unordered_map<std::string_view, const ParameterSlice*> theirs;
  for (const ParameterSlice& s : from.store_.slices()) theirs.emplace(s.name, &s);
  const Tensor mine = store_.flat_weights(), source = from.store_.flat_weights();
  auto part = [](const Tensor& flat, const ParameterSlice& s) {
    return Tensor(flat.data_as<float>() + s.offset, {s.count}, DType::kF32, flat.device());
  };
  int copied = 0;
  for (const ParameterSlice& s : store_.slices()) {
    const auto found = theirs.find(s.name);
    if (found == theirs.end()) {
      DLBENCH_CHECK(!every, "load_weights_by_name: no parameter " + s.name + " to copy from");
      continue;
    }
    DLBENCH_CHECK(found->second->count == s.count,
                  "load_weights_by_name: " + s.name + " holds " + std::to_string(s.count) +
                      " weights here, " + std::to_string(found->second->count) + " there");
    backend_.copy(part(source, *found->second), part(mine, s));
    ++copied;
  }
  store_.refresh_compute_weights();
  return copied;
}

void Trainer::load_state(const Trainer& trained) {
  DLBENCH_CHECK(eager_steps_ == 0 && !graphs_, "load_state after a step has run");
  executor_.copy_state_from(trained.executor_);
}

std::int64_t Trainer::forward_macs() const {
  return nn::forward_macs(graph());
}

std::int64_t Trainer::train_macs() const {
  return nn::train_macs(graph());
}

MemoryReport Trainer::memory() const {
  MemoryReport r;
  r.parameters = store_.weight_bytes();
  r.optimizer = store_.grad_bytes() + (optimizer_ ? optimizer_->state_bytes() : 0);
  r.state = executor_.state_bytes();
  r.activations = executor_.activation_bytes();
  r.lent_workspace = executor_.lent_workspace_bytes();
  return r;
}

}  // namespace dlbench::nn
