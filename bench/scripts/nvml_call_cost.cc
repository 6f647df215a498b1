// How much CPU each NVML call of the telemetry sampler costs on this machine's first GPU, so
// the sampler's overhead can be traced to its calls. A benchmark, not a test:
//   g++ -O2 -std=c++20 -I. bench/scripts/nvml_call_cost.cc bench/nvml/nvml.cc -ldl -o nvml_cost
//   ./nvml_cost [repetitions]
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench/nvml/nvml.h"

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void measure(const char* name, int repetitions, const std::function<nvmlReturn_t()>& call) {
  nvmlReturn_t rc = call();  // first call outside the timing (lazy driver set-up)
  double start = cpu_seconds();
  for (int i = 0; i < repetitions; ++i) call();
  double per_call_us = (cpu_seconds() - start) / repetitions * 1e6;
  std::printf("%-44s %9.1f us CPU per call  (rc %d)\n", name, per_call_us, rc);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace dlbench::nvml;
  const int reps = argc > 1 ? std::atoi(argv[1]) : 200;
  auto nvml = Nvml::open();
  if (!nvml->loaded()) {
    std::printf("NVML unavailable: %s\n", nvml->why_unavailable().c_str());
    return 3;
  }
  const Api& api = nvml->api();
  nvmlDevice_t dev = nullptr;
  api.nvmlDeviceGetHandleByIndex_v2(0, &dev);
  nvmlUtilization_t util{};
  measure("nvmlDeviceGetUtilizationRates", reps,
          [&] { return api.nvmlDeviceGetUtilizationRates(dev, &util); });
  nvmlMemory_v2_t mem{};
  mem.version = kNvmlMemoryV2;
  measure("nvmlDeviceGetMemoryInfo_v2", reps,
          [&] { return api.nvmlDeviceGetMemoryInfo_v2(dev, &mem); });
  unsigned long long energy = 0;
  measure("nvmlDeviceGetTotalEnergyConsumption", reps,
          [&] { return api.nvmlDeviceGetTotalEnergyConsumption(dev, &energy); });
  unsigned value = 0;
  measure("nvmlDeviceGetClockInfo(SM)", reps,
          [&] { return api.nvmlDeviceGetClockInfo(dev, NVML_CLOCK_SM, &value); });
  measure("nvmlDeviceGetPowerUsage", reps,
          [&] { return api.nvmlDeviceGetPowerUsage(dev, &value); });
  unsigned long long reasons = 0;
  if (api.nvmlDeviceGetCurrentClocksEventReasons)
    measure("nvmlDeviceGetCurrentClocksEventReasons", reps,
            [&] { return api.nvmlDeviceGetCurrentClocksEventReasons(dev, &reasons); });
  std::vector<nvmlProcessInfo_t> procs(64);
  measure("nvmlDeviceGetComputeRunningProcesses_v3", reps, [&] {
    unsigned count = static_cast<unsigned>(procs.size());
    return api.nvmlDeviceGetComputeRunningProcesses_v3(dev, &count, procs.data());
  });
  for (unsigned field : {185u, 186u, 197u, 198u, 138u, 139u}) {
    nvmlFieldValue_t v{};
    v.fieldId = field;
    v.scopeId = (field == 138u || field == 139u) ? 0xFFFFFFFFu : 0;
    std::string name = "nvmlDeviceGetFieldValues(id " + std::to_string(field) + ")";
    measure(name.c_str(), reps, [&] { return api.nvmlDeviceGetFieldValues(dev, 1, &v); });
  }
  nvmlGpmSample_t sample = nullptr;
  if (api.nvmlGpmSampleAlloc && api.nvmlGpmSampleAlloc(&sample) == NVML_SUCCESS) {
    measure("nvmlGpmSampleGet", reps, [&] { return api.nvmlGpmSampleGet(dev, sample); });
    api.nvmlGpmSampleFree(sample);
  }
  return 0;
}
