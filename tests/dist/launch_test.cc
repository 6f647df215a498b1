// Launch options: GPU counts for dlbench scale and the launcher's environment.
#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/core/error.h"
#include "engine/dist/launch.h"

namespace dlbench::dist {
namespace {

TEST(LaunchTest, ParsesIncreasingGpuCounts) {
  EXPECT_EQ(parse_gpu_counts("1,2,4,8"), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(parse_gpu_counts("2"), (std::vector<int>{2}));
}

TEST(LaunchTest, RejectsBadGpuCountsAsUsageErrors) {
  for (const char* bad : {"", "0", "2,1", "1,,2", "two", "1,2x", "-1"}) {
    try {
      parse_gpu_counts(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << bad;
    }
  }
}

TEST(LaunchTest, MoreGpusThanPresentIsAResourceError) {
  try {
    parse_gpus("4096");
    FAIL() << "accepted 4096 GPUs";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kResource);
  }
}

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
