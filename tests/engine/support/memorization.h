// The parts of a language model's memorization test: a tiny trainer on one batch, trained until the
// loss falls under a share of its first value, then ask the scores how many of the predicted tokens
// they get right against the best a single guess could (the batch's most common label).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/trainer.h"

namespace dlbench::testing {

// A trainer of `model` at width / 16 (full depth), `batch` sequences of `size` tokens, with the
// model's own optimizer at `learning_rate`, its inputs filled with one synthetic batch.
inline std::unique_ptr<nn::Trainer> tiny_trainer(backend::Backend& be, const std::string& model,
                                                 std::int64_t batch, int size,
                                                 float learning_rate) {
  const models::ModelSpec& spec = models::find_model(model);
  models::ModelConfig mc;
  mc.batch = batch, mc.size = size, mc.width_divisor = 16, mc.seed = 3;
  mc = models::resolve(spec, mc);
  nn::TrainerConfig tc;
  tc.optimizer = spec.default_optimizer;
  tc.optimizer.learning_rate = learning_rate;
  auto net = std::make_unique<nn::Trainer>(spec.build(mc), be, tc);
  data::SyntheticSource source(net->graph().input_specs(), 11);
  source.fill(be, net->inputs());
  return net;
}

struct LossDrop {
  float first = 0, last = 0;
  int steps = 0;
};

// Steps until the loss is under `share` of the first step's, at most `max_steps`; a loss that is
// not finite fails the test.
inline LossDrop train_until(nn::Trainer& net, float share, int max_steps) {
  net.train_step();
  LossDrop d{net.loss(), net.loss(), 1};
  for (; d.steps < max_steps && d.last > d.first * share; ++d.steps) {
    net.train_step();
    d.last = net.loss();
    if (!std::isfinite(d.last)) {
      ADD_FAILURE() << "loss not finite at step " << d.steps;
      break;
    }
  }
  return d;
}

struct TokenPredictions {
  int predicted = 0;    // labels that are not ignored (negative)
  int right = 0;        // of them, where the highest score is the label
  int most_common = 0;  // the most frequent label's count: what one guess gets right
};

// scores: [labels.size(), vocabulary], row r scoring label r.
inline TokenPredictions token_predictions(const std::vector<std::int32_t>& labels,
                                          const std::vector<float>& scores,
                                          std::int64_t vocabulary) {
  TokenPredictions p;
  std::map<std::int32_t, int> counts;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    if (labels[r] < 0) continue;
    ++p.predicted, ++counts[labels[r]];
    const auto row = scores.begin() + static_cast<std::ptrdiff_t>(r) * vocabulary;
    p.right += std::max_element(row, row + vocabulary) - row == labels[r];
  }
  for (const auto& [label, count] : counts) p.most_common = std::max(p.most_common, count);
  return p;
}

}  // namespace dlbench::testing
