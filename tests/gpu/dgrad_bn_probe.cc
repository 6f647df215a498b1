// dlbench_dgrad_bn_probe: a measurement for #17 (docs/measurements/resnet-vgg.md has its results),
// not a test (CTest does not run it). ResNet-50's backward of a batch norm + ReLU that feeds a
// convolution runs today as the convolution's backward-data pass (dgrad, writing g = d
// relu-output), then our partial-sums pass (reads g and the batch norm's input x for sum dy and sum
// dy xhat, dy = g where the ReLU passed), then our apply pass (dx of the batch norm). cuDNN can do
// the sums in the dgrad's epilogue instead, which saves the sums pass's reads. On the convolutions
// that read a batch norm + ReLU, in f16 at batch 256 (or argv[1]), with random inputs, this times:
//   dgrad   the plain backward-data pass (f16 output), one cuDNN graph;
//   bnw     dgrad + the batch norm recomputed from x + dReLU + cuDNN's batch-norm weight gradients
//           (its DgradDreluBNBwdWeight pattern: writes dy, dscale, dbias and the coefficients
//           of dx = A dy + B x + C);
//   sums    the same epilogue with the two sums as reductions (the generic runtime fusion);
//   copy    a device copy of x, the least one pass over the activation costs.
// The fused passes' outputs are checked against the plain dgrad's with the ReLU applied on the
// host, summed in f64 (largest difference over the largest value, per output); past the
// tolerances it exits 3. The last line weights each shape by how many of it a ResNet-50 step
// runs. Each graph runs on its first engine that finalizes (probe_util.h); others are not timed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "engine/backend/cuda/cuda_handles.h"
#include "tests/gpu/probe_util.h"

namespace dlbench::backend::cuda {
namespace {

using probe::dims;
using probe::Float;
using probe::Half;
using probe::median_ms;
using probe::random_values;
using probe::Scratch;

// Variant pack uids, one set for all three graphs.
enum Uid : std::int64_t {
  kDy = 1,
  kW,
  kX,
  kMean,
  kInvstd,
  kScale,
  kBias,
  kG,
  kDscale,
  kDbias,
  kEqDy,
  kEqX,
  kEqBias,
  kSumG,
  kSumGXm,
};

enum class Epilogue { kNone, kBnWeights, kSums };

// One backward-data graph: dgrad alone (writes dx as g), or with an epilogue that recomputes
// y = scale (x - mean) invstd + bias, writes g = dgrad where y > 0, and sums it.
class Dgrad {
 public:
  Dgrad(cudnnHandle_t handle, const ConvParams& p, Epilogue epilogue) : epilogue_(epilogue) {
    probe::Graph& g = graph_;
    const std::vector<std::int64_t> x_dims = dims(p.n, p.c, p.h, p.w);
    const std::vector<std::int64_t> channel = dims(1, p.c, 1, 1);
    const BackendDescriptor& dy =
        g.tensor("dy", kDy, dims(p.n, p.k, p.out_h(), p.out_w()), CUDNN_DATA_HALF);
    const BackendDescriptor& w = g.tensor("w", kW, dims(p.k, p.c, p.r, p.s), CUDNN_DATA_HALF);
    const BackendDescriptor& conv = g.part(
        make_convolution({p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w}));
    if (epilogue == Epilogue::kNone) {
      g.add(make_conv_backward_data_op(conv, g.tensor("g", kG, x_dims, CUDNN_DATA_HALF), w, dy,
                                       0.0f));
      g.plan(handle);
      return;
    }
    std::int64_t virtual_uid = 100;
    auto inner = [&](const char* name, const std::vector<std::int64_t>& d) -> auto& {
      return g.tensor(name, virtual_uid++, d, CUDNN_DATA_FLOAT, Storage::kVirtual);
    };
    auto pointwise = [&](cudnnPointwiseMode_t mode, const BackendDescriptor& a,
                         const BackendDescriptor& b, const char* name,
                         float alpha2 = 1.0f) -> auto& {
      const BackendDescriptor& out = inner(name, x_dims);
      g.add(make_pointwise_op(g.part(make_pointwise(mode)), a, &b, out, alpha2));
      return out;
    };
    const BackendDescriptor& dx = inner("dgrad", x_dims);
    g.add(make_conv_backward_data_op(conv, dx, w, dy, 0.0f));
    const BackendDescriptor& x = g.tensor("x", kX, x_dims, CUDNN_DATA_HALF);
    const BackendDescriptor& mean = g.tensor("mean", kMean, channel, CUDNN_DATA_FLOAT);
    const BackendDescriptor& invstd = g.tensor("invstd", kInvstd, channel, CUDNN_DATA_FLOAT);
    const BackendDescriptor& scale = g.tensor("scale", kScale, channel, CUDNN_DATA_FLOAT);
    const BackendDescriptor& bias = g.tensor("bias", kBias, channel, CUDNN_DATA_FLOAT);
    const BackendDescriptor& xm = pointwise(CUDNN_POINTWISE_ADD, x, mean, "x - mean", -1.0f);
    const BackendDescriptor& xhat = pointwise(CUDNN_POINTWISE_MUL, xm, invstd, "xhat");
    const BackendDescriptor& scaled = pointwise(CUDNN_POINTWISE_MUL, xhat, scale, "scaled");
    const BackendDescriptor& y = pointwise(CUDNN_POINTWISE_ADD, scaled, bias, "y");
    const BackendDescriptor& out = g.tensor("g", kG, x_dims, CUDNN_DATA_HALF);
    g.add(make_pointwise_backward_op(g.part(make_pointwise(CUDNN_POINTWISE_RELU_BWD)), dx, y, out));
    auto sum = [&](const char* name, std::int64_t uid) -> auto& {
      return g.tensor(name, uid, channel, CUDNN_DATA_FLOAT);
    };
    if (epilogue == Epilogue::kBnWeights) {
      g.add(make_bn_backward_weights_op({&x, &out, &mean, &invstd, &scale, &sum("dscale", kDscale),
                                         &sum("dbias", kDbias), &sum("eq dy", kEqDy),
                                         &sum("eq x", kEqX), &sum("eq bias", kEqBias)}));
    } else {
      const BackendDescriptor& add = g.part(make_reduction(CUDNN_REDUCE_TENSOR_ADD));
      g.add(make_reduction_op(add, out, sum("sum g", kSumG)));
      const BackendDescriptor& gxm = pointwise(CUDNN_POINTWISE_MUL, out, xm, "g (x - mean)");
      g.add(make_reduction_op(add, gxm, sum("sum g (x - mean)", kSumGXm)));
    }
    g.plan(handle);
  }
  const probe::Graph& graph() const { return graph_; }

  struct Pointers {
    void *dy, *w, *x, *mean, *invstd, *scale, *bias, *g;
    void* sums[5];  // dscale, dbias, A, B, C; or sum g, sum g (x - mean)
  };
  void run(cudnnHandle_t handle, const Pointers& p, void* workspace) const {
    std::vector<std::int64_t> uids{kDy, kW, kG};
    std::vector<void*> pointers{p.dy, p.w, p.g};
    if (epilogue_ != Epilogue::kNone) {
      uids.insert(uids.end(), {kX, kMean, kInvstd, kScale, kBias});
      pointers.insert(pointers.end(), {p.x, p.mean, p.invstd, p.scale, p.bias});
    }
    if (epilogue_ == Epilogue::kBnWeights) {
      uids.insert(uids.end(), {kDscale, kDbias, kEqDy, kEqX, kEqBias});
      pointers.insert(pointers.end(), p.sums, p.sums + 5);
    } else if (epilogue_ == Epilogue::kSums) {
      uids.insert(uids.end(), {kSumG, kSumGXm});
      pointers.insert(pointers.end(), p.sums, p.sums + 2);
    }
    graph_.run(handle, uids, pointers, workspace);
  }

 private:
  Epilogue epilogue_;
  probe::Graph graph_;
};

// Largest |a - b| over the largest |b|.
// How far a fused output may be from the host's, relative to its largest value: the masked
// gradient is f16 (ulp 1e-3) from a different engine, the f32 sums differ by summation order.
// The measured errors were at most 6e-4 and 4e-4 (H200, 2026-12-01).
constexpr double kGradientTolerance = 1e-2;
constexpr double kSumTolerance = 2e-3;

double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  double largest = 0, diff = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    largest = std::max(largest, std::fabs(b[i]));
    diff = std::max(diff, std::fabs(a[i] - b[i]));
  }
  return diff / std::max(largest, 1e-30);
}

// What the fused passes must write, from the plain dgrad's output on the host.
struct Reference {
  std::vector<float> g;  // dgrad where y > 0
  std::vector<double> dscale, dbias, eq_dy, eq_x, eq_bias;
};
Reference reference(const std::vector<float>& dgrad, const std::vector<float>& x,
                    const std::vector<float>& mean, const std::vector<float>& invstd,
                    const std::vector<float>& scale, const std::vector<float>& bias) {
  const std::size_t channels = mean.size();
  const std::size_t rows = x.size() / channels;
  Reference r;
  r.g.resize(x.size());
  r.dscale.assign(channels, 0.0), r.dbias.assign(channels, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t c = i % channels;
    const float xhat = (x[i] - mean[c]) * invstd[c];
    r.g[i] = xhat * scale[c] + bias[c] > 0.0f ? dgrad[i] : 0.0f;
    r.dbias[c] += r.g[i];
    r.dscale[c] += double(r.g[i]) * xhat;
  }
  // dx = scale invstd (dy - dbias / R - xhat dscale / R), as A dy + B x + C.
  for (std::size_t c = 0; c < channels; ++c) {
    const double a = double(scale[c]) * invstd[c], n = double(rows);
    r.eq_dy.push_back(a);
    r.eq_x.push_back(-a * invstd[c] * r.dscale[c] / n);
    r.eq_bias.push_back(-a * r.dbias[c] / n + a * invstd[c] * mean[c] * r.dscale[c] / n);
  }
  return r;
}

std::vector<double> widened(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

int probe_all(std::int64_t batch) {
  CudnnHandle handle;
  std::printf("%-22s %7s %7s %7s %7s | %-40s\n", "f16, batch", "dgrad", "bnw", "sums", "copy",
              "errors: g, dbias, dscale, A, B, C");
  double plain_total = 0, bnw_total = 0, sums_total = 0, copy_total = 0;
  bool bnw_all = true, sums_all = true;
  bool wrong = false;  // a fused output past its tolerance
  for (const probe::Layer& l : probe::kBnReluConvs) {
    const ConvParams p = probe::conv_params(l, batch);
    const Dgrad plain(handle, p, Epilogue::kNone), bnw(handle, p, Epilogue::kBnWeights),
        sums(handle, p, Epilogue::kSums);
    if (!plain.graph().ok()) {
      std::printf("%-22s no engine for the plain dgrad: %s\n", l.name,
                  plain.graph().refusal().c_str());
      return 1;
    }
    const auto x_count = static_cast<std::size_t>(p.n * p.h * p.w * p.c);
    const auto y_count = static_cast<std::size_t>(p.n * p.out_h() * p.out_w() * p.k);
    const auto w_count = static_cast<std::size_t>(p.k * p.r * p.s * p.c);
    const auto channels = static_cast<std::size_t>(p.c);
    const std::vector<float> x = random_values(x_count, 1, -2, 2),
                             mean = random_values(channels, 2, -0.5f, 0.5f),
                             invstd = random_values(channels, 3, 0.5f, 1.5f),
                             scale = random_values(channels, 4, 0.5f, 1.5f),
                             bias = random_values(channels, 5, -0.5f, 0.5f);
    const Half x_device(x), w(random_values(w_count, 6, -0.1f, 0.1f)),
        dy(random_values(y_count, 7, -1, 1)), g_plain(x_count), g_fused(x_count), x_copy(x_count);
    const Float dmean(mean), dinvstd(invstd), dscale(scale), dbias(bias);
    std::deque<Float> outputs;
    for (int i = 0; i < 5; ++i) outputs.emplace_back(channels);
    const Scratch workspace(std::max({plain.graph().workspace_bytes(),
                                      bnw.graph().ok() ? bnw.graph().workspace_bytes() : 0,
                                      sums.graph().ok() ? sums.graph().workspace_bytes() : 0}));
    Dgrad::Pointers ptrs{dy.get(),     w.get(),     x_device.get(), dmean.get(), dinvstd.get(),
                         dscale.get(), dbias.get(), g_plain.get(),  {}};
    for (int i = 0; i < 5; ++i) ptrs.sums[i] = outputs[static_cast<std::size_t>(i)].get();
    const float t_plain = median_ms([&] { plain.run(handle, ptrs, workspace.get()); });
    const Reference ref = reference(g_plain.download(), x, mean, invstd, scale, bias);
    ptrs.g = g_fused.get();
    std::string errors;
    char text[160];
    auto timed = [&](const Dgrad& fused, bool& all) -> float {
      if (!fused.graph().ok()) {
        all = false;
        return NAN;
      }
      return median_ms([&] { fused.run(handle, ptrs, workspace.get()); });
    };
    const float t_bnw = timed(bnw, bnw_all);
    if (bnw.graph().ok()) {
      const double e[] = {relative_error(widened(g_fused.download()), widened(ref.g)),
                          relative_error(widened(outputs[1].download()), ref.dbias),
                          relative_error(widened(outputs[0].download()), ref.dscale),
                          relative_error(widened(outputs[2].download()), ref.eq_dy),
                          relative_error(widened(outputs[3].download()), ref.eq_x),
                          relative_error(widened(outputs[4].download()), ref.eq_bias)};
      wrong = wrong || e[0] > kGradientTolerance || *std::max_element(e + 1, e + 6) > kSumTolerance;
      std::snprintf(text, sizeof text, "bnw %.1e %.1e %.1e %.1e %.1e %.1e", e[0], e[1], e[2], e[3],
                    e[4], e[5]);
      errors += text;
    }
    const float t_sums = timed(sums, sums_all);
    if (sums.graph().ok()) {
      const std::vector<float> sum_g = outputs[0].download(), sum_gxm = outputs[1].download();
      std::vector<double> dscale_sums(channels);
      for (std::size_t c = 0; c < channels; ++c) dscale_sums[c] = double(sum_gxm[c]) * invstd[c];
      const double e[] = {relative_error(widened(g_fused.download()), widened(ref.g)),
                          relative_error(widened(sum_g), ref.dbias),
                          relative_error(dscale_sums, ref.dscale)};
      wrong = wrong || e[0] > kGradientTolerance || std::max(e[1], e[2]) > kSumTolerance;
      std::snprintf(text, sizeof text, "%ssums %.1e %.1e %.1e", errors.empty() ? "" : "; ", e[0],
                    e[1], e[2]);
      errors += text;
    }
    const float t_copy = median_ms([&] {
      CUDA_CHECK(cudaMemcpyAsync(x_copy.get(), x_device.get(), x_device.bytes(),
                                 cudaMemcpyDeviceToDevice, nullptr));
    });
    std::printf("%-22s %7.3f %7.3f %7.3f %7.3f | %s\n", l.name, t_plain, t_bnw, t_sums, t_copy,
                errors.c_str());
    std::printf("%-22s dgrad %s; bnw %s; sums %s\n", "", plain.graph().engine().c_str(),
                bnw.graph().ok() ? bnw.graph().engine().c_str() : bnw.graph().refusal().c_str(),
                sums.graph().ok() ? sums.graph().engine().c_str() : sums.graph().refusal().c_str());
    plain_total += l.count * t_plain, copy_total += l.count * t_copy;
    bnw_total += l.count * t_bnw, sums_total += l.count * t_sums;
  }
  std::printf("%-22s %7.3f %7.3f %7.3f %7.3f | ms a step (each shape times its count)%s\n",
              "step total", plain_total, bnw_all ? bnw_total : NAN, sums_all ? sums_total : NAN,
              copy_total, bnw_all && sums_all ? "" : "; nan: some shape had no engine");
  if (wrong) {
    std::printf("WRONG: a fused output is past its tolerance (%.0e gradient, %.0e sums)\n",
                kGradientTolerance, kSumTolerance);
    return 3;
  }
  std::printf("every fused output within its tolerance\n");
  return 0;
}

}  // namespace
}  // namespace dlbench::backend::cuda

int main(int argc, char** argv) {
  return dlbench::backend::cuda::probe::run_main(argc, argv, "dlbench_dgrad_bn_probe",
                                                 dlbench::backend::cuda::probe_all);
}
