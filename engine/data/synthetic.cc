#include "engine/data/synthetic.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"
#include "engine/core/splitmix64.h"

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

SyntheticSource::SyntheticSource(std::vector<InputSpec> specs, std::uint64_t seed)
    : specs_(std::move(specs)), seed_(seed) {}

void SyntheticSource::fill(backend::Backend& backend, std::span<const Tensor> inputs) {
  DLBENCH_CHECK(inputs.size() == specs_.size(), "synthetic data: one tensor per input spec");
  std::vector<const void*> buffers;
  for (const Tensor& t : inputs) buffers.push_back(t.data());
  if (buffers == filled_) return;  // the same batch, already there
  for (std::size_t k = 0; k < specs_.size(); ++k) {
    const InputSpec& spec = specs_[k];
    check_shape(inputs[k], spec.shape, "synthetic data", spec.name.c_str());
    const std::uint64_t seed = seed_ + k;
    if (spec.values.kind == Distribution::Kind::kNormal) {
      backend.fill_normal(inputs[k], static_cast<float>(spec.values.a),
                          static_cast<float>(spec.values.b), seed);
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
