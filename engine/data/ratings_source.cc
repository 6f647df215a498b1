#include "engine/data/ratings_source.h"

#include <algorithm>
#include <numeric>

#include "engine/core/error.h"
#include "engine/core/splitmix64.h"
#include "engine/data/dataset_helpers.h"

namespace dlbench::data {
namespace {

// Training pairs in a seeded order, reshuffled (Fisher-Yates on splitmix64) at each pass.
class RatingsSource final : public DataSource {
 public:
  RatingsSource(std::shared_ptr<const MovieLensData> data, std::size_t users_input,
                std::size_t items_input, std::uint64_t seed)
      : data_(std::move(data)),
        ratings_(data_->ratings()),
        users_input_(users_input),
        items_input_(items_input),
        state_(seed) {
    order_.resize(ratings_.train_users.size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    shuffle();
  }
  std::string name() const override { return "movielens"; }

  void fill(backend::Backend& backend, std::span<const Tensor> inputs) override {
    const Tensor& users = inputs[users_input_];
    const Tensor& items = inputs[items_input_];
    const auto n = static_cast<std::size_t>(users.numel());
    users_.resize(n), items_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (next_ == order_.size()) shuffle();
      const std::size_t pair = order_[next_++];
      users_[i] = ratings_.train_users[pair];
      items_[i] = ratings_.train_items[pair];
    }
    backend.from_host(users_.data(), users);
    backend.from_host(items_.data(), items);
  }

 private:
  void shuffle() {
    splitmix64_shuffle(order_, state_);
    next_ = 0;
  }

  std::shared_ptr<const MovieLensData> data_;  // keeps ratings_ alive
  const Ratings& ratings_;
  std::size_t users_input_, items_input_;
  std::uint64_t state_;
  std::vector<std::size_t> order_;
  std::size_t next_ = 0;
  std::vector<std::int32_t> users_, items_;  // the batch on the host
};

}  // namespace

std::string MovieLensData::describe() const {
  const Ratings& r = ratings_;
  std::int64_t held_out = 0;
  for (std::int32_t item : r.test_items) held_out += item >= 0 ? 1 : 0;
  return "MovieLens ratings " + r.path + ": " + with_commas(r.ratings) + " ratings of " +
         with_commas(r.items) + " items by " + with_commas(r.users) + " users; " +
         with_commas(static_cast<std::int64_t>(r.train_users.size())) + " train, " +
         with_commas(held_out) + " held out (each user's latest)";
}

std::unique_ptr<DataSource> MovieLensData::source(const std::vector<InputSpec>& inputs,
                                                  std::uint64_t seed) const {
  const std::size_t users = int_input_index(inputs, "users", "MovieLens data"),
                    items = int_input_index(inputs, "items", "MovieLens data");
  DLBENCH_CHECK(inputs[users].shape == inputs[items].shape,
                "MovieLens data: users and items differ in length");
  // A user's only rating stays in training, so a file with ratings always has some to train on.
  return std::make_unique<RatingsSource>(shared_from_this(), users, items, seed);
}

RankingTest MovieLensData::ranking_test(int negatives, std::uint64_t seed) const {
  const Ratings& r = ratings_;
  std::vector<double> count(static_cast<std::size_t>(r.items), 0.0);
  for (std::int32_t item : r.train_items) count[static_cast<std::size_t>(item)] += 1;
  RankingTest test;
  std::uint64_t state = seed;
  for (std::int32_t user = 0; user < r.users; ++user) {
    const std::int32_t held_out = r.test_items[static_cast<std::size_t>(user)];
    if (held_out < 0) continue;
    std::vector<std::int32_t> list = {held_out};
    const std::int64_t rated = r.rated_offsets[static_cast<std::size_t>(user) + 1] -
                               r.rated_offsets[static_cast<std::size_t>(user)];
    if (r.items - rated <= negatives) {  // every unrated item
      for (std::int32_t item = 0; item < r.items; ++item)
        if (!r.rated(user, item)) list.push_back(item);
    } else {  // distinct draws: rejection is cheap while most items are unrated and unpicked
      while (static_cast<int>(list.size()) <= negatives) {
        const auto item =
            static_cast<std::int32_t>(splitmix64_next(state) % static_cast<std::uint64_t>(r.items));
        if (!r.rated(user, item) && std::find(list.begin(), list.end(), item) == list.end())
          list.push_back(item);
      }
    }
    for (std::int32_t item : list) {
      test.users.push_back(user);
      test.items.push_back(item);
      test.popularity.push_back(count[static_cast<std::size_t>(item)]);
    }
    test.offsets.push_back(static_cast<std::int64_t>(test.items.size()));
  }
  return test;
}

std::shared_ptr<const Dataset> read_movielens_data(const std::string& path) {
  return std::make_shared<MovieLensData>(read_movielens(path));
}

}  // namespace dlbench::data
