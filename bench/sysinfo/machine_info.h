// Everything dlbench knows about the machine it runs on: the binary, the host, the GPUs.
// Every stored result will carry this; `dlbench info` prints it.
#pragma once

#include <nlohmann/json.hpp>

#include "bench/sysinfo/gpu_info.h"
#include "bench/sysinfo/host_info.h"
#include "bench/sysinfo/interconnect.h"
#include "engine/core/build_info.h"

namespace dlbench::sysinfo {

struct MachineInfo {
  BuildInfo build;
  HostInfo host;
  GpuReport gpu;
  Interconnect interconnect;  // of every GPU NVML lists
};

MachineInfo query_machine(const nvml::Nvml& nvml);

// JSON: an unavailable value is null, and the object's "unavailable" map says why.
nlohmann::json to_json(const MachineInfo& machine);

}  // namespace dlbench::sysinfo
