// `dlbench compare A B`: two runs, two suites or two machines side by side. Runs are matched by
// model, mode, precision, batch, input, framework and replica count; ratio = B / A (above 1: B
// is faster).
#pragma once

#include <string>

#include "bench/report/report_data.h"
#include "bench/store/store.h"

namespace dlbench::report {

enum class CompareKind { kAuto, kRuns, kSuites, kMachines };

CompareKind parse_compare_kind(const std::string& text);

struct Comparison {
  std::string title;  // "runs 3 vs 7"
  Table table;
};

// kAuto: two integers are run ids, a name of a stored suite is a suite, else a machine (id,
// hostname or fingerprint prefix). Error (usage) when a side matches nothing.
Comparison compare(store::Store& store, const std::string& a, const std::string& b,
                   CompareKind kind = CompareKind::kAuto);

}  // namespace dlbench::report
