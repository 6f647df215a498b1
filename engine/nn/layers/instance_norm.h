// InstanceNorm: normalization over each sample's positions, per channel (3D U-Net's, as MLPerf's
// KiTS19 reference uses it), with a learned scale and shift per channel.
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// y[n, ..., c] = γ[c] (x[n, ..., c] - μ[n, c]) / sqrt(σ²[n, c] + ε) + β[c], μ and σ² over the
// positions of sample n, in training and inference alike (no running statistics: PyTorch's
// InstanceNorm default). One sample is exactly a batch norm of [positions, channels] with the
// batch's statistics, so it runs as the backend's batch norm, one call per sample; γ's and β's
// gradients are the sums of the samples'.
class InstanceNorm final : public Layer {
 public:
  // `shape`: the input, [n, positions..., channels].
  InstanceNorm(const Shape& shape, float epsilon = 1e-5f);
  const char* kind() const override { return "instance_norm"; }
  bool accumulates_param_grads() const override { return false; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<ParamDecl> params() const override;
  std::vector<StateDecl> state(backend::Backend&) const override;
  SavedForBackward saved_for_backward() const override { return {{0}, {}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  // Sample n's rows of a tensor shaped as the input, as [positions, channels].
  Tensor sample(const Tensor& t, std::int64_t n) const;

  Shape shape_;
  std::int64_t samples_, channels_;
  backend::BatchNormParams per_sample_;  // one sample's rows, batch statistics
};

}  // namespace dlbench::nn
