// NCCL communicators: one ncclComm_t per rank, with a stream and two events of its own.
//
// Ordering: allreduce_sum records `ready_` on the backend's stream and makes the collective
// stream wait on it, so the collective sees every op issued before it and overlaps the ops
// issued after it; wait() records `done_` on the collective stream and makes the backend's
// stream wait on it. Both are cudaStreamWaitEvent, so the host never blocks.
//
// Host collectives (allgather, barrier) go through NCCL too (8 bytes per rank in a small
// device buffer) and poll the stream while checking NCCL's asynchronous error and abort(), the
// way nccl-tests waits, so a broken link or an abort becomes an error instead of a hang.
//
// abort() may come from another replica's thread while this one sits in a collective:
// ncclCommAbort sets NCCL's abort flag (kernels and proxies waiting for peers return), then
// frees the communicator. Later calls here throw instead of touching the freed handle, and the
// polling above shares a lock with abort(); an enqueue already inside NCCL when the abort lands
// (it may block, so it cannot hold that lock) is NCCL's own contract, as for PyTorch's
// watchdog. An aborted communicator is never ncclCommDestroy'ed.
#include "engine/dist/nccl_communicator.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_handles.h"
#include "engine/core/error.h"

namespace dlbench::backend::cuda {
namespace {

// ncclGetErrorString says what kind of failure; ncclGetLastError says what NCCL was doing.
std::string nccl_status(ncclResult_t status) {
  std::string text = ncclGetErrorString(status);
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && *last != '\0') text += ": " + std::string(last);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

// NCCL's specializations of cuda_check.h's generic check. NCCL has no out-of-memory status of
// its own (a failed cudaMalloc inside it is ncclUnhandledCudaError), so every failure is an
// external library error.
void check_nccl(ncclResult_t status, ncclResult_t success, const char* library,
                const char* statement, const char* file, int line) {
  if (status != success)
    throw_library_error(library, nccl_status(status), false, statement, file, line);
}
void check_nccl_nothrow(ncclResult_t status, ncclResult_t success, const char* library,
                        const char* statement, const char* file, int line) noexcept {
  if (status != success) report_library_error(library, nccl_status(status), statement, file, line);
}

}  // namespace
}  // namespace dlbench::backend::cuda

#define NCCL_CHECK(statement) DLBENCH_LIBRARY_CHECK(check_nccl, ncclSuccess, "NCCL", statement)
#define NCCL_CHECK_NOTHROW(statement) \
  DLBENCH_LIBRARY_CHECK(check_nccl_nothrow, ncclSuccess, "NCCL", statement)

namespace dlbench::dist {
namespace {

using backend::cuda::CudaBackend;

static_assert(sizeof(ncclUniqueId) == std::tuple_size_v<NcclId>, "NcclId holds an ncclUniqueId");

// Makes cuda:index current for the calling thread (a thread may drive several GPUs).
void set_device(int index) {
  int current = -1;
  CUDA_CHECK(cudaGetDevice(&current));
  if (current != index) CUDA_CHECK(cudaSetDevice(index));
}

// Events that only order streams: no timestamps, the cheapest kind to record.
struct OrderEventTraits {
  static cudaEvent_t create() {
    cudaEvent_t e{};
    CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  }
  static void destroy(cudaEvent_t e) noexcept { CUDA_CHECK_NOTHROW(cudaEventDestroy(e)); }
};
using OrderEvent = backend::cuda::Owned<cudaEvent_t, OrderEventTraits>;

// Owns one ncclComm_t. It is destroyed (ncclCommDestroy, which waits for NCCL's work) when the
// job ended normally, and aborted (local, never waits for peers) when it was torn down by an
// exception or was already aborted: a peer may never join a collective that is still queued.
class CommHandle {
 public:
  explicit CommHandle(ncclComm_t comm) : comm_(comm) {}
  ~CommHandle() {
    if (comm_ == nullptr || aborted_.load()) return;
    if (std::uncaught_exceptions() > 0)
      NCCL_CHECK_NOTHROW(ncclCommAbort(comm_));
    else
      NCCL_CHECK_NOTHROW(ncclCommDestroy(comm_));
  }
  CommHandle(CommHandle&& other) noexcept : comm_(std::exchange(other.comm_, nullptr)) {}
  CommHandle(const CommHandle&) = delete;
  CommHandle& operator=(const CommHandle&) = delete;
  CommHandle& operator=(CommHandle&&) = delete;

  ncclComm_t get() const { return comm_; }
  bool aborted() const { return aborted_.load(); }

  // NCCL's asynchronous error, or nothing once aborted. The lock keeps abort() from freeing
  // the communicator under this (non-blocking) call; it is never held across a blocking one.
  std::optional<ncclResult_t> async_error() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_.load()) return std::nullopt;
    ncclResult_t async = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(comm_, &async));
    return async;
  }
  void abort() noexcept {
    if (comm_ == nullptr || aborted_.exchange(true)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    NCCL_CHECK_NOTHROW(ncclCommAbort(comm_));
  }

 private:
  ncclComm_t comm_ = nullptr;
  std::atomic<bool> aborted_{false};
  std::mutex mutex_;
};

// floats_only: f32, f16 and bf16, and i32 (sums of counts and masks); else i64 too.
ncclDataType_t nccl_dtype(const Tensor& t, bool floats_only, const char* op) {
  switch (t.dtype()) {
    case DType::kF32:
      return ncclFloat;
    case DType::kF16:
      return ncclHalf;
    case DType::kBF16:
      return ncclBfloat16;
    case DType::kI32:
      return ncclInt32;
    case DType::kI64:
      if (!floats_only) return ncclInt64;
      break;
  }
  throw Error(ErrorKind::kUsage, std::string("nccl ") + op + ": dtype " + to_string(t.dtype()) +
                                     " is not summed; use f32, f16, bf16 or i32");
}

class NcclCommunicator final : public Communicator {
 public:
  // Takes the communicator of `rank` on backend's GPU; that GPU must be current.
  NcclCommunicator(CudaBackend& backend, CommHandle comm, int rank, int size)
      : backend_(backend),
        device_(backend.device().index),
        rank_(rank),
        size_(size),
        gather_(backend.allocator(), sizeof(std::uint64_t) * static_cast<std::size_t>(size)),
        comm_(std::move(comm)) {}

  ~NcclCommunicator() override {
    // The collectives in flight read and write buffers that are about to be freed.
    CUDA_CHECK_NOTHROW(cudaSetDevice(device_));
    if (!comm_.aborted() && std::uncaught_exceptions() == 0)
      CUDA_CHECK_NOTHROW(cudaStreamSynchronize(stream_));
  }
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override {
    int v = 0;
    NCCL_CHECK(ncclGetVersion(&v));
    // NCCL_VERSION_CODE is major*10000 + minor*100 + patch since 2.9, major*1000 + ... before.
    const int major = v >= 20900 ? v / 10000 : v / 1000;
    const int minor = v >= 20900 ? v / 100 % 100 : v / 100 % 10;
    return "nccl " + std::to_string(major) + "." + std::to_string(minor) + "." +
           std::to_string(v % 100);
  }

  void allreduce_sum(const Tensor& t) override {
    const ncclDataType_t type = nccl_dtype(t, true, "allreduce_sum");
    start("allreduce_sum", t);
    if (t.numel() == 0) return;
    NCCL_CHECK(ncclAllReduce(t.data(), t.data(), static_cast<std::size_t>(t.numel()), type, ncclSum,
                             comm_.get(), stream_));
  }

  void wait() override {
    live("wait");
    set_device(device_);
    CUDA_CHECK(cudaEventRecord(done_, stream_));
    CUDA_CHECK(cudaStreamWaitEvent(backend_.stream(), done_, 0));
  }

  void broadcast(const Tensor& t, int root) override {
    const ncclDataType_t type = nccl_dtype(t, false, "broadcast");
    if (root < 0 || root >= size_)
      throw Error(ErrorKind::kInternal, "nccl broadcast: root " + std::to_string(root) +
                                            " is not a rank of " + std::to_string(size_));
    start("broadcast", t);
    if (t.numel() > 0)
      NCCL_CHECK(ncclBroadcast(t.data(), t.data(), static_cast<std::size_t>(t.numel()), type, root,
                               comm_.get(), stream_));
    wait();
  }

  std::vector<double> allgather(double value) override {
    std::vector<double> out;
    for (std::uint64_t word : allgather_words(std::bit_cast<std::uint64_t>(value)))
      out.push_back(std::bit_cast<double>(word));
    return out;
  }
  std::vector<std::uint64_t> allgather(std::uint64_t value) override {
    return allgather_words(value);
  }

  void abort() noexcept override {
    int current = -1;
    const bool known = cudaGetDevice(&current) == cudaSuccess;
    CUDA_CHECK_NOTHROW(cudaSetDevice(device_));
    comm_.abort();
    if (known) CUDA_CHECK_NOTHROW(cudaSetDevice(current));
  }

 private:
  void live(const char* op) const {
    if (comm_.aborted())
      throw Error(ErrorKind::kExternal,
                  std::string("nccl ") + op + " on rank " + std::to_string(rank_) +
                      ": the communicator was aborted because another replica failed",
                  "the first error printed is the cause");
  }

  // Checks t and orders the collective stream after the backend's work so far.
  void start(const char* op, const Tensor& t) {
    live(op);
    if (t.device() != backend_.device())
      throw Error(ErrorKind::kInternal,
                  std::string("nccl ") + op + ": the tensor lives on " + to_string(t.device()) +
                      ", rank " + std::to_string(rank_) + " on " + to_string(backend_.device()));
    set_device(device_);
    CUDA_CHECK(cudaEventRecord(ready_, backend_.stream()));
    CUDA_CHECK(cudaStreamWaitEvent(stream_, ready_, 0));
  }

  std::vector<std::uint64_t> allgather_words(std::uint64_t word) {
    live("allgather");
    set_device(device_);
    auto* all = static_cast<std::uint64_t*>(gather_.data());
    CUDA_CHECK(cudaMemcpyAsync(all + rank_, &word, sizeof word, cudaMemcpyHostToDevice, stream_));
    // In place: rank r's contribution already sits at its slot of the gathered buffer.
    NCCL_CHECK(ncclAllGather(all + rank_, all, sizeof word, ncclUint8, comm_.get(), stream_));
    std::vector<std::uint64_t> out(static_cast<std::size_t>(size_));
    CUDA_CHECK(cudaMemcpyAsync(out.data(), all, sizeof word * out.size(), cudaMemcpyDeviceToHost,
                               stream_));
    synchronize("allgather");
    return out;
  }

  // Waits for the collective stream; a peer's failure shows up as NCCL's asynchronous error
  // or as abort() from another thread, never as a hang.
  void synchronize(const char* op) {
    for (;;) {
      const cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess) break;
      if (e != cudaErrorNotReady) CUDA_CHECK(e);
      const std::optional<ncclResult_t> async = comm_.async_error();
      if (!async) break;  // aborted: live() below says so
      if (*async != ncclSuccess && *async != ncclInProgress)
        throw Error(ErrorKind::kExternal,
                    std::string("nccl ") + op + " on rank " + std::to_string(rank_) +
                        " failed: " + backend::cuda::nccl_status(*async),
                    "rerun with NCCL_DEBUG=WARN to see why; `dlbench info` lists the GPUs");
      std::this_thread::yield();
    }
    live(op);
  }

  CudaBackend& backend_;
  int device_;
  int rank_, size_;
  backend::cuda::Stream stream_;  // created on device_, which the factories made current
  OrderEvent ready_, done_;
  Buffer gather_;  // size_ words for the host collectives
  // Last, so it is released first: an abort must not wait behind cudaFree or the stream.
  CommHandle comm_;
};

}  // namespace

NcclId make_nccl_id() {
  ncclUniqueId id{};
  NCCL_CHECK(ncclGetUniqueId(&id));
  NcclId out{};
  std::memcpy(out.data(), &id, sizeof id);
  return out;
}

std::vector<std::unique_ptr<Communicator>> make_local_nccl_communicators(
    std::span<backend::cuda::CudaBackend* const> backends) {
  const int n = static_cast<int>(backends.size());
  std::vector<int> devices;
  for (CudaBackend* b : backends) {
    const int index = b->device().index;
    if (std::find(devices.begin(), devices.end(), index) != devices.end())
      throw Error(ErrorKind::kUsage, "cuda:" + std::to_string(index) + " is listed twice",
                  "NCCL needs one rank per GPU: list each GPU once");
    devices.push_back(index);
  }
  std::vector<std::unique_ptr<Communicator>> out;
  if (n == 0) return out;
  int previous = 0;
  CUDA_CHECK(cudaGetDevice(&previous));
  std::vector<ncclComm_t> raw(static_cast<std::size_t>(n), nullptr);
  NCCL_CHECK(ncclCommInitAll(raw.data(), n, devices.data()));
  // Owned at once, so a failure below releases every communicator.
  std::vector<CommHandle> handles;
  handles.reserve(raw.size());
  for (ncclComm_t c : raw) handles.emplace_back(c);
  for (int r = 0; r < n; ++r) {
    set_device(devices[r]);
    out.push_back(std::make_unique<NcclCommunicator>(*backends[r], std::move(handles[r]), r, n));
  }
  CUDA_CHECK(cudaSetDevice(previous));
  return out;
}

std::unique_ptr<Communicator> make_nccl_communicator(backend::cuda::CudaBackend& backend,
                                                     const NcclId& id, int rank, int size) {
  if (size < 1 || rank < 0 || rank >= size)
    throw Error(ErrorKind::kInternal, "nccl: rank " + std::to_string(rank) + " of " +
                                          std::to_string(size) + " is not a rank");
  ncclUniqueId unique{};
  std::memcpy(&unique, id.data(), sizeof unique);
  set_device(backend.device().index);
  ncclComm_t comm = nullptr;
  // Blocks until every rank of the job has joined.
  NCCL_CHECK(ncclCommInitRank(&comm, size, unique, rank));
  return std::make_unique<NcclCommunicator>(backend, CommHandle(comm), rank, size);
}

}  // namespace dlbench::dist
