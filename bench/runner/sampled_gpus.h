// Which GPUs a run's telemetry samples: the ones its replicas on this node drive, by NVML index.
// Sampling every GPU NVML sees made a one-GPU run on an eight-GPU machine report eight boards'
// energy (samples per joule, mean power) and a CPU run the energy of idle GPUs. NVML and CUDA
// number GPUs differently (CUDA_VISIBLE_DEVICES, ordering), so the run's CUDA devices are
// matched to NVML's through sysinfo (UUID, then PCI bus id).
#pragma once

#include <vector>

#include "bench/result/launch.h"
#include "bench/sysinfo/gpu_info.h"
#include "bench/telemetry/sources.h"

namespace dlbench::runner {

// The CUDA devices this node's replicas drive: the one device, a thread launch's cuda:0..gpus-1,
// or under MPI one per local rank (cuda:<local rank>, `mpi_local_ranks` of them). Empty for a
// CPU run.
std::vector<int> node_cuda_devices(const result::Launch& launch, int mpi_local_ranks);

// Those devices as a telemetry selection: their NVML indices, or none (saying why) for a CPU
// run or where NVML lists none of them.
telemetry::GpuSelection sampled_gpus(const result::Launch& launch, int mpi_local_ranks,
                                     const sysinfo::GpuReport& gpus);

}  // namespace dlbench::runner
