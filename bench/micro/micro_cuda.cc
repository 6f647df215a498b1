#include "bench/micro/micro_cuda.h"

#include "engine/core/error.h"

namespace dlbench::micro {

void use_gpu(int device) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || device < 0 || device >= devices) {
    (void)cudaGetLastError();
    throw Error(ErrorKind::kResource, "no GPU cuda:" + std::to_string(device),
                "run `dlbench info` to see the GPUs");
  }
  CUDA_CHECK(cudaSetDevice(device));
}

std::string gpu_description(int device) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return "cuda:" + std::to_string(device) + " (" + prop.name + ")";
}

WrongCounter::WrongCounter(DeviceAllocator& allocator)
    : buffer_(allocator, sizeof(unsigned long long)) {}

void WrongCounter::reset(cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(buffer_.data(), 0, sizeof(unsigned long long), stream));
}

std::int64_t WrongCounter::read(cudaStream_t stream) const {
  unsigned long long host = 0;
  CUDA_CHECK(cudaMemcpyAsync(&host, buffer_.data(), sizeof host, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<std::int64_t>(host);
}

}  // namespace dlbench::micro
