// Batch-norm parameters other than their initial ones (gamma 1, beta 0), so that folding a batch
// norm into a convolution has a scale and a shift to fold: gamma in [0.5, 1.5], beta in
// [-0.3, 0.3], the same for every trainer of one graph and seed. Batch-norm parameters stay f32
// masters in every precision (ParamGroup::kKeptF32), so writing the masters is enough.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/nn/trainer.h"

namespace dlbench::test_support {

inline void randomize_batch_norm(backend::Backend& be, const nn::Trainer& net, std::uint32_t seed) {
  std::vector<float> w(static_cast<std::size_t>(net.parameter_count()));
  be.to_host(net.flat_weights(), w.data());
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> gamma(0.5f, 1.5f), beta(-0.3f, 0.3f);
  for (const nn::ParameterSlice& s : net.parameter_slices()) {
    if (s.group != nn::ParamGroup::kKeptF32) continue;
    const bool is_gamma = s.name.size() >= 5 && s.name.compare(s.name.size() - 5, 5, "gamma") == 0;
    for (std::int64_t i = s.offset; i < s.offset + s.count; ++i)
      w[static_cast<std::size_t>(i)] = is_gamma ? gamma(gen) : beta(gen);
  }
  be.from_host(w.data(), net.flat_weights());
}

}  // namespace dlbench::test_support
