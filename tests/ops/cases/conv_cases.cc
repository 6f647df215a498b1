// Convolution forward, backward-data and backward-weights, 2D and 3D: the CPU backend against the
// float64 reference, every other backend (and, on CUDA, each convolution route) against the CPU
// in every precision and both gradient modes; and finite differences of the forward.
#include <cmath>
#include <sstream>

#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference.h"

namespace dlbench::op_harness {
namespace {

using backend::ConvParams;
using backend::OpKind;

ConvParams conv(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t k,
                std::int64_t r, std::int64_t s, int stride, int pad, bool bias, int dilation = 1) {
  ConvParams p;
  p.n = n, p.h = h, p.w = w, p.c = c, p.k = k, p.r = r, p.s = s;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  p.dilation_h = p.dilation_w = dilation;
  p.bias = bias;
  return p;
}

// The same in 3D (NDHWC): a cubic-sided input of depth d and a t x r x s filter.
ConvParams conv3d(std::int64_t n, std::int64_t d, std::int64_t h, std::int64_t w, std::int64_t c,
                  std::int64_t k, std::int64_t t, std::int64_t r, std::int64_t s, int stride,
                  int pad, bool bias) {
  ConvParams p = conv(n, h, w, c, k, r, s, stride, pad, bias);
  p.spatial_dims = 3;
  p.d = d, p.t = t, p.stride_d = stride, p.pad_d = pad;
  return p;
}

// std::ostringstream rather than string +: GCC 12 warns falsely on chains of it.
std::string name(const ConvParams& p) {
  std::ostringstream o;
  o << "n" << p.n << "_";
  if (p.volumetric()) o << p.d << "x";
  o << p.h << "x" << p.w << "x" << p.c << "_k" << p.k << "_";
  if (p.volumetric()) o << p.t << "x";
  o << p.r << "x" << p.s << "_s" << p.stride_h << "_p" << p.pad_h << "_d" << p.dilation_h
    << (p.bias ? "_bias" : "_nobias") << (p.residual ? "_add" : "")
    << (p.activation == backend::Activation::kRelu ? "_relu" : "")
    << (p.statistics ? "_stats" : "");
  return o.str();
}

// The shapes of the model suite, shrunk: ResNet's 1x1 and 3x3 blocks, its 7x7 stride-2 stem on
// 3 channels, its stride-2 3x3 and 1x1 downsamples, non-square images and filters, dilation;
// a tensor-core-sized 3x3 block; 1x1 at stride 2 on odd sizes (the last row and column are not
// read), odd channels (one channel per thread), 16-byte channel packs, and a tall stride-1
// product (the last four for the CUDA routes).
const std::vector<ConvParams> kShapes = {
    conv(2, 7, 7, 16, 24, 1, 1, 1, 0, false),   conv(2, 8, 8, 8, 16, 1, 1, 2, 0, true),
    conv(2, 10, 10, 16, 16, 3, 3, 1, 1, true),  conv(2, 10, 10, 16, 16, 3, 3, 1, 1, false),
    conv(2, 20, 20, 3, 8, 7, 7, 2, 3, false),   conv(1, 19, 17, 3, 8, 7, 7, 2, 3, true),
    conv(2, 12, 12, 8, 8, 3, 3, 2, 1, false),   conv(3, 13, 9, 5, 7, 3, 3, 2, 1, true),
    conv(2, 9, 13, 5, 7, 1, 3, 1, 0, true),     conv(2, 11, 11, 4, 6, 3, 3, 1, 2, false, 2),
    conv(4, 14, 14, 64, 64, 3, 3, 1, 1, false), conv(3, 9, 11, 5, 7, 1, 1, 2, 0, true),
    conv(2, 14, 14, 64, 32, 1, 1, 2, 0, false), conv(2, 28, 28, 64, 96, 1, 1, 1, 0, false),
};

// ResNet's stem at its 64 filters, which CUDA's stem kernels (cuda_conv_stem.cu and
// cuda_conv_stem_wgrad.cu) run in f16 and bf16: rows that copy in 16-byte loads (32 wide) and ones
// that do not (20 and 17 wide); tiles that span several output rows, images of fewer pixels than a
// tile, partial last tiles; a bias (inference's folded batch norm); and the full 224x224 image.
const std::vector<ConvParams> kStemShapes = {
    conv(2, 32, 32, 3, 64, 7, 7, 2, 3, false),
    conv(2, 20, 20, 3, 64, 7, 7, 2, 3, false),
    conv(3, 19, 17, 3, 64, 7, 7, 2, 3, true),
    conv(1, 224, 224, 3, 64, 7, 7, 2, 3, false),
};

// 3D U-Net's convolutions, shrunk: same-padded 3x3x3 blocks (one at tensor-core channels),
// its stride-2 downsampling, the 1x1x1 head with a bias, and the 2x2x2 stride-2 convolution its
// transposed convolutions are the backward-data of; non-cubic sides throughout.
const std::vector<ConvParams> kShapes3d = {
    conv3d(2, 5, 6, 4, 3, 4, 3, 3, 3, 1, 1, false),
    conv3d(2, 6, 5, 7, 4, 8, 3, 3, 3, 2, 1, true),
    conv3d(1, 4, 3, 5, 8, 3, 1, 1, 1, 1, 0, true),
    conv3d(2, 4, 6, 6, 16, 8, 2, 2, 2, 2, 0, false),
    conv3d(2, 6, 6, 6, 32, 32, 3, 3, 3, 1, 1, false),
};

// Inputs of one case, seeded by a fixed number so a failure reproduces.
class ConvCase : public OpCase {
 public:
  ConvCase(ConvParams p, OpKind kind, GradMode mode) : p_(p), kind_(kind), mode_(mode) {}
  std::string params() const override {
    return kind_ == OpKind::kConvForward ? name(p_) : name(p_) + "_" + mode_name(mode_);
  }
  OpKind kind() const override { return kind_; }
  bool has_math_mode() const override { return true; }
  backend::OpParams op_params(const Precision& prec) const override { return with_math(prec); }
  double flops() const override { return 2.0 * static_cast<double>(p_.macs()); }

 protected:
  ConvParams with_math(const Precision& prec) const {
    ConvParams p = p_;
    p.math = prec.math;
    return p;
  }
  ConvParams p_;
  OpKind kind_;
  GradMode mode_;
};

class ConvForward final : public ConvCase {
 public:
  explicit ConvForward(ConvParams p) : ConvCase(p, OpKind::kConvForward, GradMode::kOverwrite) {}
  std::string op() const override { return "conv_forward"; }
  // x, w, bias, y, the residual and the statistics (one-element placeholders, never touched,
  // without them). With statistics, x and w are positive, so the sums of y are far from 0 and
  // each is held to a relative tolerance.
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    auto placeholder = [](const char* name) {
      return HostTensor{name, {1}, Role::kScratch, Kind::kCompute, {0.0f}};
    };
    std::vector<HostTensor> t = {
        input("x", p_.input_shape(), 1),
        input("w", p_.weight_shape(), 2),
        input("bias", {p_.k}, 3),
        output("y", p_.output_shape()),
        p_.residual ? input("residual", p_.output_shape(), 4) : placeholder("residual"),
        p_.statistics ? output("statistics", p_.statistics_shape(), Kind::kF32)
                      : placeholder("statistics")};
    if (p_.statistics)
      for (int i : {0, 1}) t[i].data = positive_values(t[i].shape.numel(), 11 + i, 0.1f, 1.0f);
    return t;
  }
  void run(backend::Backend& be, const Precision& prec, std::span<const Tensor> t) const override {
    be.conv_forward(with_math(prec), t[0], t[1], p_.bias ? t[2] : Tensor(), t[3],
                    p_.residual ? t[4] : Tensor(), p_.statistics ? t[5] : Tensor());
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const Vec y = ref::conv_forward(p_, t[0].as_double(), t[1].as_double(), t[2].as_double(),
                                    t[4].as_double());
    std::vector<Check> checks = {{3, y, sum_tolerance(terms() - 1)}};
    if (p_.statistics) {
      Vec stats(static_cast<std::size_t>(2 * p_.k), 0.0);
      for (std::size_t i = 0; i < y.size(); ++i) {
        const std::size_t k = i % static_cast<std::size_t>(p_.k);
        stats[k] += y[i];
        stats[static_cast<std::size_t>(p_.k) + k] += y[i] * y[i];
      }
      checks.push_back({5, stats, {0.0, statistics_rtol()}});
    }
    return checks;
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    if (tensor == 5) return {0.0, 2 * statistics_rtol() + 4 * rounding(prec)};
    return sum_tolerance(prec, terms());
  }
  // The CPU does not write statistics (its batch norm sums x itself): held to float64.
  bool against_reference() const override { return p_.statistics; }

 private:
  std::int64_t terms() const { return p_.r * p_.s * p_.c + 1 + (p_.residual ? 1 : 0); }
  // Sums of positive terms in f32: y's error is at most terms * 2^-24 of it, a sum over the
  // rows adds rows * 2^-24, a square doubles y's share.
  double statistics_rtol() const {
    const double rows = static_cast<double>(p_.n * p_.out_h() * p_.out_w());
    return (2.0 * static_cast<double>(terms()) + rows) * std::ldexp(1.0, -24);
  }
  // How far another precision's y may be from the CPU's, relative to y: rounding to the dtype
  // (which the fused statistics may sum before), TF32 inputs, and partial sums some kernels keep
  // in the low precision.
  static double rounding(const Precision& prec) {
    if (prec.dtype == DType::kF16) return std::ldexp(1.0, -9);
    if (prec.dtype == DType::kBF16) return std::ldexp(1.0, -6);
    if (prec.math == MathMode::kStrict) return 0.0;
    return std::ldexp(1.0, -9);
  }
};

class ConvBackwardData final : public ConvCase {
 public:
  ConvBackwardData(ConvParams p, GradMode mode) : ConvCase(p, OpKind::kConvBackwardData, mode) {}
  std::string op() const override { return "conv_backward_data"; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {input("dy", p_.output_shape(), 4), input("w", p_.weight_shape(), 2),
            grad_output("dx", p_.input_shape(), mode_, 5)};
  }
  void run(backend::Backend& be, const Precision& prec, std::span<const Tensor> t) const override {
    be.conv_backward_data(with_math(prec), t[0], t[1], t[2], mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const Vec dx = ref::conv_backward_data(p_, t[0].as_double(), t[1].as_double());
    return {{2, expected_grad(mode_, t[2], dx), sum_tolerance(p_.r * p_.s * p_.k)}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return sum_tolerance(prec, p_.r * p_.s * p_.k + 1);
  }
};

class ConvBackwardWeights final : public ConvCase {
 public:
  ConvBackwardWeights(ConvParams p, GradMode mode)
      : ConvCase(p, OpKind::kConvBackwardWeights, mode) {}
  std::string op() const override { return "conv_backward_weights"; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> t = {input("x", p_.input_shape(), 1), input("dy", p_.output_shape(), 4),
                                 grad_output("dw", p_.weight_shape(), mode_, 6)};
    if (p_.bias) t.push_back(grad_output("dbias", {p_.k}, mode_, 7));
    return t;
  }
  void run(backend::Backend& be, const Precision& prec, std::span<const Tensor> t) const override {
    be.conv_backward_weights(with_math(prec), t[0], t[1], t[2], p_.bias ? t[3] : Tensor(), mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const ref::WeightGrads g = ref::conv_backward_weights(p_, t[0].as_double(), t[1].as_double());
    const Tolerance tol = sum_tolerance(pixels());
    std::vector<Check> checks = {{2, expected_grad(mode_, t[2], g.dw), tol}};
    if (p_.bias) checks.push_back({3, expected_grad(mode_, t[3], g.dbias), tol});
    return checks;
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return sum_tolerance(prec, pixels() + 1);
  }

 private:
  std::int64_t pixels() const { return p_.n * p_.out_h() * p_.out_w(); }
};

// ResNet-50's convolutions (side, c, k, window, stride; padding window / 2) at kPerfBatch.
struct ResNetConv {
  std::int64_t side, c, k, window;
  int stride;
};
const ResNetConv kResNetConvs[] = {
    {224, 3, 64, 7, 2},    {56, 64, 64, 1, 1},    {56, 64, 256, 1, 1},    {56, 256, 64, 1, 1},
    {56, 64, 64, 3, 1},    {56, 256, 128, 1, 1},  {56, 256, 512, 1, 2},   {56, 128, 128, 3, 2},
    {28, 128, 512, 1, 1},  {28, 512, 128, 1, 1},  {28, 128, 128, 3, 1},   {28, 512, 256, 1, 1},
    {28, 512, 1024, 1, 2}, {28, 256, 256, 3, 2},  {14, 256, 1024, 1, 1},  {14, 1024, 256, 1, 1},
    {14, 256, 256, 3, 1},  {14, 1024, 512, 1, 1}, {14, 1024, 2048, 1, 2}, {14, 512, 512, 3, 2},
    {7, 512, 2048, 1, 1},  {7, 2048, 512, 1, 1},  {7, 512, 512, 3, 1}};

CaseList cases() {
  CaseList out;
  for (const ResNetConv& r : kResNetConvs) {
    const ConvParams p = conv(kPerfBatch, r.side, r.side, r.c, r.k, r.window, r.window, r.stride,
                              static_cast<int>(r.window / 2), false);
    out.push_back(std::make_unique<PerfCase>(std::make_unique<ConvForward>(p)));
    out.push_back(
        std::make_unique<PerfCase>(std::make_unique<ConvBackwardData>(p, GradMode::kOverwrite)));
    out.push_back(
        std::make_unique<PerfCase>(std::make_unique<ConvBackwardWeights>(p, GradMode::kOverwrite)));
  }
  // The stem with its 3 input channels padded to 4 and 8 (zeros in the padding, as MLPerf's
  // ResNet-50 pads its input): whether the libraries' kernels for those run it faster.
  for (std::int64_t c : {4, 8}) {
    const ConvParams p = conv(kPerfBatch, 224, 224, c, 64, 7, 7, 2, 3, false);
    out.push_back(std::make_unique<PerfCase>(std::make_unique<ConvForward>(p)));
    out.push_back(
        std::make_unique<PerfCase>(std::make_unique<ConvBackwardWeights>(p, GradMode::kOverwrite)));
  }
  // The stem as training runs it: with its batch norm's statistics (fused where that is faster).
  for (std::int64_t c : {3, 4, 8}) {
    ConvParams p = conv(kPerfBatch, 224, 224, c, 64, 7, 7, 2, 3, false);
    p.statistics = true;
    out.push_back(std::make_unique<PerfCase>(std::make_unique<ConvForward>(p)));
  }
  for (const ConvParams& p : kShapes) out.push_back(std::make_unique<ConvForward>(p));
  for (const ConvParams& p : kShapes3d) out.push_back(std::make_unique<ConvForward>(p));
  // The stem at 64 filters as it is, with a ReLU (inference's, after the folded bias), and with
  // a training batch norm's statistics.
  for (ConvParams p : kStemShapes) {
    out.push_back(std::make_unique<ConvForward>(p));
    p.activation = backend::Activation::kRelu;
    out.push_back(std::make_unique<ConvForward>(p));
    p.activation = backend::Activation::kNone;
    p.bias = false;
    p.statistics = true;
    out.push_back(std::make_unique<ConvForward>(p));
  }
  // The ReLU epilogue (fuse_conv_relu) after a bias and without one, on the stem and a 3x3.
  for (ConvParams p : {kShapes[2], kShapes[3], kShapes[4], kShapes[5]}) {
    p.activation = backend::Activation::kRelu;
    out.push_back(std::make_unique<ConvForward>(p));
  }
  // Inference's folded residual tail (fold_conv_bn): + residual before the ReLU, with and without
  // a bias and a ReLU, on 1x1 blocks (direct products on CUDA's product route, one chunked at
  // stride 2), a 3x3 and a 3-channel 7x7 (on padded channels where CUDA pads).
  for (ConvParams p : {kShapes[0], kShapes[1], kShapes[2], kShapes[5], kShapes[13]}) {
    p.residual = true;
    out.push_back(std::make_unique<ConvForward>(p));
    p.bias = true;
    p.activation = backend::Activation::kRelu;
    out.push_back(std::make_unique<ConvForward>(p));
  }
  // A training batch norm's statistics from the convolution before it (fuse_conv_bn_stats): 3x3
  // and strided blocks, a 1x1 product, 16-byte packs of 64 channels, odd channels and a
  // 3-channel stem.
  for (ConvParams p : {kShapes[3], kShapes[4], kShapes[6], kShapes[7], kShapes[10], kShapes[13]}) {
    p.statistics = true;
    out.push_back(std::make_unique<ConvForward>(p));
  }
  for (const auto* shapes : {&kShapes, &kShapes3d})
    for (const ConvParams& p : *shapes)
      for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate}) {
        out.push_back(std::make_unique<ConvBackwardData>(p, m));
        out.push_back(std::make_unique<ConvBackwardWeights>(p, m));
      }
  // The stem's weight gradient at 64 filters, written and added to (its bias gradient too).
  for (const ConvParams& p : kStemShapes)
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      out.push_back(std::make_unique<ConvBackwardWeights>(p, m));
  return out;
}
DLBENCH_OP_CASES(cases);

// dx, dw and dbias of a small convolution at strides 1 and 2, in 2D and 3D.
std::vector<GradCase> grad_cases() {
  std::vector<GradCase> out;
  for (const ConvParams& p :
       {conv(2, 5, 4, 3, 2, 3, 3, 1, 1, true), conv(2, 5, 4, 3, 2, 3, 3, 2, 1, true),
        conv3d(1, 3, 4, 3, 2, 2, 3, 3, 3, 1, 1, true),
        conv3d(2, 4, 3, 4, 2, 3, 3, 3, 3, 2, 1, true)}) {
    GradCase g;
    g.op = p.volumetric() ? "conv3d" : "conv2d";
    g.params = name(p);
    g.kind = OpKind::kConvBackwardData;
    g.op_params = p;
    g.tensors = {input("x", p.input_shape(), 81), input("w", p.weight_shape(), 82),
                 input("bias", {p.k}, 83),        input("dy", p.output_shape(), 84),
                 output("dx", p.input_shape()),   output("dw", p.weight_shape()),
                 output("dbias", {p.k})};
    g.wrt = {{0, 4}, {1, 5}, {2, 6}};
    g.weight = 3;
    g.forward = [p](const std::vector<Vec>& t) { return ref::conv_forward(p, t[0], t[1], t[2]); };
    g.reference_backward = [p](const std::vector<Vec>& t) {
      ref::WeightGrads w = ref::conv_backward_weights(p, t[0], t[3]);
      return std::vector<Vec>{ref::conv_backward_data(p, t[3], t[1]), w.dw, w.dbias};
    };
    g.backward = [p](backend::Backend& be, std::span<const Tensor> t) {
      be.conv_backward_data(p, t[3], t[1], t[4], GradMode::kOverwrite);
      be.conv_backward_weights(p, t[0], t[3], t[5], t[6], GradMode::kOverwrite);
    };
    out.push_back(std::move(g));
  }
  return out;
}
DLBENCH_GRAD_CASES(grad_cases);

}  // namespace
}  // namespace dlbench::op_harness
