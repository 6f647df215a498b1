// FNV-1a, 64 bit: a stable hash of bytes (the same on every build and platform, which
// std::hash is not), for fingerprints and cache keys. Not for anything adversarial.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dlbench {

constexpr std::uint64_t kFnv1aOffset = 1469598103934665603ull;

// Continues `h` over `bytes` bytes at `data`; start from kFnv1aOffset.
inline std::uint64_t fnv1a(const void* data, std::size_t bytes, std::uint64_t h = kFnv1aOffset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace dlbench
