// dlbench info on any machine, and the no-driver path forced on machines that have one.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/core/json_text.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::dlbench;
using testing::run_command;

const char* kNoDriver = "DLBENCH_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 ";

json info_json(const std::string& env = "") {
  auto r = run_command(env + DLBENCH_BINARY + " info --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

// An unavailable field is null and its object says why; never a made-up number.
void expect_field(const json& object, const std::string& name, json::value_t type) {
  ASSERT_TRUE(object.contains(name)) << name << " missing in " << dump_json(object);
  const json& v = object[name];
  if (v.is_null()) {
    ASSERT_TRUE(object.contains("unavailable")) << name;
    ASSERT_TRUE(object["unavailable"].contains(name)) << name << " is null without a reason";
    EXPECT_FALSE(object["unavailable"][name].get<std::string>().empty());
    return;
  }
  bool numeric = type == json::value_t::number_integer || type == json::value_t::number_float;
  if (numeric)
    EXPECT_TRUE(v.is_number()) << name << " = " << dump_json(v);
  else
    EXPECT_EQ(v.type(), type) << name << " = " << dump_json(v);
}

TEST(InfoCliTest, JsonSchemaDescribesTheMachine) {
  json info = info_json();
  EXPECT_EQ(info["schema"], "dlbench.info/1");
  ASSERT_TRUE(info["dlbench"].is_object());
  EXPECT_FALSE(info["dlbench"]["version"].get<std::string>().empty());
  EXPECT_FALSE(info["dlbench"]["git_hash"].get<std::string>().empty());
  EXPECT_TRUE(info["dlbench"]["cuda"].is_boolean());

  const json& host = info["host"];
  for (const char* s : {"cpu_model", "os", "kernel", "hostname", "architecture"})
    expect_field(host, s, json::value_t::string);
  for (const char* n : {"sockets", "cores", "threads", "numa_nodes", "memory_bytes"})
    expect_field(host, n, json::value_t::number_integer);
  ASSERT_TRUE(host["threads"].is_number());
  EXPECT_GE(host["threads"].get<int>(), 1);

  const json& sw = info["gpu_software"];
  for (const char* s : {"driver_version", "nvml_version", "cuda_driver_api", "cuda_runtime",
                        "cudnn", "cublas", "nccl"})
    expect_field(sw, s, json::value_t::string);

  ASSERT_TRUE(info["gpus"].is_array());
  for (const json& gpu : info["gpus"]) {
    for (const char* s : {"name", "uuid", "pci_bus_id", "compute_capability"})
      expect_field(gpu, s, json::value_t::string);
    for (const char* n : {"sm_count", "memory_bytes", "l2_cache_bytes", "max_sm_clock_mhz",
                          "max_memory_clock_mhz", "memory_bus_width_bits", "pcie_generation_max",
                          "pcie_width_max", "nvlink_links_active", "cuda_index", "nvml_index"})
      expect_field(gpu, n, json::value_t::number_integer);
    for (const char* n : {"memory_bandwidth_gb_per_s", "power_limit_w"})
      expect_field(gpu, n, json::value_t::number_float);
    for (const char* b : {"ecc_enabled", "mig_enabled", "persistence_enabled"})
      expect_field(gpu, b, json::value_t::boolean);
  }
  if (info["gpus"].empty())
    EXPECT_TRUE(info["gpus_none_reason"].is_string());
  else
    EXPECT_TRUE(info["gpus_none_reason"].is_null());
}

TEST(InfoCliTest, WithoutDriverSaysSoAndExitsZero) {
  json info = info_json(kNoDriver);
  EXPECT_TRUE(info["gpu_software"]["driver_version"].is_null());
  EXPECT_NE(info["gpu_software"]["unavailable"]["driver_version"].get<std::string>().find(
                "no NVIDIA driver"),
            std::string::npos);
  if (info["gpus"].empty()) {
    EXPECT_NE(info["gpus_none_reason"].get<std::string>().find("no NVIDIA driver"),
              std::string::npos);
  }
}

TEST(InfoCliTest, TextTableShowsTheMachine) {
  auto r = run_command(std::string(kNoDriver) + DLBENCH_BINARY + " info");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* label : {"Host", "CPU", "Memory", "OS", "GPU software", "NVIDIA driver"})
    EXPECT_NE(r.out.find(label), std::string::npos) << label << "\n" << r.out;
  EXPECT_NE(r.out.find("no NVIDIA driver"), std::string::npos) << r.out;
}

TEST(InfoCliTest, GlobalJsonFlagWorksBeforeTheSubcommand) {
  auto r = dlbench("--json info");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(info.is_discarded()) << r.out;
  EXPECT_EQ(info["schema"], "dlbench.info/1");
}

}  // namespace
}  // namespace dlbench
