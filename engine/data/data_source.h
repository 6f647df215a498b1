// Where batches come from. Real datasets (idx, CIFAR, image folders, MovieLens, text8)
// implement the same interface later.
//
// A source writes into buffers it does not own: the trainer's, one per graph input, resident
// at fixed addresses, so a recorded device graph replays whatever a source put there.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "engine/backend/backend.h"
#include "engine/core/tensor.h"

namespace dlbench::data {

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual std::string name() const = 0;
  // Writes the next batch into `inputs`, one tensor per graph input in graph input order.
  virtual void fill(backend::Backend& backend, std::span<const Tensor> inputs) = 0;

  // How much of the data the batches so far were made from, in a unit of its own, where that
  // is not the samples themselves: a text's words (Word2Vec's pairs come ~6 from each word).
  struct ReadCount {
    std::string unit;  // "words"
    std::int64_t count = 0;
    std::string what;  // how they are counted, for a reader
  };
  virtual std::optional<ReadCount> read_count() const { return std::nullopt; }
};

}  // namespace dlbench::data
