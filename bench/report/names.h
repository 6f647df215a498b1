// What the report calls things, as the people who read GPU reviews know them: precisions
// ("FP32 (strict, no TF32)", not "fp32"), models ("ResNet-50"), and machines by what they are
// ("1x NVIDIA H100 80GB HBM3 · AMD EPYC 9654"), not by a hostname and a database id.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench/store/records.h"

namespace dlbench::report {

// "FP32 (strict, no TF32)", "TF32", "FP16 (mixed)", "BF16 (mixed)"; other ids as they are.
std::string precision_label(const std::string& precision);
// The order precisions are shown in: fp32, tf32, fp16, bf16, then any other.
int precision_rank(const std::string& precision);
// "training", "inference"; other modes as they are.
std::string mode_label(const std::string& mode);
// "ResNet-50", "VGG16", "NCF"; other ids as they are.
std::string model_label(const std::string& model);
// What the run's throughput counts, for axis titles: its stored sample unit per second
// ("images/s", "pairs/s"); for runs stored without one, "images/s" for the image models, else
// "samples/s".
std::string throughput_unit(const store::RunRecord& r);

// "1x NVIDIA H100 80GB HBM3 · AMD EPYC 9654 (2 cores)"; "AMD EPYC (2 cores), no GPU".
std::string machine_name(const store::MachineRecord& machine);
// Each machine's name, made unique where two machines share one by the first thing that tells
// them apart (host name, driver, CUDA, cuDNN, kernel, dlbench build), by id only as a last resort.
std::map<std::int64_t, std::string> machine_names(
    const std::vector<store::MachineRecord>& machines);
// The shortest names that still tell the machines apart, for chart labels: the GPU part alone
// ("1x NVIDIA H100 80GB HBM3") where that differs between all of them, only what differs
// ("driver 570.86.15") where the hardware is the same, else machine_names.
std::map<std::int64_t, std::string> machine_short_names(
    const std::vector<store::MachineRecord>& machines);

}  // namespace dlbench::report
