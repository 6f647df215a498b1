// The smallest model of the general step contract, registered in the test binaries only: two
// i32 id inputs read one embedding table through two Embedding layers (a tied, shared
// parameter), their sum is split into two column halves (a node with two outputs), and each
// half feeds a head with its own loss, summed into the step's loss:
//   ea = T[left], eb = T[right];  h = ea + eb;  (h1, h2) = split(h, D/2, D/2)
//   loss = softmax_ce(h1 W1ᵀ + b1, label) + sigmoid_bce(h2 W2ᵀ + b2, match)
// AdamW on the dense groups, lazy Adam on the table's touched rows.
#include "tests/engine/models/tied_pair_model.h"

#include <memory>

#include "engine/models/registry.h"
#include "engine/nn/layers/add.h"
#include "engine/nn/layers/embedding.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/layers/split_columns.h"
#include "engine/nn/losses/sigmoid_binary_cross_entropy.h"
#include "engine/nn/losses/softmax_cross_entropy.h"

namespace dlbench::models {
namespace {

using namespace tied_pair;

constexpr float kHeadStddev = 0.3f;

std::unique_ptr<nn::Linear> head(std::int64_t rows, std::int64_t out) {
  backend::MatmulParams p;
  p.m = rows, p.k = kDim / 2, p.n = out, p.bias = true;
  return std::make_unique<nn::Linear>(p, kHeadStddev);
}

nn::Graph build(const ModelConfig& config) {
  const std::int64_t b = config.batch;
  nn::Graph g(config.compute);
  auto ids = [&](const char* name, const char* meaning) {
    return g.add_input({name, {b}, DType::kI32, data::uniform_int(0, kVocab), meaning});
  };
  const nn::ValueId left = ids("left", "left item ids");
  const nn::ValueId right = ids("right", "right item ids");
  const nn::ValueId label = g.add_input(
      {"label", {b}, DType::kI32, data::uniform_int(0, kClasses), "class labels of the pair"});
  const nn::ValueId match =
      g.add_input({"match", {b, 1}, DType::kF32, data::uniform_int(0, 2), "match targets"});

  nn::ParamDecl table{"table", {kVocab, kDim}, nn::Init::kNormal, 1, nn::ParamGroup::kSparseRows};
  table.stddev = kTableStddev;
  const nn::ParamId shared = g.add_parameter("table", table);
  auto lookup = [&](const char* name, nn::ValueId x) {
    return g.add(name,
                 std::make_unique<nn::Embedding>(nn::EmbeddingShape{b, kVocab, kDim},
                                                 config.compute, kTableStddev),
                 {x}, {shared});
  };
  const nn::ValueId ea = lookup(kLeftLookup, left);
  const nn::ValueId eb = lookup(kRightLookup, right);
  const nn::ValueId h = g.add(kSum, std::make_unique<nn::Add>(), {ea, eb});
  const std::vector<nn::ValueId> halves = g.add_multi(
      kSplit, std::make_unique<nn::SplitColumns>(std::vector<std::int64_t>{kDim / 2, kDim / 2}),
      {h});
  const nn::ValueId logits = g.add("classifier", head(b, kClasses), {halves[0]});
  const nn::ValueId match_logit = g.add("matcher", head(b, 1), {halves[1]});
  g.add(kClassLoss, std::make_unique<nn::SoftmaxCrossEntropy>(), {logits, label});
  g.add(kMatchLoss, std::make_unique<nn::SigmoidBinaryCrossEntropy>(), {match_logit, match});
  g.mark_output(logits);
  g.mark_output(match_logit);
  return g;
}

ModelSpec spec() {
  ModelSpec s;
  s.name = kName;
  s.description = "two lookups of one embedding table, split into two heads (test binaries only)";
  s.unit = SampleUnit::kPairs;
  s.default_train_batch = kBatch;
  s.default_infer_batch = kBatch;
  s.size = {"input size", "", 0, {}};
  s.default_optimizer.kind = nn::OptimizerConfig::Kind::kAdamW;
  s.default_optimizer.sparse_kind = nn::OptimizerConfig::Kind::kSparseAdam;
  s.default_optimizer.learning_rate = 1e-2f;
  s.default_optimizer.weight_decay = 1e-2f;
  s.build = build;
  return s;
}

}  // namespace

DLBENCH_REGISTER_MODEL(spec);

}  // namespace dlbench::models
