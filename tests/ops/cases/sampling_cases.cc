// Negative sampling (Backend::sample_negatives, and Word2Vec's sample_candidates): two calls from a
// step counter part-way through a run; the second call's batch and the counter are checked exactly
// against sampled_negatives.h's formula evaluated on the host, on every backend (integer ids:
// nothing to round). The formula's statistics (uniform items, fresh draws per step) are tested in
// tests/ops/sampling_test.cc.
#include <sstream>

#include <vector>

#include "engine/backend/sampled_negatives.h"
#include "tests/ops/harness/op_case.h"

namespace dlbench::op_harness {
namespace {

using backend::OpKind;

struct Sampling {
  std::int64_t positives, batch, items;
};

constexpr int kCalls = 2;
constexpr std::int32_t kFirstStep = 41;  // the counter before the first call
constexpr std::uint64_t kSeed = 1234;

HostTensor ids(std::string name, std::int64_t n, std::int64_t high, std::int64_t mult) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = static_cast<float>((i * mult + 3) % high);
  return {std::move(name), {n}, Role::kIn, Kind::kI32, std::move(v)};
}

class SampleNegatives final : public OpCase {
 public:
  explicit SampleNegatives(Sampling s) : s_(s) {}
  std::string op() const override { return "sample_negatives"; }
  std::string params() const override {
    std::ostringstream o;
    o << "p" << s_.positives << "_b" << s_.batch << "_items" << s_.items;
    return o.str();
  }
  OpKind kind() const override { return OpKind::kSampleNegatives; }
  bool repeatable() const override { return false; }  // each call draws anew
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {{"step", {1}, Role::kInOut, Kind::kI32, {static_cast<float>(kFirstStep)}},
            ids("users_pos", s_.positives, 6040, 37),
            ids("items_pos", s_.positives, s_.items, 11),
            output("users", {s_.batch}, Kind::kI32),
            output("items", {s_.batch}, Kind::kI32),
            output("labels", {s_.batch, 1}, Kind::kF32)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    for (int call = 0; call < kCalls; ++call)
      be.sample_negatives({s_.items, kSeed}, t[0], t[1], t[2], t[3], t[4], t[5]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const std::int32_t step = kFirstStep + kCalls;
    const std::uint64_t key = backend::negatives_key(kSeed, step);
    Vec users, items, labels;
    for (std::int64_t r = 0; r < s_.batch; ++r) {
      const bool positive = r < s_.positives;
      const std::int64_t j = r - s_.positives;
      users.push_back(t[1].data[static_cast<std::size_t>(positive ? r : j % s_.positives)]);
      items.push_back(positive ? t[2].data[static_cast<std::size_t>(r)]
                               : backend::negative_item(key, j, s_.items));
      labels.push_back(positive ? 1.0 : 0.0);
    }
    return {{0, {static_cast<double>(step)}, {0, 0}},
            {3, users, {0, 0}},
            {4, items, {0, 0}},
            {5, labels, {0, 0}}};
  }
  Tolerance against_cpu(const Precision&, std::size_t) const override { return {0, 0}; }

 private:
  Sampling s_;
};

// Word2Vec's candidates: a skewed table with a zero-probability entry (never drawn) and its last
// entry a little under 1 (rounding: draws past it take the last index).
struct Candidates {
  std::int64_t pairs, m, vocab;
};

std::vector<float> cdf_of(std::int64_t vocab) {
  std::vector<double> weight(static_cast<std::size_t>(vocab));
  for (std::int64_t v = 0; v < vocab; ++v)
    weight[static_cast<std::size_t>(v)] = v == 1 ? 0.0 : 1.0 / static_cast<double>(v + 1);
  double total = 0;
  for (double w : weight) total += w;
  std::vector<float> cdf;
  double sum = 0;
  for (double w : weight) cdf.push_back(static_cast<float>((sum += w) / total * 0.9999));
  return cdf;
}

class SampleCandidates final : public OpCase {
 public:
  explicit SampleCandidates(Candidates s) : s_(s) {}
  std::string op() const override { return "sample_candidates"; }
  std::string params() const override {
    std::ostringstream o;
    o << "p" << s_.pairs << "_m" << s_.m << "_v" << s_.vocab;
    return o.str();
  }
  OpKind kind() const override { return OpKind::kSampleCandidates; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {{"step", {1}, Role::kInOut, Kind::kI32, {static_cast<float>(kFirstStep)}},
            ids("contexts", s_.pairs, s_.vocab, 7),
            {"cdf", {s_.vocab}, Role::kIn, Kind::kF32, cdf_of(s_.vocab)},
            output("ids", {s_.pairs, s_.m}, Kind::kI32),
            output("labels", {s_.pairs, s_.m}, Kind::kF32)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    for (int call = 0; call < kCalls; ++call)
      be.sample_candidates({kSeed}, t[0], t[1], t[2], t[3], t[4]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const std::int32_t step = kFirstStep + kCalls;
    const std::uint64_t key = backend::negatives_key(kSeed, step);
    const std::vector<float>& cdf = t[2].data;
    Vec out, labels;
    for (std::int64_t pair = 0; pair < s_.pairs; ++pair)
      for (std::int64_t column = 0; column < s_.m; ++column) {
        if (column == 0) {
          out.push_back(t[1].data[static_cast<std::size_t>(pair)]);
        } else {
          // The first index whose cumulative share exceeds u, by a scan (the op searches).
          const float u = backend::unit_uniform(key, pair * (s_.m - 1) + column - 1);
          std::int64_t v = 0;
          while (v + 1 < s_.vocab && !(cdf[static_cast<std::size_t>(v)] > u)) ++v;
          out.push_back(static_cast<double>(v));
        }
        labels.push_back(column == 0 ? 1.0 : 0.0);
      }
    return {{0, {static_cast<double>(step)}, {0, 0}}, {3, out, {0, 0}}, {4, labels, {0, 0}}};
  }
  Tolerance against_cpu(const Precision&, std::size_t) const override { return {0, 0}; }

 private:
  Candidates s_;
};

CaseList cases() {
  CaseList list;
  // Contexts only; Word2Vec's 1 + 5 over a small table; 1 + 64 (sampled-softmax setups) over
  // text8's vocabulary.
  for (const Candidates& s : std::vector<Candidates>{{3, 1, 4}, {16, 6, 9}, {300, 65, 71290}})
    list.push_back(std::make_unique<SampleCandidates>(s));
  // One sample; positives only; NCF's 1 + 4 at batch 256 (52 positives); a large table with
  // enough rows for several blocks on a GPU.
  for (const Sampling& s : std::vector<Sampling>{
           {1, 1, 10}, {5, 5, 7}, {3, 16, 5}, {52, 256, 3706}, {2000, 9999, 70000}})
    list.push_back(std::make_unique<SampleNegatives>(s));
  return list;
}

DLBENCH_OP_CASES(cases);

}  // namespace
}  // namespace dlbench::op_harness
