// DLBENCH_HOST_DEVICE marks a small inline function that both the host and CUDA kernels call
// (one formula for the CPU backend and the device): __host__ __device__ under nvcc, nothing for
// a host compiler.
#pragma once

#if defined(__CUDACC__)
#define DLBENCH_HOST_DEVICE __host__ __device__
#else
#define DLBENCH_HOST_DEVICE
#endif
