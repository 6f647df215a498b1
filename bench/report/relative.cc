#include "bench/report/relative.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "bench/report/scaling_table.h"
#include "bench/store/import.h"
#include "bench/store/max_batch.h"
#include "engine/core/error.h"

namespace dlbench::report {
namespace fs = std::filesystem;

std::string workload_configuration(const store::RunRecord& r) {
  std::string key = r.model + " " + r.mode + " " + r.precision + " b" + std::to_string(r.batch);
  if (r.input_size) key += " " + r.input_size_text();
  if (r.beam() > 1) key += " " + r.beam_text();
  if (r.framework != "native") key += " " + r.framework;
  if (int n = run_replicas(r); n > 1) key += " x" + std::to_string(n);
  return key;
}

std::string references_dir() {
  if (const char* env = std::getenv("DLBENCH_REFERENCES_DIR"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (const fs::path& candidate :
         {exe.parent_path() / "references", exe.parent_path().parent_path() / "references"})
      if (fs::is_directory(candidate, ec)) return candidate.string();
  return DLBENCH_REFERENCES_SOURCE_DIR;
}

std::vector<std::string> shipped_references() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(references_dir(), ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

std::string machine_text(const store::MachineRecord& m) {
  return m.description.empty() ? m.hostname : m.description;
}

}  // namespace

Reference load_reference(store::Store& store, const std::string& ref) {
  std::error_code ec;
  if (fs::is_regular_file(ref, ec)) return {ref, store::read_runs_file(ref)};
  const std::vector<std::string> shipped = shipped_references();
  if (std::find(shipped.begin(), shipped.end(), ref) != shipped.end())
    return {ref, store::read_runs_file(references_dir() + "/" + ref + ".json")};
  std::string names;
  for (const std::string& n : shipped) names += (names.empty() ? "" : ", ") + n;
  const std::string hint =
      "name a machine 'dlbench runs list' shows, a file 'dlbench runs export "
      "--format json' wrote, or a shipped reference (" +
      (names.empty() ? std::string("none found") : names) + ")";
  bool named = false;
  for (const store::MachineRecord& m : store.machines())
    named = named || std::to_string(m.id) == ref || m.hostname == ref ||
            (ref.size() >= 4 && m.fingerprint.rfind(ref, 0) == 0);
  if (!named)
    throw Error(ErrorKind::kUsage,
                "--relative-to '" + ref + "' names no machine, results file or shipped reference",
                hint);
  const store::MachineRecord machine = store.find_machine(ref);  // several: it lists them
  store::RunFilter filter;
  filter.machine = machine.fingerprint;
  return {"machine " + std::to_string(machine.id) + " (" + machine.hostname + ")",
          store.list_runs(filter)};
}

RelativePerformance relative_performance(const std::vector<store::RunRecord>& runs,
                                         const Reference& reference) {
  RelativePerformance out;
  out.reference = reference.name;
  std::set<std::string> machines;
  // The newest completed run of each workload on the reference side.
  std::map<std::string, const store::RunRecord*> ref;
  for (const store::RunRecord& r : reference.runs) {
    if (r.status != "ok" || !(r.throughput > 0) || r.mode == "micro" || store::is_max_batch(r))
      continue;
    const std::string key = workload_configuration(r);
    if (!ref.count(key) || ref[key]->created_unix_s <= r.created_unix_s) ref[key] = &r;
    machines.insert(machine_text(r.machine));
  }
  for (const std::string& m : machines)
    out.reference_machine += (out.reference_machine.empty() ? "" : "; ") + m;
  // This side: the newest completed run of each workload, in the order the report lists them.
  std::vector<std::string> order;
  std::map<std::string, const store::RunRecord*> mine;
  for (const store::RunRecord& r : runs) {
    if (r.status != "ok" || !(r.throughput > 0) || r.mode == "micro" || store::is_max_batch(r))
      continue;
    const std::string key = workload_configuration(r);
    if (!mine.count(key)) order.push_back(key);
    if (!mine.count(key) || mine[key]->created_unix_s <= r.created_unix_s) mine[key] = &r;
  }
  double log_sum = 0;
  for (const std::string& key : order) {
    const auto it = ref.find(key);
    if (it == ref.end()) {
      out.unmatched.push_back(key);
      continue;
    }
    const store::RunRecord& r = *mine[key];
    RelativeRow row{key, r.throughput, it->second->throughput,
                    r.throughput / it->second->throughput,
                    r.result.value("sample_unit", std::string())};
    log_sum += std::log(row.ratio);
    out.rows.push_back(row);
  }
  // The geometric mean, as a mean of logarithms: a workload twice as fast and one half as fast
  // average to 1, as ratios should.
  out.geometric_mean = out.rows.empty() ? NAN : std::exp(log_sum / double(out.rows.size()));
  return out;
}

}  // namespace dlbench::report
