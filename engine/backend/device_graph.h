// DeviceGraph: a recorded sequence of a backend's work, replayed with one launch (CUDA
// graphs). A training step issues a few thousand kernels; replaying them as one graph takes
// the host, and the CUDA driver's process-wide lock that threads driving several GPUs share,
// out of the step. Recording does not run the work: launch() does, every time.
//
// Between Backend::begin_capture and end_capture every op is recorded, not run: nothing may
// allocate, synchronize or read results on the host. A recording holds the tensors' addresses
// and the ops' scalar arguments as they were, so it is replayed only while they still hold.
// The backend's own scratch is one of them: an op run outside the recording may reallocate it
// (CudaBackend's workspace grows when an op needs more), and current() then says false; the
// caller records again.
#pragma once

namespace dlbench::backend {

class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  // Whether the backend scratch the recording holds is still where it was recorded.
  virtual bool current() const = 0;
  // Asynchronous, on the backend's stream. Throws Error(kInternal) unless current(): replaying
  // into freed scratch would corrupt memory silently.
  virtual void launch() = 0;
};

}  // namespace dlbench::backend
