// dlbench micro gemm on GPUs: cuBLASLt, the algorithm of each precision and shape chosen by
// timing the candidates of cuBLASLt's heuristic (not by taking its first).
//
// Layout: every precision runs "TN", the one fp8 and int8 products require: A is stored k x m
// column-major and transposed (op(A)[i][kk] = A[i*k + kk]), B is k x n column-major
// (B[j*k + kk]), C and D are m x n column-major (D[i + j*m]), beta = 0 and D is C.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "bench/micro/gemm_bench.h"
#include "bench/micro/micro_cuda.h"
#include "bench/micro/micro_kernels.h"
#include "bench/micro/micro_pattern.h"
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_handles.h"
#include "engine/core/error.h"

namespace dlbench::micro {
namespace {

using backend::cuda::CudaAllocator;
using kernels::Element;

// Candidates are each timed over this many products before the best is timed for real.
constexpr int kSelectionIters = 3;
constexpr int kMaxIters = 100000;

struct Types {
  Element in;
  cudaDataType_t ab, cd, scale;
  cublasComputeType_t compute;
  std::size_t out_size;
};

Types types_of(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kFp64:
      return {Element::kF64, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 8};
    case GemmPrecision::kFp32:
      return {Element::kF32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4};
    case GemmPrecision::kTf32:
      return {Element::kF32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4};
    case GemmPrecision::kFp16:
      return {Element::kF16, CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2};
    case GemmPrecision::kBf16:
      return {Element::kBf16, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2};
    case GemmPrecision::kFp8:
      return {Element::kE4m3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2};
    case GemmPrecision::kInt8:
      return {Element::kI8, CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, 4};
  }
  return {};
}

// alpha = 1 and beta = 0 in the scale type.
struct Scalars {
  double d1 = 1, d0 = 0;
  float f1 = 1, f0 = 0;
  std::int32_t i1 = 1, i0 = 0;
  const void* one(cudaDataType_t t) const {
    return t == CUDA_R_64F   ? static_cast<const void*>(&d1)
           : t == CUDA_R_32I ? static_cast<const void*>(&i1)
                             : static_cast<const void*>(&f1);
  }
  const void* zero(cudaDataType_t t) const {
    return t == CUDA_R_64F   ? static_cast<const void*>(&d0)
           : t == CUDA_R_32I ? static_cast<const void*>(&i0)
                             : static_cast<const void*>(&f0);
  }
};

double output_value(const unsigned char* bytes, GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kFp64: {
      double v;
      std::memcpy(&v, bytes, 8);
      return v;
    }
    case GemmPrecision::kFp32:
    case GemmPrecision::kTf32: {
      float v;
      std::memcpy(&v, bytes, 4);
      return v;
    }
    case GemmPrecision::kFp16: {  // IEEE half: 1 sign, 5 exponent, 10 fraction bits
      std::uint16_t h;
      std::memcpy(&h, bytes, 2);
      const int exponent = (h >> 10) & 0x1f, fraction = h & 0x3ff;
      const double sign = (h & 0x8000) ? -1 : 1;
      if (exponent == 0x1f)
        return fraction ? std::numeric_limits<double>::quiet_NaN()
                        : sign * std::numeric_limits<double>::infinity();
      if (exponent == 0) return sign * std::ldexp(fraction, -24);
      return sign * std::ldexp(fraction + 1024, exponent - 25);
    }
    case GemmPrecision::kBf16:
    case GemmPrecision::kFp8: {  // bf16 out: the high half of an f32
      std::uint16_t h;
      std::memcpy(&h, bytes, 2);
      const std::uint32_t bits = std::uint32_t(h) << 16;
      float v;
      std::memcpy(&v, &bits, 4);
      return v;
    }
    case GemmPrecision::kInt8: {
      std::int32_t v;
      std::memcpy(&v, bytes, 4);
      return v;
    }
  }
  return 0;
}

std::string version_text(std::size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

std::string algorithm_text(const cublasLtMatmulAlgo_t& algo) {
  std::int32_t id = 0;
  std::uint32_t tile = 0, stages = 0;
  std::size_t written = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &written);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile,
                                       &written);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                       sizeof stages, &written);
  return "algo " + std::to_string(id) + " tile " + std::to_string(tile) + " stages " +
         std::to_string(stages);
}

class GpuGemm {
 public:
  GpuGemm(int device, const GemmConfig& config)
      : config_(config), allocator_(device), workspace_(allocator_, config.workspace_bytes) {}

  void run(GemmRow& row) {
    const GemmShape& s = row.shape;
    const Types t = types_of(row.precision);
    const std::size_t in = kernels::element_size(t.in);
    Buffer a, b, c;
    try {
      a = Buffer(allocator_, std::size_t(s.m * s.k) * in);
      b = Buffer(allocator_, std::size_t(s.n * s.k) * in);
      c = Buffer(allocator_, std::size_t(s.m * s.n) * t.out_size);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kResource) throw;
      row.skipped = "out of device memory for this shape";
      return;
    }
    cublasLtMatmulDesc_t desc_handle{};
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_handle, t.compute, t.scale));
    backend::cuda::MatmulDesc desc(desc_handle);
    const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_TRANSA, &transa,
                                                sizeof transa));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_TRANSB, &transb,
                                                sizeof transb));
    if (row.precision == GemmPrecision::kFp8) {
      // What fp8 training's forward products use (Transformer Engine): the tensor cores'
      // own accumulation, promoted less often.
      const std::int8_t fast = 1;
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                                  &fast, sizeof fast));
    }
    backend::cuda::MatrixLayout la = layout(t.ab, s.k, s.m), lb = layout(t.ab, s.k, s.n),
                                lc = layout(t.cd, s.m, s.n);
    backend::cuda::MatmulPreference pref;
    const std::uint64_t workspace = std::uint64_t(config_.workspace_bytes);
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace));
    std::vector<cublasLtMatmulHeuristicResult_t> found(std::size_t(config_.algos));
    int count = 0;
    const cublasStatus_t heuristic =
        cublasLtMatmulAlgoGetHeuristic(lt_, desc.get(), la.get(), lb.get(), lc.get(), lc.get(),
                                       pref, config_.algos, found.data(), &count);
    if (heuristic != CUBLAS_STATUS_SUCCESS || count == 0) {
      row.skipped = "cuBLASLt has no algorithm for it on this GPU";
      return;
    }

    auto product = [&](const cublasLtMatmulAlgo_t& algo) {
      return cublasLtMatmul(lt_, desc.get(), scalars_.one(t.scale), a.data(), la.get(), b.data(),
                            lb.get(), scalars_.zero(t.scale), c.data(), lc.get(), c.data(),
                            lc.get(), &algo, workspace_.data(), workspace_.bytes(), stream_);
    };
    // ms per product over n products of algo, or a negative number when it fails to run.
    auto time = [&](const cublasLtMatmulAlgo_t& algo, int n) {
      CUDA_CHECK(cudaEventRecord(start_, stream_));
      for (int i = 0; i < n; ++i)
        if (product(algo) != CUBLAS_STATUS_SUCCESS) return -1.0;
      CUDA_CHECK(cudaEventRecord(stop_, stream_));
      CUDA_CHECK(cudaEventSynchronize(stop_));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
      return double(ms) / n;
    };

    kernels::fill_matrix(a.data(), s.m * s.k, t.in, kernels::Fill::kRandom, config_.seed, stream_);
    kernels::fill_matrix(b.data(), s.n * s.k, t.in, kernels::Fill::kRandom, config_.seed + 1,
                         stream_);
    int best = -1;
    double best_ms = 0;
    for (int i = 0; i < count; ++i) {
      if (found[i].state != CUBLAS_STATUS_SUCCESS) continue;
      if (time(found[i].algo, 1) < 0) continue;  // a warm-up, and a test that it runs
      ++row.candidates;
      const double ms = time(found[i].algo, kSelectionIters);
      if (ms > 0 && (best < 0 || ms < best_ms)) best = i, best_ms = ms;
    }
    if (best < 0) {
      row.skipped = "none of cuBLASLt's " + std::to_string(count) + " candidates ran";
      return;
    }
    const cublasLtMatmulAlgo_t& algo = found[best].algo;
    row.algorithm = algorithm_text(algo);
    for (int i = 0; i < config_.warmup; ++i) CUBLAS_CHECK(product(algo));
    const double wanted = std::ceil(config_.min_seconds * 1e3 / best_ms);
    row.iters = std::max(config_.iters, int(std::min<double>(wanted, kMaxIters)));
    const double ms = time(algo, row.iters);
    if (ms < 0) throw Error(ErrorKind::kExternal, "cuBLASLt failed an algorithm it had run");
    row.time_us = ms * 1e3;
    row.rate = tera_rate(gemm_ops(s), ms * 1e-3);

    // The check: whole-number inputs, a poisoned output (all bits set: NaN, or -1), one
    // product, the sampled entries against their exact value.
    kernels::fill_matrix(a.data(), s.m * s.k, t.in, kernels::Fill::kWhole, config_.seed, stream_);
    kernels::fill_matrix(b.data(), s.n * s.k, t.in, kernels::Fill::kWhole, config_.seed + 1,
                         stream_);
    CUDA_CHECK(cudaMemsetAsync(c.data(), 0xff, c.bytes(), stream_));
    CUBLAS_CHECK(product(algo));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    check(row, c, t.out_size);
  }

 private:
  static backend::cuda::MatrixLayout layout(cudaDataType_t type, std::int64_t rows,
                                            std::int64_t cols) {
    cublasLtMatrixLayout_t h{};
    CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&h, type, std::uint64_t(rows), std::uint64_t(cols), rows));
    return backend::cuda::MatrixLayout(h);
  }

  void check(GemmRow& row, const Buffer& c, std::size_t out_size) {
    const GemmShape& s = row.shape;
    unsigned char bytes[8];
    for (int sample = 0; sample < config_.samples; ++sample) {
      const SampledEntry e = sampled_entry(sample, s.m, s.n, config_.seed);
      const std::size_t at = std::size_t(e.row + e.col * s.m) * out_size;
      CUDA_CHECK(cudaMemcpy(bytes, static_cast<const unsigned char*>(c.data()) + at, out_size,
                            cudaMemcpyDeviceToHost));
      double expected = 0, abs_sum = 0;
      for (std::int64_t kk = 0; kk < s.k; ++kk) {
        const double p = double(small_whole(std::uint64_t(e.row * s.k + kk), config_.seed)) *
                         small_whole(std::uint64_t(e.col * s.k + kk), config_.seed + 1);
        expected += p;
        abs_sum += std::fabs(p);
      }
      const double error = std::fabs(output_value(bytes, row.precision) - expected);
      ++row.checked;
      if (!(error <= gemm_tolerance(row.precision, DeviceType::kCuda, expected, abs_sum)))
        ++row.wrong;
      row.max_error = std::isfinite(error) ? std::max(row.max_error, error)
                                           : std::numeric_limits<double>::infinity();
    }
  }

  const GemmConfig& config_;
  CudaAllocator allocator_;
  Buffer workspace_;
  backend::cuda::Stream stream_;
  backend::cuda::Event start_, stop_;
  backend::cuda::CublasLtHandle lt_;
  Scalars scalars_;
};

}  // namespace

GemmResult run_gemm_cuda(int device, const GemmConfig& config, const GemmHooks& hooks) {
  use_gpu(device);
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  GemmResult r;
  r.device = "cuda:" + std::to_string(device);
  r.backend = r.device + " (" + prop.name + ")";
  r.library = "cuBLASLt " + version_text(cublasLtGetVersion());
  r.cc_major = prop.major;
  r.cc_minor = prop.minor;
  r.sm_count = prop.multiProcessorCount;
  r.sm_clock_mhz = clock_khz / 1000.0;
  r.config = config;
  if (hooks.on_start) hooks.on_start(r);
  GpuGemm gemm(device, config);
  const bool fp8 = prop.major * 10 + prop.minor >= 89;
  for (GemmPrecision p : config.precisions)
    for (const GemmShape& s : config.shapes) {
      GemmRow row;
      row.precision = p;
      row.shape = s;
      if (p == GemmPrecision::kFp8 && !fp8)
        row.skipped = "no fp8 on this GPU (needs compute capability 8.9 or newer)";
      else
        gemm.run(row);
      r.rows.push_back(row);
      if (hooks.on_row) hooks.on_row(r.rows.back());
    }
  return r;
}

}  // namespace dlbench::micro
