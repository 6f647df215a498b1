// What a word-embedding model learned from a text, in a form a reader can judge: the nearest
// words (by cosine similarity of the trained vectors) to a few frequent words of the vocabulary.
#pragma once

#include <vector>

#include "bench/result/run_result.h"
#include "engine/backend/backend.h"
#include "engine/data/dataset.h"
#include "engine/models/model_spec.h"
#include "engine/nn/trainer.h"

namespace dlbench::runner {

constexpr int kProbeWords = 5;  // the words at ranks 50, 100, 200, 400 and 800, where they exist
constexpr int kNeighbours = 5;  // shown per word

// Empty unless the data has words (Dataset::vocabulary) and the model names its word vectors
// (ModelSpec::word_vectors).
std::vector<result::WordNeighbours> nearest_neighbours(const models::ModelSpec& model,
                                                       const data::Dataset* data,
                                                       const nn::Trainer& trained,
                                                       backend::Backend& be);

}  // namespace dlbench::runner
