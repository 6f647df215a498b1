#include "engine/backend/cuda/cuda_types.h"

#include <string>

#include "engine/core/error.h"

namespace dlbench::backend::cuda {
namespace {

[[noreturn]] void not_a_float(DType t, const char* op) {
  throw Error(ErrorKind::kUsage, std::string(op) + ": dtype " + to_string(t) +
                                     " is not a float dtype (f32, f16, bf16)");
}

}  // namespace

cudnnDataType_t cudnn_dtype(DType t, const char* op) {
  switch (t) {
    case DType::kF32:
      return CUDNN_DATA_FLOAT;
    case DType::kF16:
      return CUDNN_DATA_HALF;
    case DType::kBF16:
      return CUDNN_DATA_BFLOAT16;
    default:
      break;
  }
  not_a_float(t, op);
}

cudaDataType_t cuda_dtype(DType t, const char* op) {
  switch (t) {
    case DType::kF32:
      return CUDA_R_32F;
    case DType::kF16:
      return CUDA_R_16F;
    case DType::kBF16:
      return CUDA_R_16BF;
    default:
      break;
  }
  not_a_float(t, op);
}

}  // namespace dlbench::backend::cuda
