// Greedy decoding's choice (Backend::greedy_pick): the CPU backend against a scan written from the
// definition, every other backend against it exactly (ids and counts: nothing to round). The
// scores hold what the rule must get right: a row whose highest score is [EOS] (it finishes), a
// row with its highest score twice (the lower id wins), a NaN (never chosen), a row of -inf (id 0),
// and sentences finished before the call (they get padding and keep their lengths).
#include <cmath>
#include <limits>
#include <sstream>

#include "tests/ops/harness/op_case.h"

namespace dlbench::op_harness {
namespace {

using backend::GreedyParams;
using backend::OpKind;

constexpr std::int32_t kEos = 2, kPad = 0, kUnwritten = -7;

struct Setup {
  std::int64_t batch, vocabulary;
  std::vector<std::int32_t> finished;  // before the call; empty: none
};

HostTensor i32(std::string name, Role role, std::vector<float> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return {std::move(name), {n}, role, Kind::kI32, std::move(values)};
}

class GreedyPick final : public OpCase {
 public:
  explicit GreedyPick(Setup s) : s_(std::move(s)) {}
  std::string op() const override { return "greedy_pick"; }
  std::string params() const override {
    std::ostringstream o;
    o << "b" << s_.batch << "_v" << s_.vocabulary << (s_.finished.empty() ? "" : "_finished");
    return o.str();
  }
  OpKind kind() const override { return OpKind::kGreedyPick; }
  bool repeatable() const override { return true; }
  GreedyParams p() const { return {s_.batch, s_.vocabulary, kEos, kPad}; }
  // logits, tokens, finished, lengths, unfinished.
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    const std::int64_t b = s_.batch, v = s_.vocabulary;
    HostTensor logits = input("logits", {b, v}, 811);
    auto at = [&](std::int64_t n, std::int64_t j) -> float& {
      return logits.data[static_cast<std::size_t>(n * v + j)];
    };
    if (b >= 4 && v >= 8) {
      at(0, 5) = std::numeric_limits<float>::quiet_NaN();
      at(1, kEos) = 4.0f;              // the highest: sentence 1 finishes
      at(2, 3) = at(2, v - 1) = 5.0f;  // twice the highest: id 3
      for (std::int64_t j = 0; j < v; ++j) at(3, j) = -INFINITY;
    }
    std::vector<float> finished(static_cast<std::size_t>(b), 0.0f), lengths(finished.size());
    for (std::size_t n = 0; n < finished.size(); ++n) {
      if (n < s_.finished.size()) finished[n] = static_cast<float>(s_.finished[n]);
      lengths[n] = static_cast<float>(3 + n % 5);
    }
    return {std::move(logits),
            i32("tokens", Role::kOut, std::vector<float>(finished.size(), kUnwritten)),
            i32("finished", Role::kInOut, finished), i32("lengths", Role::kInOut, lengths),
            i32("unfinished", Role::kOut, {kUnwritten})};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.greedy_pick(p(), t[0], t[1], t[2], t[3], t[4]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    Vec tokens, finished, lengths;
    double open = 0;
    for (std::int64_t n = 0; n < s_.batch; ++n) {
      const auto i = static_cast<std::size_t>(n);
      double length = t[3].data[i];
      if (t[2].data[i] != 0) {
        tokens.push_back(kPad), finished.push_back(1), lengths.push_back(length);
        continue;
      }
      std::int64_t best = 0;
      double top = -INFINITY;
      for (std::int64_t j = 0; j < s_.vocabulary; ++j) {
        const double score = t[0].data[static_cast<std::size_t>(n * s_.vocabulary + j)];
        if (!std::isnan(score) && score > top) top = score, best = j;
      }
      tokens.push_back(static_cast<double>(best));
      finished.push_back(best == kEos ? 1 : 0);
      lengths.push_back(length + 1);
      open += best == kEos ? 0 : 1;
    }
    return {{1, tokens, {0, 0}}, {2, finished, {0, 0}}, {3, lengths, {0, 0}}, {4, {open}, {0, 0}}};
  }
  Tolerance against_cpu(const Precision&, std::size_t) const override { return {0, 0}; }
  double flops() const override { return static_cast<double>(s_.batch * s_.vocabulary); }

 private:
  Setup s_;
};

CaseList cases() {
  CaseList out;
  out.push_back(std::make_unique<GreedyPick>(Setup{1, 7, {}}));
  out.push_back(std::make_unique<GreedyPick>(Setup{5, 33, {}}));
  out.push_back(std::make_unique<GreedyPick>(Setup{6, 1000, {0, 0, 0, 0, 1, 1}}));
  out.push_back(std::make_unique<GreedyPick>(Setup{300, 2050, {0, 0, 0, 0, 0, 1, 0, 1}}));
  // GNMT's decoding at batch 128 (perf mode only).
  out.push_back(std::make_unique<PerfCase>(std::make_unique<GreedyPick>(Setup{128, 32320, {}})));
  return out;
}
DLBENCH_OP_CASES(cases);

}  // namespace
}  // namespace dlbench::op_harness
