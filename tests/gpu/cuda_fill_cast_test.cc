// The CUDA backend's fills, casts, finite checks and copies against the CPU backend (bit for
// bit), and its errors (a bad label, no such GPU, out of memory). Op results are harness cases.
#include <cmath>
#include <limits>

#include "engine/core/error.h"
#include "tests/gpu/cuda_test_util.h"

namespace dlbench::gpu_test {
namespace {

using backend::Activation;

// Elementwise results are one f32 operation rounded once to the dtype: exact in f32 but for
// an ulp, half an ulp of f16/bf16 otherwise.
Tolerance elementwise_tolerance(const Precision& prec) {
  if (prec.dtype == DType::kF32) return ops_test::kElementwise;
  return sum_tolerance(prec, 1);
}

constexpr std::int64_t kOddSize = 1003;  // not a multiple of any vector width: tails run too
const Shape kShape{7, kOddSize};

class ElementwiseGpu : public GpuOpTestP<Precision> {};

TEST_P(ElementwiseGpu, FillNormalMatchesCpuExactly) {
  const Precision& prec = GetParam();
  HostTensor ref({kOddSize * 101});
  cpu().fill_normal(ref.tensor(), 0.5f, 2.0f, 1234);
  round_in_place(prec.dtype, ref);
  GpuTensor t = poisoned(ref.shape, prec.dtype);
  gpu().fill_normal(t.tensor(), 0.5f, 2.0f, 1234);
  EXPECT_TRUE(gpu_close("fill_normal", t.download(), ref.data, {0.0, 0.0}));
}

TEST_P(ElementwiseGpu, FillUniformMatchesCpuExactly) {
  const Precision& prec = GetParam();
  HostTensor ref({kOddSize * 101});
  cpu().fill_uniform(ref.tensor(), -0.1f, 0.1f, 4321);
  round_in_place(prec.dtype, ref);
  GpuTensor t = poisoned(ref.shape, prec.dtype);
  gpu().fill_uniform(t.tensor(), -0.1f, 0.1f, 4321);
  EXPECT_TRUE(gpu_close("fill_uniform", t.download(), ref.data, {0.0, 0.0}));
}

TEST_P(ElementwiseGpu, FillCopyAndAllFinite) {
  const Precision& prec = GetParam();
  GpuTensor t = poisoned(kShape, prec.dtype);
  EXPECT_FALSE(gpu().all_finite(t.tensor()));  // NaN bytes
  gpu().fill(t.tensor(), 2.5f);
  EXPECT_TRUE(gpu_close("fill", t.download(), std::vector<float>(kShape.numel(), 2.5f), {0, 0}));
  EXPECT_TRUE(gpu().all_finite(t.tensor()));
  HostTensor src = ops_test::random_tensor(kShape, 47);
  round_in_place(prec.dtype, src);
  GpuTensor s = upload(src, prec.dtype), d = poisoned(kShape, prec.dtype);
  gpu().copy(s.tensor(), d.tensor());
  EXPECT_TRUE(gpu_close("copy", d.download(), src.data, {0, 0}));
  // One infinity at the very end (the scalar tail) is found.
  src.data.back() = std::numeric_limits<float>::infinity();
  s.upload(src.data);
  EXPECT_FALSE(gpu().all_finite(s.tensor()));
}

INSTANTIATE_TEST_SUITE_P(Precisions, ElementwiseGpu, ::testing::ValuesIn(float_precisions()),
                         precision_name);

TEST_F(GpuOpTest, CastRoundsToNearestEven) {
  // Random values plus the hard ones: f16 subnormals, halfway cases, values near the top of the f16
  // range.
  HostTensor values = ops_test::random_tensor({kOddSize}, 54);
  const float specials[] = {1e-6f,
                            -3e-7f,
                            6.1e-5f,
                            1.0f + 1.0f / 2048,
                            1.0f + 3.0f / 2048,
                            1.0f + 1.0f / 256,
                            60000.0f,
                            -1000.7f,
                            3.14159265f,
                            1e-30f};
  std::copy(std::begin(specials), std::end(specials), values.data.begin());
  for (const Precision& from : float_precisions()) {
    for (const Precision& to : float_precisions()) {
      HostTensor src = values;
      round_in_place(from.dtype, src);
      HostTensor expected = src;
      round_in_place(to.dtype, expected);
      GpuTensor s = upload(src, from.dtype), d = poisoned(src.shape, to.dtype);
      gpu().cast(s.tensor(), d.tensor());
      EXPECT_TRUE(gpu_close(std::string("cast ") + from.name + " -> " + to.name, d.download(),
                            expected.data, {0, 0}));
    }
  }
  // Past the f16 range is infinity, which all_finite reports.
  HostTensor big({4});
  std::fill(big.data.begin(), big.data.end(), 1e5f);
  GpuTensor s = upload(big, DType::kF32), d = poisoned(big.shape, DType::kF16);
  gpu().cast(s.tensor(), d.tensor());
  EXPECT_FALSE(gpu().all_finite(d.tensor()));
}

TEST_F(GpuOpTest, FillUniformIntMatchesCpuExactly) {
  for (DType dtype : {DType::kI32, DType::kI64, DType::kF32}) {
    const Shape shape{kOddSize * 7};
    std::vector<float> expected(static_cast<std::size_t>(shape.numel()));
    if (dtype == DType::kI32) {
      std::vector<std::int32_t> v(expected.size());
      cpu().fill_uniform_int(Tensor(v.data(), shape, dtype, Device::cpu()), -5, 1000, 99);
      std::copy(v.begin(), v.end(), expected.begin());
    } else if (dtype == DType::kI64) {
      std::vector<std::int64_t> v(expected.size());
      cpu().fill_uniform_int(Tensor(v.data(), shape, dtype, Device::cpu()), -5, 1000, 99);
      std::copy(v.begin(), v.end(), expected.begin());
    } else {
      cpu().fill_uniform_int(Tensor(expected.data(), shape, dtype, Device::cpu()), -5, 1000, 99);
    }
    GpuTensor t = poisoned(shape, dtype);
    gpu().fill_uniform_int(t.tensor(), -5, 1000, 99);
    EXPECT_TRUE(gpu_close(std::string("fill_uniform_int ") + to_string(dtype), t.download(),
                          expected, {0, 0}));
  }
}

TEST_F(GpuOpTest, BadLabelMakesTheLossNaN) {
  HostTensor z = ops_test::random_tensor({2, 5}, 55), labels({2});
  labels.data = {1.0f, 7.0f};  // 7 is not a class
  GpuTensor zt = upload(z, DType::kF32), lt = upload(labels, DType::kI32),
            loss = poisoned({1}, DType::kF32), dz = poisoned({2, 5}, DType::kF32);
  gpu().fill(loss.tensor(), 0.0f);
  gpu().softmax_cross_entropy(zt.tensor(), lt.tensor(), loss.tensor(), dz.tensor(), 1.0f);
  EXPECT_TRUE(std::isnan(loss.download()[0]));
}

// A class scored -inf leaves the loss finite without smoothing, on both CUDA routes (3 classes:
// a thread per row; 300: a block per row).
TEST_F(GpuOpTest, MinusInfinityLogitKeepsTheLossFinite) {
  for (std::int64_t classes : {3, 300}) {
    HostTensor z = ops_test::random_tensor({2, classes}, 56), labels({2});
    z.data[1] = -INFINITY;
    z.data[classes + 2] = -INFINITY;
    labels.data[0] = 0.0f, labels.data[1] = 1.0f;  // (a list assignment in a loop trips GCC 13)
    GpuTensor zt = upload(z, DType::kF32), lt = upload(labels, DType::kI32),
              loss = poisoned({1}, DType::kF32), dz = poisoned({2, classes}, DType::kF32);
    gpu().softmax_cross_entropy(zt.tensor(), lt.tensor(), loss.tensor(), dz.tensor(), 1.0f);
    EXPECT_TRUE(std::isfinite(loss.download()[0])) << classes;
    for (float g : dz.download()) EXPECT_TRUE(std::isfinite(g)) << classes;
  }
}

TEST_F(GpuOpTest, MissingGpuIsAResourceError) {
  try {
    backend::make_backend(Device::cuda(99));
    FAIL() << "cuda:99 should not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kResource);
    EXPECT_NE(std::string(e.what()).find("no GPU cuda:99: this machine has"), std::string::npos)
        << e.what();
    EXPECT_NE(e.hint().find("dlbench info"), std::string::npos) << e.hint();
  }
}

TEST_F(GpuOpTest, OutOfMemoryIsAResourceError) {
  constexpr std::size_t kPetabyte = std::size_t{1} << 50;
  try {
    gpu().allocator().allocate(kPetabyte);
    FAIL() << "a petabyte should not fit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kResource);
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
    std::printf("  %s (%s)\n", e.what(), e.hint().c_str());
  }
  // The device is still usable afterwards.
  GpuTensor t = poisoned({16}, DType::kF32);
  gpu().fill(t.tensor(), 1.0f);
  EXPECT_TRUE(gpu().all_finite(t.tensor()));
}

}  // namespace
}  // namespace dlbench::gpu_test
