#include "engine/backend/backend.h"
#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend {

std::unique_ptr<Backend> make_backend(const Device& device) {
  if (device.type == DeviceType::kCpu) return std::make_unique<cpu::CpuBackend>();
  throw Error(ErrorKind::kUsage, "no backend for " + to_string(device) + " yet",
              "the CUDA backend is not built yet; use --device cpu");
}

}  // namespace dlbench::backend
