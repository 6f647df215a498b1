// A dataset read from a file (`dlbench run MODEL --data PATH`): a model sizes itself by it (NCF's
// tables by its users and items) and its batches come from it instead of synthetic values. Each
// model that reads files says which format (ModelSpec::read_data).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/data/ct_slices.h"
#include "engine/data/data_source.h"
#include "engine/data/input_spec.h"

namespace dlbench::data {

// Held-out items to rank against items their user never rated (the NCF paper's evaluation):
// list l is candidates [offsets[l], offsets[l + 1]), its held-out item first; popularity is each
// candidate item's count among the training pairs, the baseline's score.
struct RankingTest {
  std::vector<std::int64_t> offsets = {0};
  std::vector<std::int32_t> users, items;
  std::vector<double> popularity;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  // One line for the run's output and its stored result: what was read, from where, how much.
  virtual std::string describe() const = 0;
  // Serves the data to a graph with these inputs (by name); the seed decides the order.
  virtual std::unique_ptr<DataSource> source(const std::vector<InputSpec>& inputs,
                                             std::uint64_t seed) const = 0;
  // Up to `negatives` unrated items beside each held-out one, drawn from the seed's stream;
  // empty when the data holds out nothing to rank.
  virtual RankingTest ranking_test(int negatives, std::uint64_t seed) const {
    (void)negatives, (void)seed;
    return {};
  }
  // Labelled CT cases kept out of training, whose segmentation a trained U-Net is scored on;
  // empty when the data holds nothing out.
  virtual std::span<const CtCase> held_out_cases() const { return {}; }
  // The words a text's ids stand for (id i is word i, most frequent first); null for data of
  // anything else.
  virtual const std::vector<std::string>* vocabulary() const { return nullptr; }
};

}  // namespace dlbench::data
