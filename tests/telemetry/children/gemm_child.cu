// gemm_child SECONDS: back-to-back FP16 GEMMs (8192^3, FP32 accumulate) on the tensor cores with
// cuBLAS for SECONDS. Prints "steady_unix_s=T" once warmed up and "end_unix_s=T" when done, so
// a test can look at the steady phase only.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kN = 8192;
constexpr int kGemmsPerSync = 20;  // keeps the queue short without gaps worth measuring

#define CHECK_CUDA(call)                                                                      \
  do {                                                                                        \
    cudaError_t e = (call);                                                                   \
    if (e != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e), __FILE__, \
                   __LINE__);                                                                 \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)
#define CHECK_CUBLAS(call)                                                                         \
  do {                                                                                             \
    cublasStatus_t s = (call);                                                                     \
    if (s != CUBLAS_STATUS_SUCCESS) {                                                              \
      std::fprintf(stderr, "%s failed: status %d (%s:%d)\n", #call, static_cast<int>(s), __FILE__, \
                   __LINE__);                                                                      \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

// Non-zero data: a GEMM of zeros draws less power than real work.
__global__ void fill(__half* x, size_t n, float scale) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) x[i] = __float2half(scale * static_cast<float>((i * 2654435761u) % 1024) / 1024.0f);
}

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 5.0;
  size_t elements = static_cast<size_t>(kN) * kN;
  __half *a = nullptr, *b = nullptr, *c = nullptr;
  CHECK_CUDA(cudaMalloc(&a, elements * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&b, elements * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&c, elements * sizeof(__half)));
  unsigned blocks = static_cast<unsigned>((elements + 255) / 256);
  fill<<<blocks, 256>>>(a, elements, 1.0f);
  fill<<<blocks, 256>>>(b, elements, 0.5f);
  CHECK_CUDA(cudaGetLastError());
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  const float alpha = 1.0f, beta = 0.0f;
  auto gemm = [&] {
    CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &alpha, a, CUDA_R_16F,
                              kN, b, CUDA_R_16F, kN, &beta, c, CUDA_R_16F, kN, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
  };
  for (int i = 0; i < 3; ++i) gemm();
  CHECK_CUDA(cudaDeviceSynchronize());
  std::printf("steady_unix_s=%.6f\n", unix_seconds());
  std::fflush(stdout);
  auto start = std::chrono::steady_clock::now();
  long gemms = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         seconds) {
    for (int i = 0; i < kGemmsPerSync; ++i) gemm();
    gemms += kGemmsPerSync;
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("end_unix_s=%.6f\n", unix_seconds());
  std::printf("gemms=%ld tflops=%.1f\n", gemms,
              2.0 * kN * kN * static_cast<double>(kN) * gemms / elapsed / 1e12);
  cublasDestroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}
