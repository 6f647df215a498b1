#include "engine/nn/parameter_store.h"

#include <algorithm>
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
    case Init::kUniform:
      be.fill_uniform(t, -d.bound, d.bound, seed);
      break;
    case Init::kConstant:
      be.fill(t, d.value);
      break;
    case Init::kValues:  // state only (StateDecl::values): no parameter asks for it
      DLBENCH_CHECK(false, "a parameter cannot start from fixed values");
  }
}

}  // namespace

ParameterStore::ParameterStore(const Graph& graph, backend::Backend& backend, Mode mode,
                               DType compute, std::uint64_t seed)
    : backend_(backend), dtype_(compute) {
  const auto& params = graph.params();
  for (int g = 0; g < kParamGroups; ++g)
    for (std::size_t p = 0; p < params.size(); ++p)
      if (params[p].decl.group == static_cast<ParamGroup>(g)) {
        DLBENCH_CHECK(!params[p].users.empty(), "parameter " + params[p].name + " has no user");
        slots_.push_back({static_cast<ParamId>(p), params[p].decl, params[p].users.front()});
      }
  for (Slot& s : slots_) {
    s.offset = count_;
    count_ += s.decl.shape.numel();
    const int g = static_cast<int>(s.decl.group);
    for (int later = g; later < kParamGroups; ++later) group_end_[later] = count_;
  }

  const std::size_t floats = static_cast<std::size_t>(std::max<std::int64_t>(count_, 1));
  weights_ = Buffer(backend_.allocator(), floats * sizeof(float));
  if (mixed()) compute_weights_ = Buffer(backend_.allocator(), floats * size_of(dtype_));
  const bool train = mode == Mode::kTrain;
  if (train) {
    grads_ = Buffer(backend_.allocator(), floats * sizeof(float));
    backend_.fill(flat_grads(), 0.0f);
    if (mixed()) compute_grads_ = Buffer(backend_.allocator(), floats * size_of(dtype_));
  }

  // Slot i's seed depends on its place in the flat order only.
  std::vector<Tensor> weights(params.size()), grads(params.size()), rows(params.size());
  std::vector<std::int64_t> offsets(params.size());
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    const bool compute = mixed() && s.decl.group != ParamGroup::kKeptF32;
    auto view = [&](const Buffer& b, DType t) {
      return Tensor(static_cast<char*>(b.data()) + s.offset * static_cast<std::int64_t>(size_of(t)),
                    s.decl.shape, t, backend_.device());
    };
    initialize(backend_, view(weights_, DType::kF32), s.decl, seed + kSeedStride * (i + 1));
    offsets[s.param] = s.offset;
    weights[s.param] = compute ? view(compute_weights_, dtype_) : view(weights_, DType::kF32);
    if (train) grads[s.param] = compute ? view(compute_grads_, dtype_) : view(grads_, DType::kF32);
  }
  if (train) allocate_touched_masks(graph, rows);
  for (std::size_t p = 0; p < params.size(); ++p)
    slices_.push_back(
        {params[p].name, offsets[p], params[p].decl.shape.numel(), params[p].decl.group});
  // Each node's views in the order its layer reads them.
  const auto& nodes = graph.nodes();
  nodes_.resize(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n)
    for (ParamId p : nodes[n].params) {
      nodes_[n].weights.push_back(weights[p]);
      nodes_[n].grads.push_back(grads[p]);
      nodes_[n].rows.push_back(rows[p]);
    }
  refresh_compute_weights();
}

void ParameterStore::allocate_touched_masks(const Graph& graph, std::vector<Tensor>& rows) {
  std::int64_t total = 0;
  for (const Slot& s : slots_)
    if (s.decl.group == ParamGroup::kSparseRows) {
      DLBENCH_CHECK(s.decl.shape.rank() == 2,
                    "sparse-rows parameter " + graph.params()[s.param].name + " is not a table");
      total += s.decl.shape[0];
    }
  if (total == 0) return;
  touched_ = Buffer(backend_.allocator(), static_cast<std::size_t>(total) * sizeof(std::int32_t));
  std::int64_t row = 0;
  for (const Slot& s : slots_) {
    if (s.decl.group != ParamGroup::kSparseRows) continue;
    const std::int64_t count = s.decl.shape[0];
    const Tensor mask(static_cast<std::int32_t*>(touched_.data()) + row, {count}, DType::kI32,
                      backend_.device());
    backend_.fill(mask, 0.0f);
    rows[s.param] = mask;
    tables_.push_back({{s.offset, s.offset + s.decl.shape.numel()}, count, s.decl.shape[1], mask});
    row += count;
  }
}

ParamRange ParameterStore::range(ParamGroup group) const {
  const int g = static_cast<int>(group);
  return {g == 0 ? 0 : group_end_[g - 1], group_end_[g]};
}

Tensor ParameterStore::flat(const Buffer& b, DType dtype, ParamRange r) const {
  return Tensor(static_cast<char*>(b.data()) + r.begin * static_cast<std::int64_t>(size_of(dtype)),
                {std::max<std::int64_t>(r.size(), 1)}, dtype, backend_.device());
}

std::vector<GradientSlot> ParameterStore::gradient_slots() const {
  std::vector<GradientSlot> out;
  for (const Slot& s : slots_) {
    const ParamGroup group = s.decl.group;
    const std::size_t bytes = group != ParamGroup::kKeptF32 ? size_of(dtype_) : sizeof(float);
    out.push_back({s.offset, s.decl.shape.numel(), s.first_user, static_cast<int>(group), bytes});
  }
  return out;
}

Tensor ParameterStore::bucket_view(const GradientBucket& b) const {
  const bool compute = mixed() && b.group != static_cast<int>(ParamGroup::kKeptF32);
  return compute ? flat(compute_grads_, dtype_, {b.begin, b.end})
                 : flat(grads_, DType::kF32, {b.begin, b.end});
}

void ParameterStore::broadcast(dist::Communicator& communicator, int root) {
  // Replicas start from root's weights (the same seed gives the same ones, but a replica
  // must not depend on every device's random generator agreeing bit for bit).
  communicator.broadcast(flat_weights(), root);
  refresh_compute_weights();
}

void ParameterStore::refresh_compute_weights() {
  const ParamRange r = compute_range();
  if (mixed() && r.size() > 0)
    backend_.cast(flat(weights_, DType::kF32, r), flat(compute_weights_, dtype_, r));
}

void ParameterStore::gather_compute_grads() {
  const ParamRange r = compute_range();
  if (mixed() && r.size() > 0)
    backend_.cast(flat(compute_grads_, dtype_, r), flat(grads_, DType::kF32, r));
}

}  // namespace dlbench::nn
