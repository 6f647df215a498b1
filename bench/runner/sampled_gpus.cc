#include "bench/runner/sampled_gpus.h"

#include <string>

#include "bench/sysinfo/interconnect.h"

namespace dlbench::runner {

std::vector<int> node_cuda_devices(const result::Launch& launch, int mpi_local_ranks) {
  if (launch.device.type != DeviceType::kCuda) return {};
  if (launch.mode == LaunchMode::kSingle) return {launch.device.index};
  const int count = launch.mode == LaunchMode::kThreads ? launch.gpus : mpi_local_ranks;
  std::vector<int> devices;
  for (int i = 0; i < count; ++i) devices.push_back(i);
  return devices;
}

telemetry::GpuSelection sampled_gpus(const result::Launch& launch, int mpi_local_ranks,
                                     const sysinfo::GpuReport& gpus) {
  telemetry::GpuSelection selection;
  selection.mode = telemetry::GpuSelection::Mode::kNone;
  const std::vector<int> devices = node_cuda_devices(launch, mpi_local_ranks);
  if (devices.empty()) {
    selection.none_reason = "the run uses no GPU";
    return selection;
  }
  // NVML lists every GPU the driver has and CUDA a subset of them, so in practice all of the
  // run's devices match or (NVML missing) none does.
  const std::vector<int> indices = sysinfo::nvml_indices_of_cuda_devices(gpus, devices);
  if (indices.empty()) {
    // Why NVML could not give the first of them: none seen at all, not loaded, or not listed.
    selection.none_reason = gpus.none_reason;
    if (selection.none_reason.empty()) {
      selection.none_reason = "NVML does not list cuda:" + std::to_string(devices.front());
      for (const sysinfo::GpuInfo& gpu : gpus.gpus)
        if (gpu.cuda_index.available() && gpu.cuda_index.value() == devices.front() &&
            !gpu.nvml_index.available())
          selection.none_reason += " (" + gpu.nvml_index.reason() + ")";
    }
    return selection;
  }
  selection.mode = telemetry::GpuSelection::Mode::kList;
  for (int index : indices) selection.indices.push_back(static_cast<unsigned>(index));
  return selection;
}

}  // namespace dlbench::runner
