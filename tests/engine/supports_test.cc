// Backend::supports: what each backend says it runs, and why not, without running anything
// (the CUDA answer is asked without a GPU).
#include <gtest/gtest.h>

#include "engine/backend/cpu/cpu_backend.h"
#if DLBENCH_HAVE_CUDA
#include "engine/backend/cuda/cuda_backend.h"
#endif

namespace dlbench::backend {
namespace {

MatmulParams relu_matmul() {
  MatmulParams p;
  p.m = 4, p.k = 8, p.n = 2, p.bias = true;
  p.activation = Activation::kRelu;
  return p;
}

TEST(SupportsTest, CpuRunsF32AndIntegerFills) {
  EXPECT_TRUE(cpu::cpu_supports(OpKind::kMatmulForward, relu_matmul(), DType::kF32));
  EXPECT_TRUE(cpu::cpu_supports(OpKind::kFillUniformInt, {}, DType::kI32));
  EXPECT_TRUE(cpu::cpu_supports(OpKind::kCopy, {}, DType::kI32));
  const Support half = cpu::cpu_supports(OpKind::kMatmulForward, relu_matmul(), DType::kF16);
  EXPECT_FALSE(half);
  EXPECT_EQ(half.reason, "the CPU backend runs matmul_forward in f32, not f16");
  EXPECT_FALSE(cpu::cpu_supports(OpKind::kConvForward, ConvParams{}, DType::kI32));
  ConvParams relu_conv;
  relu_conv.activation = Activation::kRelu;
  EXPECT_TRUE(cpu::cpu_supports(OpKind::kConvForward, relu_conv, DType::kF32));
  // The backend object gives the same answer.
  cpu::CpuBackend be;
  EXPECT_FALSE(be.supports(OpKind::kAdd, {}, DType::kBF16));
  EXPECT_TRUE(be.supports(OpKind::kAdd, {}, DType::kF32));
}

#if DLBENCH_HAVE_CUDA
TEST(SupportsTest, CudaRunsEveryFloatDtypeAndKeepsTheOptimizerInF32) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16})
    EXPECT_TRUE(cuda::cuda_supports(OpKind::kMatmulForward, relu_matmul(), t)) << to_string(t);
  EXPECT_TRUE(cuda::cuda_supports(OpKind::kSgdMomentumUpdate, SgdParams{}, DType::kF32));
  const Support sgd = cuda::cuda_supports(OpKind::kSgdMomentumUpdate, SgdParams{}, DType::kF16);
  EXPECT_FALSE(sgd);
  EXPECT_NE(sgd.reason.find("f32 master"), std::string::npos) << sgd.reason;
  EXPECT_TRUE(cuda::cuda_supports(OpKind::kFill, {}, DType::kI32));
  EXPECT_FALSE(cuda::cuda_supports(OpKind::kMatmulForward, relu_matmul(), DType::kI32));
}

// A convolution hands a batch norm its statistics where that measured faster: on CUDA in f16,
// and in bf16 on ResNet's stem (which CUDA's stem kernel may run); never on the CPU, whose batch
// norm sums its input itself.
TEST(SupportsTest, ConvolutionStatisticsWhereTheyPay) {
  ConvParams p;
  p.k = 64;
  p.statistics = true;
  EXPECT_TRUE(cuda::cuda_supports(OpKind::kConvForward, p, DType::kF16));
  for (DType t : {DType::kBF16, DType::kF32}) {
    const Support no = cuda::cuda_supports(OpKind::kConvForward, p, t);
    EXPECT_FALSE(no) << to_string(t);
    EXPECT_NE(no.reason.find("f16 only"), std::string::npos) << no.reason;
  }
  ConvParams stem = p;
  stem.n = 2, stem.h = stem.w = 224, stem.c = 3, stem.r = stem.s = 7;
  stem.stride_h = stem.stride_w = 2, stem.pad_h = stem.pad_w = 3;
  EXPECT_TRUE(cuda::cuda_supports(OpKind::kConvForward, stem, DType::kBF16));
  EXPECT_FALSE(cuda::cuda_supports(OpKind::kConvForward, stem, DType::kF32));
  stem.k = 32;  // not the stem the kernel runs
  EXPECT_FALSE(cuda::cuda_supports(OpKind::kConvForward, stem, DType::kBF16));
  EXPECT_FALSE(cpu::cpu_supports(OpKind::kConvForward, p, DType::kF32));
  p.statistics = false;
  EXPECT_TRUE(cpu::cpu_supports(OpKind::kConvForward, p, DType::kF32));
}

// The convolution's ReLU epilogue runs in every float dtype; batch norm's tails need channels
// in multiples of 8 (a byte of ReLU mask per 8 channels of a row).
TEST(SupportsTest, CudaFusesConvolutionReluAndBatchNormTails) {
  ConvParams conv;
  conv.activation = Activation::kRelu;
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16})
    EXPECT_TRUE(cuda::cuda_supports(OpKind::kConvForward, conv, t)) << to_string(t);
  BatchNormParams bn;
  bn.channels = 64;
  bn.residual = true;
  bn.activation = Activation::kRelu;
  EXPECT_TRUE(cuda::cuda_supports(OpKind::kBatchNormTraining, bn, DType::kF16));
  bn.channels = 12;
  const Support odd = cuda::cuda_supports(OpKind::kBatchNormTraining, bn, DType::kF16);
  EXPECT_FALSE(odd);
  EXPECT_NE(odd.reason.find("multiples of 8"), std::string::npos) << odd.reason;
  bn.residual = false;
  bn.activation = Activation::kNone;  // a plain batch norm: any channels
  EXPECT_TRUE(cuda::cuda_supports(OpKind::kBatchNormTraining, bn, DType::kF16));
}

// Attention runs in every float dtype whatever runs it (kAuto falls back to the unfused path);
// a named fused kernel is supported only where it can run, and says why not: cuDNN's in f16 and
// bf16 at head widths that are multiples of 8 up to 128 (causal or not), ours in f16 and bf16 at
// 32, 64 and 128.
TEST(SupportsTest, CudaNamesAttentionKernelsOnlyWhereTheyRun) {
  AttentionParams p;
  p.heads = 12, p.head_dim = 64;
  for (AttentionKernel k : {AttentionKernel::kAuto, AttentionKernel::kUnfused})
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
      p.kernel = k;
      EXPECT_TRUE(cuda::cuda_supports(OpKind::kAttentionForward, p, t)) << to_string(k);
    }
  for (AttentionKernel k : {AttentionKernel::kCudnn, AttentionKernel::kFlash}) {
    p.kernel = k;
    for (DType t : {DType::kF16, DType::kBF16})
      EXPECT_TRUE(cuda::cuda_supports(OpKind::kAttentionBackward, p, t)) << to_string(k);
    const Support f32 = cuda::cuda_supports(OpKind::kAttentionForward, p, DType::kF32);
    EXPECT_FALSE(f32) << to_string(k);
    EXPECT_NE(f32.reason.find("f16 or bf16"), std::string::npos) << f32.reason;
  }
  p.kernel = AttentionKernel::kCudnn;
  p.causal = true;
  EXPECT_TRUE(cuda::cuda_supports(OpKind::kAttentionForward, p, DType::kF16));
  p.head_dim = 12;  // not a multiple of 8
  const Support odd = cuda::cuda_supports(OpKind::kAttentionForward, p, DType::kF16);
  EXPECT_FALSE(odd);
  EXPECT_NE(odd.reason.find("multiples of 8 up to 128, not 12"), std::string::npos) << odd.reason;
  p.head_dim = 256;
  EXPECT_FALSE(cuda::cuda_supports(OpKind::kAttentionForward, p, DType::kBF16));
  p.kernel = AttentionKernel::kFlash;
  p.head_dim = 96;
  EXPECT_FALSE(cuda::cuda_supports(OpKind::kAttentionForward, p, DType::kF16));
}
#endif

TEST(SupportsTest, EveryOpHasAName) {
  for (int op = 0; op <= static_cast<int>(kLastOpKind); ++op)
    EXPECT_STRNE(to_string(static_cast<OpKind>(op)), "?") << op;
}

}  // namespace
}  // namespace dlbench::backend
