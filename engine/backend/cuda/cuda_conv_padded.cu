// Convolutions over few input channels run on zero-padded channels: x [rows, C] is copied to
// [rows, C'] with zeros after each row's C values (C' = 4 or 8), w the same way (forward), and
// the pass runs on the padded shape; backward-weights computes dw at C' and keeps its first C
// channels. The zeros add only zero products, so y and dw's kept channels are the pass's own.
//
// Why: cuDNN 9.14 runs ResNet-50's 3-channel stem on slower kernels than the same layer with
// its channels padded to 4 (MLPerf's ResNet-50 pads its input so). One H200, batch 128, fp16
// (`dlbench_ops --perf --filter 224x224x`, 2026-12-01): forward 0.289 ms at 3 channels, 0.208 at
// 4; with the batch norm's statistics 0.362 and 0.282; backward-weights 0.295 and 0.218. In
// bf16 only backward-weights gains, at 8 (0.580 and 0.462 ms). The copy costs a pass over x, so
// the padded route is timed against the plain one, copy included, and kept where it won; and it
// is tried only where the copy is a small share of the memory the backend holds (training, not
// inference's small peak): padded_channels in cuda_conv.cc.
#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {
namespace {

// dst [rows, kWidth] = src [rows, c] with zeros after each row's c values: a thread writes a
// whole row in aligned stores (8, 16 or 32 bytes). One pass, where a fill and copy_columns would
// write the buffer twice.
template <class T, int kWidth>
__global__ void pad_channels_kernel(const T* src, int c, T* dst, std::int64_t rows) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows;
       r += stride) {
    Pack<T, kWidth> v;
#pragma unroll
    for (int j = 0; j < kWidth; ++j) v.v[j] = j < c ? src[r * c + j] : from_f32<T>(0.0f);
    store<T, kWidth>(dst + r * kWidth, v);
  }
}

void pad_channels(const void* src, std::int64_t rows, std::int64_t c, void* dst, std::int64_t width,
                  DType dtype, cudaStream_t stream) {
  dispatch_float(dtype, "conv (padded channels)", [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto launch = [&](auto kernel) {
      kernel<<<grid_for(rows), kBlock, 0, stream>>>(static_cast<const T*>(src), static_cast<int>(c),
                                                    static_cast<T*>(dst), rows);
      CUDA_CHECK_LAUNCH();
    };
    if (width == 4)
      launch(pad_channels_kernel<T, 4>);
    else
      launch(pad_channels_kernel<T, 8>);
  });
}

ConvParams widened(const ConvParams& p, std::int64_t channels) {
  ConvParams padded = p;
  padded.c = channels;
  return padded;
}

// The padded operands in one buffer: x, then (at w_offset) w or dw, each 256-byte aligned.
struct PaddedLayout {
  std::size_t w_offset, total;
};
PaddedLayout padded_layout(const ConvParams& padded, DType dtype) {
  const std::size_t x_bytes =
      align_up(size_of(dtype) * static_cast<std::size_t>(padded.input_shape().numel()));
  const std::size_t w_bytes =
      align_up(size_of(dtype) * static_cast<std::size_t>(padded.weight_shape().numel()));
  return {x_bytes, x_bytes + w_bytes};
}

}  // namespace

std::size_t padded_operand_bytes(const ConvParams& p, DType dtype, std::int64_t channels) {
  return padded_layout(widened(p, channels), dtype).total;
}

void CudaBackend::forward_on_channels(std::int64_t channels, const ConvParams& p, DType dtype,
                                      const ConvOperands& o, const void* bias, float* statistics) {
  if (channels == p.c) return forward_slices(p, dtype, o, bias, statistics);
  ++padded_passes_;
  const ConvParams padded = widened(p, channels);
  const PaddedLayout layout = padded_layout(padded, dtype);
  auto* base = static_cast<char*>(scratch(padded_operands_, layout.total));
  pad_channels(o.x, p.n * p.in_positions(), p.c, base, channels, dtype, stream_);
  pad_channels(o.w, p.k * p.taps(), p.c, base + layout.w_offset, channels, dtype, stream_);
  forward_slices(padded, dtype, {base, base + layout.w_offset, o.y, o.r}, bias, statistics);
}

void CudaBackend::backward_weights_on_channels(std::int64_t channels, const ConvParams& p,
                                               DType dtype, const ConvOperands& o, GradMode mode) {
  if (channels == p.c) return backward_weights_slices(p, dtype, o, mode);
  ++padded_passes_;
  const ConvParams padded = widened(p, channels);
  const PaddedLayout layout = padded_layout(padded, dtype);
  auto* base = static_cast<char*>(scratch(padded_operands_, layout.total));
  char* dw = base + layout.w_offset;
  const std::int64_t rows = p.k * p.taps();
  pad_channels(o.x, p.n * p.in_positions(), p.c, base, channels, dtype, stream_);
  // Adding, the wide dw starts from dw itself, so the pass adds and rounds once, as cuDNN's
  // beta = 1 does (the padding's gradient lands on zeros and is dropped).
  if (mode == GradMode::kAccumulate) pad_channels(o.w, rows, p.c, dw, channels, dtype, stream_);
  backward_weights_slices(padded, dtype, {base, dw, o.y}, mode);
  // The first p.c of each kernel position's channels are dw's.
  copy_columns_impl(Tensor(dw, {rows, channels}, dtype, device()), 0,
                    Tensor(o.w, {rows, p.c}, dtype, device()), 0, p.c, GradMode::kOverwrite);
}

}  // namespace dlbench::backend::cuda
