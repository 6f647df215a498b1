// dlbench micro gemm on CPUs: oneDNN's matmul primitive, fp32 (strict) and bf16 where the CPU
// computes in bf16 natively. A is m x k row-major, B is stored as n x k row-major (the house
// [out, in] weights, oneDNN's "ba" for a k x n matrix), C is m x n row-major in f32.
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "bench/micro/gemm_bench.h"
#include "bench/micro/micro_pattern.h"
#include "engine/core/error.h"

namespace dlbench::micro {
namespace {

using dnnl::memory;
using Clock = std::chrono::steady_clock;

// Round to the nearest bf16, ties to even (our data holds no NaN).
std::uint16_t to_bf16(float f) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

// One precision and shape's operands in host memory, in the dtype oneDNN reads.
class CpuOperands {
 public:
  CpuOperands(const GemmShape& s, bool bf16) : shape_(s), bf16_(bf16) {
    const auto a = static_cast<std::size_t>(s.m * s.k), b = static_cast<std::size_t>(s.n * s.k);
    if (bf16) {
      a16_.resize(a), b16_.resize(b);
    } else {
      a32_.resize(a), b32_.resize(b);
    }
    c_.resize(static_cast<std::size_t>(s.m * s.n));
  }
  template <class Value>
  void fill(Value value, std::uint64_t seed) {
    const std::size_t a = bf16_ ? a16_.size() : a32_.size();
    const std::size_t b = bf16_ ? b16_.size() : b32_.size();
#pragma omp parallel for
    for (std::size_t i = 0; i < a; ++i)
      set(bf16_ ? a16_.data() : nullptr, a32_.data(), i, value(i, seed));
#pragma omp parallel for
    for (std::size_t i = 0; i < b; ++i)
      set(bf16_ ? b16_.data() : nullptr, b32_.data(), i, value(i, seed + 1));
  }
  void* a() {
    return bf16_ ? static_cast<void*>(a16_.data()) : a32_.data();
  }
  void* b() {
    return bf16_ ? static_cast<void*>(b16_.data()) : b32_.data();
  }
  std::vector<float>& c() {
    return c_;
  }

 private:
  static void set(std::uint16_t* out16, float* out32, std::size_t i, float v) {
    if (out16 != nullptr)
      out16[i] = to_bf16(v);
    else
      out32[i] = v;
  }
  GemmShape shape_;
  bool bf16_;
  std::vector<float> a32_, b32_, c_;
  std::vector<std::uint16_t> a16_, b16_;
};

float random_at(std::size_t i, std::uint64_t seed) {
  return random_value(i, seed);
}
float whole_at(std::size_t i, std::uint64_t seed) {
  return static_cast<float>(small_whole(i, seed));
}

void run_shape(GemmRow& row, const GemmConfig& config, const dnnl::engine& engine,
               dnnl::stream& stream) {
  const GemmShape& s = row.shape;
  const bool bf16 = row.precision == GemmPrecision::kBf16;
  const memory::data_type in = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  const memory::desc a_md({s.m, s.k}, in, memory::format_tag::ab);
  const memory::desc b_md({s.k, s.n}, in, memory::format_tag::ba);
  const memory::desc c_md({s.m, s.n}, memory::data_type::f32, memory::format_tag::ab);
  dnnl::matmul::primitive_desc pd;
  try {
    pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md), engine);
  } catch (const dnnl::error& e) {
    row.skipped = std::string("oneDNN has no matmul for it here (") + e.what() + ")";
    return;
  }
  row.algorithm = pd.impl_info_str();
  dnnl::matmul product(pd);
  CpuOperands ops(s, bf16);
  memory a(a_md, engine, ops.a()), b(b_md, engine, ops.b()), c(c_md, engine, ops.c().data());
  const std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}};
  auto run = [&] {
    product.execute(stream, args);
    stream.wait();
  };

  ops.fill(random_at, config.seed);
  for (int i = 0; i < config.warmup; ++i) run();
  int iters = 0;
  const Clock::time_point start = Clock::now();
  double seconds = 0;
  while (iters < config.iters || seconds < config.min_seconds) {
    run();
    ++iters;
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  row.iters = iters;
  row.time_us = seconds / iters * 1e6;
  row.rate = tera_rate(gemm_ops(s) * iters, seconds);

  // The check: whole-number inputs, a poisoned output, one product, sampled entries.
  ops.fill(whole_at, config.seed);
  std::fill(ops.c().begin(), ops.c().end(), std::numeric_limits<float>::quiet_NaN());
  run();
  for (int sample = 0; sample < config.samples; ++sample) {
    const SampledEntry e = sampled_entry(sample, s.m, s.n, config.seed);
    double expected = 0, abs_sum = 0;
    for (std::int64_t kk = 0; kk < s.k; ++kk) {
      const double p = double(small_whole(std::uint64_t(e.row * s.k + kk), config.seed)) *
                       small_whole(std::uint64_t(e.col * s.k + kk), config.seed + 1);
      expected += p;
      abs_sum += std::fabs(p);
    }
    const double got = ops.c()[std::size_t(e.row * s.n + e.col)];
    const double error = std::fabs(got - expected);
    ++row.checked;
    if (!(error <= gemm_tolerance(row.precision, DeviceType::kCpu, expected, abs_sum))) ++row.wrong;
    if (std::isfinite(error) && error > row.max_error) row.max_error = error;
    if (!std::isfinite(error)) row.max_error = std::numeric_limits<double>::infinity();
  }
}

}  // namespace

bool cpu_has_bf16() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream flags(line.substr(line.find(':') + 1));
    for (std::string f; flags >> f;)
      if (f == "avx512_bf16" || f == "amx_bf16") return true;
    return false;
  }
  return false;
}

GemmResult run_gemm_cpu(const GemmConfig& config, const GemmHooks& hooks) {
  GemmResult r;
  r.device = "cpu";
  r.backend = "cpu (" + std::to_string(omp_get_max_threads()) + " threads)";
  const dnnl_version_t* v = dnnl::version();
  r.library = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
              std::to_string(v->patch) + " matmul";
  r.config = config;
  if (hooks.on_start) hooks.on_start(r);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const bool bf16 = cpu_has_bf16();
  for (GemmPrecision p : config.precisions)
    for (const GemmShape& s : config.shapes) {
      GemmRow row;
      row.precision = p;
      row.shape = s;
      if (p != GemmPrecision::kFp32 && p != GemmPrecision::kBf16)
        row.skipped = "not measured on CPUs (oneDNN matmul here: fp32 and bf16)";
      else if (p == GemmPrecision::kBf16 && !bf16)
        row.skipped = "not supported on this CPU (no AVX512-BF16 or AMX-BF16)";
      else
        run_shape(row, config, engine, stream);
      r.rows.push_back(row);
      if (hooks.on_row) hooks.on_row(r.rows.back());
    }
  return r;
}

}  // namespace dlbench::micro
