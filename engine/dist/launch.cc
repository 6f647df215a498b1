#include "engine/dist/launch.h"

#include <cstdlib>

namespace dlbench::dist {
namespace {

std::optional<int> env_int(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0) return std::nullopt;
  return static_cast<int>(value);
}

}  // namespace

LauncherEnv read_launcher_env() {
  LauncherEnv env;
  // Open MPI first: srun inside an mpirun allocation still sets SLURM_*.
  if ((env.rank = env_int("OMPI_COMM_WORLD_RANK"))) {
    env.launcher = "Open MPI";
    env.size = env_int("OMPI_COMM_WORLD_SIZE");
    env.local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK");
    env.local_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE");
  } else if ((env.rank = env_int("PMI_RANK"))) {
    env.launcher = "MPICH/PMI";
    env.size = env_int("PMI_SIZE");
    env.local_rank = env_int("MPI_LOCALRANKID");
    env.local_size = env_int("MPI_LOCALNRANKS");
  } else if ((env.rank = env_int("SLURM_PROCID"))) {
    env.launcher = "Slurm";
    env.size = env_int("SLURM_NTASKS");
    env.local_rank = env_int("SLURM_LOCALID");
    env.local_size = env_int("SLURM_NTASKS_PER_NODE");
  }
  return env;
}

}  // namespace dlbench::dist
