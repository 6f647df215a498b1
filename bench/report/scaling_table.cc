#include "bench/report/scaling_table.h"

#include <cmath>
#include <map>
#include <tuple>

#include "bench/report/names.h"
#include "bench/result/replica_steps.h"
#include "bench/result/scaling_math.h"

namespace dlbench::report {
namespace {

using nlohmann::json;
using store::RunRecord;

const json& data_parallel(const RunRecord& r) {
  static const json kNone = json::object();
  auto it = r.result.find("data_parallel");
  return it != r.result.end() && it->is_object() ? *it : kNone;
}

// The data_parallel object's field, else the config's (both written by run_result.cc).
const json* field(const RunRecord& r, const char* key) {
  const json& dp = data_parallel(r);
  if (auto it = dp.find(key); it != dp.end() && !it->is_null()) return &*it;
  if (auto it = r.config.find(key); r.config.is_object() && it != r.config.end() && !it->is_null())
    return &*it;
  return nullptr;
}

// "2x cuda (threads)" -> cuda, "cuda:1" -> cuda, "cpu" -> cpu.
std::string device_kind(const std::string& device) {
  std::size_t start = 0;
  if (std::size_t x = device.find("x ");
      x != std::string::npos && x > 0 && device.find_first_not_of("0123456789") == x)
    start = x + 2;
  std::size_t end = device.find_first_of(": ", start);
  return device.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

int launch_order(const std::string& launch) {
  return launch == "single" ? 0 : launch == "threads" ? 1 : launch == "mpi" ? 2 : 3;
}

std::string workload_name(const RunRecord& r) {
  std::string w = model_label(r.model) + " " + r.mode + " " + precision_label(r.precision) + " b" +
                  std::to_string(r.batch);
  if (r.input_size) w += " " + r.input_size_text();
  if (r.beam() > 1) w += " " + r.beam_text();
  if (r.framework != "native") w += " " + r.framework;
  return w;
}

std::string group_key(const RunRecord& r) {
  return std::to_string(r.machine.id) + "|" + device_kind(r.device) + "|" + r.framework + "|" +
         r.model + "|" + r.mode + "|" + r.precision + "|" + std::to_string(r.batch) + "|" +
         std::to_string(r.input_size) + "|" + std::to_string(r.beam());
}

ScalingRow row_of(const RunRecord& r) {
  ScalingRow row;
  row.run_id = r.id;
  row.replicas = run_replicas(r);
  row.launch = run_launch(r);
  const json* global = field(r, "global_batch");
  row.global_batch =
      global && global->is_number() ? global->get<std::int64_t>() : r.batch * row.replicas;
  row.throughput = r.throughput;
  const json& dp = data_parallel(r);
  if (auto it = dp.find("replicas_identical"); it != dp.end() && it->is_boolean())
    row.replicas_identical = it->get<bool>();
  if (const auto steps = result::replica_steps_from_json(dp); !steps.empty()) {
    const result::Stragglers s = result::find_stragglers(steps);
    row.slow_steps = result::slow_steps_cell(s);
  }
  row.interconnect = dp.value("interconnect", "");
  row.communicator = dp.value("communicator", "");
  return row;
}

struct Pending {
  ScalingGroup group;
  // (replicas, launch order, launch) -> the newest row
  std::map<std::tuple<int, int, std::string>, ScalingRow> rows;
};

}  // namespace

const char* const kScalingCaption =
    "Data parallel: every replica (a GPU, or an MPI rank) runs the per-replica batch b, so the "
    "global batch is b x replicas. speedup = samples/s / samples/s at the smallest replica "
    "count; scaling efficiency = (samples/s / replicas) / (samples/s / replicas at the smallest "
    "count): 100% is linear scaling. The chart draws one line through the single-process runs "
    "(1 GPU, and a thread per GPU) and MPI runs (a process per replica, under mpirun) as a "
    "separate dataset, both against the same base: the smallest count's single-process run "
    "where there is one. Where a count was run more than once, the newest run is shown. "
    "Slow steps: measured steps over 1.1x the median step on some replica, of those measured "
    "(a few slow steps lower the efficiency while the median step stays put). "
    "Replicas identical: the replicas' parameters were equal after the measured steps.";

int run_replicas(const RunRecord& r) {
  const json* n = field(r, "replicas");
  return n && n->is_number_integer() && n->get<int>() > 0 ? n->get<int>() : 1;
}

std::string run_launch(const RunRecord& r) {
  const json* l = field(r, "launch");
  return l && l->is_string() && !l->get<std::string>().empty() ? l->get<std::string>() : "single";
}

std::vector<ScalingGroup> scaling_groups(const std::vector<RunRecord>& runs) {
  std::vector<std::string> order;
  std::map<std::string, Pending> pending;
  for (const RunRecord& r : runs) {
    if (r.status != "ok" || !(r.throughput > 0)) continue;
    std::string key = group_key(r);
    auto [it, inserted] = pending.try_emplace(key);
    if (inserted) {
      order.push_back(key);
      ScalingGroup& g = it->second.group;
      g.workload = workload_name(r);
      g.device = device_kind(r.device);
      g.machine_id = r.machine.id;
      g.machine = machine_name(r.machine);
    }
    ScalingRow row = row_of(r);
    it->second.rows[{row.replicas, launch_order(row.launch), row.launch}] = row;  // newest wins
  }
  std::vector<ScalingGroup> groups;
  for (const std::string& key : order) {
    Pending& p = pending[key];
    const int smallest = std::get<0>(p.rows.begin()->first);
    if (std::get<0>(p.rows.rbegin()->first) == smallest) continue;  // one replica count only
    // The map's order puts single and threads before mpi at the smallest count.
    const ScalingRow& base = p.rows.begin()->second;
    ScalingGroup g = std::move(p.group);
    g.base_replicas = base.replicas;
    g.base_throughput = base.throughput;
    for (auto& [unused, row] : p.rows) {
      row.speedup = row.throughput / g.base_throughput;
      row.efficiency = result::scaling_efficiency(row.replicas, row.throughput, g.base_replicas,
                                                  g.base_throughput);
      g.rows.push_back(row);
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

std::string scaling_title(const ScalingGroup& g) {
  return "Multi-GPU scaling: " + g.workload + " on " + g.device + ", " + g.machine;
}

Table scaling_table(const ScalingGroup& g) {
  Table t{"scaling",
          scaling_title(g),
          "speedup and efficiency against " + std::to_string(g.base_replicas) +
              (g.base_replicas == 1 ? " replica" : " replicas") +
              "; efficiency = (samples/s / replicas) / (samples/s / replicas at the base); the "
              "newest run of each replica count and launch",
          {"replicas", "launch", "global batch", "samples/s", "speedup", "efficiency %",
           "slow steps", "replicas identical", "interconnect", "run"},
          {}};
  for (const ScalingRow& row : g.rows) {
    std::string identical = !row.replicas_identical   ? (row.replicas == 1 ? "-" : "")
                            : *row.replicas_identical ? "yes"
                                                      : "no";
    t.rows.push_back({std::to_string(row.replicas), row.launch, std::to_string(row.global_batch),
                      fixed(row.throughput, 2), fixed(row.speedup, 2) + "x",
                      fixed(100 * row.efficiency, 1), row.replicas == 1 ? "-" : row.slow_steps,
                      identical, row.interconnect, row.run_id ? std::to_string(row.run_id) : ""});
  }
  return t;
}

}  // namespace dlbench::report
