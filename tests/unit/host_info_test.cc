#include "bench/sysinfo/host_info.h"

#include <gtest/gtest.h>

namespace dlbench::sysinfo {
namespace {

TEST(HostInfoTest, ParsesX86CpuModel) {
  auto model = parse_cpu_model(
      "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n");
  ASSERT_TRUE(model.available());
  EXPECT_EQ(model.value(), "Intel(R) Xeon(R) Platinum 8480+");
}

TEST(HostInfoTest, MissingCpuModelSaysWhy) {
  auto model = parse_cpu_model("processor\t: 0\nBogoMIPS\t: 50.00\n");
  EXPECT_FALSE(model.available());
  EXPECT_NE(model.reason().find("/proc/cpuinfo"), std::string::npos);
}

TEST(HostInfoTest, ParsesMemTotalInBytes) {
  auto mem = parse_mem_total("MemTotal:       24576000 kB\nMemFree:        100 kB\n");
  ASSERT_TRUE(mem.available());
  EXPECT_EQ(mem.value(), 24576000ull * 1024);
  EXPECT_FALSE(parse_mem_total("MemFree: 1 kB\n").available());
}

TEST(HostInfoTest, ParsesOsPrettyName) {
  auto os = parse_os_pretty_name(
      "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n");
  ASSERT_TRUE(os.available());
  EXPECT_EQ(os.value(), "Debian GNU/Linux 12 (bookworm)");
}

TEST(HostInfoTest, CountsSocketsAndPhysicalCores) {
  // Two sockets, two cores each, two hyperthreads per core.
  std::vector<CoreId> cpus;
  for (int package = 0; package < 2; ++package)
    for (int core = 0; core < 2; ++core)
      for (int thread = 0; thread < 2; ++thread) cpus.push_back({package, core});
  CpuTopology topo = count_topology(cpus);
  EXPECT_EQ(topo.sockets, 2);
  EXPECT_EQ(topo.cores, 4);
}

TEST(HostInfoTest, QueryOfThisMachineIsPlausible) {
  HostInfo host = query_host();
  ASSERT_TRUE(host.threads.available());
  EXPECT_GE(host.threads.value(), 1);
  ASSERT_TRUE(host.memory_bytes.available());
  EXPECT_GT(host.memory_bytes.value(), 64ull << 20);
  EXPECT_FALSE(host.kernel.empty());
}

}  // namespace
}  // namespace dlbench::sysinfo
