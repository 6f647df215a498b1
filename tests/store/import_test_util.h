// What the import tests of both backends share: a database with runs of two machines, their
// JSON export read back, and the check that an import reproduces every run.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "bench/store/export.h"
#include "bench/store/import.h"
#include "bench/store/store.h"
#include "tests/store/store_test_util.h"

namespace dlbench::testing {

// Three runs: two on the sample machine, one on another (its own fingerprint and hostname).
inline void save_two_machines(store::Store& s) {
  s.save_run(sample_run("resnet50", 812.5));
  store::RunRecord vgg = sample_run("vgg16", 301.25);
  vgg.created_unix_s += 60;
  vgg.suite = store::SuiteLink{"quick-20261125T1200", "quick", 3, "vgg16 train"};
  s.save_run(vgg);
  store::RunRecord other = sample_run("resnet50", 1625);
  other.machine.fingerprint = "aabbccddeeff00112233";
  other.machine.hostname = "other-box";
  other.machine.description = "another CPU, 1x another GPU";
  s.save_run(other);
}

// Every run of `s`, telemetry samples included, through export_json and parse_runs_json.
inline std::vector<store::RunRecord> exported_runs(store::Store& s) {
  std::vector<store::RunRecord> runs;
  for (const store::RunRecord& r : s.list_runs({})) runs.push_back(*s.get_run(r.id));
  std::ostringstream text;
  store::export_json(runs, text);
  return store::parse_runs_json(text.str(), "export");
}

inline void expect_same_run(const store::RunRecord& a, const store::RunRecord& b) {
  EXPECT_TRUE(store::same_run(a, b)) << a.model << " vs " << b.model;
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.throughput, b.throughput);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.result, b.result);
  EXPECT_EQ(a.machine.hostname, b.machine.hostname);
  EXPECT_EQ(a.machine.description, b.machine.description);
  EXPECT_EQ(a.machine.environment, b.machine.environment);
  EXPECT_EQ(a.suite.has_value(), b.suite.has_value());
  if (a.suite && b.suite) {
    EXPECT_EQ(a.suite->invocation, b.suite->invocation);
    EXPECT_EQ(a.suite->index, b.suite->index);
  }
  ASSERT_EQ(a.metrics.size(), b.metrics.size());
  for (std::size_t i = 0; i < a.metrics.size(); ++i) {
    EXPECT_EQ(a.metrics[i].tag, b.metrics[i].tag);
    EXPECT_EQ(a.metrics[i].value, b.metrics[i].value);
    EXPECT_EQ(a.metrics[i].unit, b.metrics[i].unit);
  }
  ASSERT_EQ(a.telemetry.size(), b.telemetry.size());
  for (std::size_t i = 0; i < a.telemetry.size(); ++i) {
    EXPECT_EQ(a.telemetry[i].name, b.telemetry[i].name);
    EXPECT_EQ(a.telemetry[i].mean, b.telemetry[i].mean);
    EXPECT_EQ(a.telemetry[i].reason, b.telemetry[i].reason);
  }
  ASSERT_EQ(a.samples.size(), b.samples.size());
  for (std::size_t i = 0; i < a.samples.size(); ++i) {
    EXPECT_EQ(a.samples[i].t_s, b.samples[i].t_s);
    EXPECT_EQ(a.samples[i].values, b.samples[i].values);
  }
}

// Imports `from`'s export into `to` (empty) and compares every run with its counterpart (ids
// differ between databases), and that each run kept its own machine.
inline void expect_round_trip(store::Store& from, store::Store& to) {
  const store::ImportCounts n = to.import_runs(exported_runs(from), false);
  EXPECT_EQ(n.imported, 3);
  std::vector<store::RunRecord> a = from.list_runs({}), b = to.list_runs({});
  ASSERT_EQ(a.size(), b.size());
  for (const store::RunRecord& ra : a) {
    const auto rb = std::find_if(b.begin(), b.end(),
                                 [&](const store::RunRecord& r) { return store::same_run(ra, r); });
    ASSERT_NE(rb, b.end()) << ra.model << " was not imported";
    expect_same_run(*from.get_run(ra.id), *to.get_run(rb->id));
  }
  EXPECT_EQ(to.machines().size(), 2u);
  EXPECT_EQ(to.find_machine("other-box").fingerprint, "aabbccddeeff00112233");
}

}  // namespace dlbench::testing
