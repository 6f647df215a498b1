// Embedding lookups (a row gather), their gradient (rows summed per id in a fixed order, with
// the touched-row marks) and copy_columns (split, concatenate, accumulate): the CPU backend
// against the float64 reference; other backends against the CPU result rounded once to the
// dtype, exactly; and finite differences of the lookup on the table.
#include <array>
#include <sstream>
#include <utility>

#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference.h"

namespace dlbench::op_harness {
namespace {

using backend::OpKind;

// How the ids repeat.
enum class Ids {
  kRegular,  // repeats, row 0 and row V-1 among them, and rows that never occur
  kSkewed,   // a few rows take a third of the ids
  kPadded,   // a batch of padded sentences: id 0 takes 55 % of the ids, the rest spread out
  kRuns,     // runs whose lengths sit on the CUDA gradient's part boundaries (kRunLengths)
};

struct Sizes {
  std::int64_t vocab, dim, n;
  Ids pattern = Ids::kRegular;
};

// (row, entries) for Ids::kRuns, in sorted order. The CUDA gradient sums a run of 64 entries or
// more by parts cut at multiples of 64 in the sorted order: so runs of exactly 64 (starting on a
// boundary), of 65 (a part of one entry), a single entry, a long run starting mid-chunk over
// several chunks, a short run across a boundary, and a long run at the end.
constexpr std::array<std::pair<std::int32_t, std::int64_t>, 6> kRunLengths = {
    {{0, 64}, {5, 65}, {6, 1}, {7, 200}, {9, 63}, {-1, 130}}};  // -1: row V-1

std::int64_t run_total() {
  std::int64_t n = 0;
  for (const auto& run : kRunLengths) n += run.second;
  return n;
}

std::vector<std::int32_t> ids_of(const Sizes& s, std::uint64_t seed) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(s.n));
  if (s.pattern == Ids::kRuns) {
    // Sorted entry j sits at position j * 7 mod n (n = 523 is prime): positions interleave.
    std::int64_t j = 0;
    for (const auto& [row, length] : kRunLengths)
      for (std::int64_t e = 0; e < length; ++e, ++j)
        ids[static_cast<std::size_t>(j * 7 % s.n)] =
            row < 0 ? static_cast<std::int32_t>(s.vocab - 1) : row;
    return ids;
  }
  for (std::int64_t i = 0; i < s.n; ++i) {
    const auto u = static_cast<std::uint64_t>(i);
    const auto spread = static_cast<std::int32_t>((i * 131 + 17) % s.vocab);
    switch (s.pattern) {
      case Ids::kSkewed:
        ids[static_cast<std::size_t>(i)] =
            i % 3 == 0 ? static_cast<std::int32_t>((i * 7) % 5) : spread;
        break;
      case Ids::kPadded:
        ids[static_cast<std::size_t>(i)] =
            (i * 37 + static_cast<std::int64_t>(seed)) % 100 < 55
                ? 0
                : 1 + spread % static_cast<std::int32_t>(s.vocab - 1);
        break;
      default:
        ids[static_cast<std::size_t>(i)] =
            static_cast<std::int32_t>((seed * 7 + u * 5) % static_cast<std::uint64_t>(s.vocab / 2));
    }
  }
  ids.front() = 0, ids.back() = static_cast<std::int32_t>(s.vocab - 1);
  if (s.pattern == Ids::kRegular) ids[static_cast<std::size_t>(s.n / 2)] = ids[1];
  return ids;
}

// std::ostringstream rather than string +: GCC 12 warns falsely on chains of it.
std::string name(const Sizes& s) {
  static constexpr std::array<const char*, 4> kPatternNames = {"", "_skewed", "_padded", "_runs"};
  std::ostringstream o;
  o << "v" << s.vocab << "_d" << s.dim << "_n" << s.n
    << kPatternNames[static_cast<std::size_t>(s.pattern)];
  return o.str();
}

const std::vector<Sizes> kSizes = {
    {10, 4, 12},
    {50, 33, 40},
    {8, 1, 30},
    {1000, 64, 256},
    {10, 4, 12, Ids::kSkewed},
    {1000, 64, 4096, Ids::kSkewed},
    {70000, 33, 3000, Ids::kSkewed},
    {5, 300, 257, Ids::kSkewed},
    // Rows of about 800 ids over ten 32-column passes; and more ids than the gradient kernel's
    // 65,535 blocks, so blocks go on to further rows.
    {5, 300, 4096, Ids::kSkewed},
    {1000, 8, 70000, Ids::kSkewed},
    {20, 70, run_total(), Ids::kRuns},
    // The Transformer's lookups, narrower: one run of about 4,500 padding entries.
    {32000, 96, 8192, Ids::kPadded}};

class EmbeddingForward final : public OpCase {
 public:
  explicit EmbeddingForward(Sizes s) : s_(s) {}
  std::string op() const override { return "embedding_forward"; }
  std::string params() const override { return name(s_); }
  OpKind kind() const override { return OpKind::kEmbeddingForward; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {input("table", {s_.vocab, s_.dim}, 201), i32_input("ids", ids_of(s_, 1)),
            output("y", {s_.n, s_.dim})};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.embedding_forward(t[0], t[1], t[2]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    return {{2, ref::embedding_forward(s_.dim, t[0].as_double(), ids_of(s_, 1)), {0, 0}}};
  }
  Tolerance against_cpu(const Precision&, std::size_t) const override { return {0, 0}; }

 private:
  Sizes s_;
};

// dy, ids, workspace, dtable (mode), touched: overwriting clears stale marks (7s here),
// accumulating keeps earlier ones (row 1).
class EmbeddingBackward final : public OpCase {
 public:
  EmbeddingBackward(Sizes s, GradMode mode) : s_(s), mode_(mode) {}
  std::string op() const override { return "embedding_backward"; }
  std::string params() const override { return name(s_) + "_" + mode_name(mode_); }
  OpKind kind() const override { return OpKind::kEmbeddingBackward; }
  bool round_cpu_result() const override { return true; }
  std::vector<HostTensor> tensors(const backend::Backend& be) const override {
    const auto words = static_cast<std::int64_t>(
        be.embedding_backward_workspace_bytes(s_.n, s_.vocab, s_.dim) / sizeof(float) + 1);
    std::vector<float> marks(static_cast<std::size_t>(s_.vocab),
                             mode_ == GradMode::kOverwrite ? 7.0f : 0.0f);
    if (mode_ == GradMode::kAccumulate) marks[1] = 1.0f;
    return {input("dy", {s_.n, s_.dim}, 202),
            i32_input("ids", ids_of(s_, 2)),
            {"workspace",
             {words},
             Role::kScratch,
             Kind::kI32,
             std::vector<float>(static_cast<std::size_t>(words), 0.0f)},
            grad_output("dtable", {s_.vocab, s_.dim}, mode_, 203),
            {"touched", {s_.vocab}, Role::kInOut, Kind::kI32, marks}};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.embedding_backward(t[0], t[1], t[2], t[3], t[4], mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const std::vector<std::int32_t> ids = ids_of(s_, 2);
    const Vec grad = ref::embedding_backward(s_.vocab, s_.dim, t[0].as_double(), ids);
    Vec marks(static_cast<std::size_t>(s_.vocab), 0.0);
    if (mode_ == GradMode::kAccumulate) marks[1] = 1;
    for (std::int32_t id : ids) marks[static_cast<std::size_t>(id)] = 1;
    return {{3, expected_grad(mode_, t[3], grad), sum_tolerance(s_.n)}, {4, marks, {0, 0}}};
  }
  // The CUDA sum is f32 rounded once: for a row of fewer than 64 ids in the CPU's order
  // (exactly equal), for a row of 64 or more by parts (the frequent rows of every pattern but
  // the regular one, which are why those cases get a sum's tolerance).
  Tolerance against_cpu(const Precision&, std::size_t) const override {
    return s_.pattern != Ids::kRegular ? sum_tolerance(s_.n) : Tolerance{0, 0};
  }

 private:
  Sizes s_;
  GradMode mode_;
};

struct ColumnCopy {
  std::int64_t src_col, dst_col, cols;
};

struct Columns {
  std::int64_t rows, src_width, dst_width;
  std::vector<ColumnCopy> copies;
  std::string label;
};

class CopyColumns final : public OpCase {
 public:
  CopyColumns(Columns c, GradMode mode) : c_(std::move(c)), mode_(mode) {}
  std::string op() const override { return "copy_columns"; }
  std::string params() const override { return c_.label + "_" + mode_name(mode_); }
  OpKind kind() const override { return OpKind::kCopyColumns; }
  bool round_cpu_result() const override { return true; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    HostTensor dst = input("dst", {c_.rows, c_.dst_width}, 212);
    dst.role = Role::kInOut;
    return {input("src", {c_.rows, c_.src_width}, 211), dst};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    for (const ColumnCopy& k : c_.copies)
      be.copy_columns(t[0], k.src_col, t[1], k.dst_col, k.cols, mode_);
  }
  // Overwriting copies bits; accumulating rounds one f32 addition per copy.
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    Vec dst = t[1].as_double();
    for (const ColumnCopy& k : c_.copies)
      dst = ref::copy_columns(c_.rows, c_.src_width, t[0].as_double(), k.src_col, c_.dst_width, dst,
                              k.dst_col, k.cols, mode_ == GradMode::kAccumulate);
    return {{1, dst, mode_ == GradMode::kOverwrite ? Tolerance{0, 0} : kElementwise}};
  }
  Tolerance against_cpu(const Precision&, std::size_t) const override { return {0, 0}; }

 private:
  Columns c_;
  GradMode mode_;
};

CaseList cases() {
  CaseList out;
  for (const Sizes& s : kSizes) {
    out.push_back(std::make_unique<EmbeddingForward>(s));
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      out.push_back(std::make_unique<EmbeddingBackward>(s, m));
  }
  const std::vector<Columns> columns = {
      {4, 10, 5, {{3, 1, 4}}, "split"},
      {7, 3, 8, {{0, 5, 3}}, "concatenate"},
      {5, 6, 6, {{0, 0, 6}}, "whole_rows"},
      {3, 9, 2, {{8, 0, 1}}, "last_column"},
      {301, 40, 24, {{0, 0, 8}, {17, 8, 13}, {39, 23, 1}}, "three_ranges"},
      // CUDA's 16-byte packs: U-Net's concatenation of two 64-channel maps, a split, and
      // widths that fit packs from a column that does not start on one in f16 (it does in f32).
      {300, 64, 128, {{0, 0, 64}, {0, 64, 64}}, "packed_concat"},
      {50, 96, 32, {{32, 0, 32}}, "packed_split"},
      {20, 24, 16, {{4, 0, 16}}, "unaligned_start"}};
  for (const Columns& c : columns)
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      out.push_back(std::make_unique<CopyColumns>(c, m));
  return out;
}
DLBENCH_OP_CASES(cases);

// The table's gradient by differences on the table, with a repeated id and an unused row.
std::vector<GradCase> grad_cases() {
  const std::vector<std::int32_t> ids = {2, 0, 2, 3, 2};
  constexpr std::int64_t kVocab = 4, kDim = 3, kN = 5;
  GradCase g;
  g.op = "embedding";
  g.params = "v4_d3_n5";
  g.kind = OpKind::kEmbeddingBackward;
  g.tensors = {input("table", {kVocab, kDim}, 151),
               input("dy", {kN, kDim}, 152),
               i32_input("ids", ids),
               output("dtable", {kVocab, kDim}),
               output("touched", {kVocab}, Kind::kI32),
               {"workspace", {1024}, Role::kScratch, Kind::kI32, std::vector<float>(1024, 0.0f)}};
  g.wrt = {{0, 3}};
  g.weight = 1;
  g.forward = [ids](const std::vector<Vec>& t) { return ref::embedding_forward(kDim, t[0], ids); };
  g.reference_backward = [ids](const std::vector<Vec>& t) {
    return std::vector<Vec>{ref::embedding_backward(kVocab, kDim, t[1], ids)};
  };
  g.backward = [](backend::Backend& be, std::span<const Tensor> t) {
    be.embedding_backward(t[1], t[2], t[5], t[3], t[4], GradMode::kOverwrite);
  };
  return {std::move(g)};
}
DLBENCH_GRAD_CASES(grad_cases);

}  // namespace
}  // namespace dlbench::op_harness
