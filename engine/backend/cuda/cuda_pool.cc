// Pooling on cuDNN, forward and backward side by side.
//
//   max:     y[n, p, q, c] = max over the window of x (padding never wins);
//            dx gets dy at the position that won
//   average: y = (1/count) sum over the window's in-bounds elements, count excluding padding;
//            dx[h, w] = sum over the windows containing (h, w) of dy / count
//
// Max pooling uses cuDNN's deterministic variant: overlapping windows (ResNet's 3x3 stride 2)
// then add their gradients in a fixed order. cuDNN's backward recomputes where the maximum was
// from x and y, so no workspace is needed (pool_workspace_bytes is 0). dx = grad + beta * dx,
// so GradMode::kAccumulate is beta = 1.
#include "engine/backend/cuda/cuda_backend.h"

namespace dlbench::backend::cuda {
namespace {

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

struct PoolDescs {
  TensorDesc x, y;
  PoolDesc pool;
};

PoolDescs pool_descs(const PoolParams& p, DType dtype) {
  PoolDescs d;
  const cudnnDataType_t t = cudnn_dtype(dtype, "pool");
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NHWC, t, static_cast<int>(p.n),
                                         static_cast<int>(p.c), static_cast<int>(p.h),
                                         static_cast<int>(p.w)));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NHWC, t, static_cast<int>(p.n),
                                         static_cast<int>(p.c), static_cast<int>(p.out_h()),
                                         static_cast<int>(p.out_w())));
  const cudnnPoolingMode_t mode = p.kind == PoolKind::kMax
                                      ? CUDNN_POOLING_MAX_DETERMINISTIC
                                      : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  CUDNN_CHECK(cudnnSetPooling2dDescriptor(d.pool, mode, CUDNN_NOT_PROPAGATE_NAN, p.window_h,
                                          p.window_w, p.pad_h, p.pad_w, p.stride_h, p.stride_w));
  return d;
}

}  // namespace

void CudaBackend::pool_forward_impl(const PoolParams& p, const Tensor& x, const Tensor& y,
                                    const Tensor&) {
  const char* op = "pool_forward";
  activate();
  require_float(x, op, "x"), require_here(x, op, "x"), require_here(y, op, "y");
  const PoolDescs d = pool_descs(p, x.dtype());
  CUDNN_CHECK(cudnnPoolingForward(cudnn_, d.pool, &kOne, d.x, x.data(), &kZero, d.y, y.data()));
}

void CudaBackend::pool_backward_impl(const PoolParams& p, const Tensor& x, const Tensor& y,
                                     const Tensor& dy, const Tensor&, const Tensor& dx,
                                     GradMode mode) {
  const char* op = "pool_backward";
  activate();
  require_float(x, op, "x");
  for (const Tensor* t : {&x, &y, &dy, &dx}) require_here(*t, op, "operand");
  const PoolDescs d = pool_descs(p, x.dtype());
  const float beta = mode == GradMode::kAccumulate ? 1.0f : 0.0f;
  CUDNN_CHECK(cudnnPoolingBackward(cudnn_, d.pool, &kOne, d.y, y.data(), d.y, dy.data(), d.x,
                                   x.data(), &beta, d.x, dx.data()));
}

}  // namespace dlbench::backend::cuda
