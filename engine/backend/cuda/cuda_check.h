// Checked calls into the CUDA runtime, cuDNN and cuBLASLt. One generic check takes a status, a
// test for success and a function that names the status; each library specializes it with a
// macro, so every failure says which statement failed, where, and what the library said.
//
// Out of memory is a resource the user can do something about (a smaller batch), so it
// becomes Error(kResource); every other failure is an external library error (kExternal).
// Destructors use the *_NOTHROW variants, which report to stderr and carry on.
#pragma once

#include <cstdio>
#include <string>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "engine/core/error.h"

namespace dlbench::backend::cuda {

[[noreturn]] void throw_library_error(const char* library, const std::string& status,
                                      bool out_of_memory, const char* statement, const char* file,
                                      int line);
void report_library_error(const char* library, const std::string& status, const char* statement,
                          const char* file, int line) noexcept;

inline std::string status_name(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}
// cuDNN's name for the status, then the message it keeps per thread saying which of its checks
// failed (the first thing to read when a GPU run fails), where it has one.
std::string status_name(cudnnStatus_t s);
std::string status_name(cublasStatus_t s);

inline bool is_out_of_memory(cudaError_t e) {
  return e == cudaErrorMemoryAllocation;
}
inline bool is_out_of_memory(cudnnStatus_t s) {
  return s == CUDNN_STATUS_ALLOC_FAILED;
}
inline bool is_out_of_memory(cublasStatus_t s) {
  return s == CUBLAS_STATUS_ALLOC_FAILED;
}

template <class Status>
void check_status(Status status, Status success, const char* library, const char* statement,
                  const char* file, int line) {
  if (status != success)
    throw_library_error(library, status_name(status), is_out_of_memory(status), statement, file,
                        line);
}

template <class Status>
void check_status_nothrow(Status status, Status success, const char* library, const char* statement,
                          const char* file, int line) noexcept {
  if (status != success) report_library_error(library, status_name(status), statement, file, line);
}

}  // namespace dlbench::backend::cuda

#define DLBENCH_LIBRARY_CHECK(check, success, library, statement) \
  ::dlbench::backend::cuda::check((statement), (success), library, #statement, __FILE__, __LINE__)

#define CUDA_CHECK(statement) DLBENCH_LIBRARY_CHECK(check_status, cudaSuccess, "CUDA", statement)
#define CUDNN_CHECK(statement) \
  DLBENCH_LIBRARY_CHECK(check_status, CUDNN_STATUS_SUCCESS, "cuDNN", statement)
#define CUBLAS_CHECK(statement) \
  DLBENCH_LIBRARY_CHECK(check_status, CUBLAS_STATUS_SUCCESS, "cuBLASLt", statement)

#define CUDA_CHECK_NOTHROW(statement) \
  DLBENCH_LIBRARY_CHECK(check_status_nothrow, cudaSuccess, "CUDA", statement)
#define CUDNN_CHECK_NOTHROW(statement) \
  DLBENCH_LIBRARY_CHECK(check_status_nothrow, CUDNN_STATUS_SUCCESS, "cuDNN", statement)
#define CUBLAS_CHECK_NOTHROW(statement) \
  DLBENCH_LIBRARY_CHECK(check_status_nothrow, CUBLAS_STATUS_SUCCESS, "cuBLASLt", statement)

// After a kernel launch: a bad configuration shows up here, not at the next synchronize.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
