// Where a run's replicas go: one device, a thread per local GPU, or one rank of a job that an
// MPI launcher started. The command line resolves its --device, --gpus and --dist flags into
// this (cli/launch_options.h); bench/runner/launch_plan.h turns it into the devices to drive.
#pragma once

#include "engine/core/device.h"
#include "engine/core/run_modes.h"

namespace dlbench::result {

struct Launch {
  LaunchMode mode = LaunchMode::kSingle;
  // kSingle: the device. kThreads: cuda:0, the first of cuda:0..gpus-1. kMpi: the device type
  // of every rank; on GPUs a rank's GPU is cuda:<local rank>.
  Device device;
  int gpus = 1;  // kThreads: the GPUs this process drives, a thread each
  bool operator==(const Launch&) const = default;
};

}  // namespace dlbench::result
