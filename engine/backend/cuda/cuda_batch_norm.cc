// Batch norm on cuDNN over x viewed as [rows, channels] (an NHWC tensor's N*H*W rows).
//
// Training:  mean_c = (1/R) sum_r x[r, c],  var_c = (1/R) sum_r (x[r, c] - mean_c)^2  (biased)
//            y = gamma_c (x - mean_c) inv_std_c + beta_c,  inv_std_c = 1 / sqrt(var_c + eps)
//            running_mean = (1 - m) running_mean + m mean
//            running_var  = (1 - m) running_var  + m var R / (R - 1)   (unbiased)
// Inference: the same normalization with the running statistics.
// Backward:  xhat = (x - mean) inv_std
//            dbeta_c = sum_r dy,  dgamma_c = sum_r dy xhat
//            dx = gamma_c inv_std_c (dy - dbeta_c / R - xhat dgamma_c / R)
//
// This is cuDNN's spatial batch norm exactly: its "saved inverse variance" is inv_std, its
// exponentialAverageFactor is our momentum (running = factor * batch + (1 - factor) * running)
// and its running variance is the unbiased one. [rows, channels] is described to cuDNN as an
// NHWC tensor of rows images of 1x1 pixels: the same memory, normalized over N*H*W = rows.
// The per-channel tensors are f32 for every data dtype (cuDNN derives that descriptor).
// f16/bf16 training uses the persistent NHWC kernels (what PyTorch uses for channels-last);
// f32 keeps the plain spatial kernels, whose reductions are exact to f32 rounding.
#include "engine/backend/cuda/cuda_backend.h"

namespace dlbench::backend::cuda {
namespace {

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

cudnnBatchNormMode_t training_mode(DType dtype) {
  return dtype == DType::kF32 ? CUDNN_BATCHNORM_SPATIAL : CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
}

// The data descriptor and the per-channel descriptor cuDNN derives from it for a mode.
struct BnDescs {
  TensorDesc data, channel;
};

BnDescs bn_descs(const BatchNormParams& p, DType dtype, cudnnBatchNormMode_t mode) {
  BnDescs d;
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.data, CUDNN_TENSOR_NHWC,
                                         cudnn_dtype(dtype, "batch_norm"), static_cast<int>(p.rows),
                                         static_cast<int>(p.channels), 1, 1));
  CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(d.channel, d.data, mode));
  return d;
}

}  // namespace

void CudaBackend::batch_norm_forward_training_impl(const BatchNormParams& p, const Tensor& x,
                                                   const Tensor& gamma, const Tensor& beta,
                                                   const Tensor& y, const Tensor& saved_mean,
                                                   const Tensor& saved_inv_std,
                                                   const Tensor& running_mean,
                                                   const Tensor& running_var) {
  const char* op = "batch_norm_forward_training";
  activate();
  require_float(x, op, "x");
  for (const Tensor* t :
       {&x, &gamma, &beta, &y, &saved_mean, &saved_inv_std, &running_mean, &running_var})
    require_here(*t, op, "operand");
  const cudnnBatchNormMode_t mode = training_mode(x.dtype());
  const BnDescs d = bn_descs(p, x.dtype(), mode);
  CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
      cudnn_, mode, &kOne, &kZero, d.data, x.data(), d.data, y.data(), d.channel, gamma.data(),
      beta.data(), static_cast<double>(p.momentum), running_mean.data(), running_var.data(),
      static_cast<double>(p.epsilon), saved_mean.data(), saved_inv_std.data()));
}

void CudaBackend::batch_norm_forward_inference_impl(const BatchNormParams& p, const Tensor& x,
                                                    const Tensor& gamma, const Tensor& beta,
                                                    const Tensor& running_mean,
                                                    const Tensor& running_var, const Tensor& y) {
  const char* op = "batch_norm_forward_inference";
  activate();
  require_float(x, op, "x");
  for (const Tensor* t : {&x, &gamma, &beta, &y, &running_mean, &running_var})
    require_here(*t, op, "operand");
  const BnDescs d = bn_descs(p, x.dtype(), CUDNN_BATCHNORM_SPATIAL);
  CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
      cudnn_, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, d.data, x.data(), d.data, y.data(), d.channel,
      gamma.data(), beta.data(), running_mean.data(), running_var.data(),
      static_cast<double>(p.epsilon)));
}

void CudaBackend::batch_norm_backward_impl(const BatchNormParams& p, const Tensor& x,
                                           const Tensor& dy, const Tensor& gamma,
                                           const Tensor& saved_mean, const Tensor& saved_inv_std,
                                           const Tensor& dx, const Tensor& dgamma,
                                           const Tensor& dbeta, GradMode grad_mode) {
  const char* op = "batch_norm_backward";
  activate();
  require_float(x, op, "x");
  for (const Tensor* t : {&x, &dy, &gamma, &saved_mean, &saved_inv_std, &dx, &dgamma, &dbeta})
    require_here(*t, op, "operand");
  const cudnnBatchNormMode_t mode = training_mode(x.dtype());
  const BnDescs d = bn_descs(p, x.dtype(), mode);
  // dx = 1 * gradient + beta_data * dx: beta_data = 1 accumulates. dgamma and dbeta are
  // always overwritten (beta_param = 0), as the interface says.
  const float beta_data = grad_mode == GradMode::kAccumulate ? 1.0f : 0.0f;
  CUDNN_CHECK(cudnnBatchNormalizationBackward(
      cudnn_, mode, &kOne, &beta_data, &kOne, &kZero, d.data, x.data(), d.data, dy.data(), d.data,
      dx.data(), d.channel, gamma.data(), dgamma.data(), dbeta.data(),
      static_cast<double>(p.epsilon), saved_mean.data(), saved_inv_std.data()));
}

}  // namespace dlbench::backend::cuda
