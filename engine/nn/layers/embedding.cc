#include "engine/nn/layers/embedding.h"

namespace dlbench::nn {

// --- Embedding: y[i] = T[ids[i]]; dT[r] = Σ_{i: ids[i] = r} dy[i] --------------------------
std::vector<OutputInfo> Embedding::outputs(std::span<const ValueInfo> inputs) const {
  DLBENCH_CHECK(inputs[0].dtype == DType::kI32 && inputs[0].shape == Shape{shape_.ids},
                "embedding: ids must be i32 [" + std::to_string(shape_.ids) + "], not " +
                    to_string(inputs[0].dtype) + " " + inputs[0].shape.str());
  return {{Shape{shape_.ids, shape_.dim}, compute_}};
}

std::vector<ParamDecl> Embedding::params() const {
  ParamDecl table{"table", {shape_.vocab, shape_.dim}, Init::kNormal, 1, ParamGroup::kSparseRows};
  table.stddev = init_stddev_;
  return {table};
}

std::vector<StateDecl> Embedding::state(backend::Backend& backend) const {
  return {{"workspace",
           backend.embedding_backward_workspace_bytes(shape_.ids, shape_.vocab, shape_.dim),
           Init::kZeros}};
}

void Embedding::forward(const StepContext& ctx) {
  ctx.backend.embedding_forward(ctx.params[0], ctx.inputs[0], ctx.output());
}

void Embedding::backward(const StepContext& ctx) {
  DLBENCH_CHECK(!ctx.param_rows.empty() && ctx.param_rows[0].defined(),
                "embedding: the table has no touched mask (not a sparse-rows parameter?)");
  ctx.backend.embedding_backward(ctx.output_grad(), ctx.inputs[0], ctx.state[0], ctx.param_grads[0],
                                 ctx.param_rows[0], ctx.param_grad_modes[0]);
}

}  // namespace dlbench::nn
