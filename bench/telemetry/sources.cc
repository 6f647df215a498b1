#include "bench/telemetry/sources.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "bench/telemetry/cgroup.h"
#include "bench/telemetry/gpm_source.h"
#include "bench/telemetry/procfs_source.h"
#include "engine/core/error.h"

namespace dlbench::telemetry {
namespace {

const char* kGpusHint = "use --gpus all, --gpus none or NVML indices such as --gpus 0,1";

std::vector<unsigned> gpu_indices(const SourceOptions& options, const nvml::Nvml& nvml,
                                  std::string& none_reason) {
  if (options.gpus.mode == GpuSelection::Mode::kNone) {
    none_reason = options.gpus.none_reason.empty() ? "GPU sampling was turned off (--gpus none)"
                                                   : options.gpus.none_reason;
    return {};
  }
  unsigned count = 0;
  nvml::Status st = DLBENCH_NVML(nvml, nvmlDeviceGetCount_v2, &count);
  if (!st.ok()) {
    none_reason =
        nvml.loaded() ? "NVML could not count GPUs: " + st.reason : nvml.why_unavailable();
    if (options.gpus.mode == GpuSelection::Mode::kList)
      throw Error(ErrorKind::kResource, "cannot sample the GPUs asked for: " + none_reason,
                  "run 'dlbench info' to see the GPUs, or use --gpus none");
    return {};
  }
  std::vector<unsigned> indices;
  if (options.gpus.mode == GpuSelection::Mode::kAll) {
    for (unsigned i = 0; i < count; ++i) indices.push_back(i);
    if (count == 0) none_reason = "NVML sees no GPU";
    return indices;
  }
  for (unsigned i : options.gpus.indices) {
    if (i >= count)
      throw Error(ErrorKind::kResource,
                  "no GPU " + std::to_string(i) + ": NVML sees " + std::to_string(count) + " GPU" +
                      (count == 1 ? "" : "s"),
                  "run 'dlbench info' to see the GPUs and their NVML indices");
    if (std::find(indices.begin(), indices.end(), i) == indices.end()) indices.push_back(i);
  }
  return indices;
}

}  // namespace

GpuSelection parse_gpu_selection(const std::string& text) {
  GpuSelection selection;
  if (text == "all") return selection;
  if (text == "none") {
    selection.mode = GpuSelection::Mode::kNone;
    return selection;
  }
  selection.mode = GpuSelection::Mode::kList;
  if (text.empty() || text.back() == ',')
    throw Error(ErrorKind::kUsage, "bad GPU list '" + text + "'", kGpusHint);
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    unsigned index = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), index);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
      throw Error(ErrorKind::kUsage, "bad GPU list '" + text + "'", kGpusHint);
    selection.indices.push_back(index);
  }
  if (selection.indices.empty()) throw Error(ErrorKind::kUsage, "empty GPU list", kGpusHint);
  return selection;
}

SourceSet make_sources(const SourceOptions& options) {
  SourceSet set;
  auto tree = std::make_shared<ProcessTree>(options.root_pid);
  set.sources.push_back(std::make_unique<ProcessTreeSource>(tree));
  set.sources.push_back(std::make_unique<SystemSource>());
  set.sources.push_back(std::make_unique<CgroupSource>(options.root_pid));

  const nvml::Nvml& nvml = *options.nvml;
  for (unsigned index : gpu_indices(options, nvml, set.gpus_none_reason)) {
    nvmlDevice_t device = nullptr;
    nvml::Status st = DLBENCH_NVML(nvml, nvmlDeviceGetHandleByIndex_v2, index, &device);
    if (!st.ok())
      throw Error(ErrorKind::kResource, "GPU " + std::to_string(index) + ": " + st.reason,
                  "run 'dlbench info', or leave this GPU out with --gpus");
    set.gpus.push_back(query_gpu_identity(nvml, index, device));
    set.sources.push_back(std::make_unique<NvmlGpuSource>(options.nvml, index, device, tree));
    set.sources.push_back(std::make_unique<GpmSource>(options.nvml, index, device));
  }
  if (set.gpus.empty())
    set.notes.push_back("no GPU telemetry (" + set.gpus_none_reason + "): host metrics only");
  return set;
}

}  // namespace dlbench::telemetry
