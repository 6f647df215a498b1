// Embedding lookups, their scatter-add gradient and column copies against the float64
// reference on the CPU backend: repeated ids, the first and last rows, both grad modes, the
// touched-row marks, out-of-range ids refused before anything is written.
#include <cstring>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "tests/ops/op_test_util.h"

namespace dlbench::ops_test {
namespace {

using backend::GradMode;

Tensor id_tensor(std::vector<std::int32_t>& ids) {
  return Tensor(ids.data(), {static_cast<std::int64_t>(ids.size())}, DType::kI32, Device::cpu());
}

// Ids with repeats, row 0 and row V-1 among them, and rows that never occur.
std::vector<std::int32_t> test_ids(std::int64_t vocab, std::int64_t n, std::uint64_t seed) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    ids[i] =
        static_cast<std::int32_t>((seed * 7 + static_cast<std::uint64_t>(i) * 5) % (vocab / 2));
  ids[0] = 0, ids[n - 1] = static_cast<std::int32_t>(vocab - 1), ids[n / 2] = ids[1];
  return ids;
}

struct EmbeddingCase {
  std::int64_t vocab, dim, n;
};

class Embedding : public ::testing::TestWithParam<EmbeddingCase> {};

TEST_P(Embedding, ForwardIsARowGather) {
  const auto [vocab, dim, n] = GetParam();
  backend::cpu::CpuBackend be;
  HostTensor table = random_tensor({vocab, dim}, 201), y = poisoned({n, dim});
  std::vector<std::int32_t> ids = test_ids(vocab, n, 1);
  be.embedding_forward(table.tensor(), id_tensor(ids), y.tensor());
  EXPECT_TRUE(all_close("y", y.data, ref::embedding_forward(dim, table.as_double(), ids), {0, 0}));
}

TEST_P(Embedding, BackwardSumsRowsPerIdAndMarksThem) {
  const auto [vocab, dim, n] = GetParam();
  backend::cpu::CpuBackend be;
  HostTensor dy = random_tensor({n, dim}, 202);
  std::vector<std::int32_t> ids = test_ids(vocab, n, 2);
  const Vec grad = ref::embedding_backward(vocab, dim, dy.as_double(), ids);
  for (GradMode mode : {GradMode::kOverwrite, GradMode::kAccumulate}) {
    SCOPED_TRACE(mode_name(mode));
    HostTensor dtable = initial_grad(mode, {vocab, dim}, 203);
    const HostTensor before = dtable;
    // Accumulating keeps earlier marks (row 1 here); overwriting clears the stale ones.
    std::vector<std::int32_t> touched(static_cast<std::size_t>(vocab),
                                      mode == GradMode::kOverwrite ? 7 : 0);
    if (mode == GradMode::kAccumulate) touched[1] = 1;
    be.embedding_backward(dy.tensor(), id_tensor(ids), Tensor(), dtable.tensor(),
                          Tensor(touched.data(), {vocab}, DType::kI32, Device::cpu()), mode);
    EXPECT_TRUE(
        all_close("dtable", dtable.data, expected_grad(mode, before, grad), sum_tolerance(n)));
    std::vector<std::int32_t> want(static_cast<std::size_t>(vocab), 0);
    if (mode == GradMode::kAccumulate) want[1] = 1;
    for (std::int32_t id : ids) want[id] = 1;
    EXPECT_EQ(touched, want);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Embedding,
                         ::testing::Values(EmbeddingCase{10, 4, 12}, EmbeddingCase{50, 33, 40},
                                           EmbeddingCase{8, 1, 30}, EmbeddingCase{1000, 64, 256}),
                         [](const auto& info) {
                           const EmbeddingCase& c = info.param;
                           return "v" + std::to_string(c.vocab) + "_d" + std::to_string(c.dim) +
                                  "_n" + std::to_string(c.n);
                         });

TEST(EmbeddingIds, OutOfRangeIdsAreAnErrorAndWriteNothing) {
  backend::cpu::CpuBackend be;
  HostTensor table = random_tensor({5, 3}, 204), y = random_tensor({3, 3}, 205);
  HostTensor dtable = random_tensor({5, 3}, 206);
  const HostTensor y_before = y, dtable_before = dtable;
  std::vector<std::int32_t> touched(5, 0);
  for (std::int32_t bad : {5, -1}) {
    std::vector<std::int32_t> ids = {0, bad, 4};
    EXPECT_THROW(be.embedding_forward(table.tensor(), id_tensor(ids), y.tensor()), Error);
    EXPECT_THROW(be.embedding_backward(y.tensor(), id_tensor(ids), Tensor(), dtable.tensor(),
                                       Tensor(touched.data(), {5}, DType::kI32, Device::cpu()),
                                       GradMode::kOverwrite),
                 Error);
  }
  EXPECT_EQ(y.data, y_before.data);
  EXPECT_EQ(dtable.data, dtable_before.data);
  EXPECT_EQ(touched, std::vector<std::int32_t>(5, 0));
}

// --- copy_columns --------------------------------------------------------------------------
struct ColumnsCase {
  std::int64_t rows, src_width, src_col, dst_width, dst_col, cols;
};

class CopyColumns : public ::testing::TestWithParam<ColumnsCase> {};

TEST_P(CopyColumns, MatchReferenceInBothModes) {
  const ColumnsCase c = GetParam();
  backend::cpu::CpuBackend be;
  HostTensor src = random_tensor({c.rows, c.src_width}, 211);
  for (GradMode mode : {GradMode::kOverwrite, GradMode::kAccumulate}) {
    SCOPED_TRACE(mode_name(mode));
    HostTensor dst = random_tensor({c.rows, c.dst_width}, 212);
    const Vec want =
        ref::copy_columns(c.rows, c.src_width, src.as_double(), c.src_col, c.dst_width,
                          dst.as_double(), c.dst_col, c.cols, mode == GradMode::kAccumulate);
    be.copy_columns(src.tensor(), c.src_col, dst.tensor(), c.dst_col, c.cols, mode);
    // Overwriting copies bits; accumulating rounds one f32 addition.
    const Tolerance tol = mode == GradMode::kOverwrite ? Tolerance{0, 0} : kElementwise;
    EXPECT_TRUE(all_close("dst", dst.data, want, tol));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, CopyColumns,
                         ::testing::Values(ColumnsCase{4, 10, 3, 5, 1, 4},  // split
                                           ColumnsCase{7, 3, 0, 8, 5, 3},   // concatenate
                                           ColumnsCase{5, 6, 0, 6, 0, 6},   // whole rows
                                           ColumnsCase{3, 9, 8, 2, 0, 1}),
                         [](const auto& info) { return "case" + std::to_string(info.index); });

TEST(CopyColumnsRanges, OutOfBoundsAndOverlapAreRejected) {
  backend::cpu::CpuBackend be;
  HostTensor a({3, 6}), b({3, 4}), c({2, 4});
  EXPECT_THROW(be.copy_columns(a.tensor(), 3, b.tensor(), 0, 4, GradMode::kOverwrite), Error);
  EXPECT_THROW(be.copy_columns(a.tensor(), 0, b.tensor(), 1, 4, GradMode::kOverwrite), Error);
  EXPECT_THROW(be.copy_columns(a.tensor(), 0, c.tensor(), 0, 2, GradMode::kOverwrite), Error);
  EXPECT_THROW(be.copy_columns(a.tensor(), 0, a.tensor(), 2, 3, GradMode::kOverwrite), Error);
  EXPECT_THROW(be.copy_columns(a.tensor(), -1, b.tensor(), 0, 1, GradMode::kOverwrite), Error);
}

}  // namespace
}  // namespace dlbench::ops_test
