// The --gpus flag: how many GPUs (dlbench run, micro allreduce) or which counts (dlbench scale).
#pragma once

#include <string>
#include <vector>

#include "engine/core/device.h"

namespace dlbench::cli {

// "all" -> every GPU the CUDA runtime sees; "N" -> cuda:0..N-1. Throws Error(kUsage) on
// anything else, Error(kResource) when fewer GPUs exist.
std::vector<Device> parse_gpus(const std::string& text);
// "1,2,4,8" -> {1, 2, 4, 8}: strictly increasing GPU counts (dlbench scale).
std::vector<int> parse_gpu_counts(const std::string& text);

}  // namespace dlbench::cli
