// Adam, AdamW and lazy (sparse) Adam on the CPU backend against the float64 reference, which
// follows torch.optim.Adam / AdamW, over three steps; the device step counter; untouched rows
// keeping their bits.
#include <cstring>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "tests/ops/op_test_util.h"

namespace dlbench::ops_test {
namespace {

using backend::AdamParams;

// f32 per element against float64: a few ulps; atol covers m near zero after cancellation.
constexpr Tolerance kAdamTolerance{1e-7, 1e-6};

AdamParams adam(float lr, float wd, bool decoupled, float grad_scale = 1.0f) {
  AdamParams p;
  p.learning_rate = lr, p.weight_decay = wd, p.decoupled = decoupled, p.grad_scale = grad_scale;
  return p;
}

struct AdamCase {
  std::string name;
  AdamParams p;
};

class Adam : public ::testing::TestWithParam<AdamCase> {};

TEST_P(Adam, ThreeStepsMatchReference) {
  const AdamParams p = GetParam().p;
  constexpr std::int64_t kSize = 257;
  backend::cpu::CpuBackend be;
  HostTensor w = random_tensor({kSize}, 301), m({kSize}), v({kSize});
  std::int32_t step = 0;
  ref::AdamState state{w.as_double(), Vec(kSize, 0.0), Vec(kSize, 0.0)};
  for (int t = 1; t <= 3; ++t) {
    HostTensor g = random_tensor({kSize}, 302 + t);
    be.adam_update(p, Tensor(&step, {1}, DType::kI32, Device::cpu()), w.tensor(), g.tensor(),
                   m.tensor(), v.tensor());
    state = ref::adam_update(p, t, state, g.as_double());
    EXPECT_EQ(step, t);
  }
  EXPECT_TRUE(all_close("weights", w.data, state.weights, kAdamTolerance));
  EXPECT_TRUE(all_close("m", m.data, state.m, kAdamTolerance));
  EXPECT_TRUE(all_close("v", v.data, state.v, {1e-12, 1e-6}));
}

INSTANTIATE_TEST_SUITE_P(Cases, Adam,
                         ::testing::Values(AdamCase{"adam", adam(1e-3f, 0, false)},
                                           AdamCase{"adam_l2", adam(1e-2f, 0.05f, false)},
                                           AdamCase{"adamw", adam(1e-2f, 0.05f, true)},
                                           AdamCase{"adamw_scaled",
                                                    adam(1e-3f, 0.01f, true, 1.0f / 1024)}),
                         [](const auto& info) { return info.param.name; });

TEST(Adam, DefaultsAreTorchs) {
  const AdamParams p;
  EXPECT_EQ(p.beta1, 0.9f);
  EXPECT_EQ(p.beta2, 0.999f);
  EXPECT_EQ(p.epsilon, 1e-8f);
  EXPECT_EQ(p.weight_decay, 0.0f);
}

// --- sparse (lazy) Adam ---------------------------------------------------------------------
struct Table {
  HostTensor w, m, v;
};

Table make_table(std::int64_t rows, std::int64_t cols) {
  return {random_tensor({rows, cols}, 311), random_positive({rows, cols}, 312, 0.0f, 0.1f),
          random_positive({rows, cols}, 313, 0.0f, 0.01f)};
}

TEST(SparseAdam, TouchedRowsMatchReferenceAndOthersKeepTheirBits) {
  constexpr std::int64_t kRows = 9, kCols = 5;
  for (const AdamParams& p : {adam(1e-2f, 0.05f, true), adam(1e-2f, 0.05f, false)}) {
    SCOPED_TRACE(p.decoupled ? "adamw" : "adam");
    backend::cpu::CpuBackend be;
    Table table = make_table(kRows, kCols);
    const Table initial = table;
    ref::AdamState state{table.w.as_double(), table.m.as_double(), table.v.as_double()};
    std::int32_t step = 4;  // a table that has already taken steps
    std::vector<std::int32_t> touched = {1, 0, 0, 1, 1, 0, 0, 0, 1};
    for (int t = 5; t <= 7; ++t) {
      HostTensor g = random_tensor({kRows, kCols}, 314 + t);
      be.sparse_adam_update(p, Tensor(&step, {1}, DType::kI32, Device::cpu()), table.w.tensor(),
                            g.tensor(), table.m.tensor(), table.v.tensor(),
                            Tensor(touched.data(), {kRows}, DType::kI32, Device::cpu()));
      state = ref::adam_update(p, t, state, g.as_double(), kRows, touched);
    }
    EXPECT_EQ(step, 7);
    EXPECT_TRUE(all_close("weights", table.w.data, state.weights, kAdamTolerance));
    EXPECT_TRUE(all_close("m", table.m.data, state.m, kAdamTolerance));
    EXPECT_TRUE(all_close("v", table.v.data, state.v, {1e-12, 1e-6}));
    for (std::int64_t r = 0; r < kRows; ++r) {
      if (touched[r]) continue;
      const std::size_t at = r * kCols, bytes = sizeof(float) * kCols;
      EXPECT_EQ(std::memcmp(&table.w.data[at], &initial.w.data[at], bytes), 0) << "row " << r;
      EXPECT_EQ(std::memcmp(&table.m.data[at], &initial.m.data[at], bytes), 0) << "row " << r;
      EXPECT_EQ(std::memcmp(&table.v.data[at], &initial.v.data[at], bytes), 0) << "row " << r;
    }
  }
}

TEST(SparseAdam, AllRowsTouchedTakesAdamsStepBitForBit) {
  constexpr std::int64_t kRows = 6, kCols = 7;
  const AdamParams p = adam(1e-2f, 0.05f, true);
  backend::cpu::CpuBackend be;
  Table sparse = make_table(kRows, kCols), dense = sparse;
  std::int32_t sparse_step = 0, dense_step = 0;
  std::vector<std::int32_t> touched(kRows, 1);
  HostTensor g = random_tensor({kRows, kCols}, 321);
  be.sparse_adam_update(p, Tensor(&sparse_step, {1}, DType::kI32, Device::cpu()), sparse.w.tensor(),
                        g.tensor(), sparse.m.tensor(), sparse.v.tensor(),
                        Tensor(touched.data(), {kRows}, DType::kI32, Device::cpu()));
  be.adam_update(p, Tensor(&dense_step, {1}, DType::kI32, Device::cpu()), dense.w.tensor(),
                 g.tensor(), dense.m.tensor(), dense.v.tensor());
  EXPECT_EQ(sparse.w.data, dense.w.data);
  EXPECT_EQ(sparse.m.data, dense.m.data);
  EXPECT_EQ(sparse.v.data, dense.v.data);
}

}  // namespace
}  // namespace dlbench::ops_test
