#include "bench/report/compare.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include "bench/report/relative.h"
#include "bench/result/noise.h"
#include "bench/result/repeats.h"
#include "engine/core/error.h"

namespace dlbench::report {
namespace {

// A run id: digits only, and small enough for 64 bits ("18446744073709551615" is not an id).
std::optional<std::int64_t> run_id(const std::string& s) {
  std::int64_t id = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
  if (s.empty() || s[0] == '-' || ec != std::errc() || end != s.data() + s.size()) return {};
  return id;
}

double median_ms(const store::RunRecord& r) {
  return r.result.contains("step_time_ms") ? r.result["step_time_ms"].value("median", NAN) : NAN;
}

std::string ratio(double b, double a) {
  return a > 0 && b > 0 ? fixed(b / a, 2) + "x" : "";
}

// B/A of throughput; "1.23x ± 0.02" when both runs have repeats (result::throughput_ratio: one
// standard error, from the repeats' spread), else as ratio() says it.
std::string throughput_ratio(const store::RunRecord* a, const store::RunRecord* b) {
  if (a == nullptr || b == nullptr) return "";
  const result::RatioEstimate e =
      result::throughput_ratio(a->throughput, result::repeat_throughputs(a->result), b->throughput,
                               result::repeat_throughputs(b->result));
  if (!std::isfinite(e.ratio)) return "";
  std::string text = fixed(e.ratio, 2) + "x";
  if (std::isfinite(e.uncertainty)) text += " \xC2\xB1 " + fixed(e.uncertainty, 2);
  return text;
}

// "A: high-cv; B: few-steps, cpu-contention": the noise warnings of either side's run.
std::string warnings(const store::RunRecord* a, const store::RunRecord* b) {
  std::string text;
  for (const auto& [side, r] : {std::pair{"A", a}, std::pair{"B", b}}) {
    if (r == nullptr) continue;
    const std::string codes = result::warning_codes(result::stored_noise_warnings(r->result));
    if (!codes.empty()) text += (text.empty() ? "" : "; ") + std::string(side) + ": " + codes;
  }
  return text;
}

// "3" when the run has repeats; "" for a single measurement.
std::string repeat_count(const store::RunRecord* r) {
  if (r == nullptr) return "";
  const std::size_t n = result::repeat_throughputs(r->result).size();
  return n > 0 ? std::to_string(n) : "";
}

// One side; `kind` becomes what the text named (auto resolved).
ReportData side(store::Store& store, const std::string& text, CompareKind& kind) {
  Selection s;
  if (kind == CompareKind::kAuto) {
    if (run_id(text) && store.get_run(*run_id(text)))
      kind = CompareKind::kRuns;
    else if (!store.suites(text).empty())
      kind = CompareKind::kSuites;
    else
      kind = CompareKind::kMachines;
  }
  if (kind == CompareKind::kRuns) {
    if (!run_id(text))
      throw Error(ErrorKind::kUsage, "'" + text + "' is not a run id", "see 'dlbench runs list'");
    s.ids = {*run_id(text)};
  } else if (kind == CompareKind::kSuites) {
    s.suite = text;
  } else {
    s.machine = store.find_machine(text).fingerprint.substr(0, 12);
  }
  return load_report(store, s);
}

}  // namespace

CompareKind parse_compare_kind(const std::string& text) {
  if (text == "auto") return CompareKind::kAuto;
  if (text == "runs") return CompareKind::kRuns;
  if (text == "suites") return CompareKind::kSuites;
  if (text == "machines") return CompareKind::kMachines;
  throw Error(ErrorKind::kUsage, "unknown comparison '" + text + "'",
              "use runs, suites, machines or auto");
}

Comparison compare(store::Store& store, const std::string& a, const std::string& b,
                   CompareKind kind) {
  CompareKind kind_a = kind, kind_b = kind;
  ReportData left = side(store, a, kind_a);
  ReportData right = side(store, b, kind_b);
  Comparison c;
  c.title = "A = " + left.scope + ", B = " + right.scope;
  c.table = Table{"compare",
                  "Comparison",
                  "ratio = B / A; throughput above 1x and step time below 1x mean B is faster; a "
                  "run with repeats shows its median; \xC2\xB1 is one standard error of the ratio, "
                  "from both runs' repeats (only where both have them); warnings: the runs' "
                  "noise warnings",
                  {"workload", "A samples/s", "B samples/s", "B/A", "A step p50 ms",
                   "B step p50 ms", "B/A step", "A repeats", "B repeats", "warnings"},
                  {}};
  // Newest run of each configuration on each side; two runs named by id match whatever they
  // are (two machines or suites with one run each match only the same workload).
  // Only runs that completed are compared; the others are named in the note, so comparing an
  // interrupted or failed run says why its row is empty instead of showing a partial figure.
  std::map<std::string, const store::RunRecord*> in_a, in_b;
  std::vector<std::string> left_out;
  auto take = [&](const ReportData& d, const char* name,
                  std::map<std::string, const store::RunRecord*>& in) {
    for (const store::RunRecord& r : d.runs) {
      if (r.status == "ok")
        in[workload_configuration(r)] = &r;
      else
        left_out.push_back("run " + std::to_string(r.id) + " (" + name + ", " + r.status + ")");
    }
  };
  take(left, "A", in_a);
  take(right, "B", in_b);
  bool two_runs = kind_a == CompareKind::kRuns && kind_b == CompareKind::kRuns;
  if (two_runs && in_a.size() == 1 && in_b.size() == 1 &&
      in_a.begin()->first != in_b.begin()->first) {
    // Two runs of different configurations: one row, named by both.
    std::string both = in_a.begin()->first + " vs " + in_b.begin()->first;
    in_a = {{both, in_a.begin()->second}};
    in_b = {{both, in_b.begin()->second}};
  }
  std::vector<std::string> keys;
  for (const auto& [k, r] : in_a) keys.push_back(k);
  for (const auto& [k, r] : in_b)
    if (!in_a.count(k)) keys.push_back(k);
  for (const std::string& k : keys) {
    const store::RunRecord* ra = in_a.count(k) ? in_a[k] : nullptr;
    const store::RunRecord* rb = in_b.count(k) ? in_b[k] : nullptr;
    double ta = ra ? ra->throughput : NAN, tb = rb ? rb->throughput : NAN;
    double sa = ra ? median_ms(*ra) : NAN, sb = rb ? median_ms(*rb) : NAN;
    c.table.rows.push_back({k, fixed(ta, 2), fixed(tb, 2), throughput_ratio(ra, rb), fixed(sa, 1),
                            fixed(sb, 1), ratio(sb, sa), repeat_count(ra), repeat_count(rb),
                            warnings(ra, rb)});
  }
  // Columns no row fills (no repeats, no warnings) are left out, as before they existed.
  for (std::size_t col = c.table.columns.size(); col-- > 7;) {
    bool empty = true;
    for (const auto& row : c.table.rows) empty = empty && row[col].empty();
    if (!empty) continue;
    c.table.columns.erase(c.table.columns.begin() + static_cast<std::ptrdiff_t>(col));
    for (auto& row : c.table.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(col));
  }
  if (!left_out.empty()) {
    std::string names;
    for (const std::string& n : left_out) names += (names.empty() ? "" : ", ") + n;
    c.table.note += "; left out, as they did not complete: " + names;
  }
  return c;
}

}  // namespace dlbench::report
