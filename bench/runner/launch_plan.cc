#include "bench/runner/launch_plan.h"

#include "engine/core/error.h"
#include "engine/dist/mpi_session.h"

namespace dlbench::runner {

dist::LaunchPlan launch_plan(const result::Launch& launch) {
  dist::LaunchPlan plan{launch.mode, {}};
  switch (launch.mode) {
    case LaunchMode::kSingle:
      plan.devices = {launch.device};
      break;
    case LaunchMode::kThreads:
      for (int i = 0; i < launch.gpus; ++i) plan.devices.push_back(Device::cuda(i));
      break;
    case LaunchMode::kMpi: {
      // A GPU job gives each rank of a node its own GPU, by local rank.
      const dist::MpiSession* session = dist::MpiSession::current();
      DLBENCH_CHECK(session != nullptr, "an MPI launch runs inside an MpiSession");
      plan.devices = {launch.device.type == DeviceType::kCpu ? launch.device
                                                             : session->local_gpu()};
      break;
    }
  }
  return plan;
}

}  // namespace dlbench::runner
