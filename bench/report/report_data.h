// What a report covers, read from the store alone (so any report can be rebuilt later from
// the database), and the tables every format shows: terminal, Markdown, CSV, JSON and HTML
// (which adds charts of the same numbers).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/report/relative.h"
#include "bench/result/noise.h"
#include "bench/store/measured_peak.h"
#include "bench/store/store.h"

namespace dlbench::report {

struct Selection {
  int last = 0;             // the newest N runs
  bool last_suite = false;  // the newest suite invocation
  std::string suite;        // the newest invocation of this suite name, or an invocation id
  std::vector<std::int64_t> ids;
  std::string machine;  // every run of this machine
};

// A machine's measured compute and memory bandwidth: the newest ok `micro gemm` best of each
// precision and the newest `micro bandwidth` best, of its first GPU (cuda:0) or, without a GPU,
// of its CPU.
struct MachineMeasured {
  std::string device;                                  // "cuda:0", "cpu"
  std::vector<std::string> precisions;                 // those the card lists, in order
  std::map<std::string, store::MeasuredPeak> compute;  // by precision; missing: not measured
  std::optional<store::MeasuredPeak> bandwidth;        // GB/s
};

struct ReportData {
  std::string title;
  std::string scope;   // "suite quick-cpu (quick-cpu-20261122T...)", "runs 3, 4"
  std::string source;  // the store's location
  std::int64_t generated_unix_s = 0;
  std::vector<store::RunRecord> runs;  // oldest first, telemetry included
  // `dlbench micro` results (mode "micro"): not workloads, so no workload table shows them;
  // the machine's measured peaks and bandwidth come from here. Oldest first.
  std::vector<store::RunRecord> micro_runs;
  // `dlbench maxbatch` results (mode "maxbatch train", "maxbatch infer": store/max_batch.h):
  // the "Largest batch" table and chart. Oldest first.
  std::vector<store::RunRecord> max_batch_runs;
  std::vector<store::MachineRecord> machines;  // of these runs, by id
  // Per machine id: what its own micro benchmarks measured, the newest of each in the store
  // whatever the selection (machine_card.h); the machine card shows it.
  std::map<std::int64_t, MachineMeasured> measured;
  // --relative-to: the runs' throughput against a reference machine's (relative.h).
  std::optional<RelativePerformance> relative;
};

// Throws dlbench::Error (usage) when the selection names nothing or matches no run.
ReportData load_report(store::Store& store, const Selection& selection);

// A mark on one cell: the HTML report's warning sign, with `text` as its tooltip and footnote.
// The other formats carry the same facts in a column of their own (the runs table's
// "warnings").
struct CellFlag {
  std::size_t row = 0;
  std::string column;  // the column's name: "samples/s"
  std::string text;    // "run #12: step time varies 8.2 % (CV), above 5 %"
};

// A plain table: a title, columns, and rows of text cells (numbers already formatted).
struct Table {
  std::string id;  // "throughput", for CSV/JSON consumers
  std::string title;
  std::string note;  // what the numbers mean
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  // Columns whose cells are text even when they look like numbers (a version "13.0", a
  // fingerprint); in the others, JSON writes a cell that is a plain decimal as a number.
  std::vector<std::string> text_columns = {};
  std::vector<CellFlag> flags = {};
};

std::vector<Table> report_tables(const ReportData& data);

// The run's noise warnings (bench/result/noise.h): as stored with it, or for runs stored before
// warnings existed, derived from what it stored.
std::vector<result::NoiseWarning> run_warnings(const store::RunRecord& run);

// "resnet50 train fp32 b32 #12": a run in a chart's legend or a table.
// The run's mode as tables show it: "infer", "infer beam 5" (a beam search is not greedy
// decoding).
std::string mode_text(const store::RunRecord& run);
std::string run_label(const store::RunRecord& run);
// "ok", "failed: <error>", or an interrupted run's note ("interrupted by SIGINT after 3 of 20
// measured steps").
std::string status_text(const store::RunRecord& run);
// A number with `digits` decimals; "" for NaN.
std::string fixed(double value, int digits);
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Across a run's GPUs ("gpuN.<suffix>" telemetry): the largest maximum (use_max) or the
// largest mean; NaN when no GPU has the metric.
double gpu_telemetry(const store::RunRecord& run, const std::string& suffix, bool use_max);
// A stored metric's value by tag; NaN when the run has none.
double metric(const store::RunRecord& run, const std::string& tag);
// The allocator peak of a run in GiB: a peer's own allocator peak (memory/peak_gib), or what
// the native engine's allocations held at most (memory/allocated_peak_gib); NaN for neither.
double allocator_peak_gib(const store::RunRecord& run);
// Energy per sample (J) of a run: GPU energy over the measured phase / samples processed.
// NaN without GPU energy telemetry.
double energy_per_sample(const store::RunRecord& run);
// The telemetry metrics a report shows, in order: per GPU kernel busy, SM and tensor activity,
// memory used and power, then the process's CPU and memory and the host's memory.
bool is_reported_telemetry(const std::string& name);

}  // namespace dlbench::report
