// Pool: one of the plain layers models are built from (forward and backward side by side).
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// Max or average pooling, 2D or 3D, including global average pooling.
class Pool final : public Layer {
 public:
  explicit Pool(const backend::PoolParams& p) : p_(p) {}
  const char* kind() const override {
    if (p_.volumetric()) return p_.kind == backend::PoolKind::kMax ? "max_pool3d" : "avg_pool3d";
    return p_.kind == backend::PoolKind::kMax ? "max_pool" : "avg_pool";
  }
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<StateDecl> state(backend::Backend& be) const override;
  SavedForBackward saved_for_backward() const override { return {{0}, {0}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  backend::PoolParams p_;
};

}  // namespace dlbench::nn
