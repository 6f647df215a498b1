#include "bench/nvml/nvml.h"

#include <gtest/gtest.h>

#include "bench/sysinfo/gpu_info.h"

namespace dlbench::nvml {
namespace {

TEST(NvmlTest, MissingLibraryIsReportedNotThrown) {
  auto nvml = Nvml::open("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(nvml->loaded());
  EXPECT_NE(nvml->why_unavailable().find("no NVIDIA driver"), std::string::npos);
  unsigned count = 0;
  Status st = DLBENCH_NVML(*nvml, nvmlDeviceGetCount_v2, &count);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.reason.find("NVML unavailable"), std::string::npos);
}

TEST(NvmlTest, GpuReportWithoutDriverSaysSoPlainly) {
  auto nvml = Nvml::open("/nonexistent/libnvidia-ml.so.1");
  sysinfo::GpuReport report = sysinfo::query_gpus(*nvml);
  EXPECT_FALSE(report.software.driver_version.available());
  // GPUs that only the CUDA runtime sees say why their NVML fields are missing.
  for (const auto& gpu : report.gpus) {
    EXPECT_FALSE(gpu.power_limit_w.available());
    EXPECT_NE(gpu.power_limit_w.reason().find("no NVIDIA driver"), std::string::npos);
  }
  if (report.gpus.empty()) {
    EXPECT_FALSE(report.none_reason.empty());
  }
  EXPECT_NE(report.software.driver_version.reason().find("no NVIDIA driver"), std::string::npos);
}

TEST(NvmlTest, MemoryV2VersionFollowsNvmlConvention) {
  EXPECT_EQ(kNvmlMemoryV2 >> 24, 2u);
  EXPECT_EQ(kNvmlMemoryV2 & 0xffffff, sizeof(nvmlMemory_v2_t));
}

}  // namespace
}  // namespace dlbench::nvml
