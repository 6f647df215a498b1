// dlbench info --json against what the CUDA runtime itself reports. Labelled gpu.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;

TEST(InfoGpuTest, MatchesTheCudaRuntime) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) GTEST_SKIP() << "no GPU";
  auto r = testing::dlbench("info --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  ASSERT_TRUE(info["dlbench"]["cuda"].get<bool>());

  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaGetDeviceProperties(&prop, i), cudaSuccess);
    const json* found = nullptr;
    for (const json& gpu : info["gpus"])
      if (gpu["cuda_index"].is_number() && gpu["cuda_index"].get<int>() == i) found = &gpu;
    ASSERT_NE(found, nullptr) << "no entry for CUDA device " << i << " in " << r.out;
    const json& gpu = *found;
    EXPECT_EQ(gpu["name"].get<std::string>(), prop.name);
    EXPECT_EQ(gpu["sm_count"].get<int>(), prop.multiProcessorCount);
    EXPECT_EQ(gpu["compute_capability"].get<std::string>(),
              std::to_string(prop.major) + "." + std::to_string(prop.minor));
    EXPECT_EQ(gpu["l2_cache_bytes"].get<long long>(), prop.l2CacheSize);
    // NVML's total and the runtime's may differ by the driver's reservation: within 2 %.
    double nvml_bytes = gpu["memory_bytes"].get<double>();
    EXPECT_NEAR(nvml_bytes, static_cast<double>(prop.totalGlobalMem), 0.02 * nvml_bytes);
    EXPECT_EQ(gpu["memory_bus_width_bits"].get<int>(), prop.memoryBusWidth);
    EXPECT_GT(gpu["memory_bandwidth_gb_per_s"].get<double>(), 100.0);
    std::printf("GPU %d: %s, %d SMs, %.1f GiB, L2 %d MiB, %.0f GB/s theoretical\n", i, prop.name,
                prop.multiProcessorCount, nvml_bytes / (1 << 30), prop.l2CacheSize >> 20,
                gpu["memory_bandwidth_gb_per_s"].get<double>());
  }
  EXPECT_TRUE(info["gpu_software"]["driver_version"].is_string());
  EXPECT_TRUE(info["gpu_software"]["cudnn"].is_string());
  EXPECT_TRUE(info["gpu_software"]["nccl"].is_string());
}

}  // namespace
}  // namespace dlbench
