// MovieLens ratings as NCF trains on them: the file format of MovieLens-1M's ratings.dat, one
// rating per line,
//   UserID::MovieID::Rating::Timestamp        e.g. 1::1193::5::978300760
// read as implicit feedback (every rating is a positive, whatever its stars), with ids made
// dense and the NCF paper's leave-one-out split: each user's latest rating is held out as the
// test item, the rest train.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dlbench::data {

struct Ratings {
  std::string path;
  std::int64_t ratings = 0;  // lines read
  // Dense ids: user u is the u-th smallest UserID in the file, item i the i-th smallest MovieID.
  std::int64_t users = 0, items = 0;
  // The training positives, in file order (a user's held-out rating left out).
  std::vector<std::int32_t> train_users, train_items;
  // Per user, the held-out test item: the rating with the latest timestamp (the later line on a
  // tie); -1 for a user with one rating, which stays in training.
  std::vector<std::int32_t> test_items;
  // Per user, every item the user rated (test item included), ascending and distinct:
  // rated_items[rated_offsets[u] .. rated_offsets[u + 1]). Evaluation's negatives avoid them.
  std::vector<std::int64_t> rated_offsets;
  std::vector<std::int32_t> rated_items;

  bool rated(std::int32_t user, std::int32_t item) const;
};

// Reads and splits a ratings file. A file that cannot be read, holds no rating, or has a line
// that is not four fields of the format above throws Error(kUsage) naming the file and line.
Ratings read_movielens(const std::string& path);

}  // namespace dlbench::data
