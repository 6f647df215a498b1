// Fused attention on CUDA: the scores never leave shared memory (FlashAttention-2's scheme,
// written for this engine), for f16 and bf16 at head widths 32, 64 and 128. The operands, masks,
// statistics and gradient modes are Backend::attention_forward's and attention_backward's; the
// unfused path (cuda_attention.cu) runs everything else and is what this is held to.
// They run only where AttentionParams::kernel asks (kFlash): as written (WMMA through shared
// memory, no copy pipelining) they measured 2.2-4.5x slower than the unfused path on an H200
// (docs/measurements/bert.md), so models leave them off until they are faster.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include <cuda_runtime.h>

#include "engine/backend/op_params.h"
#include "engine/core/tensor.h"

namespace dlbench::backend::cuda {

// Whether the fused kernels can run this call: a dtype and head width they have, every
// operand aligned for 16-byte loads, the (sample, head) pairs within a grid's second dimension
// and the shared memory the forward (or backward) kernel asks within the device's limit.
bool flash_attention_applies(const AttentionParams& p,
                             std::initializer_list<const Tensor*> operands, bool backward);

// Lengths: device i32 [batch] or null (every position).
void flash_attention_forward(const AttentionParams& p, const Tensor& q, const Tensor& k,
                             const Tensor& v, const std::int32_t* q_lengths,
                             const std::int32_t* kv_lengths, const Tensor& o, float* stats,
                             cudaStream_t stream);

// The f32 dq accumulator and the rows' sum(dO o), in bytes.
std::size_t flash_attention_backward_workspace(const AttentionParams& p);
void flash_attention_backward(const AttentionParams& p, const Tensor& q, const Tensor& k,
                              const Tensor& v, const Tensor& o, const Tensor& dout,
                              const float* stats, const std::int32_t* q_lengths,
                              const std::int32_t* kv_lengths, const Tensor& dq, const Tensor& dk,
                              const Tensor& dv, GradMode mode, void* workspace,
                              cudaStream_t stream);

}  // namespace dlbench::backend::cuda
