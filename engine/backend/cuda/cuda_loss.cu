// Mean softmax cross-entropy over the rows of logits [m, classes], with its gradient.
//
//   p[i, j]  = exp(z[i, j] - max_j z[i, :]) / sum_j exp(z[i, j] - max_j z[i, :])
//   loss     = (1/m) sum_i (log sum_j exp(z[i, j] - max_i) - (z[i, label_i] - max_i))
//   dz[i, j] = scale (p[i, j] - [j == label_i]) / m
// With class weights w (PyTorch's weighted mean), row i counts w[label_i] times and the mean
// divides by W = sum_i w[label_i], so that the row kernels scale each gradient by w[label_i] / W.
// Subtracting the row maximum keeps exp() from overflowing. Two routes by the class count, each
// adding in an order fixed by the shape, so the loss is the same bit for bit in every run:
//   - up to kMaxRowClasses (a segmentation head: a few classes, millions of pixel rows): a
//     thread per row keeps the row in registers and writes its gradient; each block adds its
//     rows' losses in double into one partial;
//   - more classes (a classifier: ImageNet's 1000): a block per row reduces the row's maximum
//     and its sum of exponentials, writes the row's loss to scratch and its gradient;
// then a single-block kernel adds the partials (or row losses) in order, in double.
// Rows labelled p.ignore_label count for nothing, so the mean's divisor (the counted rows, or
// their weights) is added up on the device by two first kernels, in double and in an order
// fixed by the row count; label smoothing e subtracts e / classes from every gradient and
// (e / classes) sum_j (z_j - max) from the row's loss (cpu_loss.cc has the algebra).
// A label outside [0, classes) other than the ignored one makes the loss and its row's gradient
// NaN: the kernel cannot throw, and a NaN loss stops a run loudly (the CPU backend throws
// Error(kUsage) instead).
//
// Sigmoid binary cross-entropy over logits [m, 1] (the stable form, no overflow for any x):
//   loss = (1/m) sum_i max(x_i, 0) - x_i t_i + log1p(exp(-|x_i|));  dx_i = scale (sigmoid(x_i) -
//   t_i) / m
// One block walks all rows, writes the gradients and sums the row losses in double in a fixed
// order, so the loss is the same in every run and needs no scratch. m is a batch (thousands),
// so one block is enough; measure before spreading it.
#include <cmath>

#include "engine/backend/cuda/cuda_row_softmax.cuh"

namespace dlbench::backend::cuda {
namespace {

constexpr int kRowBlock = 256;
constexpr int kMeanBlock = 1024;
// Blocks of the class weights' sum: U-Net's 2M pixel labels took 1 ms in one block, a few
// microseconds spread over these.
constexpr int kWeightSumBlocks = 256;

// What a row kernel needs besides its logits: the options, the class weights (null: 1 each)
// and the mean's divisor on the device.
struct RowLoss {
  std::int32_t ignore;
  float keep, spread;  // 1 - e, and e / classes
  ScaleArg scale;
  const float* weights;
  const double* divisor;
};

// The weight of a row and its gradient's scale: w[label] (or 1) and scale w / divisor; 0 and 0
// when nothing counts.
struct RowWeight {
  float weight, grad_scale;
};
__device__ __forceinline__ RowWeight row_weight(const RowLoss& r, std::int32_t label) {
  const float w = r.weights == nullptr ? 1.0f : r.weights[label];
  const double divisor = *r.divisor;
  return {w, divisor > 0 ? static_cast<float>(r.scale.get() * w / divisor) : 0.0f};
}

// partial[b] = the counted rows' weights (1 each without weights) over block b's grid-strided
// rows, valid labels only, in double; the grid's size depends on the rows alone, so the order is
// fixed.
__global__ void label_weight_sum_kernel(const float* weights, const std::int32_t* labels,
                                        std::int64_t rows, int classes, std::int32_t ignore,
                                        double* partial) {
  double sum = 0.0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int32_t label = labels[i];
    if (label >= 0 && label < classes && label != ignore)
      sum += weights == nullptr ? 1.0 : weights[label];
  }
  sum = block_reduce(sum, Add{});
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

// *total = the sum of partial[0, n), in order.
__global__ void sum_kernel(const double* partial, int n, double* total) {
  double sum = 0.0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) sum += partial[i];
  sum = block_reduce(sum, Add{});
  if (threadIdx.x == 0) *total = sum;
}

template <class T>
__global__ void softmax_cross_entropy_kernel(const T* logits, const std::int32_t* labels,
                                             std::int64_t classes, RowLoss r, float* row_loss,
                                             T* dlogits) {
  const std::int64_t row = blockIdx.x;
  const T* z = logits + row * classes;
  T* dz = dlogits + row * classes;
  const std::int32_t label = labels[row];
  if (label == r.ignore || label < 0 || label >= classes) {
    const float fill = label == r.ignore ? 0.0f : NAN;
    for (std::int64_t j = threadIdx.x; j < classes; j += blockDim.x) dz[j] = from_f32<T>(fill);
    if (threadIdx.x == 0) row_loss[row] = fill;
    return;
  }
  float max = -INFINITY;
  for (std::int64_t j = threadIdx.x; j < classes; j += blockDim.x) max = fmaxf(max, to_f32(z[j]));
  max = block_reduce(max, Max{});
  float sum = 0.0f, shifted = 0.0f;
  for (std::int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
    sum += expf(to_f32(z[j]) - max);
    if (r.spread != 0.0f) shifted += to_f32(z[j]) - max;  // -inf logits: no 0 * inf
  }
  sum = block_reduce(sum, Add{});
  if (r.spread != 0.0f) shifted = block_reduce(shifted, Add{});
  const float log_sum = logf(sum);
  const RowWeight rw = row_weight(r, label);
  if (threadIdx.x == 0)
    row_loss[row] = rw.weight * (log_sum - r.keep * (to_f32(z[label]) - max) - r.spread * shifted);
  for (std::int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
    const float p = expf(to_f32(z[j]) - max - log_sum);
    dz[j] = from_f32<T>(rw.grad_scale * (p - (j == label ? r.keep : 0.0f) - r.spread));
  }
}

// A thread per row; block_loss[b]: the sum of block b's row losses.
template <class T>
__global__ void __launch_bounds__(kBlock)
    softmax_cross_entropy_rows_kernel(const T* logits, const std::int32_t* labels,
                                      std::int64_t rows, int classes, RowLoss r, double* block_loss,
                                      T* dlogits) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  double loss = 0.0;
  if (row < rows) {
    const T* z = logits + row * classes;
    T* dz = dlogits + row * classes;
    const std::int32_t label = labels[row];
    const bool ignored = label == r.ignore;
    const bool valid = !ignored && label >= 0 && label < classes;
    float q[kMaxRowClasses], max;
    const float log_sum = row_softmax(z, classes, q, max);
    float shifted = 0.0f;
#pragma unroll
    for (int j = 0; j < kMaxRowClasses; ++j)
      if (j < classes && r.spread != 0.0f) shifted += to_f32(z[j]) - max;
    const RowWeight rw = valid ? row_weight(r, label) : RowWeight{NAN, NAN};
    loss = ignored ? 0.0
           : valid ? rw.weight * (log_sum - r.keep * (to_f32(z[label]) - max) - r.spread * shifted)
                   : NAN;
#pragma unroll
    for (int j = 0; j < kMaxRowClasses; ++j)
      if (j < classes)
        dz[j] =
            from_f32<T>(ignored ? 0.0f
                        : valid ? rw.grad_scale * (q[j] - (j == label ? r.keep : 0.0f) - r.spread)
                                : NAN);
  }
  loss = block_reduce(loss, Add{});
  if (threadIdx.x == 0) block_loss[blockIdx.x] = loss;
}

// *mean = (sum of values[0, n)) / *divisor (0 when the divisor is), added in a fixed order in
// double.
template <class V>
__global__ void mean_kernel(const V* values, std::int64_t n, const double* divisor, float* mean) {
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += values[i];
  sum = block_reduce(sum, Add{});
  if (threadIdx.x == 0) *mean = *divisor > 0 ? static_cast<float>(sum / *divisor) : 0.0f;
}

template <class T>
__global__ void sigmoid_bce_kernel(const T* logits, const float* targets, std::int64_t rows,
                                   ScaleArg scale, float* loss, T* dlogits) {
  const float grad_scale = scale.get() / static_cast<float>(rows);
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x) {
    const float x = to_f32(logits[i]), t = targets[i];
    const float e = expf(-fabsf(x));  // in (0, 1]: never overflows
    sum += static_cast<double>(fmaxf(x, 0.0f) - x * t + log1pf(e));
    const float sigmoid = x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
    dlogits[i] = from_f32<T>(grad_scale * (sigmoid - t));
  }
  sum = block_reduce(sum, Add{});
  if (threadIdx.x == 0) *loss = static_cast<float>(sum / static_cast<double>(rows));
}

}  // namespace

void CudaBackend::sigmoid_binary_cross_entropy_impl(const Tensor& logits, const Tensor& targets,
                                                    const Tensor& loss, const Tensor& dlogits,
                                                    const LossScale& scale) {
  const char* op = "sigmoid_binary_cross_entropy";
  activate();
  for (const Tensor* t : {&logits, &targets, &loss, &dlogits}) require_here(*t, op, "operand");
  if (scale.on_device.defined()) require_here(scale.on_device, op, "loss scale");
  const std::int64_t rows = logits.dim(0);
  if (rows == 0) {
    CUDA_CHECK(cudaMemsetAsync(loss.data(), 0, sizeof(float), stream_));
    return;
  }
  dispatch_float(logits.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    sigmoid_bce_kernel<T><<<1, kMeanBlock, 0, stream_>>>(
        static_cast<const T*>(logits.data()), targets.data_as<float>(), rows, scale_arg(scale),
        loss.data_as<float>(), static_cast<T*>(dlogits.data()));
    CUDA_CHECK_LAUNCH();
  });
}

void CudaBackend::softmax_cross_entropy_impl(const Tensor& logits, const Tensor& labels,
                                             const Tensor& loss, const Tensor& dlogits,
                                             const LossScale& scale, const Tensor& class_weights,
                                             const CrossEntropyParams& p) {
  const char* op = "softmax_cross_entropy";
  activate();
  for (const Tensor* t : {&logits, &labels, &loss, &dlogits}) require_here(*t, op, "operand");
  if (scale.on_device.defined()) require_here(scale.on_device, op, "loss scale");
  const bool weighted = class_weights.defined();
  if (weighted) require_here(class_weights, op, "class_weights");
  const std::int64_t rows = logits.dim(0), classes = logits.dim(1);
  if (rows == 0) {
    CUDA_CHECK(cudaMemsetAsync(loss.data(), 0, sizeof(float), stream_));
    return;
  }
  const std::int64_t blocks = (rows + kBlock - 1) / kBlock;
  const bool by_rows = classes <= kMaxRowClasses;
  // Scratch: the divisor and its partial sums, then the block partials or the row losses.
  const int weight_blocks = static_cast<int>(
      std::min<std::int64_t>(kWeightSumBlocks, (rows + kMeanBlock - 1) / kMeanBlock));
  const std::size_t weight_bytes = sizeof(double) * (1 + kWeightSumBlocks);
  const std::size_t partials = by_rows ? sizeof(double) * blocks : sizeof(float) * rows;
  char* scratch = static_cast<char*>(workspace(weight_bytes + partials));
  auto* divisor = reinterpret_cast<double*>(scratch);
  auto* weight_partial = divisor + 1;
  void* per_block = scratch + weight_bytes;
  const float* weights = weighted ? class_weights.data_as<float>() : nullptr;
  const auto* y = labels.data_as<std::int32_t>();
  label_weight_sum_kernel<<<weight_blocks, kMeanBlock, 0, stream_>>>(
      weights, y, rows, static_cast<int>(classes), p.ignore_label, weight_partial);
  CUDA_CHECK_LAUNCH();
  sum_kernel<<<1, kMeanBlock, 0, stream_>>>(weight_partial, weight_blocks, divisor);
  CUDA_CHECK_LAUNCH();
  const RowLoss r{p.ignore_label,
                  1.0f - p.label_smoothing,
                  p.label_smoothing / static_cast<float>(classes),
                  scale_arg(scale),
                  weights,
                  divisor};
  float* mean = loss.data_as<float>();
  dispatch_float(logits.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* z = static_cast<const T*>(logits.data());
    auto* dz = static_cast<T*>(dlogits.data());
    if (by_rows) {
      auto* block_loss = static_cast<double*>(per_block);
      softmax_cross_entropy_rows_kernel<T><<<static_cast<unsigned>(blocks), kBlock, 0, stream_>>>(
          z, y, rows, static_cast<int>(classes), r, block_loss, dz);
      CUDA_CHECK_LAUNCH();
      mean_kernel<<<1, kMeanBlock, 0, stream_>>>(block_loss, blocks, divisor, mean);
    } else {
      auto* row_loss = static_cast<float*>(per_block);
      softmax_cross_entropy_kernel<T>
          <<<static_cast<unsigned>(rows), kRowBlock, 0, stream_>>>(z, y, classes, r, row_loss, dz);
      CUDA_CHECK_LAUNCH();
      mean_kernel<<<1, kMeanBlock, 0, stream_>>>(row_loss, rows, divisor, mean);
    }
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace dlbench::backend::cuda
