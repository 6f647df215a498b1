// The device a run uses when the user names none: the first GPU when this build has the CUDA
// backend and the machine has a GPU, otherwise the CPU.
#include "engine/backend/backend.h"

#if DLBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace dlbench::backend {

int cuda_device_count() {
#if DLBENCH_HAVE_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess) return count;
  cudaGetLastError();  // clear "no device" so later runtime calls start clean
#endif
  return 0;
}

Device default_device() {
  return cuda_device_count() > 0 ? Device::cuda(0) : Device::cpu();
}

}  // namespace dlbench::backend
