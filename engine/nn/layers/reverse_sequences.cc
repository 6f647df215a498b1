#include "engine/nn/layers/reverse_sequences.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

std::vector<OutputInfo> ReverseSequences::outputs(std::span<const ValueInfo> inputs) const {
  const Shape& x = inputs[0].shape;
  DLBENCH_CHECK(x.rank() == 2 && x[0] == p_.steps * p_.batch,
                "reverse_sequences: the input " + x.str() + " is not [steps * batch, width]");
  expect_shape(inputs[1].shape, {p_.batch}, "reverse_sequences (lengths)");
  DLBENCH_CHECK(inputs[1].dtype == DType::kI32,
                "reverse_sequences: sequence lengths must be i32, not " +
                    std::string(to_string(inputs[1].dtype)) + " (" + inputs[1].name + ")");
  return {{x, inputs[0].dtype}};
}

void ReverseSequences::forward(const StepContext& ctx) {
  ctx.backend.reverse_sequences(p_, ctx.inputs[1], ctx.inputs[0], ctx.output(),
                                GradMode::kOverwrite);
}

void ReverseSequences::backward(const StepContext& ctx) {
  if (!ctx.input_grads[0].defined()) return;
  ctx.backend.reverse_sequences(p_, ctx.inputs[1], ctx.output_grad(), ctx.input_grads[0],
                                ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
