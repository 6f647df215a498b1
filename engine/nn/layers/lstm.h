// Lstm: one LSTM layer over a whole time-major sequence, GNMT's recurrent layer (the cell and
// the weights' layout are LstmParams's). A bidirectional layer is two of them, the second over
// the sequences reversed.
//   inputs   x [steps * batch, input]; with states also h0 and c0 [batch, hidden]
//   outputs  y [steps * batch, hidden]; with states also the last step's h and c
// Without states the recurrence starts from zeros and the last states are not kept (training
// over whole sentences); with them a decoder can carry its states from one call to the next.
// The weights are one flat parameter, cuDNN's weight space, so no backend copies them.
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// Whether the recurrence starts from zeros and keeps no last states (training over whole
// sentences), or takes h0 and c0 as inputs and gives the last h and c as outputs.
enum class LstmStates { kFromZeros, kCarried };

class Lstm final : public Layer {
 public:
  // `mode`: training keeps the backend's reserve from forward to backward. The weights and
  // biases start from U(-bound, bound); 0 takes PyTorch's default bound, 1 / sqrt(hidden).
  Lstm(const backend::LstmParams& p, Mode mode, LstmStates states = LstmStates::kFromZeros,
       float bound = 0.0f);
  const char* kind() const override { return "lstm"; }
  int num_inputs() const override { return states_ ? 3 : 1; }
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  // One parameter holding the matrices and the biases alike: all are decayed where the
  // optimizer decays (GNMT's Adam does not).
  std::vector<ParamDecl> params() const override;
  std::vector<StateDecl> state(backend::Backend& be) const override;
  SavedForBackward saved_for_backward() const override;
  std::int64_t forward_macs() const override { return p_.macs(); }
  // cuDNN and oneDNN compute the input's gradient whether or not it is wanted (and backward
  // needs the input to want one: GNMT's LSTMs read layers that pass gradients on).
  std::int64_t backward_macs(bool) const override { return 2 * p_.macs(); }
  void set_math(backend::MathMode math) override { p_.math = math; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  backend::LstmParams p_;
  Mode mode_;
  bool states_;
  float bound_;
};

}  // namespace dlbench::nn
