// Decoding's choices. Greedy (Backend::greedy_pick): the CPU backend against a scan written from
// the definition, every other backend against it exactly (ids and counts: nothing to round). The
// scores hold what the rule must get right: a row whose highest score is [EOS] (it finishes), a
// row with its highest score twice (the lower id wins), a NaN (never chosen), a row of -inf (id 0),
// and sentences finished before the call (they get padding and keep their lengths).
// Beam search (Backend::beam_pick): against every candidate of a sentence ranked by a full sort
// in double (not the backends' best-per-hypothesis merge), with a first position (scores 0, -inf,
// ...), finished hypotheses (carried once, unchanged), a sentence whose hypotheses are all
// finished, two hypotheses tied exactly (the lower k first), and [EOS] among the best.
#include <algorithm>
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

struct BeamSetup {
  backend::BeamParams p;
  std::string name;
};

class BeamPick final : public OpCase {
 public:
  explicit BeamPick(BeamSetup s) : s_(std::move(s)) {}
  std::string op() const override { return "beam_pick"; }
  std::string params() const override {
    std::ostringstream o;
    o << "b" << s_.p.batch << "_k" << s_.p.beam << "_v" << s_.p.vocabulary << "_s" << s_.p.sources
      << s_.name;
    return o.str();
  }
  OpKind kind() const override { return OpKind::kBeamPick; }
  bool repeatable() const override { return true; }
  std::int64_t rows() const { return s_.p.rows(); }
  // logits, attention, scores, finished, lengths, coverage, tokens, parents, unfinished.
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    const std::int64_t K = s_.p.beam, V = s_.p.vocabulary, R = rows();
    HostTensor logits = input("logits", {R, V}, 911);
    for (float& v : logits.data) v *= 4.0f;  // spread, so that a few ids stand out
    const auto count = static_cast<std::size_t>(R);
    std::vector<float> scores(count, 0.0f);
    std::vector<float> finished(count, 0.0f);
    std::vector<float> lengths(count, 0.0f);
    for (std::int64_t r = 0; r < R; ++r) {
      const std::int64_t n = r / K, k = r % K;
      const auto i = static_cast<std::size_t>(r);
      lengths[i] = static_cast<float>(2 + r % 3);
      scores[i] = -0.5f * static_cast<float>(k + 1) - 0.1f * static_cast<float>(n % 3);
      if (n == 0) scores[i] = k == 0 ? 0.0f : -INFINITY;  // a first position
      if (n == 1 && K >= 3 && k == 1) finished[i] = 1;
      if (n == 2) finished[i] = 1;       // every hypothesis finished
      if (n == 3 && K >= 2 && k == 1) {  // a tie with hypothesis 0
        scores[i] = scores[i - 1];
        for (std::int64_t j = 0; j < V; ++j)
          logits.data[static_cast<std::size_t>(r * V + j)] =
              logits.data[static_cast<std::size_t>((r - 1) * V + j)];
      }
      if (n == 4 && K >= 2 && k == 0) logits.data[static_cast<std::size_t>(r * V + kEos)] = 9.0f;
    }
    HostTensor attention = input("attention", {R, s_.p.sources}, 912, Kind::kF32);
    HostTensor coverage = input("coverage", {R, s_.p.sources}, 913, Kind::kF32);
    coverage.role = Role::kInOut;
    const std::vector<float> unwritten(count, kUnwritten);
    return {std::move(logits),
            std::move(attention),
            {"scores", {R}, Role::kInOut, Kind::kF32, scores},
            i32("finished", Role::kInOut, finished),
            i32("lengths", Role::kInOut, lengths),
            std::move(coverage),
            i32("tokens", Role::kOut, unwritten),
            i32("parents", Role::kOut, unwritten),
            i32("unfinished", Role::kOut, {kUnwritten})};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.beam_pick(s_.p, t[0], t[1], {t[2], t[3], t[4], t[5]}, t[6], t[7], t[8]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const std::int64_t K = s_.p.beam, V = s_.p.vocabulary, S = s_.p.sources;
    Vec scores, finished, lengths, coverage, tokens, parents;
    double open = 0;
    struct Candidate {
      double score;
      std::int64_t k, j;
    };
    for (std::int64_t n = 0; n < s_.p.batch; ++n) {
      std::vector<Candidate> all;
      for (std::int64_t k = 0; k < K; ++k) {
        const auto row = static_cast<std::size_t>(n * K + k);
        const double score = t[2].data[row];
        if (t[3].data[row] != 0) {
          all.push_back({score, k, kPad});
          continue;
        }
        double top = -INFINITY, sum = 0;
        for (std::int64_t j = 0; j < V; ++j) top = std::max(top, double(t[0].data[row * V + j]));
        for (std::int64_t j = 0; j < V; ++j) sum += std::exp(t[0].data[row * V + j] - top);
        for (std::int64_t j = 0; j < V; ++j)
          all.push_back({score + t[0].data[row * V + j] - top - std::log(sum), k, j});
      }
      std::sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
        if (a.score != b.score) return a.score > b.score;
        return a.k != b.k ? a.k < b.k : a.j < b.j;
      });
      bool any_open = false;
      for (std::int64_t i = 0; i < K; ++i) {
        const Candidate& c = all[static_cast<std::size_t>(i)];
        const auto from = static_cast<std::size_t>(n * K + c.k);
        const bool was_done = t[3].data[from] != 0;
        tokens.push_back(static_cast<double>(c.j));
        parents.push_back(static_cast<double>(from));
        scores.push_back(c.score);
        const bool done = was_done || c.j == kEos;
        finished.push_back(done ? 1 : 0);
        lengths.push_back(t[4].data[from] + (was_done ? 0 : 1));
        for (std::int64_t s = 0; s < S; ++s)
          coverage.push_back(double(t[5].data[from * S + s]) +
                             (was_done ? 0.0 : double(t[1].data[from * S + s])));
        any_open = any_open || !done;
      }
      open += any_open ? 1 : 0;
    }
    return {{2, scores, {1e-4, 1e-5}},   {3, finished, {0, 0}}, {4, lengths, {0, 0}},
            {5, coverage, {1e-6, 1e-6}}, {6, tokens, {0, 0}},   {7, parents, {0, 0}},
            {8, {open}, {0, 0}}};
  }
  Tolerance against_cpu(const Precision&, std::size_t tensor) const override {
    return tensor == 2   ? Tolerance{1e-4, 1e-5}
           : tensor == 5 ? Tolerance{1e-6, 1e-6}
                         : Tolerance{0, 0};
  }
  double flops() const override { return static_cast<double>(rows() * s_.p.vocabulary); }

 private:
  BeamSetup s_;
};

backend::BeamParams beam(std::int64_t batch, std::int64_t k, std::int64_t vocabulary,
                         std::int64_t sources) {
  backend::BeamParams p;
  p.batch = batch, p.beam = k, p.vocabulary = vocabulary, p.sources = sources;
  p.eos = kEos, p.pad = kPad;
  return p;
}

CaseList cases() {
  CaseList out;
  out.push_back(std::make_unique<GreedyPick>(Setup{1, 7, {}}));
  out.push_back(std::make_unique<GreedyPick>(Setup{5, 33, {}}));
  out.push_back(std::make_unique<GreedyPick>(Setup{6, 1000, {0, 0, 0, 0, 1, 1}}));
  out.push_back(std::make_unique<GreedyPick>(Setup{300, 2050, {0, 0, 0, 0, 0, 1, 0, 1}}));
  out.push_back(std::make_unique<BeamPick>(BeamSetup{beam(1, 1, 7, 3), ""}));
  out.push_back(std::make_unique<BeamPick>(BeamSetup{beam(5, 3, 50, 4), ""}));
  out.push_back(std::make_unique<BeamPick>(BeamSetup{beam(6, 5, 1000, 9), ""}));
  out.push_back(std::make_unique<BeamPick>(BeamSetup{beam(7, 8, 2050, 50), ""}));
  // GNMT's decoding at batch 128, greedy and beam 5 (perf mode only).
  out.push_back(std::make_unique<PerfCase>(std::make_unique<GreedyPick>(Setup{128, 32320, {}})));
  out.push_back(std::make_unique<PerfCase>(
      std::make_unique<BeamPick>(BeamSetup{beam(128, 5, 32320, 50), ""})));
  return out;
}
DLBENCH_OP_CASES(cases);

}  // namespace
}  // namespace dlbench::op_harness
