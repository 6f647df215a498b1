// splitmix64's finalizer, the one mix behind every random stream of dlbench (weights, synthetic
// data, sampled negatives): a bijection of 64-bit words whose outputs pass BigCrush, cheap
// enough for a GPU thread to compute its own element. One definition for the host and CUDA
// kernels, so every backend draws the same values.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "engine/core/host_device.h"

namespace dlbench {

DLBENCH_HOST_DEVICE inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// splitmix64 as a sequence: the next word of the stream `state` stands at, which it advances.
// Host-side streams (shuffles, draws made once) use it, so every one is the same portable stream.
inline std::uint64_t splitmix64_next(std::uint64_t& state) {
  const std::uint64_t word = splitmix64(state);
  state += 0x9e3779b97f4a7c15ull;
  return word;
}

// The stream's next integer in [low, high_inclusive], from the word modulo the range's size.
inline std::int64_t splitmix64_between(std::uint64_t& state, std::int64_t low,
                                       std::int64_t high_inclusive) {
  return low + static_cast<std::int64_t>(splitmix64_next(state) %
                                         static_cast<std::uint64_t>(high_inclusive - low + 1));
}

// The stream's next double in [0, 1), from the word's top 53 bits.
inline double splitmix64_unit(std::uint64_t& state) {
  return static_cast<double>(splitmix64_next(state) >> 11) * 0x1.0p-53;
}

// The stream's next standard normal draw, by Box-Muller from two uniform draws (the first kept
// away from 0 for the log): host-side noise and lengths drawn once.
inline double splitmix64_normal(std::uint64_t& state) {
  const double u1 = std::max(splitmix64_unit(state), 1e-12), u2 = splitmix64_unit(state);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Fisher-Yates over `items` on the stream `state` (a data source's pass in a new order): the
// same order from the same state on every machine.
template <class Items>
void splitmix64_shuffle(Items& items, std::uint64_t& state) {
  for (std::size_t i = items.size(); i > 1; --i) {
    using std::swap;
    swap(items[i - 1], items[splitmix64_next(state) % i]);
  }
}

// An integer in [0, n) from 64 random bits: the top 32 bits scaled by n (Lemire's multiply-shift,
// without rejection: for n below 2^20 the bias is under 2^-12 of a value's share).
DLBENCH_HOST_DEVICE inline std::uint32_t below(std::uint64_t bits, std::uint32_t n) {
  return static_cast<std::uint32_t>(((bits >> 32) * n) >> 32);
}

}  // namespace dlbench
