#include "tests/engine/support/finite_differences.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

namespace dlbench::test {
namespace {

double step_loss(nn::Trainer& trainer) {
  trainer.train_step();
  return static_cast<double>(trainer.loss());
}

}  // namespace

std::vector<double> step_gradients(nn::Trainer& trainer) {
  step_loss(trainer);
  const float* g = trainer.flat_grads().data_as<float>();
  return std::vector<double>(g, g + trainer.parameter_count());
}

std::vector<GradientProbe> probe_gradients(nn::Trainer& trainer,
                                           const std::vector<double>& analytic,
                                           const std::vector<std::int64_t>& indices,
                                           const ProbeSteps& steps) {
  float* w = trainer.flat_weights().data_as<float>();
  std::vector<GradientProbe> out;
  for (std::int64_t i : indices) {
    const double a = analytic[static_cast<std::size_t>(i)];
    const float step = static_cast<float>(std::clamp(
        steps.loss_move / std::max(std::fabs(a), 1e-12), steps.min_step, steps.max_step));
    const float saved = w[i];
    w[i] = saved + step;
    const double up = step_loss(trainer);
    w[i] = saved - step;
    const double down = step_loss(trainer);
    w[i] = saved;
    out.push_back({i, (up - down) / (2.0 * step), a});
    if (std::getenv("DLBENCH_DEBUG_GRAD"))
      std::printf("  %ld: numeric %.5f analytic %.5f\n", static_cast<long>(i), out.back().numeric,
                  a);
  }
  return out;
}

std::vector<std::int64_t> pick_probes(const std::vector<double>& analytic, int count,
                                      unsigned seed) {
  const auto n = static_cast<std::int64_t>(analytic.size());
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::partial_sort(order.begin(), order.begin() + count / 2, order.end(), [&](auto a, auto b) {
    return std::fabs(analytic[a]) > std::fabs(analytic[b]);
  });
  std::vector<std::int64_t> probes(order.begin(), order.begin() + count / 2);
  std::mt19937 rng(seed);
  for (int i = 0; i < count / 2; ++i)
    probes.push_back(std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng));
  return probes;
}

double relative_error(const std::vector<GradientProbe>& probes) {
  double diff = 0, norm = 0;
  for (const GradientProbe& p : probes) {
    diff += (p.numeric - p.analytic) * (p.numeric - p.analytic);
    norm += std::max(p.numeric * p.numeric, p.analytic * p.analytic);
  }
  return norm > 0 ? std::sqrt(diff / norm) : 0.0;
}

}  // namespace dlbench::test
