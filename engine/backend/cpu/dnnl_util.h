// Helpers shared by the oneDNN-backed CPU ops: memory descriptors in the house layouts,
// argument checks that name the op, a primitive cache keyed by op parameters, and scratch
// memory for gradients that oneDNN cannot accumulate by itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "engine/core/memory.h"
#include "engine/core/tensor.h"

namespace dlbench::backend::cpu {

// The CPU backend computes in f32 only; anything else is refused with the op's name.
void require_f32(const Tensor& t, const char* op, const char* what);
// Tensors handed to the CPU backend must live in host memory.
void require_cpu(const Tensor& t, const char* op, const char* what);

// f32 descriptors with an explicit layout, so oneDNN reads our memory as it is (no reorders).
dnnl::memory::desc f32_desc(const dnnl::memory::dims& dims, dnnl::memory::format_tag tag);
// The arguments of one primitive execution (DNNL_ARG_* -> memory).
using Args = std::unordered_map<int, dnnl::memory>;

// A user-memory object over a tensor's data (cheap: no allocation, no copy).
dnnl::memory wrap(const dnnl::memory::desc& md, const dnnl::engine& engine, void* data);

// A cache key: the op family and every parameter that shapes its primitive, flattened.
struct PrimitiveKey {
  std::vector<std::int64_t> fields;
  bool operator==(const PrimitiveKey&) const = default;
};

struct PrimitiveKeyHash {
  std::size_t operator()(const PrimitiveKey& key) const;
};

// One entry type per op (a primitive descriptor and its primitive); created on first use and
// reused by every later step with the same parameters.
template <class Entry>
class PrimitiveCache {
 public:
  template <class Make>
  Entry& get(const PrimitiveKey& key, Make&& make) {
    auto it = entries_.find(key);
    if (it == entries_.end()) it = entries_.emplace(key, make()).first;
    return it->second;
  }
  std::size_t size() const { return entries_.size(); }

 private:
  std::unordered_map<PrimitiveKey, Entry, PrimitiveKeyHash> entries_;
};

// Host scratch buffers that only grow; a slot per concurrent use within one op.
class ScratchPool {
 public:
  float* floats(int slot, std::size_t count);

 private:
  HostAllocator allocator_;
  std::vector<Buffer> slots_;
};

// dst[i] += src[i]: how a kAccumulate gradient joins what its output already holds.
void add_into(float* dst, const float* src, std::int64_t count);

// oneDNN reports failures as dnnl::error; turn one into dlbench::Error naming the op.
[[noreturn]] void rethrow_dnnl_error(const dnnl::error& e, const char* op);

}  // namespace dlbench::backend::cpu
