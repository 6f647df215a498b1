// Scaled dot-product attention on cuDNN's fused flash-attention engines, reached through the
// graph API's backend descriptors (cudnn_graph.h): the scores never reach memory. cuDNN 9.14
// has no single attention operation in the backend API; it recognizes the composite graph
// below and runs it as one fused kernel (forward) or a few (backward).
//
// Tensors are 4-D [batch, heads, seq, head_dim] with strides that say our token-major layout
// ([batch * seq, heads * head_dim] row-major); K and V enter the products transposed by
// swapping their last two dims and strides. The lengths (i32 [batch, 1, 1, 1] on the device)
// bound each sample's products (the matmuls' M, N and K overrides) and mask the scores; a
// causal mask (top-left: query i sees keys 0..i) is a second mask after them.
//
//   forward:  S = scale Q K^T | padding mask (-inf) | max, exp, sum -> stats = max + log(sum),
//             P = exp / sum (rounded to the dtype) | O = P V
//   backward: D = rowsum(dO o O) (f32, in our workspace) | S and the mask again |
//             P = exp(S - stats) | dV = P^T dO | dS = scale P (dO V^T - D) |
//             dK = dS^T Q | dQ = dS K (summed in f32 in our workspace, then cast)
//
// The statistics are the natural log-sum-exp of the scaled scores, as the unfused path writes
// them, so either path's forward serves the other's backward. Where a query sees no key (past
// its sample's query length, or a key length of 0) cuDNN leaves no usable output row and -inf
// or NaN statistics: the caller clears those rows to 0 after forward(), as the op promises,
// and backward() then gives them no gradient (it zeroes the gradients first where lengths are
// given). f16 and bf16, head widths a multiple of 8 up to 128.
//
// Built once per shape and pass; a graph or plan cuDNN refuses is an answer (ok() false,
// unsupported_reason() says why), not an error, so a caller can fall back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>

#include <cuda_runtime.h>

#include "engine/backend/cuda/cudnn_graph.h"
#include "engine/backend/op_params.h"
#include "engine/core/memory.h"
#include "engine/core/tensor.h"

namespace dlbench::backend::cuda {

// Why cuDNN's attention cannot take this call before any graph is built (dtype, head width,
// mask), or empty.
std::string cudnn_attention_refusal(const AttentionParams& p, DType dtype);

// Each sample's query and key lengths on the device (i32 [batch]); null: every position.
struct SampleLengths {
  const std::int32_t* q = nullptr;
  const std::int32_t* kv = nullptr;
};

class CudnnAttention {
 public:
  enum class Pass { kForward, kBackward };

  // Allocates the full-length arrays it passes where a call has no lengths. A cuDNN that
  // refuses the graph or any descriptor of it is an answer (ok() false); out of memory and our
  // own checks throw.
  CudnnAttention(cudnnHandle_t handle, DeviceAllocator& allocator, const AttentionParams& p,
                 DType dtype, Pass pass);

  bool ok() const { return plan_.has_value(); }
  const std::string& unsupported_reason() const { return unsupported_reason_; }
  const ChosenEngine& chosen() const { return chosen_; }
  // The scratch a pass needs: the plan's, room for the clamped lengths (length_scratch) and,
  // backward, the row sums and the dQ accumulator.
  std::size_t workspace_bytes() const;
  // Where in that workspace a caller puts lengths clamped to [0, seq] (i32 [batch] of query
  // lengths, then [batch] of key lengths): cuDNN takes them as its products' extents, so a
  // length past the sequence must never reach it.
  std::int32_t* length_scratch(void* workspace) const;

  // Whether every operand is aligned as the plan was built for (16 bytes).
  static bool takes(std::initializer_list<const Tensor*> operands);

  // Lengths within [0, seq] (see length_scratch). On the handle's stream.
  void forward(cudnnHandle_t handle, const Tensor& q, const Tensor& k, const Tensor& v,
               SampleLengths lengths, const Tensor& o, float* stats, void* workspace) const;
  // Overwrites dq, dk and dv (no accumulating form), zeroing them first on `stream` (the
  // handle's) where lengths are given.
  void backward(cudnnHandle_t handle, const Tensor& q, const Tensor& k, const Tensor& v,
                const Tensor& o, const Tensor& dout, const float* stats, SampleLengths lengths,
                const Tensor& dq, const Tensor& dk, const Tensor& dv, void* workspace,
                cudaStream_t stream) const;

 private:
  void build_forward(cudnnHandle_t handle);
  void build_backward(cudnnHandle_t handle);
  void choose(cudnnHandle_t handle, std::span<const BackendDescriptor* const> operations);
  std::size_t plan_bytes() const;      // the plan's workspace, rounded up to 256 bytes
  std::size_t lengths_bytes() const;   // length_scratch's
  std::size_t row_sums_bytes() const;  // backward: D, f32 per score row
  // The lengths to bind: the caller's, or the full-length arrays where it has none.
  SampleLengths bound(SampleLengths given) const;

  AttentionParams p_;
  DType dtype_;
  Pass pass_;
  Buffer full_lengths_;  // i32 [batch] of seq_q, then [batch] of seq_kv
  // The by-value scalars (with p_.scale), host memory cuDNN reads at each execution.
  float one_ = 1.0f, negative_infinity_ = 0.0f;
  std::deque<BackendDescriptor> parts_;  // every descriptor the plan was built from
  std::optional<BackendDescriptor> plan_;
  std::size_t plan_workspace_bytes_ = 0;
  ChosenEngine chosen_;
  std::string unsupported_reason_;
};

}  // namespace dlbench::backend::cuda
