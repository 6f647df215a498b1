// dlbench_conv_prologue_probe: a measurement for #17 (docs/measurements/resnet-vgg.md has its
// results), not a test (CTest does not run it). On ResNet-50's convolutions that read a batch norm
// + ReLU's output, in f16 at batch 256 (or argv[1]), with random inputs, it times:
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
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "engine/backend/cuda/cuda_handles.h"
#include "engine/backend/cuda/cudnn_fused_conv.h"
#include "tests/gpu/probe_util.h"

namespace dlbench::backend::cuda {
namespace {

using probe::dims;
using probe::Half;
using probe::median_ms;
using probe::random_values;
using probe::Scratch;

// dw = wgrad(x, dy), or wgrad(relu(x * scale + shift), dy) with the prologue.
class Wgrad {
 public:
  Wgrad(cudnnHandle_t handle, const ConvParams& p, bool prologue) : prologue_(prologue) {
    const std::vector<std::int64_t> x_dims = dims(p.n, p.c, p.h, p.w);
    const BackendDescriptor* input = &graph_.tensor("x", 1, x_dims, CUDNN_DATA_HALF);
    if (prologue) {
      std::int64_t uid = 101;
      auto step = [&](cudnnPointwiseMode_t mode, const BackendDescriptor* operand) {
        const BackendDescriptor& out =
            graph_.tensor("prologue", uid++, x_dims, CUDNN_DATA_FLOAT, Storage::kVirtual);
        graph_.add(make_pointwise_op(graph_.part(make_pointwise(mode)), *input, operand, out));
        input = &out;
      };
      step(CUDNN_POINTWISE_MUL, &graph_.tensor("scale", 4, dims(1, p.c, 1, 1), CUDNN_DATA_HALF));
      step(CUDNN_POINTWISE_ADD, &graph_.tensor("shift", 5, dims(1, p.c, 1, 1), CUDNN_DATA_HALF));
      step(CUDNN_POINTWISE_RELU_FWD, nullptr);
    }
    const BackendDescriptor& dw = graph_.tensor("dw", 2, dims(p.k, p.c, p.r, p.s), CUDNN_DATA_HALF);
    const BackendDescriptor& dy =
        graph_.tensor("dy", 3, dims(p.n, p.k, p.out_h(), p.out_w()), CUDNN_DATA_HALF);
    const BackendDescriptor& conv = graph_.part(
        make_convolution({p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w}));
    graph_.add(make_conv_backward_filter_op(conv, *input, dw, dy, 0.0f));
    graph_.plan(handle);
  }
  bool ok() const { return graph_.ok(); }
  const std::string& refusal() const { return graph_.refusal(); }
  std::size_t workspace_bytes() const { return graph_.workspace_bytes(); }
  std::string engine() const { return graph_.engine(); }
  void run(cudnnHandle_t handle, void* x, void* dw, void* dy, void* scale, void* shift,
           void* workspace) const {
    std::vector<std::int64_t> uids{1, 2, 3};
    std::vector<void*> pointers{x, dw, dy};
    if (prologue_) {
      uids.insert(uids.end(), {4, 5});
      pointers.insert(pointers.end(), {scale, shift});
    }
    graph_.run(handle, uids, pointers, workspace);
  }

 private:
  bool prologue_;
  probe::Graph graph_;
};

int probe_all(std::int64_t batch) {
  CudnnHandle handle;
  std::printf("%-22s %8s %8s %8s | %8s %8s %8s %9s | %7s\n", "f16, batch ", "fwd", "+prolog",
              "delta", "wgrad", "+prolog", "delta", "dw diff", "copy");
  double fwd = 0, fwd_prologue = 0, wgrad = 0, wgrad_prologue = 0, copy = 0;
  for (const probe::Layer& l : probe::kBnReluConvs) {
    ConvParams p = probe::conv_params(l, batch);
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
    const Half x_device(x), dapplied(applied), dscale(scale), dshift(shift),
        w(random_values(w_count, 4, -0.1f, 0.1f)), dy(random_values(y_count, 5, -1, 1)), y(y_count),
        dw_plain(w_count), dw_fused(w_count), x_copy(x_count);
    const Scratch stats_buffer(2 * sizeof(float) * static_cast<std::size_t>(p.k));
    const Scratch workspace_buffer(
        std::max({plain.workspace_bytes(), fused.workspace_bytes(), plain_wgrad.workspace_bytes(),
                  fused_wgrad.workspace_bytes()}));
    auto* stats = static_cast<float*>(stats_buffer.get());
    void* workspace = workspace_buffer.get();
    const float f0 = median_ms([&] {
      plain.run(handle, dapplied.get(), w.get(), nullptr, nullptr, y.get(), workspace, stats);
    });
    const float f1 = median_ms([&] {
      fused.run(handle, x_device.get(), w.get(), nullptr, nullptr, y.get(), workspace, stats,
                dscale.get(), dshift.get());
    });
    const float g0 = median_ms([&] {
      plain_wgrad.run(handle, dapplied.get(), dw_plain.get(), dy.get(), nullptr, nullptr,
                      workspace);
    });
    const float g1 = median_ms([&] {
      fused_wgrad.run(handle, x_device.get(), dw_fused.get(), dy.get(), dscale.get(), dshift.get(),
                      workspace);
    });
    const float c = median_ms([&] {
      CUDA_CHECK(cudaMemcpyAsync(x_copy.get(), x_device.get(), x_device.bytes(),
                                 cudaMemcpyDeviceToDevice, nullptr));
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
  }
  std::printf("%-22s %8.3f %8.3f %+8.3f | %8.3f %8.3f %+8.3f %9s | %7.3f\n", "sum (one of each)",
              fwd, fwd_prologue, fwd_prologue - fwd, wgrad, wgrad_prologue, wgrad_prologue - wgrad,
              "", copy);
  return 0;
}

}  // namespace
}  // namespace dlbench::backend::cuda

int main(int argc, char** argv) {
  return dlbench::backend::cuda::probe::run_main(argc, argv, "dlbench_conv_prologue_probe",
                                                 dlbench::backend::cuda::probe_all);
}
