// NcclCommunicator: data-parallel collectives between GPUs over NCCL (NVLink, PCIe, or the
// network across nodes). Collectives run on a stream of their own, ordered after the
// backend's stream with an event, so an all-reduce overlaps the work issued after it; wait()
// makes the backend's stream wait for the collective stream.
#pragma once

#include <array>
#include <memory>
#include <span>
#include <vector>

#include "engine/dist/communicator.h"

namespace dlbench::backend::cuda {
class CudaBackend;
}

namespace dlbench::dist {

// ncclUniqueId's bytes: rank 0 makes one and every rank of the job gets a copy.
using NcclId = std::array<char, 128>;
NcclId make_nccl_id();

// One communicator per backend, ranks in the order given (ncclCommInitAll): one process
// driving several local GPUs.
std::vector<std::unique_ptr<Communicator>> make_local_nccl_communicators(
    std::span<backend::cuda::CudaBackend* const> backends);
// This process's rank of a job whose ranks share id (ncclCommInitRank).
std::unique_ptr<Communicator> make_nccl_communicator(backend::cuda::CudaBackend& backend,
                                                     const NcclId& id, int rank, int size);

}  // namespace dlbench::dist
