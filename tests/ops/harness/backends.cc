#include "tests/ops/harness/backends.h"

#include <cstdint>
#include <cstring>

#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::op_harness {

std::vector<Variant> variants() {
  std::vector<Variant> out;
  Variant cpu;
  cpu.name = "cpu";
  cpu.is_cpu = true;
  // No TF32 math mode on the CPU: f32 only, and f16/bf16 to report the refusal as a skip.
  cpu.precisions = {kF32, kF16, kBf16};
  cpu.supports = backend::cpu::cpu_supports;
  cpu.make = [](std::string*) -> std::unique_ptr<backend::Backend> {
    return std::make_unique<backend::cpu::CpuBackend>();
  };
  out.push_back(std::move(cpu));
#if DLBENCH_HAVE_CUDA
  add_cuda_variants(out);
#endif
  return out;
}

void round_inputs(std::vector<HostTensor>& t, const Precision& p) {
  for (HostTensor& h : t)
    if (h.kind == Kind::kCompute)
      for (float& v : h.data) v = round_to(p.dtype, v);
}

DeviceTensors::DeviceTensors(backend::Backend& be, const std::vector<HostTensor>& host,
                             const Precision& p)
    : be_(&be) {
  buffers_.reserve(host.size());
  for (const HostTensor& h : host) {
    const DType dtype = dtype_of(h, p);
    const auto n = static_cast<std::size_t>(h.shape.numel());
    const std::size_t bytes = n * size_of(dtype);
    buffers_.emplace_back(be.allocator(), bytes > 0 ? bytes : 4);
    const Tensor view(buffers_.back().data(), h.shape, dtype, be.device());
    views_.push_back(view);
    if (n == 0) continue;
    if (h.role == Role::kOut) {  // every byte 0xFF: NaN in f32, f16 and bf16
      std::vector<unsigned char> poison(bytes, 0xFF);
      be.from_host(poison.data(), view);
    } else if (dtype == DType::kF32) {
      be.from_host(h.data.data(), view);
    } else if (dtype == DType::kI32) {
      std::vector<std::int32_t> v(h.data.begin(), h.data.end());
      be.from_host(v.data(), view);
    } else {
      std::vector<std::uint16_t> bits(n);
      for (std::size_t i = 0; i < n; ++i)
        bits[i] = dtype == DType::kF16 ? f32_to_f16_bits(h.data[i]) : f32_to_bf16_bits(h.data[i]);
      be.from_host(bits.data(), view);
    }
  }
}

std::vector<float> DeviceTensors::download(std::size_t i) const {
  const Tensor& t = views_[i];
  const auto n = static_cast<std::size_t>(t.numel());
  std::vector<float> out(n);
  if (n == 0) return out;
  if (t.dtype() == DType::kF32) {
    be_->to_host(t, out.data());
  } else if (t.dtype() == DType::kI32) {
    std::vector<std::int32_t> v(n);
    be_->to_host(t, v.data());
    for (std::size_t k = 0; k < n; ++k) out[k] = static_cast<float>(v[k]);
  } else {
    std::vector<std::uint16_t> bits(n);
    be_->to_host(t, bits.data());
    for (std::size_t k = 0; k < n; ++k)
      out[k] = t.dtype() == DType::kF16 ? f16_bits_to_f32(bits[k]) : bf16_bits_to_f32(bits[k]);
  }
  return out;
}

}  // namespace dlbench::op_harness
