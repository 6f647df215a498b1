// A fused convolution forward on cuDNN's graph API: y = relu(conv(x, w) + b + r), the bias, the
// residual r (shaped as y) and the ReLU each optional, in one execution plan. Activations NHWC,
// weights KRSC, bias [K]; f32 (strict or TF32), f16 or bf16 tensors, computing in f32.
//
//   y[n, p, q, k] = relu(b[k] + r[n, p, q, k] + sum_{r, s, c} x[n, p*sh - ph + r*dh, q*sw - pw +
//                                                                s*dw, c] w[k, r, s, c])
//
// The intermediates (conv output, + bias, + residual) are virtual f32 tensors: they never reach
// memory and are not rounded to the output dtype between the steps.
//
// With params.statistics, the same plan also writes the batch-norm statistics of y, f32 [2, K]:
// s[0, k] = sum_{n,p,q} y[n, p, q, k] and s[1, k] = sum_{n,p,q} y[n, p, q, k]^2, so a batch
// norm after the convolution need not read y once more for them (cuDNN's "conv + genstats"; on
// an H100, cuDNN 9.14 documents it for f16).
//
// With InputPrologue::kScaleShiftRelu the convolution reads relu(x * scale[c] + shift[c]) in
// place of x (scale and shift [C], the dtype's): the previous layer's batch norm and ReLU applied
// as the input is read, so that activation is never written (cuDNN's ConvBNfprop pattern,
// "scale-bias-ReLU-conv-genstats"; documented for f16). The padding is zeros of the transformed
// input, as if it had been written out. No model uses it: with the backward-weights pass that
// must then apply the same prologue, ResNet-50's fp16 step would lose time on an H200
// (docs/measurements/resnet-vgg.md, 2026-11-30; tests/gpu/conv_prologue_probe.cc times both).
//
// Built once per (shape, dtype, math): the constructor asks cuDNN's heuristics (mode A, then
// fallback) for engine configurations and keeps the first whose execution plan finalizes and
// whose workspace stays within the caller's limit (workspace_limit). For strict f32 it skips
// engines noted as tensor-core, down-converting or reduced-precision (TF32). No engine is an
// answer, not an error: ok() is false and unsupported_reason() says why, so a caller can fall back
// to the unfused path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>

#include "engine/backend/cuda/cudnn_graph.h"
#include "engine/backend/op_params.h"
#include "engine/core/dtype.h"

namespace dlbench::backend::cuda {

// What the plan does to x before the convolution reads it.
enum class InputPrologue { kNone, kScaleShiftRelu };

class FusedConvForward {
 public:
  // Throws only for malformed input or a cuDNN failure other than "not supported".
  FusedConvForward(cudnnHandle_t handle, const ConvParams& params, DType dtype,
                   std::size_t workspace_limit = std::numeric_limits<std::size_t>::max(),
                   InputPrologue prologue = InputPrologue::kNone);

  bool ok() const { return plan_.has_value(); }
  const std::string& unsupported_reason() const { return unsupported_reason_; }
  const ChosenEngine& chosen() const { return chosen_; }
  std::size_t workspace_bytes() const { return workspace_bytes_; }
  const ConvParams& params() const { return params_; }
  DType dtype() const { return dtype_; }

  // Whether run() takes these pointers: the plan was built for 16-byte aligned tensors, both
  // rows of the statistics included (K a multiple of 4), and a plan with statistics needs
  // somewhere to write them.
  bool takes(const void* x, const void* w, const void* bias, const void* residual, const void* y,
             const float* statistics, const void* scale = nullptr,
             const void* shift = nullptr) const;

  // Runs on the handle's stream (any handle on the device the plan was built on), on pointers
  // takes() accepts: bias non-null exactly when params().bias, residual exactly when
  // params().residual, statistics exactly when params().statistics; workspace at least
  // workspace_bytes() (null when that is 0); scale and shift (16-byte aligned) exactly when the
  // plan has the prologue.
  void run(cudnnHandle_t handle, const void* x, const void* w, const void* bias,
           const void* residual, void* y, void* workspace, float* statistics = nullptr,
           const void* scale = nullptr, const void* shift = nullptr) const;
  InputPrologue prologue() const { return prologue_; }

 private:
  const BackendDescriptor& keep(BackendDescriptor descriptor);
  void build_graph(cudnnHandle_t handle);

  ConvParams params_;
  DType dtype_;
  std::size_t workspace_limit_;
  InputPrologue prologue_;
  // Every descriptor the plan was built from (tensors, operations, graph, engine config), alive
  // as long as the plan: cuDNN copies what it needs, but nothing promises that for every
  // version. A deque, so references to earlier ones stay valid as more are added.
  std::deque<BackendDescriptor> parts_;
  std::optional<BackendDescriptor> plan_;
  std::size_t workspace_bytes_ = 0;
  ChosenEngine chosen_;
  std::string unsupported_reason_;
};

}  // namespace dlbench::backend::cuda
