// RAII owners of CUDA, cuDNN and cuBLASLt objects. Each is created by its constructor (checked,
// throwing) and destroyed by its destructor (checked, never throwing); they move, never copy.
#pragma once

#include <utility>

#include "engine/backend/cuda/cuda_check.h"

namespace dlbench::backend::cuda {

// Owns one handle of type H; Traits says how to create and destroy it.
template <class H, class Traits>
class Owned {
 public:
  Owned() : handle_(Traits::create()) {}
  ~Owned() {
    if (handle_ != H{}) Traits::destroy(handle_);
  }
  Owned(Owned&& other) noexcept : handle_(std::exchange(other.handle_, H{})) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      if (handle_ != H{}) Traits::destroy(handle_);
      handle_ = std::exchange(other.handle_, H{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  H get() const { return handle_; }
  operator H() const { return handle_; }  // NOLINT: a handle passes where the C API wants one

 private:
  H handle_;
};

#define DLBENCH_OWNED_TRAITS(Name, H, create_call, destroy_call, CHECK)     \
  struct Name {                                                             \
    static H create() {                                                     \
      H h{};                                                                \
      CHECK(create_call(&h));                                               \
      return h;                                                             \
    }                                                                       \
    static void destroy(H h) noexcept { CHECK##_NOTHROW(destroy_call(h)); } \
  }

// A non-blocking stream: it does not synchronize with the legacy default stream, so other
// libraries' work on stream 0 never serializes with ours.
struct StreamTraits {
  static cudaStream_t create() {
    cudaStream_t s{};
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }
  static void destroy(cudaStream_t s) noexcept { CUDA_CHECK_NOTHROW(cudaStreamDestroy(s)); }
};
struct EventTraits {
  static cudaEvent_t create() {
    cudaEvent_t e{};
    CUDA_CHECK(cudaEventCreate(&e));
    return e;
  }
  static void destroy(cudaEvent_t e) noexcept { CUDA_CHECK_NOTHROW(cudaEventDestroy(e)); }
};
DLBENCH_OWNED_TRAITS(CudnnTraits, cudnnHandle_t, cudnnCreate, cudnnDestroy, CUDNN_CHECK);
DLBENCH_OWNED_TRAITS(CublasLtTraits, cublasLtHandle_t, cublasLtCreate, cublasLtDestroy,
                     CUBLAS_CHECK);
DLBENCH_OWNED_TRAITS(CublasTraits, cublasHandle_t, cublasCreate, cublasDestroy, CUBLAS_CHECK);
DLBENCH_OWNED_TRAITS(TensorDescTraits, cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                     cudnnDestroyTensorDescriptor, CUDNN_CHECK);
DLBENCH_OWNED_TRAITS(FilterDescTraits, cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                     cudnnDestroyFilterDescriptor, CUDNN_CHECK);
DLBENCH_OWNED_TRAITS(ConvDescTraits, cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                     cudnnDestroyConvolutionDescriptor, CUDNN_CHECK);
DLBENCH_OWNED_TRAITS(MatmulPreferenceTraits, cublasLtMatmulPreference_t,
                     cublasLtMatmulPreferenceCreate, cublasLtMatmulPreferenceDestroy, CUBLAS_CHECK);
DLBENCH_OWNED_TRAITS(RnnDescTraits, cudnnRNNDescriptor_t, cudnnCreateRNNDescriptor,
                     cudnnDestroyRNNDescriptor, CUDNN_CHECK);
DLBENCH_OWNED_TRAITS(RnnDataDescTraits, cudnnRNNDataDescriptor_t, cudnnCreateRNNDataDescriptor,
                     cudnnDestroyRNNDataDescriptor, CUDNN_CHECK);
DLBENCH_OWNED_TRAITS(DropoutDescTraits, cudnnDropoutDescriptor_t, cudnnCreateDropoutDescriptor,
                     cudnnDestroyDropoutDescriptor, CUDNN_CHECK);
#undef DLBENCH_OWNED_TRAITS

using Stream = Owned<cudaStream_t, StreamTraits>;
using Event = Owned<cudaEvent_t, EventTraits>;
using CudnnHandle = Owned<cudnnHandle_t, CudnnTraits>;
using CublasLtHandle = Owned<cublasLtHandle_t, CublasLtTraits>;
using CublasHandle = Owned<cublasHandle_t, CublasTraits>;
using TensorDesc = Owned<cudnnTensorDescriptor_t, TensorDescTraits>;
using FilterDesc = Owned<cudnnFilterDescriptor_t, FilterDescTraits>;
using ConvDesc = Owned<cudnnConvolutionDescriptor_t, ConvDescTraits>;
using MatmulPreference = Owned<cublasLtMatmulPreference_t, MatmulPreferenceTraits>;
using RnnDesc = Owned<cudnnRNNDescriptor_t, RnnDescTraits>;
using RnnDataDesc = Owned<cudnnRNNDataDescriptor_t, RnnDataDescTraits>;
using DropoutDesc = Owned<cudnnDropoutDescriptor_t, DropoutDescTraits>;

// cuBLASLt's matmul descriptor and matrix layouts take arguments at creation, so they are
// created by the caller and only owned here.
template <class H, cublasStatus_t (*Destroy)(H)>
class OwnedAfter {
 public:
  OwnedAfter() = default;
  explicit OwnedAfter(H h) : handle_(h) {}
  ~OwnedAfter() {
    if (handle_ != H{}) CUBLAS_CHECK_NOTHROW(Destroy(handle_));
  }
  OwnedAfter(OwnedAfter&& other) noexcept : handle_(std::exchange(other.handle_, H{})) {}
  OwnedAfter& operator=(OwnedAfter&& other) noexcept {
    if (this != &other) {
      if (handle_ != H{}) CUBLAS_CHECK_NOTHROW(Destroy(handle_));
      handle_ = std::exchange(other.handle_, H{});
    }
    return *this;
  }
  OwnedAfter(const OwnedAfter&) = delete;
  OwnedAfter& operator=(const OwnedAfter&) = delete;
  H get() const { return handle_; }

 private:
  H handle_{};
};
using MatmulDesc = OwnedAfter<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using MatrixLayout = OwnedAfter<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;

}  // namespace dlbench::backend::cuda
