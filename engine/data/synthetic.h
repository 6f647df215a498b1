// Synthetic data: every input drawn from its spec's distribution (input k with seed + k), on
// the device (Zipf ids on the host, then copied). Like the published benchmarks' synthetic mode,
// one batch is drawn and then served for every step: the buffers are written on the first fill and
// again only when the source is handed other buffers, so no step pays for drawing data.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/data/data_source.h"
#include "engine/data/input_spec.h"
#include "engine/data/translation_batch.h"

namespace dlbench::data {

// i32 ids in [low, high) from a Zipf distribution (Distribution::kZipf), `count` of them,
// deterministic per seed: drawn on the host (a batch is drawn once), by inverting the CDF.
std::vector<std::int32_t> zipf_ids(const Distribution& d, std::int64_t count, std::uint64_t seed);

class SyntheticSource final : public DataSource {
 public:
  SyntheticSource(std::vector<InputSpec> specs, std::uint64_t seed);
  std::string name() const override { return "synthetic"; }
  void fill(backend::Backend& backend, std::span<const Tensor> inputs) override;
  // Translation batches count their tokens (source and target, padding left out) as served, the
  // unit a translation model's speed is quoted in, from 0 before the first; other data counts
  // nothing.
  std::optional<ReadCount> read_count() const override;

 private:
  void fill_blobs(backend::Backend& backend, const InputSpec& spec, const Tensor& input,
                  std::uint64_t seed) const;
  void fill_pretraining(backend::Backend& backend, const InputSpec& spec,
                        const Tensor& input) const;

  std::vector<InputSpec> specs_;
  std::uint64_t seed_;
  std::vector<const void*> filled_;              // the buffers written last, to serve again
  std::int64_t batches_ = 0;                     // served, the same batch again counting too
  std::optional<TranslationBatch> translation_;  // drawn once, for every translation field
};

}  // namespace dlbench::data
