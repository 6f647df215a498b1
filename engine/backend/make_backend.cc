#include "engine/backend/backend.h"
#include "engine/backend/cpu/cpu_backend.h"
#if DLBENCH_HAVE_CUDA
#include "engine/backend/cuda/cuda_backend.h"
#endif

namespace dlbench::backend {

std::unique_ptr<Backend> make_backend(const Device& device) {
  if (device.type == DeviceType::kCpu) return std::make_unique<cpu::CpuBackend>();
#if DLBENCH_HAVE_CUDA
  // Throws Error(kResource) naming how many GPUs there are when cuda:N does not exist.
  return std::make_unique<cuda::CudaBackend>(device.index);
#else
  throw Error(ErrorKind::kResource,
              "device " + to_string(device) + " is not available: dlbench has no CUDA backend yet",
              "use the CPU device", {Setting::kDevice, "cpu"});
#endif
}

}  // namespace dlbench::backend
