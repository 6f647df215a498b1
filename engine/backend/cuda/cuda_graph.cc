// CUDA graphs for the CUDA backend: stream capture in the calling thread's mode (another
// thread driving another GPU may keep issuing work while this one records), instantiated once
// and launched on the backend's stream.
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_check.h"

namespace dlbench::backend::cuda {
namespace {

class CudaGraph final : public DeviceGraph {
 public:
  // `workspace_generation` is the backend's count of reallocations of its workspace and padded
  // operands, read at each launch (the backend outlives its graphs); `recorded` its value when
  // the capture began.
  CudaGraph(int device, cudaStream_t stream, cudaGraph_t graph,
            const std::uint64_t& workspace_generation, std::uint64_t recorded)
      : device_(device),
        stream_(stream),
        graph_(graph),
        generation_(workspace_generation),
        recorded_generation_(recorded) {
    CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  ~CudaGraph() override {
    int current = -1;
    cudaGetDevice(&current);
    if (current != device_) CUDA_CHECK_NOTHROW(cudaSetDevice(device_));
    if (exec_ != nullptr) CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec_));
    CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph_));
  }
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  bool current() const override { return generation_ == recorded_generation_; }

  void launch() override {
    DLBENCH_CHECK(current(),
                  "a recorded CUDA graph was launched after the backend's workspace it holds was "
                  "reallocated; record it again");
    CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
  }

 private:
  int device_;
  cudaStream_t stream_;
  cudaGraph_t graph_;
  const std::uint64_t& generation_;
  std::uint64_t recorded_generation_;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

void CudaBackend::begin_capture() {
  activate();
  // The recording holds the scratch buffers' addresses: size them to what the ops ask first.
  fit_workspace();
  CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  // A workspace that moves while the recording is made leaves it not current.
  capture_generation_ = workspace_generation_;
}

std::unique_ptr<DeviceGraph> CudaBackend::end_capture() {
  activate();
  cudaGraph_t graph = nullptr;
  const cudaError_t e = cudaStreamEndCapture(stream_, &graph);
  if (e != cudaSuccess || graph == nullptr) {
    cudaGetLastError();  // capture errors are not sticky: clear it for the eager steps
    throw Error(ErrorKind::kExternal,
                std::string("CUDA graph capture failed: ") + cudaGetErrorString(e));
  }
  return std::make_unique<CudaGraph>(index_, stream_, graph, workspace_generation_,
                                     capture_generation_);
}

void CudaBackend::abort_capture() noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream_, &status) != cudaSuccess ||
      status == cudaStreamCaptureStatusNone)
    return;
  cudaGraph_t graph = nullptr;
  cudaStreamEndCapture(stream_, &graph);
  if (graph != nullptr) cudaGraphDestroy(graph);
  cudaGetLastError();
}

}  // namespace dlbench::backend::cuda
