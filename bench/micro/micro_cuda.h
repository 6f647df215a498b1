// Small CUDA helpers the micro-benchmarks share (host code): picking a device, timing work on
// a stream with a pair of events, and a device counter of wrong elements.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "engine/backend/cuda/cuda_handles.h"
#include "engine/core/memory.h"

namespace dlbench::micro {

// Makes `device` current; Error(kResource) naming it when it does not exist.
void use_gpu(int device);
// "cuda:0 (NVIDIA H100 80GB HBM3)".
std::string gpu_description(int device);

// Milliseconds that `work` (which enqueues on stream) takes, from events around it.
template <class Work>
double time_ms(cudaStream_t stream, backend::cuda::Event& start, backend::cuda::Event& stop,
               Work&& work) {
  CUDA_CHECK(cudaEventRecord(start, stream));
  work();
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms;
}

// A zeroed counter in device memory, read back after the kernels that add to it.
class WrongCounter {
 public:
  explicit WrongCounter(DeviceAllocator& allocator);
  unsigned long long* get() const { return static_cast<unsigned long long*>(buffer_.data()); }
  void reset(cudaStream_t stream);
  std::int64_t read(cudaStream_t stream) const;  // synchronizes the stream

 private:
  Buffer buffer_;
};

}  // namespace dlbench::micro
