// The standard set of sources: the process tree, the system and its cgroup, and per selected
// GPU its NVML and GPM metrics. Without a driver the set is host-only and says why.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "bench/nvml/nvml.h"
#include "bench/telemetry/nvml_source.h"
#include "bench/telemetry/source.h"

namespace dlbench::telemetry {

// Which GPUs to sample: every GPU NVML sees, none, or a list of NVML indices.
struct GpuSelection {
  enum class Mode { kAll, kNone, kList };
  Mode mode = Mode::kAll;
  std::vector<unsigned> indices;
  std::string none_reason;  // kNone: why, for the recording; empty: turned off by --gpus none
};

// "all", "none" or a comma-separated list of NVML indices ("0,2"); throws dlbench::Error
// (usage) for anything else.
GpuSelection parse_gpu_selection(const std::string& text);

struct SourceOptions {
  pid_t root_pid = 0;  // the process tree to follow; getpid() for dlbench's own
  GpuSelection gpus;
  std::shared_ptr<const nvml::Nvml> nvml;  // may be one that did not load
};

struct SourceSet {
  std::vector<std::unique_ptr<Source>> sources;
  std::vector<GpuIdentity> gpus;
  std::string gpus_none_reason;  // why no GPU is sampled; empty when some are
  std::vector<std::string> notes;
};

// Throws dlbench::Error (resource) when a listed GPU does not exist or NVML cannot reach it.
SourceSet make_sources(const SourceOptions& options);

}  // namespace dlbench::telemetry
