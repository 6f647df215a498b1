// dlbench compare: two machines' runs are matched only when they are the same workload, and a
// data-parallel run (a 2-rank mpirun job) is not the same workload as a single-process run.
#include <gtest/gtest.h>

#include "bench/report/compare.h"
#include "bench/store/store.h"
#include "tests/store/store_test_util.h"

namespace dlbench::report {
namespace {

store::RunRecord on_machine(const std::string& fingerprint, double throughput, int replicas) {
  store::RunRecord r = testing::sample_run("resnet50", throughput);
  r.machine.fingerprint = fingerprint;
  r.machine.hostname = "box-" + fingerprint.substr(0, 2);
  if (replicas > 1) {
    r.device = std::to_string(replicas) + "x cpu (mpi)";
    r.config["replicas"] = replicas;
    r.config["launch"] = "mpi";
    r.result["data_parallel"] = {{"replicas", replicas}, {"launch", "mpi"}};
  }
  return r;
}

TEST(CompareTest, MachinesKeepAnMpiRunApartFromSingleProcessRuns) {
  auto db = store::open_store(testing::temp_folder("compare-replicas") + "/r.db");
  db->save_run(on_machine("aa0011223344", 100, 1));
  db->save_run(on_machine("bb0011223344", 180, 2));  // two ranks: twice the samples per step
  Comparison c = compare(*db, "aa0011223344", "bb0011223344", CompareKind::kMachines);
  ASSERT_EQ(c.table.rows.size(), 2u) << "the x2 run must not be matched with the single one";
  for (const auto& row : c.table.rows) {
    const bool x2 = row[0].find(" x2") != std::string::npos;
    EXPECT_EQ(row[3], "") << row[0] << ": no ratio between different workloads";
    EXPECT_EQ(row[x2 ? 1 : 2], "") << row[0];
  }
}

TEST(CompareTest, MachinesMatchTheSameWorkload) {
  auto db = store::open_store(testing::temp_folder("compare-same") + "/r.db");
  db->save_run(on_machine("aa0011223344", 100, 2));
  db->save_run(on_machine("bb0011223344", 150, 2));
  Comparison c = compare(*db, "aa0011223344", "bb0011223344", CompareKind::kMachines);
  ASSERT_EQ(c.table.rows.size(), 1u);
  EXPECT_NE(c.table.rows[0][0].find("resnet50 train fp16 b128 224px x2"), std::string::npos)
      << c.table.rows[0][0];
  EXPECT_EQ(c.table.rows[0][3], "1.50x");
}

}  // namespace
}  // namespace dlbench::report
