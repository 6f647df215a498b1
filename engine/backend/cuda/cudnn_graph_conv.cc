// The graph of one convolution pass and the timed choice of its engine; see cudnn_graph_conv.h.
#include "engine/backend/cuda/cudnn_graph_conv.h"

#include <array>
#include <memory>
#include <set>
#include <utility>

#include "engine/backend/cuda/cuda_types.h"
#include "engine/core/error.h"

namespace dlbench::backend::cuda {
namespace {

constexpr std::int64_t kUidX = 1;
constexpr std::int64_t kUidW = 2;
constexpr std::int64_t kUidY = 3;

constexpr std::array<cudnnBackendHeurMode_t, 2> kHeuristicModes = {CUDNN_HEUR_MODE_A,
                                                                   CUDNN_HEUR_MODE_FALLBACK};

}  // namespace

GraphConv::GraphConv(cudnnHandle_t handle, ConvDirection direction, const ConvParams& params,
                     DType dtype, std::size_t workspace_limit, void* x, void* w, void* y,
                     void* workspace, const Timer& timer)
    : direction_(direction), params_(params), dtype_(dtype), workspace_limit_(workspace_limit) {
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16) {
    unsupported_reason_ =
        std::string("the graph route takes f32, f16 or bf16, not ") + to_string(dtype);
    return;
  }
  std::vector<Plan> candidates = plans(handle, 0.0f, -1, kCandidates);
  if (candidates.empty()) return;  // plans() said why
  std::string failed;
  for (Plan& candidate : candidates) {
    float ms = 0.0f;
    try {
      ms = timer([&] { execute_plan(handle, candidate, x, w, y, workspace); });
    } catch (const Error& e) {  // an engine that finalized but does not run: not a candidate
      failed = e.what();
      continue;
    }
    if (!best_ || ms < best_ms_) {
      best_ms_ = ms;
      best_ = std::move(candidate);
    }
  }
  if (!best_) unsupported_reason_ = "no proposed engine ran: " + failed;
}

const BackendDescriptor* GraphConv::build_graph(cudnnHandle_t handle, float beta,
                                                std::deque<BackendDescriptor>& parts,
                                                std::string* why) {
  const ConvParams& p = params_;
  const cudnnDataType_t io = cudnn_dtype(dtype_, "graph convolution");
  auto tensor = [&](const char* name, std::int64_t uid,
                    std::vector<std::int64_t> dims) -> const BackendDescriptor& {
    std::vector<std::int64_t> strides = channels_last_strides(dims);
    return parts.emplace_back(
        make_tensor({name, uid, std::move(dims), std::move(strides), io, Storage::kMemory}));
  };
  const BackendDescriptor& x = tensor("x", kUidX, p.logical_input_dims());
  const BackendDescriptor& w = tensor("w", kUidW, p.logical_weight_dims());
  const BackendDescriptor& y = tensor("y", kUidY, p.logical_output_dims());
  const BackendDescriptor& conv = parts.emplace_back(
      make_convolution(p.spatial_pads(), p.spatial_strides(), p.spatial_dilations()));
  const BackendDescriptor& op = parts.emplace_back(
      direction_ == ConvDirection::kForward ? make_conv_forward_op(conv, x, w, y, beta)
      : direction_ == ConvDirection::kBackwardData
          ? make_conv_backward_data_op(conv, x, w, y, beta)
          : make_conv_backward_filter_op(conv, x, w, y, beta));
  const std::array<const BackendDescriptor*, 1> operations{&op};
  Refusable graph = make_operation_graph(handle, operations);
  if (!graph.descriptor) {
    *why = "cuDNN refused the graph: " + graph.refusal;
    return nullptr;
  }
  return &parts.emplace_back(std::move(*graph.descriptor));
}

std::vector<GraphConv::Plan> GraphConv::plans(cudnnHandle_t handle, float beta, std::int64_t only,
                                              int limit) {
  std::vector<Plan> out;
  auto graph_parts = std::make_shared<std::deque<BackendDescriptor>>();
  const BackendDescriptor* graph = build_graph(handle, beta, *graph_parts, &unsupported_reason_);
  if (graph == nullptr) return out;
  const bool strict = dtype_ == DType::kF32 && params_.math == MathMode::kStrict;
  std::set<std::int64_t> seen;  // an engine both heuristics propose is one candidate
  int refused = 0, over_limit = 0, reduced = 0;
  for (cudnnBackendHeurMode_t mode : kHeuristicModes) {
    auto [configs, heuristic_refusal] = engine_configs(*graph, mode);
    for (std::size_t i = 0; i < configs.size() && static_cast<int>(out.size()) < limit; ++i) {
      const EngineInfo info = engine_info(configs[i]);
      if ((only >= 0 && info.global_index != only) || !seen.insert(info.global_index).second)
        continue;
      if (strict && uses_reduced_precision(info)) {
        ++reduced;
        continue;
      }
      Refusable plan = make_execution_plan(handle, configs[i]);
      if (!plan.descriptor) {
        ++refused;
        continue;
      }
      const std::int64_t bytes = plan_workspace_bytes(*plan.descriptor);
      if (bytes < 0 || static_cast<std::uint64_t>(bytes) > workspace_limit_) {
        ++over_limit;
        continue;
      }
      Plan p;
      p.workspace = static_cast<std::size_t>(bytes);
      p.chosen = {heuristic_name(mode), static_cast<int>(i), info.global_index,
                  to_string(info.numerical_notes)};
      p.graph = graph_parts;
      p.config.emplace(std::move(configs[i]));
      p.plan = std::move(plan.descriptor);
      out.push_back(std::move(p));
    }
  }
  if (out.empty()) {
    unsupported_reason_ = "no engine runs this convolution pass (" + std::to_string(reduced) +
                          " skipped as reduced precision under strict f32, " +
                          std::to_string(refused) + " refused, " + std::to_string(over_limit) +
                          " over the workspace limit of " + std::to_string(workspace_limit_) +
                          " bytes)";
  }
  return out;
}

void GraphConv::execute_plan(cudnnHandle_t handle, const Plan& plan, void* x, void* w, void* y,
                             void* workspace) const {
  const std::array<std::int64_t, 3> uids{kUidX, kUidW, kUidY};
  const std::array<void*, 3> pointers{x, w, y};
  execute(handle, *plan.plan, uids, pointers, plan.workspace > 0 ? workspace : nullptr);
}

bool GraphConv::run(cudnnHandle_t handle, void* x, void* w, void* y, void* workspace, float beta) {
  DLBENCH_CHECK(ok(), "GraphConv::run without an engine: " + unsupported_reason_);
  DLBENCH_CHECK(beta == 0.0f || beta == 1.0f, "the graph route overwrites or adds (beta 0 or 1)");
  if (!aligned16(x) || !aligned16(w) || !aligned16(y)) return false;  // planned for aligned
  if (beta == 0.0f) {
    execute_plan(handle, *best_, x, w, y, workspace);
    return true;
  }
  if (!accumulating_tried_) {
    accumulating_tried_ = true;
    std::vector<Plan> same = plans(handle, 1.0f, best_->chosen.engine_global_index, 1);
    if (!same.empty() && same.front().workspace <= best_->workspace)
      accumulating_ = std::move(same.front());
  }
  if (!accumulating_) return false;
  execute_plan(handle, *accumulating_, x, w, y, workspace);
  return true;
}

}  // namespace dlbench::backend::cuda
