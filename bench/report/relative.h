// `dlbench report --relative-to REF`: every workload's throughput divided by a reference
// machine's for the same workload, and the geometric mean of those ratios (Lambda's "relative
// to RTX 8000 = 1").
#pragma once

#include <string>
#include <vector>

#include "bench/store/store.h"

namespace dlbench::report {

// The workload a run measured, as two runs must share it to be compared (compare and
// --relative-to): model, mode, precision, batch, input size, a translation's beam, framework and
// replica count. A
// 2-rank mpirun run (x2, the batch per replica) is not the same workload as a single-process
// one, nor is a framework peer's run the native engine's; threads and mpi at one count are
// the same workload. "resnet50 train fp16 b128 224px".
std::string workload_configuration(const store::RunRecord& run);

// The runs to compare against and what they are called ("h100-sxm-80gb", "machine 3 (gpu-box)").
struct Reference {
  std::string name;
  std::vector<store::RunRecord> runs;
};

// REF as `--relative-to` takes it, tried in this order: a results file (runs export --format
// json), read into memory; a shipped reference's name (references_dir()/NAME.json); a stored
// machine's id, hostname or fingerprint prefix. Error (usage) when it names none of these or
// several machines. Never writes to the store.
Reference load_reference(store::Store& store, const std::string& ref);

// Where the shipped references are: $DLBENCH_REFERENCES_DIR, else references/ next to the
// executable or one folder up, else the source tree's.
std::string references_dir();
// The names of the shipped references ("h100-sxm-80gb"), sorted.
std::vector<std::string> shipped_references();

struct RelativeRow {
  std::string workload;   // workload_configuration
  double throughput = 0;  // this report's newest completed run of the workload
  double reference = 0;   // the reference's newest completed run of it
  double ratio = 0;       // throughput / reference
  std::string unit = "";  // samples' unit ("images"), from this run's result
};

struct RelativePerformance {
  std::string reference;               // Reference::name
  std::string reference_machine;       // its machines' descriptions
  std::vector<RelativeRow> rows;       // workloads both have, in the report's order
  std::vector<std::string> unmatched;  // workloads of the report the reference lacks
  double geometric_mean = 0;           // of the rows' ratios; NaN without rows
};

// Runs that did not complete are left out on both sides (their throughput is no measurement).
RelativePerformance relative_performance(const std::vector<store::RunRecord>& runs,
                                         const Reference& reference);

}  // namespace dlbench::report
