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
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_NO_DATA = 21,
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

// ---- Interconnect (bench/sysinfo/interconnect): how GPUs reach each other. ----

// The nearest common ancestor of two GPUs in the PCIe tree; spaced for future levels.
typedef enum {
  NVML_TOPOLOGY_INTERNAL = 0,     // the same board (e.g. Tesla K80)
  NVML_TOPOLOGY_SINGLE = 10,      // through at most one PCIe switch
  NVML_TOPOLOGY_MULTIPLE = 20,    // through several PCIe switches, no host bridge
  NVML_TOPOLOGY_HOSTBRIDGE = 30,  // through one host bridge
  NVML_TOPOLOGY_NODE = 40,        // through host bridges of one NUMA node
  NVML_TOPOLOGY_SYSTEM = 50,      // across NUMA nodes (CPU sockets)
} nvmlGpuTopologyLevel_t;

// What the far end of an NVLink is.
typedef enum {
  NVML_NVLINK_DEVICE_TYPE_GPU = 0x00,
  NVML_NVLINK_DEVICE_TYPE_IBMNPU = 0x01,
  NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02,
  NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF,
} nvmlIntNvLinkDeviceType_t;

// nvmlDeviceGetNvLinkVersion's answer (nvmlNvlinkVersion_t): codes, not version numbers.
enum : unsigned int {
  NVML_NVLINK_VERSION_INVALID = 0,
  NVML_NVLINK_VERSION_1_0 = 1,
  NVML_NVLINK_VERSION_2_0 = 2,
  NVML_NVLINK_VERSION_2_2 = 3,
  NVML_NVLINK_VERSION_3_0 = 4,
  NVML_NVLINK_VERSION_3_1 = 5,
  NVML_NVLINK_VERSION_4_0 = 6,
  NVML_NVLINK_VERSION_5_0 = 7,
  NVML_NVLINK_VERSION_6_0 = 8,
};

typedef enum {
  NVML_P2P_CAPS_INDEX_READ = 0,
  NVML_P2P_CAPS_INDEX_WRITE = 1,
  NVML_P2P_CAPS_INDEX_NVLINK = 2,
  NVML_P2P_CAPS_INDEX_ATOMICS = 3,
  NVML_P2P_CAPS_INDEX_PROP = 4,
} nvmlGpuP2PCapsIndex_t;

typedef enum {
  NVML_P2P_STATUS_OK = 0,
  NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = 1,
  NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
  NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
  NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
  NVML_P2P_STATUS_NOT_SUPPORTED = 5,
  NVML_P2P_STATUS_UNKNOWN = 6,
} nvmlGpuP2PStatus_t;

// ---- Telemetry (bench/telemetry): utilization, processes, field values, GPM. ----

// Percent of the last sample period (1/6 s to 1 s by product) in which at least one kernel ran
// (gpu) or device memory was read or written (memory). Not how much of the GPU was used.
typedef struct {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;

// As taken by nvmlDeviceGetComputeRunningProcesses_v3 (24 bytes; the R515 header briefly added
// usedGpuCcProtectedMemory here, which moved to nvmlProcessDetail_v1_t).
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // NVML_VALUE_NOT_AVAILABLE when unknown
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef enum { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;

typedef enum {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
} nvmlValueType_t;

typedef union {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
} nvmlValue_t;

// One entry of nvmlDeviceGetFieldValues: the caller sets fieldId (and scopeId), NVML fills the
// rest. 40 bytes: fieldId@0 scopeId@4 timestamp@8 latencyUsec@16 valueType@24 nvmlReturn@28
// value@32.
typedef struct {
  unsigned int fieldId;
  unsigned int scopeId;   // e.g. NVLink link id; UINT_MAX = all links
  long long timestamp;    // CPU time of the value, microseconds since 1970
  long long latencyUsec;  // how long NVML took to update it
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;  // value is valid only when NVML_SUCCESS
  nvmlValue_t value;
} nvmlFieldValue_t;

// Field ids (NVML_FI_*) dlbench reads.
enum : unsigned int {
  NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138,  // KiB, cumulative; scopeId = link or UINT_MAX
  NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139,
  NVML_FI_DEV_POWER_AVERAGE = 185,        // mW, averaged over the last second
  NVML_FI_DEV_POWER_INSTANT = 186,        // mW
  NVML_FI_DEV_PCIE_COUNT_TX_BYTES = 197,  // bytes, cumulative, may wrap (driver >= 555)
  NVML_FI_DEV_PCIE_COUNT_RX_BYTES = 198,
};

// Clock-event ("throttle") reasons, a bit mask (nvmlClocksEventReason*).
enum : unsigned long long {
  NVML_CLOCKS_EVENT_REASON_GPU_IDLE = 0x1ull,
  NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS_SETTING = 0x2ull,
  NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP = 0x4ull,
  NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN = 0x8ull,
  NVML_CLOCKS_EVENT_REASON_SYNC_BOOST = 0x10ull,
  NVML_CLOCKS_EVENT_REASON_SW_THERMAL_SLOWDOWN = 0x20ull,
  NVML_CLOCKS_EVENT_REASON_HW_THERMAL_SLOWDOWN = 0x40ull,
  NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN = 0x80ull,
  NVML_CLOCKS_EVENT_REASON_DISPLAY_CLOCK_SETTING = 0x100ull,
};

// GPM (GPU performance monitoring, Hopper and newer): metrics computed by the driver from two
// counter samples taken more than 100 ms apart.
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

typedef enum {
  NVML_GPM_METRIC_GRAPHICS_UTIL = 1,
  NVML_GPM_METRIC_SM_UTIL = 2,       // % of SMs with at least one warp assigned
  NVML_GPM_METRIC_SM_OCCUPANCY = 3,  // % of warps resident vs the theoretical maximum
  NVML_GPM_METRIC_INTEGER_UTIL = 4,
  NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,  // % of time the SMs ran any tensor-core instruction
  NVML_GPM_METRIC_DFMA_TENSOR_UTIL = 6,
  NVML_GPM_METRIC_HMMA_TENSOR_UTIL = 7,
  NVML_GPM_METRIC_IMMA_TENSOR_UTIL = 9,
  NVML_GPM_METRIC_DRAM_BW_UTIL = 10,  // % of the theoretical DRAM bandwidth
  NVML_GPM_METRIC_FP64_UTIL = 11,     // non-tensor pipes, % of time
  NVML_GPM_METRIC_FP32_UTIL = 12,
  NVML_GPM_METRIC_FP16_UTIL = 13,
  NVML_GPM_METRIC_PCIE_TX_PER_SEC = 20,  // MiB/s
  NVML_GPM_METRIC_PCIE_RX_PER_SEC = 21,
  NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC = 60,  // MiB/s, all links
  NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC = 61,
} nvmlGpmMetricId_t;

typedef struct {
  unsigned int metricId;    // in: NVML_GPM_METRIC_*
  nvmlReturn_t nvmlReturn;  // out: value is valid only when NVML_SUCCESS
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
} nvmlGpmMetric_t;

// NVML_GPM_METRIC_MAX was 98 in R525 headers and is 210 in current ones. The driver reads only
// numMetrics entries, so the larger array is safe with every driver.
#define NVML_GPM_METRIC_MAX 210
#define NVML_GPM_METRICS_GET_VERSION 1
#define NVML_GPM_SUPPORT_VERSION 1

typedef struct {
  unsigned int version;  // NVML_GPM_METRICS_GET_VERSION
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct {
  unsigned int version;  // NVML_GPM_SUPPORT_VERSION
  unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

}  // extern "C"

namespace dlbench::nvml {

constexpr unsigned kNvmlMemoryV2 = sizeof(nvmlMemory_v2_t) | (2u << 24);
constexpr unsigned kMaxNvLinks = 18;  // NVML_NVLINK_MAX_LINKS
constexpr unsigned kStringBufferSize = 96;
// usedGpuMemory when the driver cannot tell (NVML_VALUE_NOT_AVAILABLE).
constexpr unsigned long long kValueNotAvailable = ~0ull;

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
  X(nvmlDeviceGetPersistenceMode, nvmlReturn_t, (nvmlDevice_t, nvmlEnableState_t*))             \
  DLBENCH_NVML_INTERCONNECT_FUNCTIONS(X)                                                        \
  DLBENCH_NVML_TELEMETRY_FUNCTIONS(X)

// The functions bench/sysinfo/interconnect reads the GPU topology with.
#define DLBENCH_NVML_INTERCONNECT_FUNCTIONS(X)                                                   \
  X(nvmlDeviceGetTopologyCommonAncestor, nvmlReturn_t,                                           \
    (nvmlDevice_t, nvmlDevice_t, nvmlGpuTopologyLevel_t*))                                       \
  X(nvmlDeviceGetP2PStatus, nvmlReturn_t,                                                        \
    (nvmlDevice_t, nvmlDevice_t, nvmlGpuP2PCapsIndex_t, nvmlGpuP2PStatus_t*))                    \
  X(nvmlDeviceGetNvLinkVersion, nvmlReturn_t, (nvmlDevice_t, unsigned, unsigned*))               \
  X(nvmlDeviceGetNvLinkRemotePciInfo_v2, nvmlReturn_t, (nvmlDevice_t, unsigned, nvmlPciInfo_t*)) \
  X(nvmlDeviceGetNvLinkRemoteDeviceType, nvmlReturn_t,                                           \
    (nvmlDevice_t, unsigned, nvmlIntNvLinkDeviceType_t*))

// The functions bench/telemetry samples with; part of DLBENCH_NVML_FUNCTIONS.
#define DLBENCH_NVML_TELEMETRY_FUNCTIONS(X)                                                       \
  X(nvmlDeviceGetUtilizationRates, nvmlReturn_t, (nvmlDevice_t, nvmlUtilization_t*))              \
  X(nvmlDeviceGetFieldValues, nvmlReturn_t, (nvmlDevice_t, int, nvmlFieldValue_t*))               \
  X(nvmlDeviceGetTotalEnergyConsumption, nvmlReturn_t, (nvmlDevice_t, unsigned long long*))       \
  X(nvmlDeviceGetPowerUsage, nvmlReturn_t, (nvmlDevice_t, unsigned*))                             \
  X(nvmlDeviceGetClockInfo, nvmlReturn_t, (nvmlDevice_t, nvmlClockType_t, unsigned*))             \
  X(nvmlDeviceGetTemperature, nvmlReturn_t, (nvmlDevice_t, nvmlTemperatureSensors_t, unsigned*))  \
  X(nvmlDeviceGetCurrentClocksEventReasons, nvmlReturn_t, (nvmlDevice_t, unsigned long long*))    \
  X(nvmlDeviceGetCurrentClocksThrottleReasons, nvmlReturn_t, (nvmlDevice_t, unsigned long long*)) \
  X(nvmlDeviceGetComputeRunningProcesses_v3, nvmlReturn_t,                                        \
    (nvmlDevice_t, unsigned*, nvmlProcessInfo_t*))                                                \
  X(nvmlGpmQueryDeviceSupport, nvmlReturn_t, (nvmlDevice_t, nvmlGpmSupport_t*))                   \
  X(nvmlGpmSampleAlloc, nvmlReturn_t, (nvmlGpmSample_t*))                                         \
  X(nvmlGpmSampleFree, nvmlReturn_t, (nvmlGpmSample_t))                                           \
  X(nvmlGpmSampleGet, nvmlReturn_t, (nvmlDevice_t, nvmlGpmSample_t))                              \
  X(nvmlGpmMetricsGet, nvmlReturn_t, (nvmlGpmMetricsGet_t*))

}  // namespace dlbench::nvml
