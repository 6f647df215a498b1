// What the CUDA backend runs: compute ops in f32, f16 and bf16 (accumulating in f32), the
// optimizers on their f32 master buffers only (i32 step counters and row marks aside), embedding
// lookups and their gradients of any float table (i32 ids), fills and copies also of i32, and the
// matmul's ReLU epilogue (cuBLASLt's RELU_BIAS or RELU), a convolution's bias, residual and ReLU
// epilogue (cuBLASLt's epilogue, one cuDNN graph-API plan, or one pass after cuDNN's legacy
// forward, whichever measured fastest: cuda_conv.cc), batch norm with a residual add and
// ReLU in its tail (our own kernels) where the channels come in multiples of 8, and the
// matmul's GELU epilogues (cuBLASLt's GELU_BIAS, GELU_AUX_BIAS and DGELU) in f16 and bf16. Which
// algorithm runs a convolution (cuDNN or a cuBLASLt product) is the backend's own choice, measured;
// it never decides support; attention's fused kernels decide it only where a call names one
// (AttentionParams::kernel).
#include "engine/backend/cuda/cuda_backend.h"

namespace dlbench::backend::cuda {

Support cuda_supports(OpKind op, const OpParams& params, DType dtype) {
  // Measured on an H100 (2026-11-28, ResNet-50 training at batch 256): the statistics from the
  // convolution gained 4 % in f16, where cuDNN runs conv + genstats on a specialized engine,
  // and lost 4.5 % in bf16 and 2.5 % in TF32, where only its runtime-fusion engines take it.
  // ResNet's stem also writes them in bf16, where our stem kernel (cuda_conv_stem.cu) may run it.
  if (const auto* conv = std::get_if<ConvParams>(&params);
      conv && conv->statistics && dtype != DType::kF16 &&
      !(dtype == DType::kBF16 && stem_kernel_fits(*conv, dtype)))
    return Support::no(
        "a convolution writes a batch norm's statistics in f16 only, and in bf16 on ResNet's "
        "stem (faster there; slower than the batch norm's own pass elsewhere)");
  if (const auto* bn = std::get_if<BatchNormParams>(&params);
      bn && bn->has_tail() && bn->channels % 8 != 0)
    return Support::no("a batch norm's fused residual or ReLU needs channels in multiples of 8");
  // cuBLASLt's GELU epilogues: the GELU input's leading dimension (the forward's n, the
  // backward's k) must divide by 8; fp32 and TF32 are left unfused (not measured).
  if (const auto* mm = std::get_if<MatmulParams>(&params); mm && (mm->gelu || mm->gelu_gradient)) {
    if (dtype != DType::kF16 && dtype != DType::kBF16)
      return Support::no("the matmul's GELU epilogues run in f16 and bf16 on CUDA");
    if ((mm->gelu ? mm->n : mm->k) % 8 != 0)
      return Support::no("the matmul's GELU epilogues need the GELU's width in multiples of 8");
  }
  if (const auto* dice = std::get_if<SoftDiceParams>(&params);
      dice && dice->classes > kMaxRowClasses)
    return Support::no("soft Dice keeps a pixel's classes in registers: at most " +
                       std::to_string(kMaxRowClasses) + " on CUDA");
  // Attention's named fused kernels run where they can or not at all (kAuto falls back).
  if (const auto* at = std::get_if<AttentionParams>(&params)) {
    if (at->kernel == AttentionKernel::kCudnn)
      if (std::string why = cudnn_attention_refusal(*at, dtype); !why.empty())
        return Support::no(why);
    if (at->kernel == AttentionKernel::kFlash &&
        ((dtype != DType::kF16 && dtype != DType::kBF16) ||
         (at->head_dim != 32 && at->head_dim != 64 && at->head_dim != 128)))
      return Support::no(
          "our flash attention kernels take f16 or bf16 at head widths 32, 64 "
          "and 128");
  }
  if (const auto* add = std::get_if<AdditiveAttentionParams>(&params))
    if (std::string why = additive_attention_refusal(*add); !why.empty()) return Support::no(why);
  const bool is_float = dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
  if (op == OpKind::kSgdMomentumUpdate || op == OpKind::kAdamUpdate ||
      op == OpKind::kSparseAdamUpdate || op == OpKind::kSumSquares)
    return dtype == DType::kF32 ? Support::yes()
                                : Support::no("optimizer buffers are f32 master copies, not " +
                                              std::string(to_string(dtype)));
  const bool integer_ok =
      op == OpKind::kFill || op == OpKind::kFillUniformInt || op == OpKind::kCopy;
  if (is_float || (integer_ok && dtype == DType::kI32)) return Support::yes();
  return Support::no(std::string("the CUDA backend runs ") + to_string(op) +
                     " in f32, f16 or bf16" + (integer_ok ? " or i32" : "") + ", not " +
                     to_string(dtype));
}

Support CudaBackend::supports(OpKind op, const OpParams& params, DType dtype) const {
  return cuda_supports(op, params, dtype);
}

}  // namespace dlbench::backend::cuda
