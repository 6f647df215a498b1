#include "bench/nvml/nvml.h"

#include <dlfcn.h>

#include <cstdlib>

namespace dlbench::nvml {

std::string Nvml::library_name() {
  const char* override_name = std::getenv("DLBENCH_NVML_LIBRARY");
  return override_name && *override_name ? override_name : "libnvidia-ml.so.1";
}

std::shared_ptr<Nvml> Nvml::open(const std::string& library) {
  std::shared_ptr<Nvml> nvml(new Nvml());
  nvml->handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (nvml->handle_ == nullptr) {
    nvml->why_unavailable_ = "no NVIDIA driver: " + library + " could not be loaded";
    return nvml;
  }
#define DLBENCH_NVML_RESOLVE(name, ret, params) \
  nvml->api_.name = reinterpret_cast<ret(*) params>(dlsym(nvml->handle_, #name));
  DLBENCH_NVML_FUNCTIONS(DLBENCH_NVML_RESOLVE)
#undef DLBENCH_NVML_RESOLVE
  if (nvml->api_.nvmlInit_v2 == nullptr) {
    nvml->why_unavailable_ = library + " has no nvmlInit_v2 (driver too old)";
    return nvml;
  }
  nvmlReturn_t rc = nvml->api_.nvmlInit_v2();
  if (rc != NVML_SUCCESS) {
    nvml->why_unavailable_ = "NVML could not start: " + nvml->describe(rc);
    return nvml;
  }
  nvml->initialized_ = true;
  return nvml;
}

std::shared_ptr<Nvml> Nvml::from_functions(const Api& api) {
  std::shared_ptr<Nvml> nvml(new Nvml());
  nvml->api_ = api;
  nvml->initialized_ = true;
  return nvml;
}

Nvml::~Nvml() {
  if (initialized_ && api_.nvmlShutdown) api_.nvmlShutdown();
  if (handle_) dlclose(handle_);
}

std::string Nvml::function_not_found(const char* name) {
  return std::string("function not found: this driver's NVML has no ") + name;
}

std::string Nvml::describe(nvmlReturn_t rc) const {
  switch (rc) {
    case NVML_ERROR_NOT_SUPPORTED:
      return "not supported by this GPU or driver";
    case NVML_ERROR_NO_PERMISSION:
      return "no permission (may need root)";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "function not found in this driver's NVML";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "NVIDIA driver not loaded";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost (fell off the bus)";
    default:
      break;
  }
  const char* text = api_.nvmlErrorString ? api_.nvmlErrorString(rc) : nullptr;
  return std::string(text ? text : "NVML error") + " (code " + std::to_string(rc) + ")";
}

}  // namespace dlbench::nvml
