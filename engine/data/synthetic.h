// Synthetic data as the standard benchmarks use it: one batch of random images (standard
// normal) and uniform labels, generated once on the device and served every step, so the
// measurement is of the model and not of an input pipeline.
#pragma once

#include <cstdint>

#include "engine/backend/backend.h"
#include "engine/core/memory.h"
#include "engine/data/data_source.h"

namespace dlbench::data {

class SyntheticSource final : public DataSource {
 public:
  SyntheticSource(backend::Backend& backend, const Shape& image_shape, std::int64_t classes,
                  std::uint64_t seed, DType image_dtype = DType::kF32);
  std::string name() const override { return "synthetic"; }
  Batch next() override { return batch_; }

 private:
  Buffer images_, labels_;
  Batch batch_;
};

}  // namespace dlbench::data
