// MpiSession: MPI_Init_thread on construction, MPI_Finalize on destruction; one per process,
// made only in --dist mpi mode (MPI is never initialized otherwise). The rank and size are
// MPI_COMM_WORLD's; the local rank is the rank among the processes of the same node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/device.h"

namespace dlbench::dist {

class MpiSession {
 public:
  MpiSession();  // Error(kUsage) when not started by an MPI launcher
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  static MpiSession* current();  // the live session, or null
  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  std::string library() const;  // "Open MPI v4.1.4, ..."

  // Host collectives on MPI_COMM_WORLD.
  void broadcast_bytes(void* data, int bytes, int root) const;
  void allreduce_sum(float* data, int count) const;  // in place
  void allreduce_sum(std::int32_t* data, int count) const;
  std::vector<double> allgather(double value) const;
  std::vector<unsigned long long> allgather(unsigned long long value) const;
  // This rank's GPU on its node: cuda:<local rank>. Error(kResource) when the node has fewer
  // GPUs than ranks.
  Device local_gpu() const;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

}  // namespace dlbench::dist
