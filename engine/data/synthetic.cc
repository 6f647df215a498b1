#include "engine/data/synthetic.h"

#include "engine/core/error.h"

namespace dlbench::data {

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
    if (spec.values.kind == Distribution::Kind::kNormal)
      backend.fill_normal(inputs[k], static_cast<float>(spec.values.a),
                          static_cast<float>(spec.values.b), seed);
    else
      backend.fill_uniform_int(inputs[k], static_cast<std::int64_t>(spec.values.a),
                               static_cast<std::int64_t>(spec.values.b), seed);
  }
  filled_ = std::move(buffers);
}

}  // namespace dlbench::data
