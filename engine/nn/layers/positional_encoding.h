// PositionalEncoding: the Transformer's embedding scale and sinusoidal positions (Vaswani et al.,
// 2017), between the token lookup and the first layer.
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// y = scale x + PE(position) over rows of [batch * sequence, width], a row's position its index
// in its sequence (Backend::positional_encoding says the encoding's layout); backward: dx =
// scale dy. No parameters: the encoding is computed, not learned or stored.
class PositionalEncoding final : public Layer {
 public:
  PositionalEncoding(std::int64_t sequence, float scale) : sequence_(sequence), scale_(scale) {}
  const char* kind() const override { return "positional_encoding"; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  SavedForBackward saved_for_backward() const override { return {}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  // Forward adds the encoding; backward scales the gradient alone.
  backend::PositionalEncodingParams forward_params() const;
  backend::PositionalEncodingParams backward_params() const;

  std::int64_t sequence_;
  float scale_;
};

}  // namespace dlbench::nn
