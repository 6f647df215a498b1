#include "bench/sysinfo/gpu_info.h"

#include <gtest/gtest.h>

namespace dlbench::sysinfo {
namespace {

TEST(GpuInfoTest, TheoreticalBandwidthMatchesDatasheets) {
  // H100 SXM5 80GB: HBM3, 2619 MHz, 5120-bit -> 3.35 TB/s.
  EXPECT_NEAR(theoretical_bandwidth_gb_per_s(2619, 5120), 3352.3, 0.1);
  // RTX 4090: GDDR6X, NVML says 10501 MHz, 384-bit -> 1008 GB/s.
  EXPECT_NEAR(theoretical_bandwidth_gb_per_s(10501, 384), 1008.1, 0.1);
}

TEST(GpuInfoTest, VersionStrings) {
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(12040), "12.4");
  EXPECT_EQ(packed_version_string(91900), "9.19.0");
  EXPECT_EQ(packed_version_string(22803), "2.28.3");
}

TEST(GpuInfoTest, PciBusIdsFromNvmlAndCudaCompareEqual) {
  EXPECT_EQ(normalize_pci_bus_id("00000000:65:00.0"), "0000:65:00.0");
  EXPECT_EQ(normalize_pci_bus_id("0000:65:00.0"), "0000:65:00.0");
  EXPECT_EQ(normalize_pci_bus_id("00000000:1A:00.0"), "0000:1a:00.0");
}

}  // namespace
}  // namespace dlbench::sysinfo
