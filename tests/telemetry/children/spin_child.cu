// spin_child SECONDS: one block of 32 threads spinning on the GPU for SECONDS, in 50 ms kernels.
// A kernel runs the whole time (NVML "kernel busy" near 100 %) while one SM of many is busy
// (GPM SM activity near 1/SMs): the reason dlbench labels NVML's figure "kernel busy".
// Prints "steady_unix_s=T" and "end_unix_s=T" like gemm_child.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr unsigned long long kKernelNs = 50'000'000;

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin(unsigned long long ns, int* sink) {
  unsigned long long start = global_ns();
  int spins = 0;
  while (global_ns() - start < ns) ++spins;
  if (spins == -1) *sink = spins;  // never true; keeps the loop
}

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 5.0;
  int* sink = nullptr;
  if (cudaMalloc(&sink, sizeof(int)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed: no usable GPU\n");
    return 2;
  }
  spin<<<1, 32>>>(1'000'000, sink);  // create the context and load the kernel first
  cudaDeviceSynchronize();
  std::printf("steady_unix_s=%.6f\n", unix_seconds());
  std::fflush(stdout);
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         seconds) {
    // Two in flight, so there is no gap between kernels while the host waits.
    spin<<<1, 32>>>(kKernelNs, sink);
    spin<<<1, 32>>>(kKernelNs, sink);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      std::fprintf(stderr, "spin failed: %s\n", cudaGetErrorString(e));
      return 2;
    }
  }
  std::printf("end_unix_s=%.6f\n", unix_seconds());
  cudaFree(sink);
  return 0;
}
