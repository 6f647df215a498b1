// /proc and cgroup parsing on fixed text, the CPU-tick bookkeeping of a process tree, and the
// live process tree of this test itself.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/telemetry/cgroup.h"
#include "bench/telemetry/proc_file.h"
#include "bench/telemetry/process_tree.h"
#include "bench/telemetry/procfs_source.h"
#include "bench/telemetry/sources.h"
#include "engine/core/error.h"

namespace dlbench::telemetry {
namespace {

// A real line with the fields dlbench reads: utime 500, stime 100, cutime 30, cstime 20, rss 4096.
const char* kStat =
    "4242 (my (odd) name) S 4000 4242 4000 0 -1 4194560 1000 0 0 0 500 100 30 20 20 0 3 0 "
    "123456 1000000000 4096 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

TEST(ProcStatTest, ParsesAroundACommandNameWithParentheses) {
  auto stat = parse_proc_stat(kStat);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->pid, 4242);
  EXPECT_EQ(stat->ppid, 4000);
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->own_ticks, 600u);
  EXPECT_EQ(stat->children_ticks, 50u);
  EXPECT_EQ(stat->rss_pages, 4096u);
}

TEST(ProcStatTest, RejectsTruncatedText) {
  EXPECT_FALSE(parse_proc_stat("12 (x) R 1 2 3").has_value());
  EXPECT_FALSE(parse_proc_stat("").has_value());
}

ProcStat proc(pid_t pid, pid_t ppid, std::uint64_t own, std::uint64_t children) {
  ProcStat p;
  p.pid = pid;
  p.ppid = ppid;
  p.own_ticks = own;
  p.children_ticks = children;
  return p;
}

TEST(TreeCpuAccountTest, CountsGrowthFromTheBaselineOnly) {
  TreeCpuAccount account;
  EXPECT_EQ(account.update({proc(1, 0, 1000, 0)}), 0u);  // time before the window is not ours
  EXPECT_EQ(account.update({proc(1, 0, 1050, 0)}), 50u);
}

TEST(TreeCpuAccountTest, AReapedChildIsCountedOnce) {
  TreeCpuAccount account;
  account.update({proc(1, 0, 0, 0), proc(2, 1, 0, 0)});
  // The child runs 80 ticks while we watch.
  EXPECT_EQ(account.update({proc(1, 0, 5, 0), proc(2, 1, 80, 0)}), 85u);
  // It runs 20 more ticks, exits and is reaped: its 100 ticks land in the parent's cutime.
  // Only the 20 we had not seen are new.
  EXPECT_EQ(account.update({proc(1, 0, 5, 100)}), 105u);
}

TEST(TreeCpuAccountTest, AChildReapedBetweenReadingParentAndChildIsCountedOnce) {
  TreeCpuAccount account;
  account.update({proc(1, 0, 0, 0), proc(2, 1, 0, 0)});
  EXPECT_EQ(account.update({proc(1, 0, 0, 0), proc(2, 1, 80, 0)}), 80u);
  // The parent's stat was read just before it reaped the child; the child's read then failed.
  EXPECT_EQ(account.update({proc(1, 0, 0, 0)}), 80u);
  // Now the parent's cutime holds the child's 100 ticks, 80 of them counted already.
  EXPECT_EQ(account.update({proc(1, 0, 0, 100)}), 100u);
}

TEST(TreeCpuAccountTest, AProcessMissedByOneSnapshotIsNotCountedTwice) {
  TreeCpuAccount account;
  account.update({proc(1, 0, 0, 0), proc(2, 1, 0, 0)});
  EXPECT_EQ(account.update({proc(1, 0, 0, 0), proc(2, 1, 50, 0)}), 50u);
  EXPECT_EQ(account.update({proc(1, 0, 0, 0)}), 50u);  // missed, not reaped
  EXPECT_EQ(account.update({proc(1, 0, 0, 0), proc(2, 1, 70, 0)}), 70u);
  // When it is reaped for real, only the ticks after the last sighting are new.
  EXPECT_EQ(account.update({proc(1, 0, 0, 75)}), 75u);
}

TEST(TreeCpuAccountTest, AShortLivedGrandchildBetweenTicksStillCounts) {
  TreeCpuAccount account;
  account.update({proc(1, 0, 0, 0)});
  // A child we never saw came and went; the parent waited for it: 30 ticks in cutime.
  EXPECT_EQ(account.update({proc(1, 0, 0, 30)}), 30u);
}

TEST(TreeCpuAccountTest, ANewProcessBringsAllItsTicks) {
  TreeCpuAccount account;
  account.update({proc(1, 0, 10, 0)});
  EXPECT_EQ(account.update({proc(1, 0, 10, 0), proc(7, 1, 40, 0)}), 40u);
}

TEST(ProcStatCpuTest, BusyAndTotalFromTheCpuLine) {
  auto t = parse_proc_stat_cpu("cpu  100 5 50 800 20 3 2 10 0 0\ncpu0 1 2 3 4\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->busy, 100u + 5 + 50 + 3 + 2 + 10);
  EXPECT_EQ(t->total, t->busy + 800 + 20);
  EXPECT_FALSE(parse_proc_stat_cpu("intr 1 2 3").has_value());
}

TEST(MemInfoTest, UsedIsTotalMinusAvailable) {
  auto m = parse_meminfo("MemTotal:       16384 kB\nMemFree: 10 kB\nMemAvailable:    4096 kB\n");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->total_bytes, 16384u * 1024);
  EXPECT_EQ(m->available_bytes, 4096u * 1024);
  EXPECT_FALSE(parse_meminfo("MemTotal: 1 kB\n").has_value());
}

TEST(ProcFileTest, FindNumberMatchesWholeKeysOnly) {
  const char* status = "VmHWMx:\t1 kB\nVmHWM:\t  2048 kB\nThreads:\t4\n";
  EXPECT_EQ(find_number(status, "VmHWM", true), 2048u * 1024);
  EXPECT_EQ(find_number(status, "Threads", true), 4u);
  EXPECT_FALSE(find_number(status, "VmRSS", true).has_value());
}

TEST(CgroupTest, ParsesPathMountAndLimits) {
  EXPECT_EQ(parse_cgroup_v2_path("12:memory:/x\n0::/user.slice/job\n"), "/user.slice/job");
  EXPECT_FALSE(parse_cgroup_v2_path("4:memory:/x\n").has_value());
  auto mount = parse_cgroup2_mount(
      "22 1 0:20 / /proc rw - proc proc rw\n"
      "30 25 0:26 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n");
  ASSERT_TRUE(mount.has_value());
  EXPECT_EQ(mount->mount_point, "/sys/fs/cgroup");
  EXPECT_EQ(mount->root, "/");
  EXPECT_EQ(parse_memory_max("8589934592\n"), 8589934592u);
  EXPECT_FALSE(parse_memory_max("max\n").has_value());
  EXPECT_DOUBLE_EQ(parse_cpu_max("200000 100000\n").value(), 2.0);
  EXPECT_FALSE(parse_cpu_max("max 100000\n").has_value());
  EXPECT_EQ(parse_cpu_usage_usec("usage_usec 1234\nuser_usec 1000\n"), 1234u);
}

TEST(GpuSelectionTest, AllNoneOrAList) {
  EXPECT_EQ(parse_gpu_selection("all").mode, GpuSelection::Mode::kAll);
  EXPECT_EQ(parse_gpu_selection("none").mode, GpuSelection::Mode::kNone);
  auto list = parse_gpu_selection("0,2");
  EXPECT_EQ(list.mode, GpuSelection::Mode::kList);
  EXPECT_EQ(list.indices, (std::vector<unsigned>{0, 2}));
  for (const char* bad : {"", "1,", "x", "-1", "0;1"}) {
    try {
      parse_gpu_selection(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_FALSE(e.hint().empty());
    }
  }
}

TEST(ProcessTreeTest, FindsThisProcessAndAChild) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  ProcessTree tree(getpid());
  const auto& found = tree.at(now_tick());
  bool self = false, kid = false;
  for (const ProcStat& p : found) {
    self |= p.pid == getpid() && p.rss_pages > 0;
    kid |= p.pid == child && p.ppid == getpid();
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(self);
  EXPECT_TRUE(kid) << found.size() << " processes found";
}

TEST(ProcessTreeTest, AGoneRootGivesAnEmptyTree) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  ProcessTree tree(child);
  EXPECT_TRUE(tree.at(now_tick()).empty());
}

}  // namespace
}  // namespace dlbench::telemetry
