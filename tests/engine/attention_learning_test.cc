// Attention learns: a one-layer encoder (embedding, q/k/v projections, two heads, output
// projection, residual, layer norm, classifier) on a task only attention can solve. Every row
// of 8 tokens repeats one word; two positions are replaced by [MASK] and must be predicted
// (the others' labels are ignored, -100, as BERT's are), so the masked position's own input says
// nothing and the answer is elsewhere in its row. The same model with each position's value
// projection in place of attention (nothing mixes positions) stays at chance, ln 8; with
// attention the masked words' mean cross-entropy must fall under 2 % of its first value: the
// geometric mean of the right word's probability then passes 0.95.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/nn/layers/add.h"
#include "engine/nn/layers/attention.h"
#include "engine/nn/layers/embedding.h"
#include "engine/nn/layers/layer_norm.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/losses/softmax_cross_entropy.h"
#include "engine/nn/trainer.h"

namespace dlbench::nn {
namespace {

constexpr std::int64_t kBatch = 32, kSeq = 8, kWords = 8, kMask = kWords, kWidth = 16, kHeads = 2;
constexpr std::int64_t kRows = kBatch * kSeq;

backend::MatmulParams projection(std::int64_t out) {
  backend::MatmulParams p;
  p.m = kRows, p.k = kWidth, p.n = out, p.bias = true;
  return p;
}

Graph encoder(bool attend) {
  Graph g(DType::kF32);
  const ValueId ids =
      g.add_input({"tokens", {kRows}, DType::kI32, data::uniform_int(0, kWords + 1), "token ids"});
  const ValueId labels =
      g.add_input({"labels", {kRows}, DType::kI32, data::uniform_int(0, kWords), "masked words"});
  const ValueId x = g.add(
      "embed",
      std::make_unique<Embedding>(EmbeddingShape{kRows, kWords + 1, kWidth}, DType::kF32, 1.0f),
      {ids});
  auto linear = [&](const char* name, ValueId in, std::int64_t out) {
    return g.add(name, std::make_unique<Linear>(projection(out)), {in});
  };
  backend::AttentionParams p;
  p.batch = kBatch, p.heads = kHeads, p.seq_q = p.seq_kv = kSeq, p.head_dim = kWidth / kHeads;
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.head_dim)));
  const ValueId attended =
      attend ? g.add("attention", std::make_unique<Attention>(p, AttentionLengths::kNone),
                     {linear("q", x, kWidth), linear("k", x, kWidth), linear("v", x, kWidth)})
             : linear("v", x, kWidth);
  const ValueId mixed =
      g.add("residual", std::make_unique<Add>(), {x, linear("out", attended, kWidth)});
  const ValueId normed =
      g.add("norm", std::make_unique<LayerNorm>(Shape{kRows, kWidth}, 1e-5f), {mixed});
  const ValueId logits = linear("classifier", normed, kWords + 1);
  g.add("loss", std::make_unique<SoftmaxCrossEntropy>(backend::CrossEntropyParams{}),
        {logits, labels});
  g.mark_output(logits);
  return g;
}

// The first step's loss and the last, after up to `steps` steps (fewer once it is below `stop`).
struct Losses {
  float first, last;
  int steps;
};

Losses train(bool attend, int steps, float stop) {
  auto be = backend::make_backend(Device::cpu());
  TrainerConfig config;
  config.optimizer.kind = OptimizerConfig::Kind::kAdamW;  // BERT's, the table updated densely
  config.optimizer.sparse_kind = OptimizerConfig::Kind::kAdamW;
  config.optimizer.learning_rate = 0.01f;
  Trainer net(encoder(attend), *be, config);
  std::vector<std::int32_t> tokens(kRows), labels(kRows, -100);
  for (std::int64_t r = 0; r < kRows; ++r) {
    const std::int64_t n = r / kSeq, i = r % kSeq;
    const auto word = static_cast<std::int32_t>((n * 5 + 3) % kWords);
    const bool masked = i == (n % kSeq) || i == ((n + 3) % kSeq);
    tokens[r] = masked ? static_cast<std::int32_t>(kMask) : word;
    if (masked) labels[r] = word;
  }
  be->from_host(tokens.data(), net.inputs()[0]);
  be->from_host(labels.data(), net.inputs()[1]);
  net.train_step();
  Losses l{net.loss(), net.loss(), 1};
  for (; l.steps < steps && l.last > stop; ++l.steps) {
    net.train_step();
    l.last = net.loss();
    EXPECT_TRUE(std::isfinite(l.last)) << "step " << l.steps;
  }
  std::printf("encoder %s attention: loss %.4f -> %.4f in %d steps\n", attend ? "with" : "without",
              l.first, l.last, l.steps);
  return l;
}

TEST(AttentionLearningTest, AMaskedWordIsFoundElsewhereInItsRow) {
  const float chance = std::log(static_cast<float>(kWords + 1));  // 9 classes, [MASK] among them
  const Losses with = train(true, 400, 0.02f * chance);
  EXPECT_NEAR(with.first, chance, 1.0f);
  EXPECT_LT(with.last, 0.02f * with.first) << "after " << with.steps << " steps";
  // Without attention the best there is: the words' even spread, ln 8.
  const Losses without = train(false, 100, 0.0f);
  EXPECT_GT(without.last, 0.9f * std::log(static_cast<float>(kWords)));
}

}  // namespace
}  // namespace dlbench::nn
