// dlbench_conv_prologue_probe: a measurement for #17 (docs/measurements.md has its results), not a
// test (CTest does not run it). On ResNet-50's convolutions that read a batch norm + ReLU's output,
// in f16 at batch 256 (or argv[1]), with random inputs, it times:
//   forward   conv + statistics (cuDNN's conv + genstats: what fp16 training runs today) on the
//             batch norm + ReLU's written output, against the same plan reading the batch norm's
//             input with the batch norm + ReLU applied as it is read (InputPrologue::
//             kScaleShiftRelu: cuDNN's scale-bias-ReLU-conv-genstats), so the apply pass need not
//             run;
//   wgrad     the backward-weights pass on the written output, against the same pass with the
//             prologue (cuDNN's ConvBNwgrad pattern), which the forward prologue needs since the
//             output is no longer written; the two weight gradients are compared (largest
//             difference over the largest |dw|);
//   copy      a device copy of x: its bytes read and written once, the least the batch norm +
//             ReLU apply pass that the prologue removes moves.
// Each time is the median of 20 runs after 5 warm-up runs, on one stream, by CUDA events.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <vector>

#include "bench/micro/micro_cuda.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_handles.h"
#include "engine/backend/cuda/cudnn_fused_conv.h"
#include "engine/backend/cuda/cudnn_graph.h"

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

// f16 device buffer of `values`, freed with the object.
class Half {
 public:
  // `count` zeros.
  explicit Half(std::size_t count) : count_(count) {
    CUDA_CHECK(cudaMalloc(&data_, std::max<std::size_t>(bytes(), 16)));
    CUDA_CHECK(cudaMemset(data_, 0, bytes()));
  }
  explicit Half(const std::vector<float>& values) : count_(values.size()) {
    std::vector<__half> h(values.size());
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = __float2half(values[i]);
    CUDA_CHECK(cudaMalloc(&data_, std::max<std::size_t>(bytes(), 16)));
    CUDA_CHECK(cudaMemcpy(data_, h.data(), bytes(), cudaMemcpyHostToDevice));
  }
  ~Half() { CUDA_CHECK_NOTHROW(cudaFree(data_)); }
  Half(const Half&) = delete;
  Half& operator=(const Half&) = delete;
  void* get() const { return data_; }
  std::size_t bytes() const { return count_ * sizeof(__half); }
  std::vector<float> download() const {
    std::vector<__half> h(count_);
    CUDA_CHECK(cudaMemcpy(h.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    std::vector<float> v(count_);
    for (std::size_t i = 0; i < count_; ++i) v[i] = __half2float(h[i]);
    return v;
  }

 private:
  void* data_ = nullptr;
  std::size_t count_;
};

// Uniform in [lo, hi), rounded to f16 (so the host sees what the device reads).
std::vector<float> random_values(std::size_t count, std::uint32_t seed, float lo, float hi) {
  std::vector<float> v(count);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = __half2float(__float2half(lo + (hi - lo) * static_cast<float>(seed >> 8) / 16777216.0f));
  }
  return v;
}

// Median device time of `work` in ms.
template <class Work>
float median_ms(Work&& work) {
  Event start, stop;
  for (int i = 0; i < kWarmup; ++i) work();
  std::vector<double> ms;
  for (int i = 0; i < kRuns; ++i) ms.push_back(micro::time_ms(nullptr, start, stop, work));
  std::nth_element(ms.begin(), ms.begin() + kRuns / 2, ms.end());
  return static_cast<float>(ms[kRuns / 2]);
}

// dw = wgrad(x, dy), or wgrad(relu(x * scale + shift), dy) with the prologue: one cuDNN graph,
// its first engine (heuristic A, then fallback), as FusedConvForward chooses.
class Wgrad {
 public:
  Wgrad(cudnnHandle_t handle, const ConvParams& p, bool prologue) : prologue_(prologue) {
    auto dims = [](std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
      return std::vector<std::int64_t>{a, b, c, d};
    };
    auto tensor = [&](const char* name, std::int64_t uid, std::vector<std::int64_t> d,
                      cudnnDataType_t type, Storage storage) -> const BackendDescriptor& {
      std::vector<std::int64_t> strides = channels_last_strides(d);
      return parts_.emplace_back(
          make_tensor({name, uid, std::move(d), std::move(strides), type, storage}));
    };
    const std::vector<std::int64_t> x_dims = dims(p.n, p.c, p.h, p.w);
    const BackendDescriptor* input = &tensor("x", 1, x_dims, CUDNN_DATA_HALF, Storage::kMemory);
    std::vector<const BackendDescriptor*> operations;
    if (prologue) {
      std::int64_t uid = 101;
      auto step = [&](cudnnPointwiseMode_t mode, const BackendDescriptor* operand) {
        const BackendDescriptor& out =
            tensor("prologue", uid++, x_dims, CUDNN_DATA_FLOAT, Storage::kVirtual);
        const BackendDescriptor& fn = parts_.emplace_back(make_pointwise(mode));
        operations.push_back(&parts_.emplace_back(make_pointwise_op(fn, *input, operand, out)));
        input = &out;
      };
      step(CUDNN_POINTWISE_MUL,
           &tensor("scale", 4, dims(1, p.c, 1, 1), CUDNN_DATA_HALF, Storage::kMemory));
      step(CUDNN_POINTWISE_ADD,
           &tensor("shift", 5, dims(1, p.c, 1, 1), CUDNN_DATA_HALF, Storage::kMemory));
      step(CUDNN_POINTWISE_RELU_FWD, nullptr);
    }
    const BackendDescriptor& dw =
        tensor("dw", 2, dims(p.k, p.c, p.r, p.s), CUDNN_DATA_HALF, Storage::kMemory);
    const BackendDescriptor& dy =
        tensor("dy", 3, dims(p.n, p.k, p.out_h(), p.out_w()), CUDNN_DATA_HALF, Storage::kMemory);
    const BackendDescriptor& conv = parts_.emplace_back(
        make_convolution({p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w}));
    operations.push_back(
        &parts_.emplace_back(make_conv_backward_filter_op(conv, *input, dw, dy, 0.0f)));
    Refusable graph = make_operation_graph(handle, operations);
    if (!graph.descriptor) {
      refusal_ = "cuDNN has no pattern for this graph: " + graph.refusal;
      return;
    }
    chosen_ = choose_plan(handle, parts_.emplace_back(std::move(*graph.descriptor)),
                          std::numeric_limits<std::size_t>::max(), false);
    if (!chosen_.plan) refusal_ = chosen_.refusal;
  }
  bool ok() const { return chosen_.plan.has_value(); }
  const std::string& refusal() const { return refusal_; }
  std::size_t workspace_bytes() const { return chosen_.workspace_bytes; }
  std::string engine() const { return chosen_.chosen.describe(); }
  void run(cudnnHandle_t handle, void* x, void* dw, void* dy, void* scale, void* shift,
           void* workspace) const {
    std::vector<std::int64_t> uids{1, 2, 3};
    std::vector<void*> pointers{x, dw, dy};
    if (prologue_) {
      uids.insert(uids.end(), {4, 5});
      pointers.insert(pointers.end(), {scale, shift});
    }
    execute(handle, *chosen_.plan, uids, pointers, workspace);
  }

 private:
  bool prologue_;
  std::deque<BackendDescriptor> parts_;
  ChosenPlan chosen_;
  std::string refusal_;
};

void* scratch(std::size_t bytes) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(bytes, 16)));
  return p;
}

int probe(std::int64_t batch) {
  CudnnHandle handle;
  std::printf("%-22s %8s %8s %8s | %8s %8s %8s %9s | %7s\n", "f16, batch ", "fwd", "+prolog",
              "delta", "wgrad", "+prolog", "delta", "dw diff", "copy");
  double fwd = 0, fwd_prologue = 0, wgrad = 0, wgrad_prologue = 0, copy = 0;
  for (const Layer& l : kLayers) {
    ConvParams p;
    p.n = batch, p.h = p.w = l.hw, p.c = l.c, p.k = l.k, p.r = p.s = l.rs;
    p.stride_h = p.stride_w = l.stride;
    p.pad_h = p.pad_w = l.rs / 2;
    p.statistics = true;
    const FusedConvForward plain(handle, p, DType::kF16);
    const FusedConvForward fused(handle, p, DType::kF16, std::numeric_limits<std::size_t>::max(),
                                 InputPrologue::kScaleShiftRelu);
    const Wgrad plain_wgrad(handle, p, false), fused_wgrad(handle, p, true);
    if (!plain.ok() || !fused.ok() || !plain_wgrad.ok() || !fused_wgrad.ok()) {
      std::printf("%-22s no engine: %s | %s | %s | %s\n", l.name,
                  plain.unsupported_reason().c_str(), fused.unsupported_reason().c_str(),
                  plain_wgrad.refusal().c_str(), fused_wgrad.refusal().c_str());
      continue;
    }
    const auto x_count = static_cast<std::size_t>(p.n * p.h * p.w * p.c);
    const std::vector<float> x = random_values(x_count, 1, -2, 2);
    const std::vector<float> scale = random_values(static_cast<std::size_t>(p.c), 2, 0.5f, 1.5f);
    const std::vector<float> shift = random_values(static_cast<std::size_t>(p.c), 3, -0.5f, 0.5f);
    std::vector<float> applied(x_count);  // relu(x * scale + shift), what the apply pass writes
    for (std::size_t i = 0; i < x_count; ++i) {
      const std::size_t c = i % static_cast<std::size_t>(p.c);
      applied[i] = std::max(x[i] * scale[c] + shift[c], 0.0f);
    }
    const auto y_count = static_cast<std::size_t>(p.n * p.out_h() * p.out_w() * p.k);
    const auto w_count = static_cast<std::size_t>(p.k * p.r * p.s * p.c);
    const Half dx(x), dapplied(applied), dscale(scale), dshift(shift),
        w(random_values(w_count, 4, -0.1f, 0.1f)), dy(random_values(y_count, 5, -1, 1)), y(y_count),
        dw_plain(w_count), dw_fused(w_count), x_copy(x_count);
    auto* stats = static_cast<float*>(scratch(2 * sizeof(float) * static_cast<std::size_t>(p.k)));
    void* workspace =
        scratch(std::max({plain.workspace_bytes(), fused.workspace_bytes(),
                          plain_wgrad.workspace_bytes(), fused_wgrad.workspace_bytes()}));
    const float f0 = median_ms([&] {
      plain.run(handle, dapplied.get(), w.get(), nullptr, nullptr, y.get(), workspace, stats);
    });
    const float f1 = median_ms([&] {
      fused.run(handle, dx.get(), w.get(), nullptr, nullptr, y.get(), workspace, stats,
                dscale.get(), dshift.get());
    });
    const float g0 = median_ms([&] {
      plain_wgrad.run(handle, dapplied.get(), dw_plain.get(), dy.get(), nullptr, nullptr,
                      workspace);
    });
    const float g1 = median_ms([&] {
      fused_wgrad.run(handle, dx.get(), dw_fused.get(), dy.get(), dscale.get(), dshift.get(),
                      workspace);
    });
    const float c = median_ms([&] {
      CUDA_CHECK(
          cudaMemcpyAsync(x_copy.get(), dx.get(), dx.bytes(), cudaMemcpyDeviceToDevice, nullptr));
    });
    const std::vector<float> a = dw_plain.download(), b = dw_fused.download();
    double largest = 0, diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      largest = std::max(largest, std::fabs(double(a[i])));
      diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
    }
    std::printf("%-22s %8.3f %8.3f %+8.3f | %8.3f %8.3f %+8.3f %9.2e | %7.3f\n", l.name, f0, f1,
                f1 - f0, g0, g1, g1 - g0, diff / std::max(largest, 1e-30), c);
    std::printf("%-22s forward %s; wgrad %s, with the prologue %s\n", "",
                fused.chosen().describe().c_str(), plain_wgrad.engine().c_str(),
                fused_wgrad.engine().c_str());
    fwd += f0, fwd_prologue += f1, wgrad += g0, wgrad_prologue += g1, copy += c;
    CUDA_CHECK(cudaFree(stats));
    CUDA_CHECK(cudaFree(workspace));
  }
  std::printf("%-22s %8.3f %8.3f %+8.3f | %8.3f %8.3f %+8.3f %9s | %7.3f\n", "sum (one of each)",
              fwd, fwd_prologue, fwd_prologue - fwd, wgrad, wgrad_prologue, wgrad_prologue - wgrad,
              "", copy);
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
