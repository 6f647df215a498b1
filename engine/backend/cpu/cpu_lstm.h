// What the CPU backend keeps per LSTM shape (cpu_lstm.cc): oneDNN's primitives, and the buffers
// they read or write that are no tensor of ours.
#pragma once

#include <cstddef>

#include <oneapi/dnnl/dnnl.hpp>

namespace dlbench::backend::cpu {

// Our weights (cuDNN's layout: oneDNN's ldgoi) in the layout a primitive chose. The reorder
// is empty, and nothing is copied, where the primitive reads ours as it is.
struct LstmWeights {
  dnnl::memory::desc ours;
  dnnl::memory buffer;
  dnnl::reorder reorder;
};

// One LSTM shape in training or inference. The backward is made from a training forward on
// its first use.
struct LstmPrimitives {
  dnnl::lstm_forward::primitive_desc forward_pd;
  dnnl::primitive forward;
  LstmWeights weights_layer, weights_iter;
  dnnl::memory bias;                // b_ih + b_hh: oneDNN's LSTM has one bias
  dnnl::memory zeros;               // the states where none are given, never written
  dnnl::memory spare_h, spare_c;    // states written that nobody asked for
  std::size_t workspace_bytes = 0;  // oneDNN's, rounded up: the reserve's first part

  dnnl::lstm_backward::primitive_desc backward_pd;
  dnnl::primitive backward;
  LstmWeights back_weights_layer, back_weights_iter;
  // The weights' gradients as the backward writes them, then reordered into ours.
  dnnl::memory diff_layer, diff_iter, diff_bias;
  LstmWeights ours_diff_layer, ours_diff_iter;
  dnnl::memory dx;  // dx before it is added to the caller's (GradMode::kAccumulate)
};

}  // namespace dlbench::backend::cpu
