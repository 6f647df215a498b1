// dlbench_conv_prologue_probe: a measurement for #17, not a test (nothing is asserted; CTest does
// not run it). Times, on ResNet-50's convolutions that read a batch norm + ReLU's output, at batch
// 256 (or argv[1]) in f16:
//   plain     conv + statistics (cuDNN's conv + genstats: what fp16 training runs today), reading
//             the batch norm + ReLU's written output;
//   prologue  the same plan with that batch norm + ReLU applied as x is read
//             (InputPrologue::kScaleShiftRelu: cuDNN's scale-bias-ReLU-conv-genstats), reading the
//             batch norm's input instead, so the apply pass need not run;
//   copy      a device copy of x (reads and writes x's bytes once: the least the batch norm +
//             ReLU apply pass it would remove moves).
// The prologue pays where prologue - plain < the apply pass's time (at least `copy`). Each time is
// the median of 20 runs after 5 warm-up runs, on one stream, by CUDA events.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_handles.h"
#include "engine/backend/cuda/cudnn_fused_conv.h"

namespace dlbench::backend::cuda {
namespace {

constexpr int kWarmup = 5;
constexpr int kRuns = 20;

struct Layer {
  const char* name;
  std::int64_t hw, c, k, rs;
  int stride;
};

// Bottleneck v1.5: conv2 (3x3, strided in each stage's first block) reads bn1+ReLU, conv3 (1x1)
// reads bn2+ReLU.
const Layer kLayers[] = {
    {"layer1 conv2 3x3", 56, 64, 64, 3, 1},       {"layer1 conv3 1x1", 56, 64, 256, 1, 1},
    {"layer2.0 conv2 3x3/2", 56, 128, 128, 3, 2}, {"layer2 conv2 3x3", 28, 128, 128, 3, 1},
    {"layer2 conv3 1x1", 28, 128, 512, 1, 1},     {"layer3.0 conv2 3x3/2", 28, 256, 256, 3, 2},
    {"layer3 conv2 3x3", 14, 256, 256, 3, 1},     {"layer3 conv3 1x1", 14, 256, 1024, 1, 1},
    {"layer4.0 conv2 3x3/2", 14, 512, 512, 3, 2}, {"layer4 conv2 3x3", 7, 512, 512, 3, 1},
    {"layer4 conv3 1x1", 7, 512, 2048, 1, 1},
};

void* device_zeros(std::size_t bytes) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(bytes, 16)));
  CUDA_CHECK(cudaMemset(p, 0, std::max<std::size_t>(bytes, 16)));
  return p;
}

// Median device time of `work` in ms.
template <class Work>
float median_ms(Work&& work) {
  Event start, stop;
  for (int i = 0; i < kWarmup; ++i) work();
  std::vector<float> ms;
  for (int i = 0; i < kRuns; ++i) {
    CUDA_CHECK(cudaEventRecord(start, nullptr));
    work();
    CUDA_CHECK(cudaEventRecord(stop, nullptr));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::nth_element(ms.begin(), ms.begin() + kRuns / 2, ms.end());
  return ms[kRuns / 2];
}

int probe(std::int64_t batch) {
  CudnnHandle handle;
  std::printf("%-22s %9s %9s %9s %9s  %s\n", "layer (f16, batch)", "plain ms", "prologue", "delta",
              "copy ms", "prologue engine");
  double plain_total = 0, prologue_total = 0, copy_total = 0;
  for (const Layer& l : kLayers) {
    ConvParams p;
    p.n = batch, p.h = p.w = l.hw, p.c = l.c, p.k = l.k, p.r = p.s = l.rs;
    p.stride_h = p.stride_w = l.stride;
    p.pad_h = p.pad_w = l.rs / 2;
    p.statistics = true;
    const FusedConvForward plain(handle, p, DType::kF16);
    const FusedConvForward fused(handle, p, DType::kF16, std::numeric_limits<std::size_t>::max(),
                                 InputPrologue::kScaleShiftRelu);
    if (!plain.ok() || !fused.ok()) {
      std::printf("%-22s no engine: %s\n", l.name,
                  (plain.ok() ? fused : plain).unsupported_reason().c_str());
      continue;
    }
    const std::size_t x_bytes = static_cast<std::size_t>(p.n * p.h * p.w * p.c) * 2;
    const std::size_t y_bytes = static_cast<std::size_t>(p.n * p.out_h() * p.out_w() * p.k) * 2;
    void* x = device_zeros(x_bytes);
    void* x_copy = device_zeros(x_bytes);
    void* w = device_zeros(static_cast<std::size_t>(p.k * p.r * p.s * p.c) * 2);
    void* y = device_zeros(y_bytes);
    void* scale = device_zeros(static_cast<std::size_t>(p.c) * 2);
    void* shift = device_zeros(static_cast<std::size_t>(p.c) * 2);
    auto* stats =
        static_cast<float*>(device_zeros(2 * sizeof(float) * static_cast<std::size_t>(p.k)));
    void* workspace = device_zeros(std::max(plain.workspace_bytes(), fused.workspace_bytes()));
    const float plain_ms =
        median_ms([&] { plain.run(handle, x, w, nullptr, nullptr, y, workspace, stats); });
    const float fused_ms = median_ms(
        [&] { fused.run(handle, x, w, nullptr, nullptr, y, workspace, stats, scale, shift); });
    const float copy_ms = median_ms([&] {
      CUDA_CHECK(cudaMemcpyAsync(x_copy, x, x_bytes, cudaMemcpyDeviceToDevice, nullptr));
    });
    std::printf("%-22s %9.3f %9.3f %+9.3f %9.3f  %s\n", l.name, plain_ms, fused_ms,
                fused_ms - plain_ms, copy_ms, fused.chosen().describe().c_str());
    plain_total += plain_ms, prologue_total += fused_ms, copy_total += copy_ms;
    for (void* b : {x, x_copy, w, y, scale, shift, static_cast<void*>(stats), workspace})
      CUDA_CHECK(cudaFree(b));
  }
  std::printf("%-22s %9.3f %9.3f %+9.3f %9.3f  (one of each layer; ResNet-50 runs the\n", "sum",
              plain_total, prologue_total, prologue_total - plain_total, copy_total);
  std::printf("%-22s stride-1 3x3 and 1x1 of each stage 2 to 5 times)\n", "");
  return 0;
}

}  // namespace
}  // namespace dlbench::backend::cuda

int main(int argc, char** argv) {
  const std::int64_t batch = argc > 1 ? std::atoll(argv[1]) : 256;
  if (batch <= 0) {
    std::fprintf(stderr, "usage: dlbench_conv_prologue_probe [BATCH > 0]\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "dlbench_conv_prologue_probe: no CUDA GPU\n");
    return 1;
  }
  return dlbench::backend::cuda::probe(batch);
}
