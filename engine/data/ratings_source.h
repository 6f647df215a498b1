// MovieLens ratings as a Dataset: NCF's tables are sized by its users and items, and each step's
// (user, item) pairs are the next training positives of a shuffled pass over them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/data/dataset.h"
#include "engine/data/movielens.h"

namespace dlbench::data {

class MovieLensData final : public Dataset, public std::enable_shared_from_this<MovieLensData> {
 public:
  explicit MovieLensData(Ratings ratings) : ratings_(std::move(ratings)) {}
  const Ratings& ratings() const { return ratings_; }
  std::string describe() const override;
  // Fills the graph's i32 "users" and "items" inputs (of one length) with training pairs.
  std::unique_ptr<DataSource> source(const std::vector<InputSpec>& inputs,
                                     std::uint64_t seed) const override;
  // Each user's held-out item and up to `negatives` distinct items the user never rated (all of
  // them where fewer remain), drawn uniformly.
  RankingTest ranking_test(int negatives, std::uint64_t seed) const override;

 private:
  Ratings ratings_;
};

std::shared_ptr<const Dataset> read_movielens_data(const std::string& path);

}  // namespace dlbench::data
