// The CPU backend's own behaviour, apart from op results (those are harness cases): its
// oneDNN primitive cache and its pooling workspace.
#include <gtest/gtest.h>

#include "engine/backend/cpu/cpu_backend.h"
#include "tests/ops/op_test_util.h"

namespace dlbench::ops_test {
namespace {

using backend::GradMode;

// A training loop calls the same ops with the same parameters every step: the second step
// must find every primitive in the cache.
TEST(ConvCache, RepeatedStepCreatesNoPrimitives) {
  backend::Conv2dParams p;
  p.n = 2, p.h = 8, p.w = 8, p.c = 4, p.k = 4, p.r = 3, p.s = 3;
  p.pad_h = p.pad_w = 1, p.bias = true;
  backend::cpu::CpuBackend be;
  HostTensor x = random_tensor(p.input_shape(), 1), w = random_tensor(p.weight_shape(), 2);
  HostTensor bias = random_tensor({p.k}, 3), dy = random_tensor(p.output_shape(), 4);
  HostTensor y(p.output_shape()), dx(p.input_shape()), dw(p.weight_shape()), db({p.k});
  auto step = [&] {
    be.conv2d_forward(p, x.tensor(), w.tensor(), bias.tensor(), y.tensor());
    be.conv2d_backward_data(p, dy.tensor(), w.tensor(), dx.tensor(), GradMode::kOverwrite);
    be.conv2d_backward_weights(p, x.tensor(), dy.tensor(), dw.tensor(), db.tensor(),
                               GradMode::kOverwrite);
  };
  step();
  const std::size_t after_first = be.cached_primitives();
  EXPECT_EQ(after_first, 3u);
  step();
  EXPECT_EQ(be.cached_primitives(), after_first);
}

// oneDNN's max pooling keeps where each maximum was; average pooling needs nothing.
TEST(PoolWorkspace, MaxNeedsOneAverageNone) {
  backend::PoolParams max;
  max.kind = backend::PoolKind::kMax, max.n = 2, max.h = max.w = 12, max.c = 8;
  max.window_h = max.window_w = 3, max.stride_h = max.stride_w = 2, max.pad_h = max.pad_w = 1;
  backend::PoolParams average = max;
  average.kind = backend::PoolKind::kAverage;
  backend::cpu::CpuBackend be;
  EXPECT_GT(be.pool_workspace_bytes(max), 0u);
  EXPECT_EQ(be.pool_workspace_bytes(average), 0u);
}

}  // namespace
}  // namespace dlbench::ops_test
