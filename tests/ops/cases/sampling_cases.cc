// Negative sampling (Backend::sample_negatives): two calls from a step counter part-way through a
// run; the second call's batch and the counter are checked exactly against sampled_negatives.h's
// formula evaluated on the host, on every backend (integer ids: nothing to round). The formula's
// statistics (uniform items, fresh draws per step) are tested in tests/ops/sampling_test.cc.
#include <sstream>

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

CaseList cases() {
  CaseList list;
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
