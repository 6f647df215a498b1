// Nvml: libnvidia-ml.so.1 loaded with dlopen, initialized once, shut down on destruction.
// Every symbol is optional. A call returns a Status that is either ok or says, in words a
// user understands, why the value is unavailable (not supported, no permission, function not
// found in this driver's NVML). Used by sysinfo and telemetry.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "bench/nvml/nvml_api.h"
#include "engine/core/reported.h"

namespace dlbench::nvml {

struct Api {
#define DLBENCH_NVML_POINTER(name, ret, params) ret(*name) params = nullptr;
  DLBENCH_NVML_FUNCTIONS(DLBENCH_NVML_POINTER)
#undef DLBENCH_NVML_POINTER
};

struct Status {
  nvmlReturn_t code = NVML_SUCCESS;
  std::string reason;  // empty when ok
  bool ok() const { return code == NVML_SUCCESS; }
};

// A reading as a Reported value: `value` when the call succeeded, else why it did not.
template <class T>
Reported<T> reported(const Status& status, T value) {
  return status.ok() ? Reported<T>::of(value) : Reported<T>::missing(status.reason);
}

class Nvml {
 public:
  // The library dlopen() loads; DLBENCH_NVML_LIBRARY overrides it (tests use a bad path to
  // check the no-driver path on a machine that has one).
  static std::string library_name();

  // Loads and initializes NVML. Never throws: when there is no driver, the result is an
  // Nvml whose loaded() is false and whose why_unavailable() says why.
  static std::shared_ptr<Nvml> open(const std::string& library = library_name());

  // An initialized Nvml over the given functions instead of a driver: tests fabricate
  // readings with it (null pointers are missing symbols, as with an old driver).
  static std::shared_ptr<Nvml> from_functions(const Api& api);

  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool loaded() const { return initialized_; }
  const std::string& why_unavailable() const { return why_unavailable_; }
  const Api& api() const { return api_; }

  // Calls fn when the driver provides it; name is for the message.
  template <class Fn, class... Args>
  Status call(Fn fn, const char* name, Args&&... args) const {
    if (!initialized_) return {NVML_ERROR_UNINITIALIZED, "NVML unavailable: " + why_unavailable_};
    if (fn == nullptr) return {NVML_ERROR_FUNCTION_NOT_FOUND, function_not_found(name)};
    nvmlReturn_t rc = fn(std::forward<Args>(args)...);
    if (rc == NVML_SUCCESS) return {};
    return {rc, describe(rc)};
  }

  // A user-facing description of an NVML return code.
  std::string describe(nvmlReturn_t rc) const;

 private:
  Nvml() = default;
  static std::string function_not_found(const char* name);

  void* handle_ = nullptr;
  bool initialized_ = false;
  std::string why_unavailable_;
  Api api_;
};

}  // namespace dlbench::nvml

// DLBENCH_NVML(nvml, nvmlDeviceGetName, device, buffer, size) -> Status
#define DLBENCH_NVML(nvml, fn, ...) (nvml).call((nvml).api().fn, #fn, __VA_ARGS__)
#define DLBENCH_NVML0(nvml, fn) (nvml).call((nvml).api().fn, #fn)
