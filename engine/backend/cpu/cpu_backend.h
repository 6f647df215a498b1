// The CPU backend: oneDNN primitives for convolution, batch norm, pooling, inner product and
// ReLU; plain loops for the loss, elementwise ops, the optimizer and fills. f32 only.
//
// Layouts are the house ones, handed to oneDNN as explicit format tags so activations are
// never reordered: activations nhwc, matmul weights oi ([out, in]). Convolution weights are
// KRSC (ohwi) in memory but reordered into the layout oneDNN's fast kernels choose (see
// cpu_conv.cc), because oneDNN 2.6 only has a naive kernel for ohwi.
//
// Primitives are created once per parameter set and cached, so a training loop pays for
// primitive creation only in its first step. One engine and one in-order stream per backend;
// every op waits for its stream before returning, so host code may read outputs at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <oneapi/dnnl/dnnl.hpp>

#include "engine/backend/backend.h"
#include "engine/backend/cpu/cpu_lstm.h"
#include "engine/backend/cpu/dnnl_util.h"

namespace dlbench::backend::cpu {

// GELU in its tanh form, x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2, and its derivative, in
// double (cpu_elementwise.cc): the gelu ops, and the matmul's GELU-gradient epilogue.
double gelu(double x);
double gelu_slope(double x);

// Sequence lengths (i32, on the host) checked to lie in [0, seq] before anything is written
// (cpu_attention.cc): throws Error(kUsage) naming the first that does not; null where undefined.
const std::int32_t* checked_lengths(const Tensor& lengths, std::int64_t seq, const char* op,
                                    const char* what);

// What a cache entry holds: the primitive, and the workspace it needs (pooling) if any.
// Convolutions also hold the weights layout their fast kernels chose and the reorder between
// it and our KRSC weights (empty when the primitive reads KRSC as it is).
struct CachedPrimitive {
  dnnl::primitive primitive = {};
  dnnl::memory::desc workspace = {};
  dnnl::memory::desc weights = {};
  dnnl::primitive weights_reorder = {};
};

// The first field of every cache key: which primitive the other fields describe.
enum class PrimitiveKind : std::int64_t {
  kConvForward,
  kConvBackwardData,
  kConvBackwardWeights,
  kBatchNormTraining,
  kBatchNormInference,
  kBatchNormBackward,
  kPoolForward,
  kPoolBackward,
  kMatmulForward,
  kMatmulBackwardData,
  kMatmulBackwardWeights,
  kReluForward,
  kReluBackward,
};

// The CPU backend's answer to Backend::supports, without a backend (tests ask it directly).
Support cpu_supports(OpKind op, const OpParams& params, DType dtype);

class CpuBackend final : public Backend {
 public:
  CpuBackend();
  ~CpuBackend() override;

  std::string name() const override;  // "cpu (oneDNN 2.6.3)"
  Device device() const override { return Device::cpu(); }
  DeviceAllocator& allocator() override { return allocator_; }
  void synchronize() override;
  // Host steady clock: every op has finished when it returns.
  std::unique_ptr<DeviceTimer> make_timer(std::size_t marks) override {
    return std::make_unique<HostClockTimer>(marks);
  }
  std::size_t pool_workspace_bytes(const PoolParams& p) const override;
  Support supports(OpKind op, const OpParams& params, DType dtype) const override;
  std::size_t embedding_backward_workspace_bytes(std::int64_t, std::int64_t,
                                                 std::int64_t) const override {
    return 0;
  }
  // oneDNN's workspace for the shape, then the last step's h and c (backward reads them).
  std::size_t lstm_reserve_bytes(const LstmParams& p, DType dtype) const override;

  // How many primitives are cached (tests check that a repeated step creates none).
  std::size_t cached_primitives() const { return primitives_.size() + lstm_primitives_.size(); }

 protected:
#define DLBENCH_OP(ret, op, ...) ret op##_impl(__VA_ARGS__) override;
#include "engine/backend/backend_ops.def"
#undef DLBENCH_OP

 private:
  // Runs one primitive on the stream and waits, turning oneDNN failures into dlbench::Error.
  void execute(const char* op, const dnnl::primitive& primitive, const Args& args);
  dnnl::memory mem(const dnnl::memory::desc& md, const Tensor& t) const;
  CachedPrimitive& pool_primitive(const PoolParams& p, PrimitiveKind kind) const;
  // Convolution weights in the layout the cached primitive chose (reordered from KRSC into
  // scratch when it differs).
  dnnl::memory primitive_weights(const CachedPrimitive& entry, const dnnl::memory::desc& user,
                                 const Tensor& w);
  // The primitives of an LSTM shape, made on first use (cpu_lstm.cc).
  LstmPrimitives& lstm_primitives(const LstmParams& p, bool training) const;
  void make_lstm_backward(const LstmParams& p, LstmPrimitives& e) const;
  // Scratch slot of reordered convolution weights; slots 0-2 hold accumulated gradients.
  static constexpr int kWeightsScratch = 3;

  dnnl::engine engine_;
  dnnl::stream stream_;
  HostAllocator allocator_;
  // Mutable because pool_workspace_bytes() is a const query that may create the primitive.
  mutable PrimitiveCache<CachedPrimitive> primitives_;
  mutable PrimitiveCache<LstmPrimitives> lstm_primitives_;
  ScratchPool scratch_;
};

}  // namespace dlbench::backend::cpu
