// Max and average pooling forward and backward on our CUDA kernels: y against the CPU backend,
// dx against the float64 reference (which routes a tied maximum's gradient to the first
// position of the window, the choice the kernels make), in both gradient modes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <sstream>

#include "tests/ops/harness/reference.h"
#include "tests/ops_gpu/gpu_test_util.h"

namespace dlbench::gpu_test {
namespace {

using backend::PoolKind;
using backend::PoolParams;

PoolParams pool(PoolKind kind, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c,
                int window, int stride, int pad) {
  PoolParams p;
  p.kind = kind, p.n = n, p.h = h, p.w = w, p.c = c;
  p.window_h = p.window_w = window, p.stride_h = p.stride_w = stride, p.pad_h = p.pad_w = pad;
  return p;
}

// kDistinct: no two equal values in an image channel; kTies: a handful of levels, so most
// windows hold their maximum more than once; kRandom: random_tensor (large cases, where
// rounding to f16/bf16 makes some ties too).
enum class Values { kDistinct, kTies, kRandom };

struct PoolCase {
  PoolParams p;
  Values values = Values::kDistinct;
};

std::string name(const PoolCase& c) {
  const PoolParams& p = c.p;
  std::ostringstream o;
  o << (p.kind == PoolKind::kMax ? "max" : "avg") << "_n" << p.n << "_" << p.h << "x" << p.w << "x"
    << p.c << "_w" << p.window_h << "_s" << p.stride_h << "_p" << p.pad_h
    << (c.values == Values::kTies     ? "_ties"
        : c.values == Values::kRandom ? "_random"
                                      : "");
  return o.str();
}

// ResNet's 3x3/2 pad 1 (overlapping windows) and VGG's 2x2/2, with channel counts that take
// the 16-byte packs (8, 16, 64) and the one-channel path (3, 5, 10); ties; a 16x16 window (the
// largest a uint8 argmax indexes) and a 17x17 one (int32 argmax); padded and global average
// pooling; VGG's pool1 at batch 2; and an image with more rows than one grid's y dimension.
const std::vector<PoolCase> kCases = {
    {pool(PoolKind::kMax, 2, 9, 9, 8, 3, 2, 1)},
    {pool(PoolKind::kMax, 2, 12, 11, 64, 3, 2, 1)},
    {pool(PoolKind::kMax, 2, 9, 10, 3, 3, 2, 1)},
    {pool(PoolKind::kMax, 2, 8, 6, 5, 2, 2, 0)},
    {pool(PoolKind::kMax, 2, 8, 8, 64, 2, 2, 0)},
    {pool(PoolKind::kMax, 3, 7, 9, 10, 2, 2, 0)},
    {pool(PoolKind::kMax, 2, 9, 9, 10, 3, 2, 1), Values::kTies},
    {pool(PoolKind::kMax, 2, 10, 10, 16, 3, 2, 1), Values::kTies},
    {pool(PoolKind::kMax, 2, 8, 8, 64, 2, 2, 0), Values::kTies},
    {pool(PoolKind::kMax, 2, 16, 16, 8, 16, 16, 0), Values::kTies},
    {pool(PoolKind::kMax, 2, 20, 19, 3, 17, 1, 0)},
    {pool(PoolKind::kAverage, 2, 9, 9, 8, 3, 2, 1)},
    {pool(PoolKind::kAverage, 2, 7, 5, 3, 3, 1, 1)},
    {pool(PoolKind::kAverage, 2, 8, 8, 64, 2, 2, 0)},
    {PoolParams::global_average(2, 7, 7, 16)},
    {PoolParams::global_average(2, 7, 7, 2048), Values::kRandom},
    {pool(PoolKind::kMax, 2, 224, 224, 64, 2, 2, 0), Values::kRandom},
    {pool(PoolKind::kMax, 2, 112, 112, 64, 3, 2, 1), Values::kRandom},
    {pool(PoolKind::kMax, 1, 1100000, 2, 1, 2, 2, 0), Values::kRandom},
};

// Values distinct within every image channel (a shuffled ramp over the H*W positions of each
// (n, c) slice, random signs, steps of at least 0.9/81 -- wider than a bf16 ulp in [0.5, 1]),
// so no window has two equal maxima after rounding.
HostTensor distinct_values(const PoolParams& p, std::uint64_t seed) {
  HostTensor t(p.input_shape());
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution negative(0.5);
  const auto plane = static_cast<std::size_t>(p.h * p.w);
  const double step = 0.9 / static_cast<double>(plane);
  std::vector<std::size_t> order(plane);
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t c = 0; c < p.c; ++c) {
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t i = 0; i < plane; ++i) {
        const auto v = static_cast<float>(0.1 + step * static_cast<double>(order[i]));
        t.data[(static_cast<std::size_t>(n) * plane + i) * static_cast<std::size_t>(p.c) +
               static_cast<std::size_t>(c)] = negative(rng) ? -v : v;
      }
    }
  return t;
}

HostTensor input(const PoolCase& c, std::uint64_t seed) {
  if (c.values == Values::kDistinct) return distinct_values(c.p, seed);
  HostTensor t = ops_test::random_tensor(c.p.input_shape(), seed);
  if (c.values == Values::kTies)
    for (float& v : t.data) v = std::round(v * 2.0f) / 2.0f;  // -1, -0.5, 0, 0.5, 1
  return t;
}

// A GPU buffer of at least `bytes` for the pooling workspace.
GpuTensor workspace(backend::cuda::CudaBackend& be, std::size_t bytes) {
  return GpuTensor(be, {static_cast<std::int64_t>(bytes / sizeof(float) + 1)}, DType::kF32);
}

class PoolGpu : public GpuOpTestP<Precision> {};

TEST_P(PoolGpu, ForwardAndBackward) {
  const Precision& prec = GetParam();
  for (const PoolCase& pc : kCases) {
    const PoolParams& p = pc.p;
    SCOPED_TRACE(name(pc));
    HostTensor x_cpu = input(pc, 21);
    HostTensor dy_cpu = ops_test::random_tensor(p.output_shape(), 22);
    round_in_place(prec.dtype, x_cpu), round_in_place(prec.dtype, dy_cpu);
    HostTensor y_cpu(p.output_shape());
    std::vector<float> ws_cpu(cpu().pool_workspace_bytes(p) / sizeof(float) + 1);
    const Tensor ws_cpu_t(ws_cpu.data(), {static_cast<std::int64_t>(ws_cpu.size())}, DType::kF32,
                          Device::cpu());
    cpu().pool_forward(p, x_cpu.tensor(), y_cpu.tensor(), ws_cpu_t);
    GpuTensor x = upload(x_cpu, prec.dtype), y = poisoned(p.output_shape(), prec.dtype);
    GpuTensor ws = workspace(gpu(), gpu().pool_workspace_bytes(p));
    gpu().pool_forward(p, x.tensor(), y.tensor(), ws.tensor());
    // Averages of k terms; the max is exact.
    const std::int64_t terms = static_cast<std::int64_t>(p.window_h) * p.window_w;
    EXPECT_TRUE(gpu_close(name(pc) + " y", y.download(), y_cpu.data, sum_tolerance(prec, terms)));

    // Each dx sums at most ceil(window / stride)^2 outputs, plus the old dx when accumulating.
    const std::int64_t covers =
        ((p.window_h + p.stride_h - 1) / p.stride_h) * ((p.window_w + p.stride_w - 1) / p.stride_w);
    const ops_test::Vec grad = ref::pool_backward(p, x_cpu.as_double(), dy_cpu.as_double());
    GpuTensor dy = upload(dy_cpu, prec.dtype);
    for (GradMode mode : {GradMode::kOverwrite, GradMode::kAccumulate}) {
      HostTensor before = ops_test::random_tensor(p.input_shape(), 23);
      round_in_place(prec.dtype, before);
      GpuTensor dx = upload(before, prec.dtype);
      if (mode == GradMode::kOverwrite) dx.poison();
      gpu().pool_backward(p, x.tensor(), y.tensor(), dy.tensor(), ws.tensor(), dx.tensor(), mode);
      const std::vector<float> got = dx.download();
      EXPECT_TRUE(gpu_close(name(pc) + " dx " + ops_test::mode_name(mode), got,
                            ops_test::to_float(ops_test::expected_grad(mode, before, grad)),
                            sum_tolerance(prec, covers + 1)));
      if (mode == GradMode::kOverwrite) {  // a gather in a fixed order: bitwise repeatable
        dx.poison();
        gpu().pool_backward(p, x.tensor(), y.tensor(), dy.tensor(), ws.tensor(), dx.tensor(), mode);
        const std::vector<float> again = dx.download();
        EXPECT_TRUE(std::equal(got.begin(), got.end(), again.begin(), [](float a, float b) {
          return std::memcmp(&a, &b, sizeof a) == 0;
        })) << "backward is not deterministic";
      }
    }
  }
}

TEST_P(PoolGpu, WorkspaceIsOneByteArgmaxPerOutput) {
  const PoolParams vgg = pool(PoolKind::kMax, 2, 8, 8, 64, 2, 2, 0);
  EXPECT_EQ(gpu().pool_workspace_bytes(vgg), static_cast<std::size_t>(vgg.output_shape().numel()));
  const PoolParams big = pool(PoolKind::kMax, 2, 20, 19, 3, 17, 1, 0);
  EXPECT_EQ(gpu().pool_workspace_bytes(big),
            static_cast<std::size_t>(big.output_shape().numel()) * 4);
  EXPECT_EQ(gpu().pool_workspace_bytes(PoolParams::global_average(2, 7, 7, 16)), 0u);
}

INSTANTIATE_TEST_SUITE_P(Precisions, PoolGpu, ::testing::ValuesIn(float_precisions()),
                         precision_name);

}  // namespace
}  // namespace dlbench::gpu_test
