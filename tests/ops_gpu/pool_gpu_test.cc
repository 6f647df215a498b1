// Max and average pooling forward and backward on cuDNN against the CPU backend.
#include <algorithm>
#include <numeric>
#include <random>
#include <sstream>

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

std::string name(const PoolParams& p) {
  std::ostringstream o;
  o << (p.kind == PoolKind::kMax ? "max" : "avg") << "_n" << p.n << "_" << p.h << "x" << p.w << "x"
    << p.c << "_w" << p.window_h << "_s" << p.stride_h << "_p" << p.pad_h;
  return o.str();
}

// ResNet's 3x3 stride-2 padded max pool (overlapping windows), 2x2 stride 2 (VGG), padded
// average pooling (padding excluded from the count) and global average pooling.
const std::vector<PoolParams> kCases = {
    pool(PoolKind::kMax, 2, 9, 9, 8, 3, 2, 1),     pool(PoolKind::kMax, 2, 8, 6, 5, 2, 2, 0),
    pool(PoolKind::kAverage, 2, 9, 9, 8, 3, 2, 1), pool(PoolKind::kAverage, 2, 7, 5, 3, 3, 1, 1),
    PoolParams::global_average(2, 7, 7, 16),
};

// Values distinct within every image channel (a shuffled ramp over the H*W positions of each
// (n, c) slice, random signs, steps of at least 0.9/81 -- wider than a bf16 ulp in [0.5, 1]),
// so no window has two equal maxima after rounding: with a tie, the position that gets the
// gradient is a choice each library makes differently.
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

class PoolGpu : public GpuOpTestP<Precision> {};

TEST_P(PoolGpu, ForwardAndBackward) {
  const Precision& prec = GetParam();
  for (const PoolParams& p : kCases) {
    SCOPED_TRACE(name(p));
    HostTensor x_cpu = distinct_values(p, 21);
    HostTensor dy_cpu = ops_test::random_tensor(p.output_shape(), 22);
    round_in_place(prec.dtype, x_cpu), round_in_place(prec.dtype, dy_cpu);
    HostTensor y_cpu(p.output_shape());
    std::vector<float> ws_cpu(cpu().pool_workspace_bytes(p) / sizeof(float) + 1);
    const Tensor ws_cpu_t(ws_cpu.data(), {static_cast<std::int64_t>(ws_cpu.size())}, DType::kF32,
                          Device::cpu());
    cpu().pool_forward(p, x_cpu.tensor(), y_cpu.tensor(), ws_cpu_t);
    round_in_place(prec.dtype, y_cpu);  // what the GPU's y holds, for the max positions
    GpuTensor x = upload(x_cpu, prec.dtype), y = poisoned(p.output_shape(), prec.dtype);
    gpu().pool_forward(p, x.tensor(), y.tensor(), Tensor());
    // Averages of k terms; the max is exact.
    const std::int64_t terms = static_cast<std::int64_t>(p.window_h) * p.window_w;
    EXPECT_TRUE(gpu_close(name(p) + " y", y.download(), y_cpu.data, sum_tolerance(prec, terms)));

    for (GradMode mode : {GradMode::kOverwrite, GradMode::kAccumulate}) {
      HostTensor dx_cpu = ops_test::random_tensor(p.input_shape(), 23);
      round_in_place(prec.dtype, dx_cpu);
      GpuTensor dx = upload(dx_cpu, prec.dtype);
      if (mode == GradMode::kOverwrite) dx.poison();
      cpu().pool_backward(p, x_cpu.tensor(), y_cpu.tensor(), dy_cpu.tensor(), ws_cpu_t,
                          dx_cpu.tensor(), mode);
      GpuTensor dy = upload(dy_cpu, prec.dtype);
      gpu().pool_backward(p, x.tensor(), y.tensor(), dy.tensor(), Tensor(), dx.tensor(), mode);
      EXPECT_TRUE(gpu_close(name(p) + " dx " + ops_test::mode_name(mode), dx.download(),
                            dx_cpu.data, sum_tolerance(prec, terms)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, PoolGpu, ::testing::ValuesIn(float_precisions()),
                         precision_name);

}  // namespace
}  // namespace dlbench::gpu_test
