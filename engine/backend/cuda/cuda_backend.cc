// The backend's resources (device, stream, library handles, workspace), memory, transfers and
// the error reporting behind cuda_check.h.
#include "engine/backend/cuda/cuda_backend.h"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

namespace dlbench::backend::cuda {
namespace {

// Long enough for cuDNN's longest messages, which name the failing check and its values.
constexpr std::size_t kCudnnMessageChars = 2048;

std::string mib(std::size_t bytes) {
  return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

}  // namespace

// --- errors --------------------------------------------------------------------------------

std::string status_name(cudnnStatus_t s) {
  std::string text = cudnnGetErrorString(s);
  std::array<char, kCudnnMessageChars> last{};
  cudnnGetLastErrorString(last.data(), last.size());
  if (last[0] != '\0') text += std::string(": ") + last.data();
  return text;
}

std::string status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "cublasStatus_t " + std::to_string(static_cast<int>(s));
}

void throw_library_error(const char* library, const std::string& status, bool out_of_memory,
                         const char* statement, const char* file, int line) {
  const std::string where = std::string(statement) + " at " + file + ":" + std::to_string(line);
  if (out_of_memory)
    throw Error(ErrorKind::kResource, std::string(library) + " ran out of GPU memory in " + where,
                "use a smaller batch or a lower precision, or free the GPU of other processes");
  throw Error(ErrorKind::kExternal,
              std::string(library) + " failed with " + status + " in " + where,
              "check the driver and library versions with `dlbench info`");
}

void report_library_error(const char* library, const std::string& status, const char* statement,
                          const char* file, int line) noexcept {
  std::fprintf(stderr, "dlbench: %s failed with %s in %s at %s:%d (while releasing)\n", library,
               status.c_str(), statement, file, line);
}

// --- dtypes and checks ---------------------------------------------------------------------

void require_float(const Tensor& t, const char* op, const char* what) {
  if (t.dtype() == DType::kF32 || t.dtype() == DType::kF16 || t.dtype() == DType::kBF16) return;
  throw Error(ErrorKind::kUsage, std::string(op) + ": " + what + " is " + to_string(t.dtype()) +
                                     "; the CUDA backend computes in f32, f16 or bf16");
}

void require_same_dtype(const Tensor& a, const Tensor& b, const char* op, const char* what) {
  if (a.dtype() == b.dtype()) return;
  throw Error(ErrorKind::kUsage, std::string(op) + ": " + what + " is " + to_string(b.dtype()) +
                                     " but the op runs in " + to_string(a.dtype()));
}

void CudaBackend::require_here(const Tensor& t, const char* op, const char* what) const {
  if (t.device() == device()) return;
  throw Error(ErrorKind::kUsage, std::string(op) + ": " + what + " lives on " +
                                     to_string(t.device()) + ", not on " + to_string(device()));
}

// --- memory --------------------------------------------------------------------------------

void* CudaAllocator::allocate(std::size_t bytes) {
  CUDA_CHECK(cudaSetDevice(index_));
  void* ptr = nullptr;
  const cudaError_t e = cudaMalloc(&ptr, bytes == 0 ? 1 : bytes);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls work
    std::size_t free_bytes = 0, total_bytes = 0;
    (void)cudaMemGetInfo(&free_bytes, &total_bytes);
    throw Error(ErrorKind::kResource,
                "cuda:" + std::to_string(index_) + " is out of memory: asked for " + mib(bytes) +
                    " with " + mib(free_bytes) + " free of " + mib(total_bytes),
                "use a smaller batch or a lower precision, or free the GPU of other processes");
  }
  CUDA_CHECK(e);
  return ptr;
}

void CudaAllocator::deallocate(void* ptr) noexcept {
  if (ptr != nullptr) CUDA_CHECK_NOTHROW(cudaFree(ptr));
}

std::optional<std::size_t> CudaAllocator::free_bytes() const {
  CUDA_CHECK(cudaSetDevice(index_));
  std::size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

void* CudaBackend::workspace(std::size_t bytes) {
  if (bytes > 0 && bytes <= lent_bytes_) return lent_;
  if (watching_ && searches_ == 0) watched_ = std::max(watched_, bytes);
  return scratch(workspace_, bytes, !watching_);
}

void* CudaBackend::scratch(GrowingBuffer& scratch, std::size_t bytes, bool keep) {
  if (bytes == 0) return nullptr;
  if (keep && searches_ == 0) scratch.largest = std::max(scratch.largest, bytes);
  if (scratch.buffer.bytes() < bytes) {
    // cudaFree waits for the device, so no queued op still reads the old buffer.
    const std::size_t grown = std::max(bytes, scratch.buffer.bytes() * 3 / 2);
    // Counted before the old buffer goes: recordings that hold its address are no longer
    // current, even when the new allocation then fails (callers may catch that and go on).
    ++workspace_generation_;
    scratch.buffer = Buffer();
    scratch.buffer = Buffer(allocator_, align_up(grown));
  }
  return scratch.buffer.data();
}

void CudaBackend::fit_workspace() {
  // A buffer may hold half again its largest request, and requests since lent elsewhere:
  // memory no op uses but the step's peak counts.
  for (GrowingBuffer* s : {&workspace_, &padded_operands_, &stem_partials_}) {
    if (s->buffer.bytes() <= align_up(s->largest)) continue;
    ++workspace_generation_;
    s->buffer = Buffer();
    s->buffer = Buffer(allocator_, align_up(s->largest));
  }
}

int resident_blocks_on(int device, const void* kernel, int threads, std::size_t shared) {
  int sms = 0, per_sm = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared));
  return std::max(1, sms * per_sm);
}

int CudaBackend::resident_blocks(const void* kernel, dim3 block, std::size_t shared) {
  const unsigned threads = block.x * block.y * block.z;
  const auto key = std::make_tuple(kernel, threads, shared);
  if (const auto it = resident_blocks_.find(key); it != resident_blocks_.end()) return it->second;
  activate();
  return resident_blocks_[key] =
             resident_blocks_on(index_, kernel, static_cast<int>(threads), shared);
}

cublasHandle_t CudaBackend::cublas() {
  if (!cublas_) {
    CublasHandle handle;
    CUBLAS_CHECK(cublasSetStream(handle, stream_));
    constexpr std::size_t kBytes = std::size_t{32} << 20;  // what cuBLAS reserves on Hopper
    cublas_workspace_ = Buffer(allocator_, kBytes);
    CUBLAS_CHECK(cublasSetWorkspace(handle, cublas_workspace_.data(), kBytes));
    cublas_ = std::move(handle);
  }
  return *cublas_;
}

// --- the backend ---------------------------------------------------------------------------

namespace {

// Checks that the device exists before any resource is created for it.
int existing_device(int index) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  if (index < 0 || index >= count) {
    std::string message =
        "no GPU cuda:" + std::to_string(index) + ": this machine has " + std::to_string(count);
    if (e != cudaSuccess) message += " (the CUDA runtime says " + status_name(e) + ")";
    throw Error(ErrorKind::kResource, message,
                "run `dlbench info` to see the GPUs, or use the CPU device",
                {Setting::kDevice, "cpu"});
  }
  CUDA_CHECK(cudaSetDevice(index));
  return index;
}

}  // namespace

CudaBackend::CudaBackend(int index) : index_(existing_device(index)), allocator_(index) {
  CUDNN_CHECK(cudnnSetStream(cudnn_, stream_));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, index_));
  device_name_ = prop.name;
}

CudaBackend::~CudaBackend() {
  // Ops may still be queued on the stream; wait before the buffers they use are released.
  CUDA_CHECK_NOTHROW(cudaSetDevice(index_));
  CUDA_CHECK_NOTHROW(cudaStreamSynchronize(stream_));
}

std::string CudaBackend::name() const {
  const std::size_t v = cudnnGetVersion();
  return "cuda:" + std::to_string(index_) + " (" + device_name_ + ", cuDNN " +
         std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100) + ")";
}

void CudaBackend::activate() const {
  int current = -1;
  CUDA_CHECK(cudaGetDevice(&current));
  if (current != index_) CUDA_CHECK(cudaSetDevice(index_));
}

void CudaBackend::synchronize() {
  activate();
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// --- timing --------------------------------------------------------------------------------

namespace {

// Marks are events created up front (with timing, without blocking sync) and recorded on the
// backend's stream; cudaEventElapsedTime reads two of them (resolution about 0.5 us).
class CudaEventTimer final : public DeviceTimer {
 public:
  CudaEventTimer(int device, cudaStream_t stream, std::size_t marks)
      : device_(device), stream_(stream), events_(marks), recorded_(marks, false) {}
  std::size_t capacity() const override { return events_.size(); }
  void mark(std::size_t index) override {
    check(index, "mark");
    CUDA_CHECK(cudaEventRecord(events_[index], stream_));
    recorded_[index] = true;
  }
  double elapsed_ms(std::size_t from, std::size_t to) const override {
    check(from, "elapsed_ms"), check(to, "elapsed_ms");
    DLBENCH_CHECK(recorded_[from] && recorded_[to], "timer mark read before it was recorded");
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, events_[from], events_[to]));
    return ms;
  }
  std::string clock() const override {
    return "CUDA events on cuda:" + std::to_string(device_) + "'s stream";
  }

 private:
  void check(std::size_t index, const char* what) const {
    DLBENCH_CHECK(index < events_.size(), std::string(what) + ": timer mark " +
                                              std::to_string(index) + " of " +
                                              std::to_string(events_.size()));
  }
  int device_;
  cudaStream_t stream_;
  std::vector<Event> events_;  // created on device_ (current when the timer is made)
  std::vector<bool> recorded_;
};

}  // namespace

std::unique_ptr<DeviceTimer> CudaBackend::make_timer(std::size_t marks) {
  activate();
  return std::make_unique<CudaEventTimer>(index_, stream_, marks);
}

void CudaBackend::copy_impl(const Tensor& src, const Tensor& dst) {
  activate();
  require_here(src, "copy", "src"), require_here(dst, "copy", "dst");
  if (src.bytes() > 0 && src.data() != dst.data())
    CUDA_CHECK(
        cudaMemcpyAsync(dst.data(), src.data(), src.bytes(), cudaMemcpyDeviceToDevice, stream_));
}

void CudaBackend::to_host_impl(const Tensor& src, void* host) {
  activate();
  require_here(src, "to_host", "src");
  if (src.bytes() == 0) return;
  CUDA_CHECK(cudaMemcpyAsync(host, src.data(), src.bytes(), cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::from_host_impl(const void* host, const Tensor& dst) {
  activate();
  require_here(dst, "from_host", "dst");
  if (dst.bytes() == 0) return;
  CUDA_CHECK(cudaMemcpyAsync(dst.data(), host, dst.bytes(), cudaMemcpyHostToDevice, stream_));
  // The host buffer may be reused as soon as we return.
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace dlbench::backend::cuda
