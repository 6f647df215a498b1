#include "cli/launch_options.h"

#include <vector>

#include "cli/gpu_list.h"
#include "engine/backend/backend.h"
#include "engine/core/error.h"

namespace dlbench::cli {

void add_device_option(CLI::App& cmd, LaunchOptions& o, const std::string& command,
                       const std::string& help) {
  o.command = command;
  cmd.add_option("--device", o.device, help);
}

void add_launch_options(CLI::App& cmd, LaunchOptions& o, const LaunchHelp& help) {
  add_device_option(cmd, o, help.command, help.device);
  cmd.add_option(help.gpus_names, o.gpus, help.gpus);
  cmd.add_option("--dist", o.dist,
                 "mpi: this process is one rank of a job started by mpirun or srun (a GPU per "
                 "rank by local rank, or --device cpu)")
      ->check(CLI::IsMember({"none", "mpi"}))
      ->capture_default_str();
}

int LaunchContext::replicas() const {
  if (mpi) return mpi->size();
  return launch.mode == LaunchMode::kThreads ? launch.gpus : 1;
}

LaunchContext resolve_launch(const LaunchOptions& o, LaunchTarget target) {
  LaunchContext context;
  result::Launch& launch = context.launch;
  launch.device = o.device.empty() ? backend::default_device() : parse_device(o.device);
  if (o.dist != "none" && o.dist != "mpi")
    throw Error(ErrorKind::kUsage, "--dist must be none or mpi, not '" + o.dist + "'",
                "--dist mpi in each process of an mpirun or srun job");
  const bool mpi = o.dist == "mpi";
  const bool engine = target == LaunchTarget::kEngine;
  if (!o.gpus.empty()) {
    if (mpi)
      throw Error(ErrorKind::kUsage, "--gpus and --dist mpi do not mix",
                  "one process drives N GPUs with --gpus N; with mpirun, each rank takes one");
    if (!engine)
      throw Error(ErrorKind::kUsage, "--gpus runs dlbench's own engine only",
                  "drop --framework, or run the peer on one GPU");
    if (!o.device.empty() && launch.device.type != DeviceType::kCuda)
      throw Error(ErrorKind::kUsage, "--gpus drives GPUs, not --device " + o.device,
                  "data parallelism on CPUs: mpirun -np 2 dlbench " + o.command +
                      " ... --device cpu --dist mpi");
    const std::vector<Device> gpus = parse_gpus(o.gpus);
    launch.device = gpus[0];
    launch.gpus = static_cast<int>(gpus.size());
    if (gpus.size() > 1) launch.mode = LaunchMode::kThreads;
  }
  if (mpi) {
    if (!engine)
      throw Error(ErrorKind::kUsage, "--dist mpi runs dlbench's own engine only",
                  "drop --framework");
    context.mpi = std::make_unique<dist::MpiSession>();
    launch.mode = LaunchMode::kMpi;
  }
  return context;
}

}  // namespace dlbench::cli
