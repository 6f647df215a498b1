// FusedConvForward (cuDNN's graph API: y = relu(conv(x, w) + b + r)) against a float64 loop over
// NHWC / KRSC, on three layer shapes, each with and without bias and ReLU, and with all three and
// a residual (inference's folded residual tail), in strict f32, TF32, f16 and bf16. Labelled gpu;
// skips without one. Each case prints the engine cuDNN ran, so a failure on a new cuDNN names the
// engine to look at.
//
// Tolerance: |got - ref| <= atol + rtol * sum|terms|, where sum|terms| is the sum of |x w| over
// the window plus |b|. Any summation order's rounding is bounded by a multiple of it, while
// |ref| alone can be near zero after cancellation (|r| joins the sum with a residual). The inputs
// are rounded to the dtype on the host first, so the reference sees exactly what the GPU reads.
#include <cudnn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_handles.h"
#include "engine/backend/cuda/cudnn_fused_conv.h"
#include "tests/gpu/gpu_available.h"
#include "tests/ops/harness/tensors.h"

namespace dlbench::op_harness {
// Static: argument lookup finds it in Precision's namespace, and it stays in this file.
static void PrintTo(const Precision& precision, std::ostream* os) {
  *os << precision.name;
}
}  // namespace dlbench::op_harness

namespace dlbench::backend::cuda {
namespace {

using op_harness::Precision;

// f32 sums of up to a few thousand terms: a handful of ulps of sum|terms|.
constexpr double kStrictRtol = 1e-5;
// TF32 reads inputs with 10 mantissa bits: each product is off by up to 2^-10 of itself.
constexpr double kTf32Rtol = 5e-3;
// f16/bf16 outputs round to 11/8 bits (bf16: 2^-9 of |y| <= 2^-9 sum|terms|), and some kernels
// keep partial sums in the low precision.
constexpr double kHalfRtol = 1e-2;
constexpr double kAtol = 1e-6;
constexpr int kMismatchesShown = 5;

struct Shape2d {
  const char* name;
  ConvParams params;
  std::int64_t real_channels;  // channels past this are zero padding (an RGB stem padded to 8)
};

ConvParams conv(std::int64_t n, std::int64_t hw, std::int64_t c, std::int64_t k, std::int64_t rs,
                int stride, int pad) {
  ConvParams p;
  p.n = n, p.h = hw, p.w = hw, p.c = c, p.k = k, p.r = rs, p.s = rs;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  return p;
}

// f16 engines want channels in multiples of 8 (16 bytes), hence the stem's 3 channels padded.
const Shape2d kShapes[] = {
    {"Vgg3x3", conv(2, 8, 16, 32, 3, 1, 1), 16},
    {"Pointwise1x1", conv(2, 8, 32, 16, 1, 1, 0), 32},
    {"Stem7x7s2", conv(2, 16, 8, 16, 7, 2, 3), 3},
};

enum class Epilogue { kNone, kBias, kRelu, kBiasRelu, kBiasAddRelu };
const char* epilogue_name(Epilogue e) {
  switch (e) {
    case Epilogue::kNone:
      return "Plain";
    case Epilogue::kBias:
      return "Bias";
    case Epilogue::kRelu:
      return "Relu";
    case Epilogue::kBiasRelu:
      return "BiasRelu";
    case Epilogue::kBiasAddRelu:
      return "BiasAddRelu";
  }
  return "?";
}

double rtol_of(const Precision& p) {
  if (p.dtype != DType::kF32) return kHalfRtol;
  return p.math == MathMode::kStrict ? kStrictRtol : kTf32Rtol;
}

struct Reference {
  std::vector<double> value;
  std::vector<double> magnitude;  // sum |terms|, the tolerance's scale
};

// y[n, p, q, k] = relu(b[k] + r[n, p, q, k] + sum_{r, s, c} x[n, ih, iw, c] w[k, r, s, c]) in
// float64.
Reference reference(const ConvParams& p, const std::vector<float>& x, const std::vector<float>& w,
                    const std::vector<float>& b, const std::vector<float>& residual) {
  const std::int64_t oh = p.out_h(), ow = p.out_w();
  Reference ref;
  ref.value.resize(static_cast<std::size_t>(p.n * oh * ow * p.k));
  ref.magnitude.resize(ref.value.size());
  std::size_t out = 0;
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t op = 0; op < oh; ++op)
      for (std::int64_t oq = 0; oq < ow; ++oq)
        for (std::int64_t k = 0; k < p.k; ++k, ++out) {
          double sum = 0, magnitude = 0;
          for (std::int64_t r = 0; r < p.r; ++r)
            for (std::int64_t s = 0; s < p.s; ++s) {
              const std::int64_t ih = op * p.stride_h - p.pad_h + r * p.dilation_h;
              const std::int64_t iw = oq * p.stride_w - p.pad_w + s * p.dilation_w;
              if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
              for (std::int64_t c = 0; c < p.c; ++c) {
                const double term = double(x[((n * p.h + ih) * p.w + iw) * p.c + c]) *
                                    double(w[((k * p.r + r) * p.s + s) * p.c + c]);
                sum += term;
                magnitude += std::fabs(term);
              }
            }
          if (p.bias) sum += b[k], magnitude += std::fabs(b[k]);
          if (p.residual) sum += residual[out], magnitude += std::fabs(residual[out]);
          if (p.activation == Activation::kRelu) sum = std::max(sum, 0.0);
          ref.value[out] = sum;
          ref.magnitude[out] = magnitude;
        }
  return ref;
}

// Random values rounded to the dtype; channels from real_channels on are zero.
std::vector<float> values(std::int64_t count, std::uint64_t seed, DType dtype,
                          std::int64_t channels = 1, std::int64_t real_channels = 1) {
  std::vector<float> v = op_harness::random_values(count, seed);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const bool padding = static_cast<std::int64_t>(i) % channels >= real_channels;
    v[i] = padding ? 0.0f : op_harness::round_to(dtype, v[i]);
  }
  return v;
}

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0) CUDA_CHECK(cudaMalloc(&data_, bytes));
  }
  ~DeviceBuffer() {
    if (data_ != nullptr) CUDA_CHECK_NOTHROW(cudaFree(data_));
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(other.bytes_) {}
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  void* get() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

DeviceBuffer upload(const std::vector<float>& v, DType dtype) {
  DeviceBuffer buffer(v.size() * size_of(dtype));
  if (dtype == DType::kF32) {
    CUDA_CHECK(cudaMemcpy(buffer.get(), v.data(), buffer.bytes(), cudaMemcpyHostToDevice));
    return buffer;
  }
  std::vector<std::uint16_t> bits(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    bits[i] = dtype == DType::kF16 ? op_harness::f32_to_f16_bits(v[i])
                                   : op_harness::f32_to_bf16_bits(v[i]);
  CUDA_CHECK(cudaMemcpy(buffer.get(), bits.data(), buffer.bytes(), cudaMemcpyHostToDevice));
  return buffer;
}

std::vector<float> download(const DeviceBuffer& buffer, DType dtype) {
  std::vector<float> v(buffer.bytes() / size_of(dtype));
  if (dtype == DType::kF32) {
    CUDA_CHECK(cudaMemcpy(v.data(), buffer.get(), buffer.bytes(), cudaMemcpyDeviceToHost));
    return v;
  }
  std::vector<std::uint16_t> bits(v.size());
  CUDA_CHECK(cudaMemcpy(bits.data(), buffer.get(), buffer.bytes(), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = dtype == DType::kF16 ? op_harness::f16_bits_to_f32(bits[i])
                                : op_harness::bf16_bits_to_f32(bits[i]);
  return v;
}

// Elementwise check that prints the first mismatches by their NHWC index.
::testing::AssertionResult matches(const ConvParams& p, const std::vector<float>& got,
                                   const Reference& ref, double rtol) {
  int bad = 0;
  std::string shown;
  double worst_share = 0;  // largest |error| / allowed, to show the room left
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double allowed = kAtol + rtol * ref.magnitude[i];
    const double error = std::fabs(double(got[i]) - ref.value[i]);
    if (!std::isnan(error)) worst_share = std::max(worst_share, error / allowed);
    if (error <= allowed) continue;  // NaN compares false, so fails here
    if (bad++ < kMismatchesShown) {
      const auto e = static_cast<std::int64_t>(i);
      const std::int64_t k = e % p.k, q = e / p.k % p.out_w(), row = e / p.k / p.out_w();
      shown += "\n  y[n=" + std::to_string(row / p.out_h()) +
               ", p=" + std::to_string(row % p.out_h()) + ", q=" + std::to_string(q) +
               ", k=" + std::to_string(k) + "] = " + std::to_string(got[i]) + ", expected " +
               std::to_string(ref.value[i]) + " (allowed error " + std::to_string(allowed) + ")";
    }
  }
  std::printf("  largest error: %.3g of the tolerance\n", worst_share);
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << got.size() << " outputs differ from the float64 reference" << shown;
}

using Case = std::tuple<Shape2d, Epilogue, Precision>;

// Readable GetParam() in test listings and failures (gtest finds these by argument lookup).
void PrintTo(const Shape2d& shape, std::ostream* os) {
  *os << shape.name;
}
void PrintTo(Epilogue epilogue, std::ostream* os) {
  *os << epilogue_name(epilogue);
}

class FusedConvGpuTest : public ::testing::TestWithParam<Case> {};

TEST_P(FusedConvGpuTest, MatchesTheFloat64Reference) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA GPU";
  const auto& [shape, epilogue, precision] = GetParam();
  ConvParams p = shape.params;
  p.bias = epilogue == Epilogue::kBias || epilogue == Epilogue::kBiasRelu ||
           epilogue == Epilogue::kBiasAddRelu;
  p.residual = epilogue == Epilogue::kBiasAddRelu;
  p.activation = epilogue == Epilogue::kRelu || epilogue == Epilogue::kBiasRelu ||
                         epilogue == Epilogue::kBiasAddRelu
                     ? Activation::kRelu
                     : Activation::kNone;
  p.math = precision.math;
  const DType dtype = precision.dtype;

  CudnnHandle handle;
  const FusedConvForward fused(handle, p, dtype);
  if (!fused.ok()) {
    // f16/bf16 fused graphs run on the runtime-fusion engines and a plain convolution on any
    // engine; strict (and TF32) f32 with an epilogue may have none, and callers fall back.
    const bool must_run = dtype != DType::kF32 || epilogue == Epilogue::kNone;
    if (must_run) FAIL() << "no engine: " << fused.unsupported_reason();
    GTEST_SKIP() << "cuDNN has no engine (callers fall back): " << fused.unsupported_reason();
  }
  std::printf("  %s, workspace %zu bytes\n", fused.chosen().describe().c_str(),
              fused.workspace_bytes());

  const std::vector<float> x = values(p.n * p.h * p.w * p.c, 1, dtype, p.c, shape.real_channels);
  const std::vector<float> w = values(p.k * p.r * p.s * p.c, 2, dtype, p.c, shape.real_channels);
  const std::vector<float> b = values(p.k, 3, dtype);
  const std::vector<float> r = values(p.n * p.out_h() * p.out_w() * p.k, 4, dtype);
  const DeviceBuffer dx = upload(x, dtype), dw = upload(w, dtype), db = upload(b, dtype),
                     dr = upload(r, dtype);
  DeviceBuffer dy(static_cast<std::size_t>(p.n * p.out_h() * p.out_w() * p.k) * size_of(dtype));
  CUDA_CHECK(cudaMemset(dy.get(), 0xFF, dy.bytes()));  // NaN in every dtype: nothing left unset
  DeviceBuffer workspace(fused.workspace_bytes());

  fused.run(handle, dx.get(), dw.get(), p.bias ? db.get() : nullptr,
            p.residual ? dr.get() : nullptr, dy.get(), workspace.get());
  CUDA_CHECK(cudaDeviceSynchronize());

  EXPECT_TRUE(matches(p, download(dy, dtype), reference(p, x, w, b, r), rtol_of(precision)))
      << fused.chosen().describe();
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto& [shape, epilogue, precision] = info.param;
  return std::string(shape.name) + "_" + epilogue_name(epilogue) + "_" + precision.name;
}

INSTANTIATE_TEST_SUITE_P(Shapes, FusedConvGpuTest,
                         ::testing::Combine(::testing::ValuesIn(kShapes),
                                            ::testing::Values(Epilogue::kNone, Epilogue::kBias,
                                                              Epilogue::kRelu, Epilogue::kBiasRelu,
                                                              Epilogue::kBiasAddRelu),
                                            ::testing::Values(op_harness::kF32, op_harness::kTf32,
                                                              op_harness::kF16, op_harness::kBf16)),
                         case_name);

// A limit on the workspace picks an engine within it or none, saying why: with none allowed,
// every shape either runs without scratch or names the limit among its refusals.
TEST(FusedConvWorkspaceGpuTest, KeepsToTheLimit) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA GPU";
  CudnnHandle handle;
  int wanted_scratch = 0;
  // ResNet-50's shapes at batch 64, where engines ask for scratch (the tiny ones above do not).
  const Shape2d shapes[] = {{"Resnet3x3", conv(64, 56, 64, 64, 3, 1, 1), 64},
                            {"Resnet3x3s2", conv(64, 56, 128, 128, 3, 2, 1), 128},
                            {"Resnet1x1", conv(64, 56, 256, 64, 1, 1, 0), 256}};
  for (const Shape2d& shape : shapes) {
    for (const Precision& precision : {op_harness::kF32, op_harness::kF16, op_harness::kBf16}) {
      ConvParams p = shape.params;
      p.math = precision.math;
      p.bias = true;
      p.activation = Activation::kRelu;
      const FusedConvForward free_choice(handle, p, precision.dtype);
      if (!free_choice.ok() || free_choice.workspace_bytes() == 0) continue;
      ++wanted_scratch;
      const FusedConvForward limited(handle, p, precision.dtype, 0);
      SCOPED_TRACE(std::string(shape.name) + " " + precision.name);
      if (limited.ok())
        EXPECT_EQ(limited.workspace_bytes(), 0u) << limited.chosen().describe();
      else
        EXPECT_NE(limited.unsupported_reason().find("over the workspace limit of 0 bytes"),
                  std::string::npos)
            << limited.unsupported_reason();
    }
  }
  if (wanted_scratch == 0) GTEST_SKIP() << "no shape's first engine wanted a workspace";
  std::printf("  %d shapes wanted a workspace without the limit\n", wanted_scratch);
}

// The statistics a plan wrote ([2, K] f32) are the sums and sums of squares of each channel of the
// y it wrote. f32 sums of up to a few thousand terms; the engine may sum y before it is rounded
// to the dtype (half an ulp of each term), so 1e-3 of the sum of magnitudes.
void expect_statistics_of(const ConvParams& p, const std::vector<float>& y,
                          const DeviceBuffer& stats) {
  std::vector<float> got(2 * static_cast<std::size_t>(p.k));
  CUDA_CHECK(cudaMemcpy(got.data(), stats.get(), stats.bytes(), cudaMemcpyDeviceToHost));
  for (std::int64_t k = 0; k < p.k; ++k) {
    double sum = 0, sqsum = 0, magnitude = 0;
    for (std::size_t i = static_cast<std::size_t>(k); i < y.size(); i += p.k) {
      sum += y[i], sqsum += double(y[i]) * y[i], magnitude += std::fabs(y[i]);
    }
    EXPECT_NEAR(got[k], sum, 1e-3 * magnitude + kAtol) << "sum of channel " << k;
    EXPECT_NEAR(got[p.k + k], sqsum, 1e-3 * sqsum + kAtol) << "sqsum of channel " << k;
  }
}

// The plan's batch-norm statistics of y (sum and sum of squares per channel, f32) against
// float64 sums of the y it wrote. cuDNN has no such engine for every dtype (9.14 documents conv
// + genstats on an H100 for f16): where it has none the case skips with the reason, as callers
// fall back to a separate statistics pass.
class FusedConvStatsGpuTest : public ::testing::TestWithParam<std::tuple<Shape2d, Precision>> {};

TEST_P(FusedConvStatsGpuTest, SumsMatchTheOutput) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA GPU";
  const auto& [shape, precision] = GetParam();
  ConvParams p = shape.params;
  p.math = precision.math;
  p.statistics = true;
  const DType dtype = precision.dtype;
  CudnnHandle handle;
  const FusedConvForward fused(handle, p, dtype);
  if (!fused.ok()) GTEST_SKIP() << "cuDNN has no engine: " << fused.unsupported_reason();
  std::printf("  %s, workspace %zu bytes\n", fused.chosen().describe().c_str(),
              fused.workspace_bytes());

  const std::vector<float> x = values(p.n * p.h * p.w * p.c, 1, dtype, p.c, shape.real_channels);
  const std::vector<float> w = values(p.k * p.r * p.s * p.c, 2, dtype, p.c, shape.real_channels);
  const DeviceBuffer dx = upload(x, dtype), dw = upload(w, dtype);
  DeviceBuffer dy(static_cast<std::size_t>(p.n * p.out_h() * p.out_w() * p.k) * size_of(dtype));
  DeviceBuffer stats(2 * sizeof(float) * static_cast<std::size_t>(p.k));
  CUDA_CHECK(cudaMemset(stats.get(), 0xFF, stats.bytes()));  // NaN: nothing left unset
  DeviceBuffer workspace(fused.workspace_bytes());
  auto* sums = static_cast<float*>(stats.get());
  fused.run(handle, dx.get(), dw.get(), nullptr, nullptr, dy.get(), workspace.get(), sums);
  CUDA_CHECK(cudaDeviceSynchronize());

  const std::vector<float> y = download(dy, dtype);
  EXPECT_TRUE(matches(p, y, reference(p, x, w, {}, {}), rtol_of(precision)));
  expect_statistics_of(p, y, stats);
}

// ResNet-50's convolutions before a batch norm, at a small batch: 1x1, 3x3 and strided.
const Shape2d kStatsShapes[] = {
    {"Resnet1x1", conv(4, 28, 64, 256, 1, 1, 0), 64},
    {"Resnet3x3", conv(4, 28, 64, 64, 3, 1, 1), 64},
    {"Resnet3x3s2", conv(4, 28, 128, 128, 3, 2, 1), 128},
};

std::string stats_case_name(const ::testing::TestParamInfo<std::tuple<Shape2d, Precision>>& info) {
  return std::string(std::get<0>(info.param).name) + "_" + std::get<1>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(Shapes, FusedConvStatsGpuTest,
                         ::testing::Combine(::testing::ValuesIn(kStatsShapes),
                                            ::testing::Values(op_harness::kF16, op_harness::kBf16,
                                                              op_harness::kTf32)),
                         stats_case_name);

// The input prologue (the previous layer's batch norm and ReLU applied as x is read): y = conv(
// relu(x * scale + shift), w), with and without the statistics, against the float64 loop over
// the transformed input; the 3x3 shapes' padding must stay zero, not relu(shift). cuDNN 9.14
// documents the chain with statistics for f16 (on sm_90 only the whole chain), so f16 with
// statistics must run where that was measured (sm_90, cuDNN 9.14 or later) and the rest skip
// where cuDNN has no engine. The reference reads the transformed input unrounded (the engine
// rounds it to the dtype before the product): within the f16 tolerance.
bool prologue_must_run() {
  int major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  return major == 9 && cudnnGetVersion() >= 91400;
}

class FusedConvPrologueGpuTest
    : public ::testing::TestWithParam<std::tuple<Shape2d, bool, Precision>> {};

TEST_P(FusedConvPrologueGpuTest, MatchesTheReferenceOverTheTransformedInput) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA GPU";
  const auto& [shape, statistics, precision] = GetParam();
  ConvParams p = shape.params;
  p.math = precision.math;
  p.statistics = statistics;
  const DType dtype = precision.dtype;
  CudnnHandle handle;
  const FusedConvForward fused(handle, p, dtype, std::numeric_limits<std::size_t>::max(),
                               InputPrologue::kScaleShiftRelu);
  if (!fused.ok()) {
    if (dtype == DType::kF16 && statistics && prologue_must_run())
      FAIL() << "no engine: " << fused.unsupported_reason();
    GTEST_SKIP() << "cuDNN has no engine: " << fused.unsupported_reason();
  }
  std::printf("  %s, workspace %zu bytes\n", fused.chosen().describe().c_str(),
              fused.workspace_bytes());

  const std::vector<float> x = values(p.n * p.h * p.w * p.c, 1, dtype);
  const std::vector<float> w = values(p.k * p.r * p.s * p.c, 2, dtype);
  const std::vector<float> scale = values(p.c, 5, dtype), shift = values(p.c, 6, dtype);
  std::vector<float> input(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t c = i % static_cast<std::size_t>(p.c);
    input[i] = static_cast<float>(std::max(double(x[i]) * scale[c] + shift[c], 0.0));
  }
  const DeviceBuffer dx = upload(x, dtype), dw = upload(w, dtype), ds = upload(scale, dtype),
                     dshift = upload(shift, dtype);
  DeviceBuffer dy(static_cast<std::size_t>(p.n * p.out_h() * p.out_w() * p.k) * size_of(dtype));
  CUDA_CHECK(cudaMemset(dy.get(), 0xFF, dy.bytes()));  // NaN in every dtype: nothing left unset
  DeviceBuffer stats(2 * sizeof(float) * static_cast<std::size_t>(p.k));
  CUDA_CHECK(cudaMemset(stats.get(), 0xFF, stats.bytes()));
  DeviceBuffer workspace(fused.workspace_bytes());
  fused.run(handle, dx.get(), dw.get(), nullptr, nullptr, dy.get(), workspace.get(),
            statistics ? static_cast<float*>(stats.get()) : nullptr, ds.get(), dshift.get());
  CUDA_CHECK(cudaDeviceSynchronize());

  const std::vector<float> y = download(dy, dtype);
  EXPECT_TRUE(matches(p, y, reference(p, input, w, {}, {}), rtol_of(precision)))
      << fused.chosen().describe();
  if (statistics) expect_statistics_of(p, y, stats);
}

std::string prologue_case_name(
    const ::testing::TestParamInfo<std::tuple<Shape2d, bool, Precision>>& info) {
  return std::string(std::get<0>(info.param).name) + (std::get<1>(info.param) ? "_Stats_" : "_") +
         std::get<2>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(Shapes, FusedConvPrologueGpuTest,
                         ::testing::Combine(::testing::ValuesIn(kStatsShapes), ::testing::Bool(),
                                            ::testing::Values(op_harness::kF16, op_harness::kBf16)),
                         prologue_case_name);

// Needs no GPU: an integer dtype is refused with a reason before cuDNN is asked anything.
TEST(FusedConvTest, RefusesAnIntegerDtypeWithAReason) {
  const FusedConvForward fused(nullptr, conv(1, 4, 8, 8, 3, 1, 1), DType::kI32);
  EXPECT_FALSE(fused.ok());
  EXPECT_NE(fused.unsupported_reason().find("i32"), std::string::npos)
      << fused.unsupported_reason();
}

}  // namespace
}  // namespace dlbench::backend::cuda
