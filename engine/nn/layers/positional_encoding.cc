#include "engine/nn/layers/positional_encoding.h"

#include <string>

#include "engine/core/error.h"

namespace dlbench::nn {

Shape PositionalEncoding::output_shape(std::span<const Shape> inputs) const {
  const Shape& x = inputs[0];
  DLBENCH_CHECK(x.rank() == 2 && x[0] % sequence_ == 0 && x[1] % 2 == 0,
                "positional encoding: input " + x.str() + " is not [batch * " +
                    std::to_string(sequence_) + ", even width]");
  return x;
}

backend::PositionalEncodingParams PositionalEncoding::forward_params() const {
  backend::PositionalEncodingParams p;
  p.sequence = sequence_, p.scale = scale_, p.encode = true;
  return p;
}

backend::PositionalEncodingParams PositionalEncoding::backward_params() const {
  backend::PositionalEncodingParams p = forward_params();
  p.encode = false;
  return p;
}

void PositionalEncoding::forward(const StepContext& ctx) {
  ctx.backend.positional_encoding(forward_params(), ctx.inputs[0], ctx.output(),
                                  GradMode::kOverwrite);
}

void PositionalEncoding::backward(const StepContext& ctx) {
  if (!ctx.input_grads[0].defined()) return;
  ctx.backend.positional_encoding(backward_params(), ctx.output_grad(), ctx.input_grads[0],
                                  ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
