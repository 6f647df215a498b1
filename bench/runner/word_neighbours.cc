#include "bench/runner/word_neighbours.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"

namespace dlbench::runner {
namespace {

// Ranks 50 x 2^k: frequent enough to have learned from, past the most common function words.
constexpr std::size_t kFirstProbeRank = 50;

}  // namespace

std::vector<result::WordNeighbours> nearest_neighbours(const models::ModelSpec& model,
                                                       const data::Dataset* data,
                                                       const nn::Trainer& trained,
                                                       backend::Backend& be) {
  if (data == nullptr || data->vocabulary() == nullptr || model.word_vectors.empty()) return {};
  const std::vector<std::string>& words = *data->vocabulary();
  const nn::ParameterSlice* slice = nullptr;
  for (const nn::ParameterSlice& s : trained.parameter_slices())
    if (s.name == model.word_vectors) slice = &s;
  DLBENCH_CHECK(slice != nullptr, model.name + " has no parameter " + model.word_vectors);
  const auto rows = static_cast<std::int64_t>(words.size());
  DLBENCH_CHECK(rows > 0 && slice->count % rows == 0,
                model.word_vectors + " is not one row per word of the data");
  const std::int64_t dim = slice->count / rows;

  // Only the word vectors' rows come to the host, not every weight of the model.
  const Tensor flat = trained.flat_weights();
  const Tensor table(flat.data_as<float>() + slice->offset, {rows, dim}, DType::kF32,
                     flat.device());
  std::vector<float> host(static_cast<std::size_t>(slice->count));
  be.to_host(table, host.data());
  const float* vectors = host.data();
  std::vector<double> norm(static_cast<std::size_t>(rows));
  for (std::int64_t w = 0; w < rows; ++w) {
    double sum = 0;
    for (std::int64_t k = 0; k < dim; ++k)
      sum += static_cast<double>(vectors[w * dim + k]) * vectors[w * dim + k];
    norm[static_cast<std::size_t>(w)] = std::sqrt(sum);
  }

  std::vector<result::WordNeighbours> out;
  for (std::size_t rank = kFirstProbeRank;
       rank < words.size() && out.size() < static_cast<std::size_t>(kProbeWords); rank *= 2) {
    const auto probe = static_cast<std::int64_t>(rank);
    if (norm[rank] == 0) continue;  // never trained: no direction to be near
    std::vector<std::pair<double, std::int64_t>> scored;
    for (std::int64_t w = 0; w < rows; ++w) {
      const double denominator = norm[rank] * norm[static_cast<std::size_t>(w)];
      if (w == probe || denominator == 0) continue;  // an untouched row has no direction
      double dot = 0;
      for (std::int64_t k = 0; k < dim; ++k)
        dot += static_cast<double>(vectors[probe * dim + k]) * vectors[w * dim + k];
      scored.emplace_back(dot / denominator, w);
    }
    const auto shown = std::min<std::size_t>(kNeighbours, scored.size());
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(shown),
                      scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    result::WordNeighbours n{words[rank], {}};
    for (std::size_t i = 0; i < shown; ++i)
      n.nearest.push_back({words[static_cast<std::size_t>(scored[i].second)], scored[i].first});
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace dlbench::runner
