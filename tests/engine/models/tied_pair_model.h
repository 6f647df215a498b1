// The tied-pair test model's sizes and names (tied_pair_model.cc registers it, in the test
// binaries only), for the tests that probe it.
#pragma once

#include <cstdint>

namespace dlbench::models::tied_pair {

constexpr const char* kName = "tied-pair";
constexpr std::int64_t kBatch = 8;  // default; ids repeat, since 2 x 8 ids fall in 6 rows
constexpr std::int64_t kVocab = 6;
constexpr std::int64_t kDim = 16;
constexpr std::int64_t kClasses = 5;
constexpr float kTableStddev = 0.1f;

// Node names, in graph order: two lookups of one table, their sum, its split into two column
// halves, a classifier on one and a match logit on the other, and their two losses.
constexpr const char* kLeftLookup = "embed_left";
constexpr const char* kRightLookup = "embed_right";
constexpr const char* kSum = "sum";
constexpr const char* kSplit = "split";
constexpr const char* kClassLoss = "class_loss";
constexpr const char* kMatchLoss = "match_loss";

}  // namespace dlbench::models::tied_pair
