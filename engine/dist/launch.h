// How the replicas of one data-parallel job are laid out, and where a process finds its rank.
//
// Three modes: one replica (no communicator); one process driving every listed local GPU, a
// thread per GPU (--gpus N); and one process per replica started by a launcher (mpirun, srun)
// with --dist mpi, the ranks read from the launcher's environment. MPI bootstraps NCCL across
// processes on GPUs and is the communicator itself on CPUs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/core/device.h"
#include "engine/core/run_modes.h"

namespace dlbench::dist {

// What the launcher told this process. Each field is empty where no launcher set it.
struct LauncherEnv {
  std::optional<int> rank, size, local_rank, local_size;
  std::string launcher;  // "Open MPI", "Slurm", "MPICH/PMI", or empty
};
// Reads OMPI_COMM_WORLD_*, SLURM_PROCID/NTASKS/LOCALID, PMI_RANK/PMI_SIZE, MPI_LOCALRANKID.
LauncherEnv read_launcher_env();

struct LaunchPlan {
  LaunchMode mode = LaunchMode::kSingle;
  // The devices this process drives: one in kSingle and kMpi, every GPU in kThreads.
  std::vector<Device> devices;
};

}  // namespace dlbench::dist
