// The flags that say where a command runs: --device, and for the data-parallel commands
// --gpus (a thread per local GPU) and --dist mpi (one rank of an mpirun/srun job). Every
// command registers them with add_launch_options and turns them into a result::Launch (and,
// under --dist mpi, the process's MPI session) with resolve_launch, so each refusal reads the
// same wherever the flags are typed.
//
//   LaunchOptions launch;                                     // a member of the command's options
//   add_launch_options(*cmd, launch, {"maxbatch", "cpu or cuda:N ...", "N or all ...", "--gpus"});
//   (or add_device_option(*cmd, launch, "maxbatch", "cpu or cuda:N ...") for --device alone)
//   ...in the callback, after the command's own flags are checked:
//   LaunchContext where = resolve_launch(launch, LaunchTarget::kEngine);
//   config.launch = where.launch;                             // where.mpi lives as long as the run
//   if (!where.root()) ...                                    // ranks other than 0 stay quiet
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "bench/result/launch.h"
#include "engine/dist/mpi_session.h"

namespace dlbench::cli {

struct LaunchOptions {
  std::string device;         // empty: cuda:0 when a GPU is present, else cpu
  std::string gpus;           // "N" or "all": a thread per GPU of this process; empty: none
  std::string dist = "none";  // "mpi": this process is one rank of a launcher's job
  std::string command;        // "run", "micro allreduce": the command hints name
};

// Registers --device alone, for the commands that run on one device (micro gemm, compare).
// `command` is the command's name ("micro gemm"), `help` the flag's.
void add_device_option(CLI::App& cmd, LaunchOptions& options, const std::string& command,
                       const std::string& help);

// The data-parallel commands' help for each flag.
struct LaunchHelp {
  std::string command;     // "run", "micro allreduce"
  std::string device;      // --device's help
  std::string gpus;        // --gpus's help
  std::string gpus_names;  // "--gpus"; "-g,--gpus" where nccl-tests' spelling works too
};

// Registers --device, --gpus and --dist (none or mpi).
void add_launch_options(CLI::App& cmd, LaunchOptions& options, const LaunchHelp& help);

// Who runs the workload: dlbench's engine, or a framework peer (one process on one device,
// which refuses --gpus and --dist mpi).
enum class LaunchTarget { kEngine, kPeer };

struct LaunchContext {
  result::Launch launch;
  std::unique_ptr<dist::MpiSession> mpi;  // --dist mpi: MPI lives as long as this
  // Rank 0 of an MPI job, or the only process: the one that prints and stores.
  bool root() const { return mpi == nullptr || mpi->rank() == 0; }
  // The replicas of the whole job: MPI ranks, GPU threads, or 1.
  int replicas() const;
};

// Checks the flags and, for --dist mpi, starts MPI. Error(kUsage) for a device that is not
// cpu/cuda/cuda:N, a --gpus that is not N or all, --gpus with --dist mpi or a CPU device, either
// of them for a peer, a --dist other than none or mpi, and --dist mpi without a launcher;
// Error(kResource) for more GPUs than the machine has.
LaunchContext resolve_launch(const LaunchOptions& options, LaunchTarget target);

}  // namespace dlbench::cli
