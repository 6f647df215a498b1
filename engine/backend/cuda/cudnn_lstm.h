// One LSTM shape on cuDNN's RNN API (the v8 entry points, which cuDNN 9 keeps and has no graph
// API for): the descriptors of one unidirectional layer with two biases, time-major data
// with every sequence the full length, and the sizes cuDNN asks for. Made once per shape
// and dtype by the CUDA backend (cuda_lstm.cc runs it).
#pragma once

#include <cstddef>

#include "engine/backend/cuda/cuda_handles.h"
#include "engine/backend/op_params.h"
#include "engine/core/dtype.h"

namespace dlbench::backend::cuda {

class CudnnLstm {
 public:
  // Throws Error(kExternal) when cuDNN refuses the configuration, or when its weight space is
  // not laid out as LstmParams says (then our weights cannot be handed over).
  CudnnLstm(cudnnHandle_t handle, const LstmParams& p, DType dtype);

  cudnnRNNDescriptor_t rnn() const { return rnn_; }
  cudnnRNNDataDescriptor_t x() const { return x_; }
  cudnnRNNDataDescriptor_t y() const { return y_; }
  cudnnTensorDescriptor_t state() const { return state_; }
  std::size_t weight_bytes() const { return weight_bytes_; }
  std::size_t work_bytes() const { return work_bytes_; }        // scratch, training or not
  std::size_t reserve_bytes() const { return reserve_bytes_; }  // forward to backward

 private:
  DropoutDesc dropout_;
  RnnDesc rnn_;
  RnnDataDesc x_, y_;
  TensorDesc state_;
  std::size_t weight_bytes_ = 0, work_bytes_ = 0, reserve_bytes_ = 0;
};

}  // namespace dlbench::backend::cuda
