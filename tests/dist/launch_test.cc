// The launcher's environment: where a process launched by mpirun or srun finds its rank.
#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/core/error.h"
#include "engine/dist/launch.h"

namespace dlbench::dist {
namespace {

TEST(LaunchTest, ReadsOpenMpiAndSlurmEnvironments) {
  setenv("SLURM_PROCID", "3", 1);
  setenv("SLURM_NTASKS", "8", 1);
  setenv("SLURM_LOCALID", "1", 1);
  LauncherEnv slurm = read_launcher_env();
  EXPECT_EQ(slurm.launcher, "Slurm");
  EXPECT_EQ(slurm.rank, 3);
  EXPECT_EQ(slurm.size, 8);
  EXPECT_EQ(slurm.local_rank, 1);
  // Open MPI wins when both are set (mpirun inside a Slurm allocation).
  setenv("OMPI_COMM_WORLD_RANK", "5", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "6", 1);
  LauncherEnv ompi = read_launcher_env();
  EXPECT_EQ(ompi.launcher, "Open MPI");
  EXPECT_EQ(ompi.rank, 5);
  EXPECT_EQ(ompi.size, 6);
  for (const char* v : {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "OMPI_COMM_WORLD_RANK",
                        "OMPI_COMM_WORLD_SIZE"})
    unsetenv(v);
  EXPECT_FALSE(read_launcher_env().rank.has_value());
}

}  // namespace
}  // namespace dlbench::dist
