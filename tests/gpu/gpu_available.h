// Whether this process sees a CUDA GPU: the GPU tests skip themselves when it does not.
#pragma once

#include <cuda_runtime_api.h>

namespace dlbench {

inline bool gpu_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

}  // namespace dlbench
