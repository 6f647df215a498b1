#include "engine/backend/backend.h"
#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend {

std::unique_ptr<Backend> make_backend(const Device& device) {
  if (device.type == DeviceType::kCpu) return std::make_unique<cpu::CpuBackend>();
  throw Error(ErrorKind::kResource,
              "device " + to_string(device) + " is not available: dlbench has no CUDA backend yet",
              "use --device cpu");
}

}  // namespace dlbench::backend
