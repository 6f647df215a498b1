// resolve_launch: --device, --gpus and --dist turned into one result::Launch, and every refusal
// with its kind and words (the CLI tests check the same texts through the binary).
#include <gtest/gtest.h>

#include <string>

#include "cli/launch_options.h"
#include "engine/backend/backend.h"
#include "engine/core/error.h"
#include "engine/dist/launch.h"

namespace dlbench::cli {
namespace {

LaunchOptions options(std::string device, std::string gpus = "", std::string dist = "none") {
  return {std::move(device), std::move(gpus), std::move(dist), "run"};
}

// The error resolve_launch throws for `o`, or a failure when it throws none.
Error refusal(const LaunchOptions& o, LaunchTarget target = LaunchTarget::kEngine) {
  try {
    resolve_launch(o, target);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "accepted --device '" << o.device << "' --gpus '" << o.gpus << "' --dist '"
                << o.dist << "'";
  return Error(ErrorKind::kInternal, "accepted");
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(LaunchOptionsTest, OneDeviceIsASingleLaunch) {
  const LaunchContext cpu = resolve_launch(options("cpu"), LaunchTarget::kEngine);
  EXPECT_EQ(cpu.launch, (result::Launch{LaunchMode::kSingle, Device::cpu(), 1}));
  EXPECT_TRUE(cpu.root());
  EXPECT_EQ(cpu.replicas(), 1);
  EXPECT_EQ(cpu.mpi, nullptr);
  // A peer runs on one device as well.
  EXPECT_EQ(resolve_launch(options("cuda:3"), LaunchTarget::kPeer).launch.device, Device::cuda(3));
  // No --device: the backend's default (a GPU when there is one).
  EXPECT_EQ(resolve_launch(options(""), LaunchTarget::kEngine).launch.device,
            backend::default_device());
}

TEST(LaunchOptionsTest, BadDeviceStringsAreUsageErrors) {
  for (const char* bad : {"gpu0", "cuda:", "cuda:-1", "cuda:x", "CPU", " cpu", "tpu"}) {
    const Error e = refusal(options(bad));
    EXPECT_EQ(e.kind(), ErrorKind::kUsage) << bad;
    EXPECT_TRUE(has(e.what(), "unknown device")) << bad << ": " << e.what();
  }
}

TEST(LaunchOptionsTest, BadGpuListsAreUsageErrors) {
  for (const char* bad : {"0", "-1", "two", "2x", "1,2", "all2"}) {
    const Error e = refusal(options("", bad));
    EXPECT_EQ(e.kind(), ErrorKind::kUsage) << bad << ": " << e.what();
    EXPECT_TRUE(has(e.what(), "not a positive whole number")) << bad << ": " << e.what();
  }
}

TEST(LaunchOptionsTest, MoreGpusThanPresentIsAResourceError) {
  const Error e = refusal(options("", "4096"));
  EXPECT_EQ(e.kind(), ErrorKind::kResource);
  EXPECT_TRUE(has(e.what(), "--gpus 4096 asks for 4096 GPUs")) << e.what();
}

TEST(LaunchOptionsTest, GpusOnACpuDeviceNamesTheCommandForMpi) {
  const Error e = refusal(options("cpu", "2"));
  EXPECT_EQ(e.kind(), ErrorKind::kUsage);
  EXPECT_STREQ(e.what(), "--gpus drives GPUs, not --device cpu");
  EXPECT_EQ(e.hint(),
            "data parallelism on CPUs: mpirun -np 2 dlbench run ... --device cpu --dist mpi");
  LaunchOptions micro = options("cpu", "2");
  micro.command = "micro allreduce";
  EXPECT_TRUE(has(refusal(micro).hint(), "dlbench micro allreduce ... --device cpu"))
      << refusal(micro).hint();
}

TEST(LaunchOptionsTest, GpusAndDistMpiDoNotMix) {
  const Error e = refusal(options("", "2", "mpi"));
  EXPECT_EQ(e.kind(), ErrorKind::kUsage);
  EXPECT_STREQ(e.what(), "--gpus and --dist mpi do not mix");
}

TEST(LaunchOptionsTest, DistTakesNoneOrMpi) {
  for (const char* bad : {"", "tcp", "MPI", "nccl"}) {
    const Error e = refusal(options("cpu", "", bad));
    EXPECT_EQ(e.kind(), ErrorKind::kUsage) << bad;
    EXPECT_TRUE(has(e.what(), "--dist must be none or mpi")) << bad << ": " << e.what();
  }
}

TEST(LaunchOptionsTest, APeerRefusesGpusAndDistMpi) {
  const Error gpus = refusal(options("", "2"), LaunchTarget::kPeer);
  EXPECT_EQ(gpus.kind(), ErrorKind::kUsage);
  EXPECT_STREQ(gpus.what(), "--gpus runs dlbench's own engine only");
  const Error mpi = refusal(options("cpu", "", "mpi"), LaunchTarget::kPeer);
  EXPECT_EQ(mpi.kind(), ErrorKind::kUsage);
  EXPECT_STREQ(mpi.what(), "--dist mpi runs dlbench's own engine only");
  EXPECT_EQ(mpi.hint(), "drop --framework");
}

TEST(LaunchOptionsTest, DistMpiWithoutALauncherIsAUsageError) {
  // Under a launcher (a Slurm CI job) MPI would really start: nothing to refuse then.
  if (dist::read_launcher_env().rank) GTEST_SKIP() << "started by an MPI launcher";
  const Error e = refusal(options("cpu", "", "mpi"));
  EXPECT_EQ(e.kind(), ErrorKind::kUsage);
  EXPECT_TRUE(has(e.what(), "MPI launcher")) << e.what();
}

// On a machine with GPUs: --gpus 1 is one device, --gpus N a thread each; without, --gpus all
// says there is none.
TEST(LaunchOptionsTest, GpusPickTheFirstGpusOfThisMachine) {
  const int present = backend::cuda_device_count();
  if (present == 0) {
    const Error e = refusal(options("", "all"));
    EXPECT_EQ(e.kind(), ErrorKind::kResource);
    EXPECT_TRUE(has(e.what(), "no GPU")) << e.what();
    return;
  }
  EXPECT_EQ(resolve_launch(options("", "1"), LaunchTarget::kEngine).launch,
            (result::Launch{LaunchMode::kSingle, Device::cuda(0), 1}));
  const LaunchContext all = resolve_launch(options("cuda:1", "all"), LaunchTarget::kEngine);
  EXPECT_EQ(all.launch.device, Device::cuda(0));
  EXPECT_EQ(all.launch.gpus, present);
  EXPECT_EQ(all.launch.mode, present > 1 ? LaunchMode::kThreads : LaunchMode::kSingle);
  EXPECT_EQ(all.replicas(), present > 1 ? present : 1);
}

}  // namespace
}  // namespace dlbench::cli
