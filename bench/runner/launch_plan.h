// Which devices this process drives for a launch: the one device, every GPU of a kThreads
// launch, or under MPI this rank's device (cuda:<local rank> on GPUs). Shared by the workload
// runner and micro allreduce.
#pragma once

#include "bench/result/launch.h"
#include "engine/dist/launch.h"

namespace dlbench::runner {

// A kMpi launch needs the process's live dist::MpiSession (the local rank picks the GPU).
dist::LaunchPlan launch_plan(const result::Launch& launch);

}  // namespace dlbench::runner
