// The CUDA embedding gradient is deterministic and recordable (the same bits every run and
// from a replayed graph), and out-of-range ids give NaN rows and add nothing. Op results are
// harness cases (tests/ops/cases/embedding_cases.cc).
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "tests/gpu/cuda_test_util.h"

namespace dlbench::gpu_test {
namespace {

// Ids with many repeats (a few rows take most of them), row 0 and row V-1 among them.
std::vector<std::int32_t> skewed_ids(std::int64_t vocab, std::int64_t n) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    ids[i] = static_cast<std::int32_t>(i % 3 == 0 ? (i * 7) % 5 : (i * 131 + 17) % vocab);
  ids[0] = 0, ids[n - 1] = static_cast<std::int32_t>(vocab - 1);
  return ids;
}

HostTensor as_floats(const std::vector<std::int32_t>& v) {
  HostTensor t({static_cast<std::int64_t>(v.size())});
  for (std::size_t i = 0; i < v.size(); ++i) t.data[i] = static_cast<float>(v[i]);
  return t;
}

// The CPU's f32 result rounded once to the dtype: what the GPU must produce exactly.
std::vector<float> rounded(const Precision& prec, HostTensor t) {
  round_in_place(prec.dtype, t);
  return t.data;
}

struct Sizes {
  std::int64_t vocab, dim, n;
};
const Sizes kSizes[] = {{10, 4, 12}, {1000, 64, 4096}, {70000, 33, 3000}, {5, 300, 257}};

class EmbeddingGpu : public GpuOpTestP<Precision> {
 protected:
  GpuTensor workspace(std::int64_t n, std::int64_t vocab, std::int64_t dim) {
    const std::size_t bytes = gpu().embedding_backward_workspace_bytes(n, vocab, dim);
    return GpuTensor(gpu(), {static_cast<std::int64_t>(bytes / 4 + 1)}, DType::kI32);
  }
};

// Same bits every run, and from a recorded graph: no float atomics, no host work.
TEST_P(EmbeddingGpu, BackwardIsDeterministicAndRecordable) {
  const Precision& prec = GetParam();
  const Sizes s{512, 128, 1 << 16};  // 128 repeats per row on average
  HostTensor dy_cpu = ops_test::random_tensor({s.n, s.dim}, 404);
  round_in_place(prec.dtype, dy_cpu);
  std::vector<std::int32_t> ids = skewed_ids(s.vocab, s.n);
  GpuTensor dy = upload(dy_cpu, prec.dtype), id = upload(as_floats(ids), DType::kI32);
  GpuTensor ws = workspace(s.n, s.vocab, s.dim), touched = poisoned({s.vocab}, DType::kI32);
  std::vector<std::vector<float>> runs;
  for (int run = 0; run < 2; ++run) {
    GpuTensor dtable = poisoned({s.vocab, s.dim}, prec.dtype);
    gpu().embedding_backward(dy.tensor(), id.tensor(), ws.tensor(), dtable.tensor(),
                             touched.tensor(), GradMode::kOverwrite);
    runs.push_back(dtable.download());
  }
  GpuTensor dtable = poisoned({s.vocab, s.dim}, prec.dtype);
  gpu().begin_capture();
  gpu().embedding_backward(dy.tensor(), id.tensor(), ws.tensor(), dtable.tensor(), touched.tensor(),
                           GradMode::kOverwrite);
  std::unique_ptr<backend::DeviceGraph> graph = gpu().end_capture();
  ASSERT_NE(graph, nullptr);
  graph->launch();
  gpu().synchronize();
  EXPECT_TRUE(gpu_close("second run", runs[1], runs[0], {0, 0}));
  EXPECT_TRUE(gpu_close("graph replay", dtable.download(), runs[0], {0, 0}));
}

// The CUDA backend cannot throw for a bad id from a kernel: the forward writes a NaN row and
// the backward skips it (documented in backend.h).
TEST_P(EmbeddingGpu, OutOfRangeIdsGiveNanRowsAndAddNothing) {
  const Precision& prec = GetParam();
  HostTensor table_cpu = ops_test::random_tensor({4, 3}, 405), dy_cpu({3, 3});
  round_in_place(prec.dtype, table_cpu);
  for (float& v : dy_cpu.data) v = 1.0f;
  GpuTensor table = upload(table_cpu, prec.dtype), id = upload(as_floats({2, 4, -1}), DType::kI32);
  GpuTensor y = poisoned({3, 3}, prec.dtype), dy = upload(dy_cpu, prec.dtype);
  gpu().embedding_forward(table.tensor(), id.tensor(), y.tensor());
  const std::vector<float> got = y.download();
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(got[d], table_cpu.data[2 * 3 + d]);
    EXPECT_TRUE(std::isnan(got[3 + d]) && std::isnan(got[6 + d]));
  }
  GpuTensor ws = workspace(3, 4, 3), dtable = poisoned({4, 3}, prec.dtype);
  GpuTensor touched = poisoned({4}, DType::kI32);
  gpu().embedding_backward(dy.tensor(), id.tensor(), ws.tensor(), dtable.tensor(), touched.tensor(),
                           GradMode::kOverwrite);
  EXPECT_EQ(dtable.download(), (std::vector<float>{0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(touched.download(), (std::vector<float>{0, 0, 1, 0}));
}

INSTANTIATE_TEST_SUITE_P(Precisions, EmbeddingGpu, ::testing::ValuesIn(float_precisions()),
                         precision_name);

}  // namespace
}  // namespace dlbench::gpu_test
