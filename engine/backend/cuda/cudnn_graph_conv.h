// One plain convolution pass (forward, backward-data or backward-filter) on cuDNN's graph API,
// 2D or 3D, channels-last, computing in f32: out = pass + beta * out.
//
// Why a second route beside the legacy one (cudnnFind*/cudnnConvolution*): the legacy entry
// points reach only some of cuDNN's engines. Strict-f32 3D backward passes in NDHWC ran 2.4 to
// 17 times slower there than on the engines the graph API's heuristics propose: PyTorch's own
// two paths on 3D U-Net's shapes took 135 against 55 ms (3x3x3, 32 channels at 128^3, forward
// and backward) and 79 against 7 ms (its 1x1x1 head), and dlbench's legacy route matched
// PyTorch's legacy path (H200, cuDNN 9.14, 2026-11-28).
//
// Built once per (pass, shape, dtype, math): the heuristics (mode A, then fallback) propose
// engine configurations; up to kCandidates distinct engines whose plans finalize within the
// workspace limit are each timed with the caller's timer on the caller's operands, and the
// fastest is kept. Strict f32 skips engines noted as tensor-core, down-converting or
// reduced-precision. No engine is an answer, not an error: ok() is false and
// unsupported_reason() says why. beta 1 (accumulating) gets its own plan on the same engine
// when first asked; where the engine has none, run() says so and the caller takes its other
// route.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/cuda/conv_direction.h"
#include "engine/backend/cuda/cudnn_fused_conv.h"
#include "engine/backend/cuda/cudnn_graph.h"
#include "engine/backend/op_params.h"
#include "engine/core/dtype.h"

namespace dlbench::backend::cuda {

class GraphConv {
 public:
  // Device time of one call of `work` on the stream, in ms (the backend's timer).
  using Timer = std::function<float(const std::function<void()>& work)>;
  static constexpr int kCandidates = 3;

  // Operands in forward naming whatever the pass: x [n, (d,) h, w, c], w KRSC (KTRSC),
  // y [n, ..., k]; the pass writes y (forward), x (backward-data) or w (backward-filter).
  // `workspace` holds workspace_limit bytes for the timing runs.
  GraphConv(cudnnHandle_t handle, ConvDirection direction, const ConvParams& params, DType dtype,
            std::size_t workspace_limit, void* x, void* w, void* y, void* workspace,
            const Timer& timer);
  GraphConv(const GraphConv&) = delete;
  GraphConv& operator=(const GraphConv&) = delete;

  bool ok() const { return best_.has_value(); }
  const std::string& unsupported_reason() const { return unsupported_reason_; }
  float best_ms() const { return best_ms_; }
  std::size_t workspace_bytes() const { return ok() ? best_->workspace : 0; }
  const ChosenEngine& chosen() const { return best_->chosen; }

  // out = pass + beta * out on the handle's stream, beta 0 or 1; false (nothing run) when the
  // chosen engine has no plan for beta 1. workspace: at least workspace_bytes().
  bool run(cudnnHandle_t handle, void* x, void* w, void* y, void* workspace, float beta);

 private:
  // One execution plan and every descriptor it was built from (the graph shared with the
  // other candidates), alive as long as it is: cuDNN copies what it needs, but nothing
  // promises that for every version.
  struct Plan {
    std::shared_ptr<const std::deque<BackendDescriptor>> graph;
    std::optional<BackendDescriptor> config;
    std::optional<BackendDescriptor> plan;
    std::size_t workspace = 0;
    ChosenEngine chosen;
  };
  // The operation graph for `beta`, kept in parts; nullptr (and why) where cuDNN refuses it.
  const BackendDescriptor* build_graph(cudnnHandle_t handle, float beta,
                                       std::deque<BackendDescriptor>& parts, std::string* why);
  // Plans of the graph's engines, best first as the heuristics rank them: at most `limit`
  // (only engine `only` when it is >= 0), each within the workspace limit.
  std::vector<Plan> plans(cudnnHandle_t handle, float beta, std::int64_t only, int limit);
  void execute_plan(cudnnHandle_t handle, const Plan& plan, void* x, void* w, void* y,
                    void* workspace) const;

  ConvDirection direction_;
  ConvParams params_;
  DType dtype_;
  std::size_t workspace_limit_;
  std::optional<Plan> best_;
  std::optional<Plan> accumulating_;  // beta 1, on best_'s engine
  bool accumulating_tried_ = false;
  float best_ms_ = 0.0f;
  std::string unsupported_reason_;
};

}  // namespace dlbench::backend::cuda
