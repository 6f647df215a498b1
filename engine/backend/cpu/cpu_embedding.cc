// Embedding lookups and their gradient, and column copies (split and concatenation).
//
//   forward:  y[i, :] = table[ids[i], :]
//   backward: dtable[ids[i], :] += dy[i, :] for i = 0, 1, ..., N-1, in that order; touched[ids[i]]
//   = 1 columns:  dst[:, dst_col + j] (+)= src[:, src_col + j]
// Ids are checked before anything is written, so a bad id leaves every output as it was. The
// backward's threads own column ranges and each walks the ids in order, so duplicate ids are
// summed in id order whatever the thread count (the CUDA backend sums in the same order).
#include <cstring>
#include <string>

#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {
namespace {

void check_ids(const std::int32_t* ids, std::int64_t n, std::int64_t vocab, const char* op) {
  for (std::int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= vocab)
      throw Error(ErrorKind::kUsage,
                  std::string(op) + ": id " + std::to_string(ids[i]) + " at position " +
                      std::to_string(i) + " is outside the table's rows [0, " +
                      std::to_string(vocab) + ")",
                  "ids must be row indices of the embedding table");
  }
}

// Columns handled by one thread of the backward: wide enough to fill a cache line.
constexpr std::int64_t kColumnChunk = 16;

}  // namespace

void CpuBackend::embedding_forward_impl(const Tensor& table, const Tensor& ids, const Tensor& y) {
  const char* op = "embedding_forward";
  require_f32(table, op, "table"), require_f32(y, op, "y"), require_cpu(ids, op, "ids");
  const std::int64_t n = ids.dim(0), vocab = table.dim(0), dim = table.dim(1);
  const auto* id = ids.data_as<std::int32_t>();
  check_ids(id, n, vocab, op);
  const float* t = table.data_as<float>();
  float* out = y.data_as<float>();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i)
    std::memcpy(out + i * dim, t + static_cast<std::int64_t>(id[i]) * dim,
                sizeof(float) * static_cast<std::size_t>(dim));
}

void CpuBackend::embedding_backward_impl(const Tensor& dy, const Tensor& ids, const Tensor&,
                                         const Tensor& dtable, const Tensor& touched,
                                         GradMode mode) {
  const char* op = "embedding_backward";
  require_f32(dy, op, "dy"), require_f32(dtable, op, "dtable");
  require_cpu(ids, op, "ids"), require_cpu(touched, op, "touched");
  const std::int64_t n = ids.dim(0), vocab = dtable.dim(0), dim = dtable.dim(1);
  const auto* id = ids.data_as<std::int32_t>();
  check_ids(id, n, vocab, op);
  const float* g = dy.data_as<float>();
  float* dt = dtable.data_as<float>();
  auto* mark = touched.data_as<std::int32_t>();
  if (mode == GradMode::kOverwrite) {
    std::memset(dt, 0, dtable.bytes());
    std::memset(mark, 0, touched.bytes());
  }
  for (std::int64_t i = 0; i < n; ++i) mark[id[i]] = 1;
  const std::int64_t chunks = (dim + kColumnChunk - 1) / kColumnChunk;
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t first = c * kColumnChunk;
    const std::int64_t last = std::min(dim, first + kColumnChunk);
    for (std::int64_t i = 0; i < n; ++i) {
      float* row = dt + static_cast<std::int64_t>(id[i]) * dim;
      const float* gi = g + i * dim;
      for (std::int64_t d = first; d < last; ++d) row[d] += gi[d];
    }
  }
}

void CpuBackend::copy_columns_impl(const Tensor& src, std::int64_t src_col, const Tensor& dst,
                                   std::int64_t dst_col, std::int64_t cols, GradMode mode) {
  const char* op = "copy_columns";
  require_f32(src, op, "src"), require_f32(dst, op, "dst");
  const std::int64_t rows = src.dim(0), src_width = src.dim(1), dst_width = dst.dim(1);
  const float* s = src.data_as<float>() + src_col;
  float* d = dst.data_as<float>() + dst_col;
  const bool accumulate = mode == GradMode::kAccumulate;
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* sr = s + r * src_width;
    float* dr = d + r * dst_width;
    if (accumulate) {
      for (std::int64_t j = 0; j < cols; ++j) dr[j] += sr[j];
    } else {
      std::memcpy(dr, sr, sizeof(float) * static_cast<std::size_t>(cols));
    }
  }
}

}  // namespace dlbench::backend::cpu
