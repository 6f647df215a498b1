// Max and average pooling (3x3 s2 p1, 2x2 s2, global average) forward and backward against
// the float64 reference.
#include <sstream>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "tests/ops/op_test_util.h"

namespace dlbench::ops_test {
namespace {

using backend::GradMode;
using backend::PoolKind;
using backend::PoolParams;

PoolParams pool(PoolKind kind, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c,
                int window, int stride, int pad) {
  PoolParams p;
  p.kind = kind;
  p.n = n, p.h = h, p.w = w, p.c = c;
  p.window_h = p.window_w = window;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  return p;
}

std::string name(const PoolParams& p) {
  std::ostringstream o;
  o << (p.kind == PoolKind::kMax ? "max" : "avg") << "_n" << p.n << "_" << p.h << "x" << p.w << "x"
    << p.c << "_w" << p.window_h << "x" << p.window_w << "_s" << p.stride_h << "_p" << p.pad_h;
  return o.str();
}

// ResNet's 3x3 s2 p1 stem pooling on even and odd sizes, VGG's 2x2 s2, the average versions
// (padding excluded from the divisor), and ResNet's global average pooling.
const std::vector<PoolParams> kCases = {
    pool(PoolKind::kMax, 2, 12, 12, 8, 3, 2, 1),     pool(PoolKind::kMax, 2, 11, 9, 5, 3, 2, 1),
    pool(PoolKind::kMax, 2, 8, 8, 16, 2, 2, 0),      pool(PoolKind::kMax, 1, 7, 9, 3, 2, 2, 0),
    pool(PoolKind::kAverage, 2, 12, 12, 8, 3, 2, 1), pool(PoolKind::kAverage, 2, 11, 9, 5, 3, 2, 1),
    pool(PoolKind::kAverage, 2, 8, 8, 16, 2, 2, 0),  PoolParams::global_average(2, 7, 7, 32),
    PoolParams::global_average(3, 4, 5, 6),
};

Tolerance pool_tolerance(const PoolParams& p) {
  // Max pooling copies one input: exact. Average pooling is a short sum.
  return p.kind == PoolKind::kMax ? Tolerance{0, 0}
                                  : sum_tolerance(std::int64_t{p.window_h} * p.window_w);
}

struct PoolRun {
  HostTensor x, y, workspace;
};

// Runs the forward pass (which also fills the workspace that max pooling's backward needs).
PoolRun run_forward(backend::cpu::CpuBackend& be, const PoolParams& p) {
  PoolRun run{random_tensor(p.input_shape(), 21), poisoned(p.output_shape()), {}};
  const std::size_t ws = be.pool_workspace_bytes(p);
  run.workspace = HostTensor({static_cast<std::int64_t>((ws + 3) / 4)});
  be.pool_forward(p, run.x.tensor(), run.y.tensor(), run.workspace.tensor());
  return run;
}

class PoolForward : public ::testing::TestWithParam<PoolParams> {};

TEST_P(PoolForward, MatchesReference) {
  const PoolParams& p = GetParam();
  backend::cpu::CpuBackend be;
  PoolRun run = run_forward(be, p);
  EXPECT_TRUE(
      all_close("y", run.y.data, ref::pool_forward(p, run.x.as_double()), pool_tolerance(p)));
}

INSTANTIATE_TEST_SUITE_P(Cases, PoolForward, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return name(info.param); });

struct PoolBackwardCase {
  PoolParams p;
  GradMode mode;
};

class PoolBackward : public ::testing::TestWithParam<PoolBackwardCase> {};

TEST_P(PoolBackward, MatchesReference) {
  const auto& [p, mode] = GetParam();
  backend::cpu::CpuBackend be;
  PoolRun run = run_forward(be, p);
  HostTensor dy = random_tensor(p.output_shape(), 22);
  HostTensor dx = initial_grad(mode, p.input_shape(), 23);
  const HostTensor before = dx;
  be.pool_backward(p, run.x.tensor(), run.y.tensor(), dy.tensor(), run.workspace.tensor(),
                   dx.tensor(), mode);
  const Vec ref = ref::pool_backward(p, run.x.as_double(), dy.as_double());
  // Overlapping windows (3x3 s2) add several gradients into one position.
  EXPECT_TRUE(all_close("dx", dx.data, expected_grad(mode, before, ref), sum_tolerance(9)));
}

std::vector<PoolBackwardCase> backward_cases() {
  std::vector<PoolBackwardCase> out;
  for (const auto& p : kCases)
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate}) out.push_back({p, m});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, PoolBackward, ::testing::ValuesIn(backward_cases()),
                         [](const auto& info) {
                           return name(info.param.p) + std::string("_") +
                                  mode_name(info.param.mode);
                         });

TEST(PoolWorkspace, MaxNeedsOneAverageNone) {
  backend::cpu::CpuBackend be;
  EXPECT_GT(be.pool_workspace_bytes(kCases[0]), 0u);
  EXPECT_EQ(be.pool_workspace_bytes(kCases[4]), 0u);
}

}  // namespace
}  // namespace dlbench::ops_test
