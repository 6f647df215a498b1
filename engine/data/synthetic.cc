#include "engine/data/synthetic.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"
#include "engine/core/memory.h"
#include "engine/core/splitmix64.h"
#include "engine/data/blobs.h"
#include "engine/data/dataset_helpers.h"
#include "engine/data/pretraining_batch.h"

namespace dlbench::data {

std::vector<std::int32_t> zipf_ids(const Distribution& d, std::int64_t count, std::uint64_t seed) {
  const auto low = static_cast<std::int64_t>(d.a), high = static_cast<std::int64_t>(d.b);
  DLBENCH_CHECK(d.kind == Distribution::Kind::kZipf && high > low && d.exponent >= 0,
                "zipf_ids: not a Zipf distribution over a range");
  std::vector<double> cdf(static_cast<std::size_t>(high - low));
  double total = 0;
  for (std::size_t k = 0; k < cdf.size(); ++k)
    cdf[k] = total += std::pow(static_cast<double>(k + 1), -d.exponent);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(count));
  std::uint64_t state = seed;
  for (std::int32_t& id : ids) {
    const double u = splitmix64_unit(state) * total;
    const auto k = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
    id = static_cast<std::int32_t>(low + std::min<std::int64_t>(k, high - low - 1));
  }
  return ids;
}

// Both kinds draw their scenes from the source's own seed, so labels and images match; the
// images' noise comes from the input's seed.
void SyntheticSource::fill_blobs(backend::Backend& backend, const InputSpec& spec,
                                 const Tensor& input, std::uint64_t seed) const {
  const auto classes = static_cast<std::int64_t>(spec.values.b);
  const Shape& s = spec.shape;
  // Images [n, h, w] are scenes of ellipses, volumes [n, d, h, w] of ellipsoids.
  auto labels = [&](std::int64_t rank) {
    return rank == 3 ? blob_labels(s[0], s[1], s[2], classes, seed_)
                     : blob_volume_labels(s[0], s[1], s[2], s[3], classes, seed_);
  };
  if (spec.values.kind == Distribution::Kind::kBlobLabels) {
    DLBENCH_CHECK(spec.dtype == DType::kI32 && (s.rank() == 3 || s.rank() == 4),
                  "synthetic data: blob labels are i32 [n, h, w] or [n, d, h, w]");
    backend.from_host(labels(s.rank()).data(), input);
    return;
  }
  DLBENCH_CHECK(s.rank() == 4 || s.rank() == 5,
                "synthetic data: blob images are [n, h, w, channels] or [n, d, h, w, channels]");
  const std::vector<float> image =
      blob_images(labels(s.rank() - 1), s[s.rank() - 1], classes, seed);
  from_host_floats(backend, image.data(), input);
}

// Every field from the source's own seed, so a batch's ids, labels and lengths match.
void SyntheticSource::fill_pretraining(backend::Backend& backend, const InputSpec& spec,
                                       const Tensor& input) const {
  const Distribution& d = spec.values;
  const auto field = static_cast<PretrainingField>(static_cast<int>(d.a));
  const bool per_token =
      field != PretrainingField::kLengths && field != PretrainingField::kNextSentence;
  DLBENCH_CHECK(spec.dtype == DType::kI32 && d.sequence > 0 &&
                    (!per_token || spec.shape.numel() % d.sequence == 0),
                "synthetic data: pretraining fields are i32, per token [batch * sequence] or per "
                "sample [batch]");
  PretrainingShape shape;
  shape.batch = per_token ? spec.shape.numel() / d.sequence : spec.shape.numel();
  shape.sequence = d.sequence;
  shape.vocabulary = static_cast<std::int64_t>(d.b);
  shape.max_predictions = d.predictions;
  backend.from_host(pretraining_batch(shape, seed_).field(field).data(), input);
}

namespace {

// The sentence pairs a source's translation fields describe: one batch for all of them, drawn
// from the source's own seed so the fields of a pair match; none without such fields.
std::optional<TranslationBatch> draw_translation(const std::vector<InputSpec>& specs,
                                                 std::uint64_t seed) {
  for (const InputSpec& spec : specs) {
    const Distribution& d = spec.values;
    if (d.kind != Distribution::Kind::kTranslation) continue;
    const auto field = static_cast<TranslationField>(static_cast<int>(d.a));
    DLBENCH_CHECK(spec.dtype == DType::kI32 && d.sequence > 0 &&
                      (!is_per_token(field) || spec.shape.numel() % d.sequence == 0),
                  "synthetic data: translation fields are i32, per token [batch * sequence] or "
                  "per sentence [batch]");
    TranslationShape shape;
    shape.batch = is_per_token(field) ? spec.shape.numel() / d.sequence : spec.shape.numel();
    shape.sequence = d.sequence;
    shape.vocabulary = static_cast<std::int64_t>(d.b);
    return translation_batch(shape, seed);
  }
  return std::nullopt;
}

}  // namespace

std::optional<DataSource::ReadCount> SyntheticSource::read_count() const {
  if (!translation_) return std::nullopt;
  return ReadCount{"tokens", translation_->tokens() * batches_,
                   "source and target tokens of the sentence pairs, padding left out"};
}

SyntheticSource::SyntheticSource(std::vector<InputSpec> specs, std::uint64_t seed)
    : specs_(std::move(specs)), seed_(seed), translation_(draw_translation(specs_, seed)) {}

void SyntheticSource::fill(backend::Backend& backend, std::span<const Tensor> inputs) {
  DLBENCH_CHECK(inputs.size() == specs_.size(), "synthetic data: one tensor per input spec");
  std::vector<const void*> buffers;
  for (const Tensor& t : inputs) buffers.push_back(t.data());
  ++batches_;
  if (buffers == filled_) return;  // the same batch, already there
  for (std::size_t k = 0; k < specs_.size(); ++k) {
    const InputSpec& spec = specs_[k];
    check_shape(inputs[k], spec.shape, "synthetic data", spec.name.c_str());
    const std::uint64_t seed = seed_ + k;
    if (spec.values.kind == Distribution::Kind::kNormal) {
      backend.fill_normal(inputs[k], static_cast<float>(spec.values.a),
                          static_cast<float>(spec.values.b), seed);
    } else if (spec.values.kind == Distribution::Kind::kBlobLabels ||
               spec.values.kind == Distribution::Kind::kBlobImages) {
      fill_blobs(backend, spec, inputs[k], seed);
    } else if (spec.values.kind == Distribution::Kind::kPretraining) {
      fill_pretraining(backend, spec, inputs[k]);
    } else if (spec.values.kind == Distribution::Kind::kTranslation) {
      const auto field = static_cast<TranslationField>(static_cast<int>(spec.values.a));
      const std::vector<std::int32_t> values =
          laid_out(*translation_, field, spec.values.sequence, spec.values.time_major);
      DLBENCH_CHECK(inputs[k].dtype() == DType::kI32 &&
                        static_cast<std::int64_t>(values.size()) == inputs[k].numel(),
                    "synthetic data: translation input " + spec.name +
                        " is not of the batch the first one sized");
      backend.from_host(values.data(), inputs[k]);
    } else if (spec.values.kind == Distribution::Kind::kZipf) {
      DLBENCH_CHECK(spec.dtype == DType::kI32, "synthetic data: Zipf values are i32 ids");
      backend.from_host(zipf_ids(spec.values, spec.shape.numel(), seed).data(), inputs[k]);
    } else {
      backend.fill_uniform_int(inputs[k], static_cast<std::int64_t>(spec.values.a),
                               static_cast<std::int64_t>(spec.values.b), seed);
    }
  }
  filled_ = std::move(buffers);
}

}  // namespace dlbench::data
