// Our own minimal declarations of the NVML C ABI, for loading libnvidia-ml.so.1 at run time.
// NVML keeps its ABI stable (versioned symbols such as _v2 are new entry points, never changed
// ones), so dlbench needs no NVML headers and no link-time dependency on the driver. Only the
// types and functions dlbench calls are declared; values are from NVML's public documentation.
#pragma once

extern "C" {

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef int nvmlReturn_t;

enum : nvmlReturn_t {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999,
};

typedef enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;

typedef enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3,
} nvmlClockType_t;

// nvmlPciInfo_t as taken by nvmlDeviceGetPciInfo_v3.
typedef struct {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

typedef struct {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

// Versioned struct: callers set version = sizeof(nvmlMemory_v2_t) | 2 << 24.
typedef struct {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;

}  // extern "C"

namespace dlbench::nvml {

constexpr unsigned kNvmlMemoryV2 = sizeof(nvmlMemory_v2_t) | (2u << 24);
constexpr unsigned kMaxNvLinks = 18;  // NVML_NVLINK_MAX_LINKS
constexpr unsigned kStringBufferSize = 96;

// X-macro of every NVML function dlbench may call: (name, return type, parameter list).
// Each becomes an optional function pointer in Api; a missing symbol leaves it null.
#define DLBENCH_NVML_FUNCTIONS(X)                                                               \
  X(nvmlInit_v2, nvmlReturn_t, (void))                                                          \
  X(nvmlShutdown, nvmlReturn_t, (void))                                                         \
  X(nvmlErrorString, const char*, (nvmlReturn_t))                                               \
  X(nvmlSystemGetDriverVersion, nvmlReturn_t, (char*, unsigned))                                \
  X(nvmlSystemGetNVMLVersion, nvmlReturn_t, (char*, unsigned))                                  \
  X(nvmlSystemGetCudaDriverVersion_v2, nvmlReturn_t, (int*))                                    \
  X(nvmlDeviceGetCount_v2, nvmlReturn_t, (unsigned*))                                           \
  X(nvmlDeviceGetHandleByIndex_v2, nvmlReturn_t, (unsigned, nvmlDevice_t*))                     \
  X(nvmlDeviceGetName, nvmlReturn_t, (nvmlDevice_t, char*, unsigned))                           \
  X(nvmlDeviceGetUUID, nvmlReturn_t, (nvmlDevice_t, char*, unsigned))                           \
  X(nvmlDeviceGetPciInfo_v3, nvmlReturn_t, (nvmlDevice_t, nvmlPciInfo_t*))                      \
  X(nvmlDeviceGetCudaComputeCapability, nvmlReturn_t, (nvmlDevice_t, int*, int*))               \
  X(nvmlDeviceGetMemoryInfo, nvmlReturn_t, (nvmlDevice_t, nvmlMemory_t*))                       \
  X(nvmlDeviceGetMemoryInfo_v2, nvmlReturn_t, (nvmlDevice_t, nvmlMemory_v2_t*))                 \
  X(nvmlDeviceGetMaxClockInfo, nvmlReturn_t, (nvmlDevice_t, nvmlClockType_t, unsigned*))        \
  X(nvmlDeviceGetMemoryBusWidth, nvmlReturn_t, (nvmlDevice_t, unsigned*))                       \
  X(nvmlDeviceGetMaxPcieLinkGeneration, nvmlReturn_t, (nvmlDevice_t, unsigned*))                \
  X(nvmlDeviceGetMaxPcieLinkWidth, nvmlReturn_t, (nvmlDevice_t, unsigned*))                     \
  X(nvmlDeviceGetCurrPcieLinkGeneration, nvmlReturn_t, (nvmlDevice_t, unsigned*))               \
  X(nvmlDeviceGetCurrPcieLinkWidth, nvmlReturn_t, (nvmlDevice_t, unsigned*))                    \
  X(nvmlDeviceGetNvLinkState, nvmlReturn_t, (nvmlDevice_t, unsigned, nvmlEnableState_t*))       \
  X(nvmlDeviceGetPowerManagementLimit, nvmlReturn_t, (nvmlDevice_t, unsigned*))                 \
  X(nvmlDeviceGetEccMode, nvmlReturn_t, (nvmlDevice_t, nvmlEnableState_t*, nvmlEnableState_t*)) \
  X(nvmlDeviceGetMigMode, nvmlReturn_t, (nvmlDevice_t, unsigned*, unsigned*))                   \
  X(nvmlDeviceGetPersistenceMode, nvmlReturn_t, (nvmlDevice_t, nvmlEnableState_t*))

}  // namespace dlbench::nvml
