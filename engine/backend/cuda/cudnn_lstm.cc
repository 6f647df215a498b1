// The descriptors of one LSTM shape on cuDNN's RNN API (cudnn_lstm.h), and the check that
// cuDNN's weight space is laid out as LstmParams says, gate by gate, before any weights exist.
#include "engine/backend/cuda/cudnn_lstm.h"

#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend/cuda/cuda_types.h"
#include "engine/core/error.h"

namespace dlbench::backend::cuda {
namespace {

// Where cuDNN keeps one gate's matrix and bias, as element offsets from the weight space's
// start, and the matrix's dims.
struct GateParams {
  std::int64_t matrix = -1, bias = -1;
  std::vector<int> dims;
};

GateParams gate_params(cudnnHandle_t handle, cudnnRNNDescriptor_t rnn, std::size_t bytes, int id,
                       std::size_t element_bytes) {
  // Offsets only: cuDNN computes addresses from the base and reads nothing there, so an
  // aligned stand-in base serves before any weights exist.
  auto* base = reinterpret_cast<std::byte*>(std::uintptr_t{1} << 20);
  TensorDesc m, b;
  void* m_addr = nullptr;
  void* b_addr = nullptr;
  CUDNN_CHECK(cudnnGetRNNWeightParams(handle, rnn, 0, bytes, base, id, m, &m_addr, b, &b_addr));
  GateParams g;
  auto offset = [&](void* addr) {
    return static_cast<std::int64_t>((static_cast<std::byte*>(addr) - base) /
                                     static_cast<std::ptrdiff_t>(element_bytes));
  };
  if (m_addr != nullptr) g.matrix = offset(m_addr);
  if (b_addr != nullptr) g.bias = offset(b_addr);
  cudnnDataType_t type{};
  int rank = 0;
  std::vector<int> dims(8), strides(8);
  CUDNN_CHECK(cudnnGetTensorNdDescriptor(m, 8, &type, &rank, dims.data(), strides.data()));
  dims.resize(rank);
  g.dims = dims;
  return g;
}

// Refuses unless gate `id` (0-3 on the input, 4-7 on the recurrence) sits where LstmParams's
// layout puts it: W_ih, then W_hh, then b_ih and b_hh, each gate's block H rows deep.
void check_gate(const LstmParams& p, const GateParams& g, int id) {
  const std::int64_t h = p.hidden, gate = id % 4;
  const bool recurrent = id >= 4;
  const std::int64_t columns = recurrent ? h : p.input;
  const std::int64_t matrix = (recurrent ? p.gates() * p.input : 0) + gate * h * columns;
  const std::int64_t bias = p.gates() * (p.input + h) + (recurrent ? p.gates() : 0) + gate * h;
  const bool shape_ok =
      g.dims.size() == 3 && g.dims[0] == 1 && g.dims[1] == h && g.dims[2] == columns;
  if (g.matrix == matrix && g.bias == bias && shape_ok) return;
  throw Error(ErrorKind::kExternal,
              "lstm: cuDNN lays out gate " + std::to_string(id) + "'s weights at element " +
                  std::to_string(g.matrix) + " and bias at " + std::to_string(g.bias) +
                  ", not at " + std::to_string(matrix) + " and " + std::to_string(bias) +
                  " as our layout has them (input " + std::to_string(p.input) + ", hidden " +
                  std::to_string(h) + ")");
}

}  // namespace

CudnnLstm::CudnnLstm(cudnnHandle_t handle, const LstmParams& p, DType dtype) {
  const cudnnDataType_t io = cudnn_dtype(dtype, "lstm");
  // Strict f32 keeps to FMA kernels as the convolutions do; TF32 and f16/bf16 take tensor
  // cores. Every dtype accumulates in f32.
  const cudnnMathType_t math = dtype != DType::kF32        ? CUDNN_TENSOR_OP_MATH
                               : p.math == MathMode::kTf32 ? CUDNN_DEFAULT_MATH
                                                           : CUDNN_FMA_MATH;
  // No dropout between layers (there is one layer); cuDNN still wants a descriptor.
  CUDNN_CHECK(cudnnSetDropoutDescriptor(dropout_, handle, 0.0f, nullptr, 0, 0));
  const auto input = static_cast<std::int32_t>(p.input);
  const auto hidden = static_cast<std::int32_t>(p.hidden);
  CUDNN_CHECK(cudnnSetRNNDescriptor_v8(rnn_, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM,
                                       CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL,
                                       CUDNN_LINEAR_INPUT, io, CUDNN_DATA_FLOAT, math, input,
                                       hidden, hidden, 1, dropout_, CUDNN_RNN_PADDED_IO_ENABLED));
  // Every sequence is the whole length: shapes stay fixed, so a step can be recorded.
  const std::vector<int> lengths(static_cast<std::size_t>(p.batch), static_cast<int>(p.steps));
  for (auto [desc, width] : {std::pair{x_.get(), input}, {y_.get(), hidden}})
    CUDNN_CHECK(cudnnSetRNNDataDescriptor(desc, io, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                          static_cast<int>(p.steps), static_cast<int>(p.batch),
                                          width, lengths.data(), nullptr));
  const int dims[3] = {1, static_cast<int>(p.batch), hidden};
  const int strides[3] = {static_cast<int>(p.batch) * hidden, hidden, 1};
  CUDNN_CHECK(cudnnSetTensorNdDescriptor(state_, io, 3, dims, strides));

  CUDNN_CHECK(cudnnGetRNNWeightSpaceSize(handle, rnn_, &weight_bytes_));
  const std::size_t element = size_of(dtype);
  if (weight_bytes_ != static_cast<std::size_t>(p.weights()) * element)
    throw Error(ErrorKind::kExternal, "lstm: cuDNN's weight space holds " +
                                          std::to_string(weight_bytes_) + " bytes, our layout " +
                                          std::to_string(p.weights() * element));
  for (int id = 0; id < 8; ++id)
    check_gate(p, gate_params(handle, rnn_, weight_bytes_, id, element), id);
  CUDNN_CHECK(cudnnGetRNNTempSpaceSizes(handle, rnn_, CUDNN_FWD_MODE_TRAINING, x_, &work_bytes_,
                                        &reserve_bytes_));
}

}  // namespace dlbench::backend::cuda
