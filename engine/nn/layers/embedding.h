// Embedding: rows of a table looked up by integer ids (forward and backward side by side).
#pragma once

#include <cstdint>

#include "engine/nn/layer.h"

namespace dlbench::nn {

struct EmbeddingShape {
  std::int64_t ids = 0;    // N: ids per step (i32 [N] input)
  std::int64_t vocab = 0;  // V: table rows
  std::int64_t dim = 0;    // D: table columns
};

// y[i, :] = table[ids[i], :]; dtable[ids[i], :] += dy[i, :], in id order (a repeated id sums its
// rows' gradients). The table [V, D] is a ParamGroup::kSparseRows parameter in the compute
// dtype, initialized N(0, init_stddev); several Embedding layers may read one table (tied
// embeddings: pass its ParamId to Graph::add for each). Backward also marks the rows it wrote in
// the table's touched mask, in the same gradient mode: the first user overwrites (clearing the
// gradient and the mask), later users add. The ids need no gradient.
class Embedding final : public Layer {
 public:
  Embedding(const EmbeddingShape& shape, DType compute, float init_stddev)
      : shape_(shape), compute_(compute), init_stddev_(init_stddev) {}
  const char* kind() const override { return "embedding"; }
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  std::vector<ParamDecl> params() const override;
  // The backend's scratch for a deterministic scatter-add (0 bytes on the CPU).
  std::vector<StateDecl> state(backend::Backend& backend) const override;
  SavedForBackward saved_for_backward() const override { return {{0}, {}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  EmbeddingShape shape_;
  DType compute_;
  float init_stddev_;
};

}  // namespace dlbench::nn
