// Linear -> GELU -> Linear becomes one FeedForward layer (engine/nn/layers/feed_forward.h): the
// GELU in the first product's epilogue forward (cuBLASLt's GELU_AUX_BIAS, GELU_BIAS in
// inference), and its derivative in the epilogue of the product that computes the GELU input's
// gradient (DGELU). Where the first linear's output has the
// GELU as its one reader and the GELU's output the second linear (input 0) as its one, neither
// linear has a ReLU, and the backend supports the epilogues.
#pragma once

#include "engine/nn/passes/pass.h"

namespace dlbench::nn {

class FuseFeedForward final : public GraphPass {
 public:
  const char* name() const override { return "fuse_feed_forward"; }
  int run(Graph& graph, const PassContext& context) const override;
};

}  // namespace dlbench::nn
