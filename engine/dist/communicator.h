// Communicator: the collectives data parallelism needs, over a group of ranks (one rank per
// replica: a GPU, or a CPU process). NCCL implements it on GPUs (nccl_communicator.h), MPI on
// CPUs (mpi_communicator.h).
//
// Device collectives are stream-ordered: allreduce_sum starts after the work already issued
// to the rank's device and may overlap work issued after it (NCCL runs on its own stream);
// wait() orders the device's later work after every collective issued so far. Every rank must
// issue the same collectives in the same order. Host collectives block the calling thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/tensor.h"

namespace dlbench::dist {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "nccl 2.28.3", "mpi (Open MPI v4.1.4)": what carried the collectives.
  virtual std::string name() const = 0;

  // Sums t (f32, f16 or bf16, or i32 counts and masks; on this rank's device) over every rank,
  // in place. MPI (CPU) takes f32 and i32.
  virtual void allreduce_sum(const Tensor& t) = 0;
  // Orders the device's later work after every collective issued so far.
  virtual void wait() = 0;
  // Copies root's t into every rank's t; later device work sees it (waits itself).
  virtual void broadcast(const Tensor& t, int root) = 0;

  // Host collectives: every rank's value, indexed by rank.
  virtual std::vector<double> allgather(double value) = 0;
  virtual std::vector<std::uint64_t> allgather(std::uint64_t value) = 0;
  void barrier() { allgather(std::uint64_t{0}); }

  // Called from another thread when a replica failed: collectives in flight or issued later
  // return instead of waiting forever for the failed rank. Never throws.
  virtual void abort() noexcept = 0;
};

}  // namespace dlbench::dist
