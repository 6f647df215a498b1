#include "engine/dist/mpi_session.h"

#include <mpi.h>

#include <cstdint>
#include <exception>

#include "engine/backend/backend.h"
#include "engine/core/error.h"
#include "engine/dist/launch.h"

namespace dlbench::dist {
namespace {

MpiSession* g_session = nullptr;

void mpi_check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(ErrorKind::kExternal, std::string(call) + " failed: " + std::string(text, length));
}

}  // namespace

MpiSession::MpiSession() {
  DLBENCH_CHECK(g_session == nullptr, "one MpiSession per process");
  // A process that no launcher started would become a one-rank "singleton" job: almost
  // certainly a forgotten mpirun, so say so instead of measuring one process.
  if (!read_launcher_env().rank)
    throw Error(ErrorKind::kUsage, "the MPI launch mode needs an MPI launcher",
                "start one process per GPU (or CPU replica) with mpirun -np N dlbench ... or "
                "srun; the GPUs of one machine need no launcher, given as a GPU count",
                {Setting::kGpus, "N"});
  int provided = 0;
  // One thread per process calls MPI, but not always the main one.
  mpi_check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  mpi_check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
            "MPI_Comm_split_type");
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
  g_session = this;
}

MpiSession::~MpiSession() {
  g_session = nullptr;
  // Unwinding from an error: the other ranks may wait in a collective that this rank will
  // never join, and MPI_Finalize would wait with them. Exiting without it makes the launcher
  // end the whole job, and the error line has already been written.
  if (std::uncaught_exceptions() > 0) return;
  MPI_Finalize();
}

MpiSession* MpiSession::current() {
  return g_session;
}

std::string MpiSession::library() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  if (auto cut = version.find_first_of(",\n"); cut != std::string::npos) version.resize(cut);
  return version;
}

void MpiSession::broadcast_bytes(void* data, int bytes, int root) const {
  mpi_check(MPI_Bcast(data, bytes, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
}

void MpiSession::allreduce_sum(float* data, int count) const {
  mpi_check(MPI_Allreduce(MPI_IN_PLACE, data, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
            "MPI_Allreduce");
}

void MpiSession::allreduce_sum(std::int32_t* data, int count) const {
  static_assert(sizeof(std::int32_t) == sizeof(int), "MPI_INT is 32 bits here");
  mpi_check(MPI_Allreduce(MPI_IN_PLACE, data, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
            "MPI_Allreduce");
}

std::vector<double> MpiSession::allgather(double value) const {
  std::vector<double> all(static_cast<std::size_t>(size_));
  mpi_check(MPI_Allgather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD),
            "MPI_Allgather");
  return all;
}

std::vector<unsigned long long> MpiSession::allgather(unsigned long long value) const {
  std::vector<unsigned long long> all(static_cast<std::size_t>(size_));
  mpi_check(MPI_Allgather(&value, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG,
                          MPI_COMM_WORLD),
            "MPI_Allgather");
  return all;
}

Device MpiSession::local_gpu() const {
  const int gpus = backend::cuda_device_count();
  if (local_rank_ >= gpus)
    throw Error(ErrorKind::kResource,
                "rank " + std::to_string(rank_) + " is local rank " + std::to_string(local_rank_) +
                    " of a node with " + std::to_string(gpus) + " GPUs",
                "start at most one rank per GPU on each node, or use the CPU device",
                {Setting::kDevice, "cpu"});
  return Device::cuda(local_rank_);
}

}  // namespace dlbench::dist
