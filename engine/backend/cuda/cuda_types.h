// Where dlbench's dtypes and buffers meet the CUDA libraries: the libraries' codes for our float
// dtypes, and the 16-byte alignment their vector paths (and ours) want. Below the backend class,
// so the cuDNN graph pieces can use them too.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "engine/core/dtype.h"

namespace dlbench::backend::cuda {

// Library dtypes of our float dtypes; throws Error(kUsage) for integers.
cudnnDataType_t cudnn_dtype(DType t, const char* op);
cudaDataType_t cuda_dtype(DType t, const char* op);

// 16-byte packs (8 halves, 4 floats) may be loaded at p; also what cuDNN's fused engines need.
// A null pointer (an operand that is not there) counts as aligned.
inline bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

}  // namespace dlbench::backend::cuda
