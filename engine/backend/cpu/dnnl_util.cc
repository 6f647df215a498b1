#include "engine/backend/cpu/dnnl_util.h"

#include <string>

#include "engine/core/error.h"
#include "engine/core/hash.h"

namespace dlbench::backend::cpu {

void require_f32(const Tensor& t, const char* op, const char* what) {
  if (t.dtype() != DType::kF32)
    throw Error(ErrorKind::kUsage,
                std::string(op) + ": " + what + " is " + to_string(t.dtype()) +
                    "; the CPU backend computes in f32 only",
                "use fp32 precision on the CPU", {Setting::kPrecision, "fp32"});
  require_cpu(t, op, what);
}

void require_cpu(const Tensor& t, const char* op, const char* what) {
  DLBENCH_CHECK(t.device().type == DeviceType::kCpu, std::string(op) + ": " + what + " lives on " +
                                                         to_string(t.device()) +
                                                         ", not in host memory");
}

dnnl::memory::desc f32_desc(const dnnl::memory::dims& dims, dnnl::memory::format_tag tag) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, tag);
}

dnnl::memory wrap(const dnnl::memory::desc& md, const dnnl::engine& engine, void* data) {
  return dnnl::memory(md, engine, data);
}

std::size_t PrimitiveKeyHash::operator()(const PrimitiveKey& key) const {
  // FNV-1a over the fields' bytes (little-endian here): cheap, and parameter sets are few.
  const std::uint64_t h = fnv1a(key.fields.data(), key.fields.size() * sizeof(key.fields[0]));
  return static_cast<std::size_t>(h);
}

float* ScratchPool::floats(int slot, std::size_t count) {
  if (slots_.size() <= static_cast<std::size_t>(slot)) slots_.resize(slot + 1);
  Buffer& b = slots_[slot];
  const std::size_t bytes = count * sizeof(float);
  if (b.bytes() < bytes) b = Buffer(allocator_, bytes);
  return static_cast<float*>(b.data());
}

void add_into(float* dst, const float* src, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] += src[i];
}

void rethrow_dnnl_error(const dnnl::error& e, const char* op) {
  throw Error(ErrorKind::kExternal, std::string(op) + ": oneDNN failed (" + e.what() + ", status " +
                                        std::to_string(static_cast<int>(e.status)) + ")");
}

}  // namespace dlbench::backend::cpu
