// Soft Dice loss over per-pixel softmax scores (Backend::soft_dice), in three kernels whose sums
// run in an order fixed by the shape, so the loss and gradient repeat bit for bit:
//   1. sums: block (chunk, sample) walks a chunk of the sample's rows, each thread keeping the
//      softmax of its row in registers and adding, per class, I = sum q g, P = sum q and
//      G = sum g in f32; block_reduce adds the threads' in a fixed order; one partial per chunk;
//   2. finalize (one thread): per sample and class, the chunks in order in double: A = 2I + s,
//      D = P + G + s, and the loss 1 - mean A / D over the counted classes;
//   3. gradient: per row, the softmax again and dz[i, j] (+)= scale q[i, j] (dq[i, j] - sum_c
//      q[i, c] dq[i, c]), dq[i, c] = -w (2 g[i, c] D - A) / D^2 for the counted classes.
// The classes live in registers: at most kMaxRowClasses (cuda_supports says no beyond). A label
// outside [0, classes) counts for no class and its row's gradient is left as if its class were
// absent: the kernel cannot throw (the CPU backend throws Error(kUsage)).
#include <cmath>

#include "engine/backend/cuda/cuda_row_softmax.cuh"

namespace dlbench::backend::cuda {
namespace {

constexpr int kDiceBlock = 256;
// Rows per chunk of the sums: a shape-only number, so every GPU adds in the same order.
constexpr std::int64_t kDiceChunkRows = 8192;

// partial: [samples][chunks][3][classes] (I, P, G).
template <class T>
__global__ void __launch_bounds__(kDiceBlock)
    dice_sums_kernel(const T* logits, const std::int32_t* labels, SoftDiceParams p,
                     std::int64_t chunks, float* partial) {
  const std::int64_t n = blockIdx.y, chunk = blockIdx.x;
  const int classes = static_cast<int>(p.classes);
  const std::int64_t begin = n * p.pixels + chunk * kDiceChunkRows;
  const std::int64_t end = min(begin + kDiceChunkRows, (n + 1) * p.pixels);
  float inter[kMaxRowClasses] = {}, pred[kMaxRowClasses] = {}, truth[kMaxRowClasses] = {};
  for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    float q[kMaxRowClasses], max;
    row_softmax(logits + i * p.classes, classes, q, max);
    const int label = labels[i];
#pragma unroll
    for (int c = 0; c < kMaxRowClasses; ++c) {
      pred[c] += q[c];
      if (c == label) inter[c] += q[c], truth[c] += 1.0f;
    }
  }
  float* out = partial + (n * chunks + chunk) * 3 * p.classes;
#pragma unroll
  for (int c = 0; c < kMaxRowClasses; ++c) {
    if (c >= classes) break;
    const float i_sum = block_reduce(inter[c], Add{});
    const float p_sum = block_reduce(pred[c], Add{});
    const float g_sum = block_reduce(truth[c], Add{});
    if (threadIdx.x == 0) out[c] = i_sum, out[classes + c] = p_sum, out[2 * classes + c] = g_sum;
  }
}

// coef: [samples][classes][2] (A, D); loss [1].
__global__ void dice_finalize_kernel(const float* partial, SoftDiceParams p, std::int64_t chunks,
                                     float* coef, float* loss) {
  const std::int64_t classes = p.classes;
  const double w = 1.0 / static_cast<double>(p.samples * (classes - p.first_class));
  double mean_dice = 0.0;
  for (std::int64_t n = 0; n < p.samples; ++n)
    for (std::int64_t c = 0; c < classes; ++c) {
      double inter = 0, pred = 0, truth = 0;
      for (std::int64_t k = 0; k < chunks; ++k) {
        const float* s = partial + (n * chunks + k) * 3 * classes;
        inter += s[c], pred += s[classes + c], truth += s[2 * classes + c];
      }
      const double a = 2.0 * inter + p.smooth, d = pred + truth + p.smooth;
      coef[2 * (n * classes + c)] = static_cast<float>(a);
      coef[2 * (n * classes + c) + 1] = static_cast<float>(d);
      if (c >= p.first_class) mean_dice += w * a / d;
    }
  *loss = static_cast<float>(1.0 - mean_dice);
}

template <class T>
__global__ void dice_gradient_kernel(const T* logits, const std::int32_t* labels, SoftDiceParams p,
                                     const float* coef, ScaleArg scale, bool accumulate,
                                     T* dlogits) {
  const float grad_scale = scale.get();
  const int classes = static_cast<int>(p.classes);
  const float w = 1.0f / static_cast<float>(p.samples * (p.classes - p.first_class));
  const std::int64_t rows = p.samples * p.pixels;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float q[kMaxRowClasses], dq[kMaxRowClasses] = {}, max;
    row_softmax(logits + i * p.classes, classes, q, max);
    const float* cn = coef + 2 * (i / p.pixels) * p.classes;
    const int label = labels[i];
    float dot = 0.0f;
#pragma unroll
    for (int c = 0; c < kMaxRowClasses; ++c) {
      if (c < p.first_class || c >= classes) continue;
      const float a = cn[2 * c], d = cn[2 * c + 1];
      dq[c] = -w * (2.0f * (c == label ? 1.0f : 0.0f) * d - a) / (d * d);
      dot += q[c] * dq[c];
    }
    T* dz = dlogits + i * p.classes;
#pragma unroll
    for (int j = 0; j < kMaxRowClasses; ++j)
      if (j < classes)
        dz[j] =
            from_f32<T>((accumulate ? to_f32(dz[j]) : 0.0f) + grad_scale * q[j] * (dq[j] - dot));
  }
}

}  // namespace

void CudaBackend::soft_dice_impl(const SoftDiceParams& p, const Tensor& logits,
                                 const Tensor& labels, const Tensor& loss, const Tensor& dlogits,
                                 const LossScale& scale, GradMode mode) {
  const char* op = "soft_dice";
  activate();
  for (const Tensor* t : {&logits, &labels, &loss, &dlogits}) require_here(*t, op, "operand");
  if (scale.on_device.defined()) require_here(scale.on_device, op, "loss scale");
  DLBENCH_CHECK(p.classes <= kMaxRowClasses,
                "soft_dice: at most " + std::to_string(kMaxRowClasses) + " classes on CUDA");
  const std::int64_t chunks = (p.pixels + kDiceChunkRows - 1) / kDiceChunkRows;
  DLBENCH_CHECK(p.samples <= 65535, "soft_dice: at most 65535 samples on CUDA");
  auto* partial = static_cast<float*>(workspace(
      sizeof(float) * static_cast<std::size_t>(p.samples * p.classes * (3 * chunks + 2))));
  float* coef = partial + p.samples * chunks * 3 * p.classes;
  dispatch_float(logits.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* z = static_cast<const T*>(logits.data());
    const auto* y = labels.data_as<std::int32_t>();
    dice_sums_kernel<T><<<dim3(static_cast<unsigned>(chunks), static_cast<unsigned>(p.samples)),
                          kDiceBlock, 0, stream_>>>(z, y, p, chunks, partial);
    CUDA_CHECK_LAUNCH();
    dice_finalize_kernel<<<1, 1, 0, stream_>>>(partial, p, chunks, coef, loss.data_as<float>());
    CUDA_CHECK_LAUNCH();
    dice_gradient_kernel<T><<<grid_for(p.samples * p.pixels), kBlock, 0, stream_>>>(
        z, y, p, coef, scale_arg(scale), mode == GradMode::kAccumulate,
        static_cast<T*>(dlogits.data()));
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace dlbench::backend::cuda
