// Times single ops of the CUDA backend on ResNet-50-sized shapes with CUDA events on the
// backend's stream: a quick look at what cuDNN's measured algorithms and our kernels reach.
// Not a test and not the benchmark (that is `dlbench run`); run by hand on a GPU machine:
//   dlbench_gpu_op_timing            prints one line per op and precision
//   dlbench_gpu_op_timing bn         batch norm only: our kernels and cuDNN's, which they replaced
//   dlbench_gpu_op_timing pool       max pooling only: VGG16's pool1 and ResNet-50's stem pool
//   dlbench_gpu_op_timing convs [N]  ResNet-50's convolutions at batch N (128): cuDNN's best
//                                    against the cuBLASLt matrix product, per direction
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "engine/backend/cuda/cuda_backend.h"

namespace dlbench {
namespace {

using backend::cuda::CudaBackend;

constexpr int kWarmup = 3;
constexpr int kIterations = 20;

struct Timing {
  double ms = 0;
};

// Mean time of fn over kIterations after kWarmup runs (the first run measures algorithms).
Timing time_op(CudaBackend& be, const std::function<void()>& fn) {
  for (int i = 0; i < kWarmup; ++i) fn();
  be.synchronize();
  cudaEvent_t start{}, stop{};
  cudaEventCreate(&start), cudaEventCreate(&stop);
  cudaEventRecord(start, be.stream());
  for (int i = 0; i < kIterations; ++i) fn();
  cudaEventRecord(stop, be.stream());
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start), cudaEventDestroy(stop);
  return {ms / kIterations};
}

struct Owned {
  Buffer buffer;
  Tensor tensor;
  Owned(CudaBackend& be, Shape shape, DType dtype)
      : buffer(be.allocator(), static_cast<std::size_t>(shape.numel()) * size_of(dtype)),
        tensor(buffer.data(), shape, dtype, be.device()) {}
};

void report(const std::string& what, const char* precision, Timing t, double flops, double bytes) {
  std::printf("%-44s %-5s %9.3f ms", what.c_str(), precision, t.ms);
  if (flops > 0) std::printf("  %7.1f TFLOP/s", flops / (t.ms * 1e-3) / 1e12);
  if (bytes > 0) std::printf("  %7.1f GB/s", bytes / (t.ms * 1e-3) / 1e9);
  std::printf("\n");
}

struct Precision {
  DType dtype;
  backend::MathMode math;
  const char* name;
};

void conv_timings(CudaBackend& be, const Precision& prec, std::int64_t batch) {
  backend::Conv2dParams p;  // ResNet-50 stage 1, the 3x3 convolution of a bottleneck
  p.n = batch, p.h = p.w = 56, p.c = 64, p.k = 64, p.r = p.s = 3, p.pad_h = p.pad_w = 1;
  p.math = prec.math;
  Owned x(be, p.input_shape(), prec.dtype), w(be, p.weight_shape(), prec.dtype),
      y(be, p.output_shape(), prec.dtype), dx(be, p.input_shape(), prec.dtype),
      dw(be, p.weight_shape(), prec.dtype);
  be.fill_normal(x.tensor, 0, 1, 1), be.fill_normal(w.tensor, 0, 0.05f, 2);
  be.fill_normal(y.tensor, 0, 1, 3);
  const double flops = 2.0 * static_cast<double>(p.macs());
  const std::string shape = "conv3x3 56x56x64->64 n" + std::to_string(batch);
  const Timing fwd = time_op(be, [&] { be.conv2d_forward(p, x.tensor, w.tensor, {}, y.tensor); });
  const Timing bwd_data = time_op(be, [&] {
    be.conv2d_backward_data(p, y.tensor, w.tensor, dx.tensor, backend::GradMode::kOverwrite);
  });
  const Timing bwd_weights = time_op(be, [&] {
    be.conv2d_backward_weights(p, x.tensor, y.tensor, dw.tensor, {}, backend::GradMode::kOverwrite);
  });
  report(shape + " fwd", prec.name, fwd, flops, 0);
  report(shape + " bwd-data", prec.name, bwd_data, flops, 0);
  report(shape + " bwd-weights", prec.name, bwd_weights, flops, 0);
  report(shape + " fwd+bwd", prec.name, {fwd.ms + bwd_data.ms + bwd_weights.ms}, 3 * flops, 0);
}

void memory_bound_timings(CudaBackend& be, const Precision& prec, std::int64_t batch) {
  backend::BatchNormParams p;  // ResNet-50 stage 1 output: 56x56x256
  p.rows = batch * 56 * 56, p.channels = 256;
  const Shape data{p.rows, p.channels}, channel{p.channels};
  Owned x(be, data, prec.dtype), y(be, data, prec.dtype), dx(be, data, prec.dtype);
  std::vector<Owned> per_channel;
  for (int i = 0; i < 6; ++i) per_channel.emplace_back(be, channel, DType::kF32);
  for (auto& t : per_channel) be.fill(t.tensor, 1.0f);
  be.fill_normal(x.tensor, 0, 1, 1), be.fill_normal(y.tensor, 0, 1, 2);
  const double bytes = static_cast<double>(p.rows * p.channels) * size_of(prec.dtype);
  auto& c = per_channel;
  report("bn train fwd 56x56x256 n" + std::to_string(batch), prec.name,
         time_op(be,
                 [&] {
                   be.batch_norm_forward_training(p, x.tensor, c[0].tensor, c[1].tensor, y.tensor,
                                                  c[2].tensor, c[3].tensor, c[4].tensor,
                                                  c[5].tensor);
                 }),
         0, 2 * bytes);
  report("bn bwd 56x56x256 n" + std::to_string(batch), prec.name,
         time_op(be,
                 [&] {
                   be.batch_norm_backward(p, x.tensor, y.tensor, c[0].tensor, c[2].tensor,
                                          c[3].tensor, dx.tensor, c[4].tensor, c[5].tensor,
                                          backend::GradMode::kOverwrite);
                 }),
         0, 3 * bytes);
  report(
      "relu fwd 56x56x256 n" + std::to_string(batch), prec.name,
      time_op(be, [&] { be.activation_forward(backend::Activation::kRelu, x.tensor, y.tensor); }),
      0, 2 * bytes);
  report("add 56x56x256 n" + std::to_string(batch), prec.name,
         time_op(be, [&] { be.add(x.tensor, y.tensor, dx.tensor); }), 0, 3 * bytes);
}

void matmul_timings(CudaBackend& be, const Precision& prec) {
  backend::MatmulParams p;  // a large square GEMM: the tensor cores' ceiling
  p.m = p.n = p.k = 8192, p.math = prec.math;
  Owned x(be, {p.m, p.k}, prec.dtype), w(be, {p.n, p.k}, prec.dtype), y(be, {p.m, p.n}, prec.dtype);
  be.fill_normal(x.tensor, 0, 1, 1), be.fill_normal(w.tensor, 0, 1, 2);
  report("matmul 8192^3", prec.name,
         time_op(be, [&] { be.matmul_forward(p, x.tensor, w.tensor, {}, y.tensor); }),
         2.0 * static_cast<double>(p.macs()), 0);
}

// How cuDNN's batch norm speed depends on the 4D shape that describes the same [rows, C]
// memory: the backend's choice is made from these numbers.
void bn_layout_timings(CudaBackend& be, DType dtype, const char* precision) {
  const int c = 256, n = 256, hw = 56;
  const std::int64_t rows = std::int64_t{n} * hw * hw;
  Owned x(be, {rows, c}, dtype), y(be, {rows, c}, dtype);
  std::vector<Owned> per_channel;
  for (int i = 0; i < 6; ++i) per_channel.emplace_back(be, Shape{c}, DType::kF32);
  for (auto& t : per_channel) be.fill(t.tensor, 1.0f);
  be.fill_normal(x.tensor, 0, 1, 1);
  cudnnHandle_t handle{};
  cudnnCreate(&handle);
  cudnnSetStream(handle, be.stream());
  struct Layout {
    const char* name;
    int n, h, w;
  };
  const Layout layouts[] = {{"rows x 1 x 1", static_cast<int>(rows), 1, 1},
                            {"1 x rows x 1", 1, static_cast<int>(rows), 1},
                            {"256 x 56 x 56", n, hw, hw},
                            {"896 x 896 x 1", 896, 896, 1},
                            {"256 x 3136 x 1", n, hw * hw, 1}};
  const cudnnDataType_t t = dtype == DType::kF32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF;
  for (const Layout& l : layouts) {
    for (cudnnBatchNormMode_t mode :
         {CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_SPATIAL_PERSISTENT}) {
      cudnnTensorDescriptor_t data{}, param{};
      cudnnCreateTensorDescriptor(&data), cudnnCreateTensorDescriptor(&param);
      cudnnSetTensor4dDescriptor(data, CUDNN_TENSOR_NHWC, t, l.n, c, l.h, l.w);
      cudnnDeriveBNTensorDescriptor(param, data, mode);
      const float one = 1, zero = 0;
      auto& pc = per_channel;
      cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
      const Timing fwd = time_op(be, [&] {
        status = cudnnBatchNormalizationForwardTraining(
            handle, mode, &one, &zero, data, x.tensor.data(), data, y.tensor.data(), param,
            pc[0].tensor.data(), pc[1].tensor.data(), 0.1, pc[2].tensor.data(), pc[3].tensor.data(),
            1e-5, pc[4].tensor.data(), pc[5].tensor.data());
      });
      const Timing bwd = time_op(be, [&] {
        status = cudnnBatchNormalizationBackward(
            handle, mode, &one, &zero, &one, &zero, data, x.tensor.data(), data, y.tensor.data(),
            data, y.tensor.data(), param, pc[0].tensor.data(), pc[2].tensor.data(),
            pc[3].tensor.data(), 1e-5, pc[4].tensor.data(), pc[5].tensor.data());
      });
      std::printf("bn layout %-16s %-10s %-5s fwd %8.3f ms  bwd %8.3f ms  %s\n", l.name,
                  mode == CUDNN_BATCHNORM_SPATIAL ? "spatial" : "persistent", precision, fwd.ms,
                  bwd.ms, cudnnGetErrorString(status));
      cudnnDestroyTensorDescriptor(data), cudnnDestroyTensorDescriptor(param);
    }
  }
  cudnnDestroy(handle);
}

// A ResNet-50 batch norm input: batch x side x side x channels, viewed as [rows, channels].
struct BnShape {
  std::int64_t batch, side, channels;
  std::string name() const {
    return std::to_string(side) + "x" + std::to_string(side) + "x" + std::to_string(channels) +
           " n" + std::to_string(batch);
  }
  backend::BatchNormParams params() const {
    backend::BatchNormParams p;
    p.rows = batch * side * side, p.channels = channels;
    return p;
  }
};

// Stage 1's widest output and stage 4's: the most rows and the most channels.
const BnShape kBnShapes[] = {{256, 56, 256}, {256, 7, 2048}};

// Our kernels. GB/s counts the bytes they move: training forward reads x twice and writes y
// (3 passes), inference 2, backward reads x and dy twice and writes dx (5; 6 accumulating).
void bn_timings(CudaBackend& be, const Precision& prec, const BnShape& shape) {
  const backend::BatchNormParams p = shape.params();
  const Shape data{p.rows, p.channels}, channel{p.channels};
  Owned x(be, data, prec.dtype), y(be, data, prec.dtype), dy(be, data, prec.dtype),
      dx(be, data, prec.dtype);
  std::vector<Owned> c;
  for (int i = 0; i < 6; ++i) c.emplace_back(be, channel, DType::kF32);
  for (auto& t : c) be.fill(t.tensor, 1.0f);
  be.fill_normal(x.tensor, 0.5f, 1, 1), be.fill_normal(dy.tensor, 0, 1, 2);
  const double bytes = static_cast<double>(p.rows * p.channels) * size_of(prec.dtype);
  const std::string what = "bn ours " + shape.name();
  report(what + " train fwd", prec.name,
         time_op(be,
                 [&] {
                   be.batch_norm_forward_training(p, x.tensor, c[0].tensor, c[1].tensor, y.tensor,
                                                  c[2].tensor, c[3].tensor, c[4].tensor,
                                                  c[5].tensor);
                 }),
         0, 3 * bytes);
  report(what + " infer fwd", prec.name,
         time_op(be,
                 [&] {
                   be.batch_norm_forward_inference(p, x.tensor, c[0].tensor, c[1].tensor,
                                                   c[4].tensor, c[5].tensor, y.tensor);
                 }),
         0, 2 * bytes);
  for (auto mode : {backend::GradMode::kOverwrite, backend::GradMode::kAccumulate}) {
    const bool acc = mode == backend::GradMode::kAccumulate;
    report(what + (acc ? " bwd (accumulate)" : " bwd"), prec.name,
           time_op(be,
                   [&] {
                     be.batch_norm_backward(p, x.tensor, dy.tensor, c[0].tensor, c[2].tensor,
                                            c[3].tensor, dx.tensor, c[4].tensor, c[5].tensor, mode);
                   }),
           0, (acc ? 6 : 5) * bytes);
  }
}

// cuDNN as the backend called it before our kernels: [rows, C] as NHWC rows x C x 1 x 1,
// spatial mode for f32 and persistent mode for f16, with the same byte counts as ours.
void cudnn_bn_timings(CudaBackend& be, const Precision& prec, const BnShape& shape) {
  const backend::BatchNormParams p = shape.params();
  Owned x(be, {p.rows, p.channels}, prec.dtype), y(be, {p.rows, p.channels}, prec.dtype);
  std::vector<Owned> pc;
  for (int i = 0; i < 6; ++i) pc.emplace_back(be, Shape{p.channels}, DType::kF32);
  for (auto& t : pc) be.fill(t.tensor, 1.0f);
  be.fill_normal(x.tensor, 0.5f, 1, 1);
  cudnnHandle_t handle{};
  cudnnCreate(&handle);
  cudnnSetStream(handle, be.stream());
  const bool f32 = prec.dtype == DType::kF32;
  const cudnnBatchNormMode_t mode =
      f32 ? CUDNN_BATCHNORM_SPATIAL : CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
  cudnnTensorDescriptor_t data{}, param{};
  cudnnCreateTensorDescriptor(&data), cudnnCreateTensorDescriptor(&param);
  cudnnSetTensor4dDescriptor(data, CUDNN_TENSOR_NHWC, f32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF,
                             static_cast<int>(p.rows), static_cast<int>(p.channels), 1, 1);
  cudnnDeriveBNTensorDescriptor(param, data, mode);
  const float one = 1, zero = 0;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  const double bytes = static_cast<double>(p.rows * p.channels) * size_of(prec.dtype);
  const std::string what = "bn cudnn " + shape.name();
  report(what + " train fwd", prec.name,
         time_op(be,
                 [&] {
                   status = cudnnBatchNormalizationForwardTraining(
                       handle, mode, &one, &zero, data, x.tensor.data(), data, y.tensor.data(),
                       param, pc[0].tensor.data(), pc[1].tensor.data(), 0.1, pc[2].tensor.data(),
                       pc[3].tensor.data(), 1e-5, pc[4].tensor.data(), pc[5].tensor.data());
                 }),
         0, 3 * bytes);
  report(what + " bwd", prec.name,
         time_op(be,
                 [&] {
                   status = cudnnBatchNormalizationBackward(
                       handle, mode, &one, &zero, &one, &zero, data, x.tensor.data(), data,
                       y.tensor.data(), data, y.tensor.data(), param, pc[0].tensor.data(),
                       pc[2].tensor.data(), pc[3].tensor.data(), 1e-5, pc[4].tensor.data(),
                       pc[5].tensor.data());
                 }),
         0, 5 * bytes);
  if (status != CUDNN_STATUS_SUCCESS) std::printf("  cudnn: %s\n", cudnnGetErrorString(status));
  cudnnDestroyTensorDescriptor(data), cudnnDestroyTensorDescriptor(param);
  cudnnDestroy(handle);
}

// A max pooling layer of a real network at batch 128.
struct PoolShape {
  const char* name;
  std::int64_t side, channels;
  int window, stride, pad;
  backend::PoolParams params(std::int64_t batch) const {
    backend::PoolParams p;
    p.n = batch, p.h = p.w = side, p.c = channels;
    p.window_h = p.window_w = window, p.stride_h = p.stride_w = stride, p.pad_h = p.pad_w = pad;
    return p;
  }
};

const PoolShape kPoolShapes[] = {{"vgg16 pool1 224x224x64 2x2/2", 224, 64, 2, 2, 0},
                                 {"resnet50 pool 112x112x64 3x3/2 p1", 112, 64, 3, 2, 1}};

// Our kernels. GB/s counts the bytes they must move: forward reads x and writes y and the
// argmax (one byte per output); backward reads dy and the argmax and writes dx (and reads it
// when accumulating).
void pool_timings(CudaBackend& be, const Precision& prec, const PoolShape& shape) {
  const backend::PoolParams p = shape.params(128);
  Owned x(be, p.input_shape(), prec.dtype), y(be, p.output_shape(), prec.dtype),
      dy(be, p.output_shape(), prec.dtype), dx(be, p.input_shape(), prec.dtype);
  const auto ws_bytes = static_cast<std::int64_t>(be.pool_workspace_bytes(p));
  Owned ws(be, Shape{(ws_bytes + 3) / 4}, DType::kF32);
  be.fill_normal(x.tensor, 0, 1, 1), be.fill_normal(dy.tensor, 0, 1, 2);
  const double in = static_cast<double>(p.input_shape().numel()) * size_of(prec.dtype);
  const double out = static_cast<double>(p.output_shape().numel()) * size_of(prec.dtype);
  const auto argmax = static_cast<double>(ws_bytes);
  const std::string what = std::string("maxpool ") + shape.name + " n128";
  report(what + " fwd", prec.name,
         time_op(be, [&] { be.pool_forward(p, x.tensor, y.tensor, ws.tensor); }), 0,
         in + out + argmax);
  for (auto mode : {backend::GradMode::kOverwrite, backend::GradMode::kAccumulate}) {
    const bool acc = mode == backend::GradMode::kAccumulate;
    report(what + (acc ? " bwd (accumulate)" : " bwd"), prec.name,
           time_op(be,
                   [&] {
                     be.pool_backward(p, x.tensor, y.tensor, dy.tensor, ws.tensor, dx.tensor, mode);
                   }),
           0, out + argmax + (acc ? 2 : 1) * in);
  }
}

// ResNet-50's convolution shapes (input side, C -> K, window, stride), each once.
struct ConvShape {
  std::int64_t side, c, k, window;
  int stride;
};
const ConvShape kResNetConvShapes[] = {
    {224, 3, 64, 7, 2},    {56, 64, 64, 1, 1},    {56, 64, 256, 1, 1},    {56, 256, 64, 1, 1},
    {56, 64, 64, 3, 1},    {56, 256, 128, 1, 1},  {56, 256, 512, 1, 2},   {56, 128, 128, 3, 2},
    {28, 128, 512, 1, 1},  {28, 512, 128, 1, 1},  {28, 128, 128, 3, 1},   {28, 512, 256, 1, 1},
    {28, 512, 1024, 1, 2}, {28, 256, 256, 3, 2},  {14, 256, 1024, 1, 1},  {14, 1024, 256, 1, 1},
    {14, 256, 256, 3, 1},  {14, 1024, 512, 1, 1}, {14, 1024, 2048, 1, 2}, {14, 512, 512, 3, 2},
    {7, 512, 2048, 1, 1},  {7, 2048, 512, 1, 1},  {7, 512, 512, 3, 1}};

// Runs every direction of each shape once on a backend that measures both routes, then prints
// the measurement that chose (cuda_conv.cc): cuDNN's best, the matrix product, the winner.
void conv_route_timings(const Precision& prec, std::int64_t batch) {
  CudaBackend be(0);
  for (const ConvShape& shape : kResNetConvShapes) {
    backend::Conv2dParams p;
    p.n = batch, p.h = p.w = shape.side, p.c = shape.c, p.k = shape.k;
    p.r = p.s = shape.window, p.pad_h = p.pad_w = static_cast<int>(shape.window / 2);
    p.stride_h = p.stride_w = shape.stride, p.math = prec.math;
    Owned x(be, p.input_shape(), prec.dtype), w(be, p.weight_shape(), prec.dtype),
        y(be, p.output_shape(), prec.dtype);
    be.fill_normal(x.tensor, 0, 1, 1), be.fill_normal(w.tensor, 0, 0.05f, 2);
    be.fill_normal(y.tensor, 0, 1, 3);
    be.conv2d_forward(p, x.tensor, w.tensor, {}, y.tensor);
    be.conv2d_backward_data(p, y.tensor, w.tensor, x.tensor, backend::GradMode::kOverwrite);
    be.conv2d_backward_weights(p, x.tensor, y.tensor, w.tensor, {}, backend::GradMode::kOverwrite);
  }
  be.synchronize();
  const char* directions[] = {"fwd", "bwd-data", "bwd-weights"};
  double cudnn_total = 0, chosen_total = 0;
  for (const auto& c : be.conv_choices()) {
    const auto& p = c.params;
    const std::string what = "conv" + std::to_string(p.r) + "x" + std::to_string(p.s) + " " +
                             std::to_string(p.h) + "x" + std::to_string(p.w) + "x" +
                             std::to_string(p.c) + "->" + std::to_string(p.k) + " s" +
                             std::to_string(p.stride_h) + " n" + std::to_string(p.n) + " " +
                             directions[static_cast<int>(c.direction)];
    const double tflop = 2.0 * static_cast<double>(p.macs()) / 1e9;
    std::printf("%-46s %-5s cudnn %8.3f ms (%5.1f TFLOP/s)  gemm %8.3f ms (%5.1f)  -> %s\n",
                what.c_str(), prec.name, c.cudnn_ms, tflop / c.cudnn_ms, c.gemm_ms,
                tflop / c.gemm_ms, c.gemm ? "gemm" : "cudnn");
    cudnn_total += c.cudnn_ms;
    chosen_total += std::min(c.cudnn_ms, c.gemm_ms);
  }
  std::printf("all shapes with a product once, n%lld %s: cudnn %.3f ms, chosen %.3f ms\n",
              static_cast<long long>(batch), prec.name, cudnn_total, chosen_total);
}

}  // namespace
}  // namespace dlbench

int main(int argc, char** argv) {
  using namespace dlbench;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no GPU\n");
    return 0;
  }
  try {
    backend::cuda::CudaBackend be(0);
    std::printf("%s\n", be.name().c_str());
    const Precision precisions[] = {{DType::kF32, backend::MathMode::kStrict, "fp32"},
                                    {DType::kF32, backend::MathMode::kTf32, "tf32"},
                                    {DType::kF16, backend::MathMode::kStrict, "fp16"},
                                    {DType::kBF16, backend::MathMode::kStrict, "bf16"}};
    if (argc > 1 && std::strcmp(argv[1], "bn") == 0) {
      for (const BnShape& shape : kBnShapes)
        for (const auto& prec : precisions)
          if (prec.math == backend::MathMode::kStrict) bn_timings(be, prec, shape);
      for (const BnShape& shape : kBnShapes)
        for (const auto& prec : precisions)
          if (prec.math == backend::MathMode::kStrict && prec.dtype != DType::kBF16)
            cudnn_bn_timings(be, prec, shape);
      return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "convs") == 0) {
      const std::int64_t batch = argc > 2 ? std::atoll(argv[2]) : 128;
      for (const auto& prec : precisions) conv_route_timings(prec, batch);
      return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "pool") == 0) {
      for (const PoolShape& shape : kPoolShapes)
        for (const auto& prec : precisions)
          if (prec.math == backend::MathMode::kStrict) pool_timings(be, prec, shape);
      return 0;
    }
    bn_layout_timings(be, DType::kF16, "fp16");
    bn_layout_timings(be, DType::kF32, "fp32");
    for (const auto& prec : precisions) conv_timings(be, prec, 256);
    for (const auto& prec : precisions) matmul_timings(be, prec);
    for (const auto& prec : precisions)
      if (prec.math == backend::MathMode::kStrict) memory_bound_timings(be, prec, 256);
    for (const BnShape& shape : kBnShapes)
      for (const auto& prec : precisions)
        if (prec.math == backend::MathMode::kStrict) bn_timings(be, prec, shape);
    for (const PoolShape& shape : kPoolShapes)
      for (const auto& prec : precisions)
        if (prec.math == backend::MathMode::kStrict) pool_timings(be, prec, shape);
  } catch (const Error& e) {
    std::printf("error: %s (%s)\n", e.what(), e.hint().c_str());
    return 1;
  }
  return 0;
}
