// Adam and AdamW (PyTorch's torch.optim.Adam / AdamW), dense and lazy over the touched rows of
// a table, on flat f32 buffers. At step t (the device counter after its increment):
//   AdamW: w = w (1 - lr wd);            Adam: g' = s g + wd w   (else g' = s g)
//   m = m + (1 - beta1)(g' - m);         v = beta2 v + (1 - beta2) g' g'
//   w = w - (lr / bc1) m / (sqrt(v) / sqrt(bc2) + eps),   bc1 = 1 - beta1^t, bc2 = 1 - beta2^t
// The step counter lives on the device: a one-thread kernel increments it, then each block of
// the update reads t and derives the coefficients with adam_math.h (as the CPU backend does on
// the host), so a recorded device graph replays with the right bias corrections. Per element, the
// products and sums are rounded one at a time (no fused multiply-add) in the CPU backend's
// order, and sqrt and division are IEEE, so CPU and GPU agree to the ulp of pow.
#include "engine/backend/adam_math.h"
#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {
namespace {

__global__ void increment_kernel(std::int32_t* counter) {
  *counter += 1;
}

__device__ __forceinline__ void adam_step(float& w, float g, float& m, float& v,
                                          const AdamCoefficients& c) {
  w = __fmul_rn(w, c.lr_decay);
  g = __fadd_rn(__fmul_rn(c.scale, g), __fmul_rn(c.l2, w));
  m = __fadd_rn(m, __fmul_rn(c.one_minus_beta1, __fsub_rn(g, m)));
  v = __fadd_rn(__fmul_rn(c.beta2, v), __fmul_rn(__fmul_rn(c.one_minus_beta2, g), g));
  const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(v), c.bc2_sqrt), c.eps);
  w = __fsub_rn(w, __fmul_rn(c.step_size, __fdiv_rn(m, denom)));
}

// The gradients' sum of squares where clipping (null otherwise).
__device__ __forceinline__ float clip_input(const float* sum_squares) {
  return sum_squares != nullptr ? *sum_squares : 0.0f;
}

__global__ void adam_kernel(AdamParams p, const std::int32_t* step, const float* sum_squares,
                            float* w, const float* g, float* m, float* v, std::int64_t n) {
  __shared__ AdamCoefficients c;
  if (threadIdx.x == 0) c = adam_coefficients(p, *step, clip_input(sum_squares));
  __syncthreads();
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    adam_step(w[i], g[i], m[i], v[i], c);
}

// One block per row at a time; an untouched row is skipped by the whole block.
__global__ void sparse_adam_kernel(AdamParams p, const std::int32_t* step, const float* sum_squares,
                                   float* w, const float* g, float* m, float* v,
                                   const std::int32_t* touched, std::int64_t rows,
                                   std::int64_t cols) {
  __shared__ AdamCoefficients c;
  if (threadIdx.x == 0) c = adam_coefficients(p, *step, clip_input(sum_squares));
  __syncthreads();
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    if (touched[r] == 0) continue;
    for (std::int64_t j = r * cols + threadIdx.x; j < (r + 1) * cols; j += blockDim.x)
      adam_step(w[j], g[j], m[j], v[j], c);
  }
}

}  // namespace

void increment_on_device(std::int32_t* counter, cudaStream_t stream) {
  increment_kernel<<<1, 1, 0, stream>>>(counter);
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::adam_update_impl(const AdamParams& p, const Tensor& step, const Tensor& weights,
                                   const Tensor& grads, const Tensor& m, const Tensor& v,
                                   const Tensor& sum_squares) {
  const char* op = "adam_update";
  activate();
  for (const Tensor* t : {&step, &weights, &grads, &m, &v}) require_here(*t, op, "operand");
  if (sum_squares.defined()) require_here(sum_squares, op, "sum_squares");
  increment_on_device(step.data_as<std::int32_t>(), stream_);
  const std::int64_t n = weights.numel();
  if (n == 0) return;
  adam_kernel<<<grid_for(n), kBlock, 0, stream_>>>(
      p, step.data_as<std::int32_t>(), sum_squares.data_as<float>(), weights.data_as<float>(),
      grads.data_as<float>(), m.data_as<float>(), v.data_as<float>(), n);
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::sparse_adam_update_impl(const AdamParams& p, const Tensor& step,
                                          const Tensor& weights, const Tensor& grads,
                                          const Tensor& m, const Tensor& v, const Tensor& touched,
                                          const Tensor& sum_squares) {
  const char* op = "sparse_adam_update";
  activate();
  for (const Tensor* t : {&step, &weights, &grads, &m, &v, &touched})
    require_here(*t, op, "operand");
  if (sum_squares.defined()) require_here(sum_squares, op, "sum_squares");
  increment_on_device(step.data_as<std::int32_t>(), stream_);
  const std::int64_t rows = weights.dim(0), cols = weights.dim(1);
  if (rows == 0 || cols == 0) return;
  const unsigned threads =
      static_cast<unsigned>(std::clamp<std::int64_t>((cols + 31) / 32 * 32, 32, 256));
  sparse_adam_kernel<<<static_cast<unsigned>(std::clamp<std::int64_t>(rows, 1, 65535)), threads, 0,
                       stream_>>>(p, step.data_as<std::int32_t>(), sum_squares.data_as<float>(),
                                  weights.data_as<float>(), grads.data_as<float>(),
                                  m.data_as<float>(), v.data_as<float>(),
                                  touched.data_as<std::int32_t>(), rows, cols);
  CUDA_CHECK_LAUNCH();
}

}  // namespace dlbench::backend::cuda
