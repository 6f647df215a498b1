// FeedForward: Linear -> GELU -> Linear as one layer, BERT's feed-forward block, made by the
// fuse_feed_forward pass (models keep describing the three plain layers). The GELU rides in the
// products' epilogues (cuBLASLt's on CUDA):
//   forward   h = GELU(x · W1ᵀ + b1), keeping pre = x · W1ᵀ + b1 in training;  y = h · W2ᵀ + b2
//   backward  dW2, db2 from h and dy; then d(pre) = (dy · W2) * GELU'(pre) in one product's
//             epilogue (DGELU), written over h (read for the last time just before); then dW1,
//             db1 and dx from d(pre) as the inner linear's backward.
// So neither the GELU's own passes over memory nor h's gradient exist. (cuBLASLt could also sum
// db1 in the DGELU epilogue, DGELU_BGRAD: measured slower, feed_forward.cc says by how much, so
// the backend does not offer it.)
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"
#include "engine/nn/layers/linear.h"

namespace dlbench::nn {

class FeedForward final : public Layer {
 public:
  // The two linears' products and parameters (declared as they declare them, inner then outer,
  // so the parameter store lays them out as for the unfused graph), for a graph that runs in
  // `mode` (training keeps pre).
  FeedForward(const Linear& inner, const Linear& outer, Mode mode);
  const char* kind() const override { return "feed_forward"; }
  // y [m, n2]; then in training pre [m, n1]; then h [m, n1]. Only y carries a gradient.
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  std::vector<ParamDecl> params() const override { return params_; }
  SavedForBackward saved_for_backward() const override {
    return mode_ == Mode::kTrain ? SavedForBackward{{0}, {1, 2}} : SavedForBackward{};
  }
  std::int64_t forward_macs() const override { return inner_.macs() + outer_.macs(); }
  std::int64_t backward_macs(bool skip_input_grad) const override {
    return inner_.macs() * (skip_input_grad ? 1 : 2) + outer_.macs() * 2;
  }
  void set_math(backend::MathMode math) override { inner_.math = outer_.math = math; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  int h_index() const { return mode_ == Mode::kTrain ? 2 : 1; }
  backend::MatmulParams inner_, outer_;
  std::vector<ParamDecl> params_;
  Mode mode_;
};

}  // namespace dlbench::nn
