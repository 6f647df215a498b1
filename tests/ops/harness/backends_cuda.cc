// The CUDA variants of the op harness: the measured convolution route (the default), the
// pinned routes (cuDNN's Find, the matrix product, cuDNN's graph API, input channels padded,
// ResNet's stem on our own kernel),
// each checked after a convolution case ran (cuda_backend.h: ConvRoute),
// and convolutions cut into one-sample slices of the batch (what batches past cuDNN's 2^31
// limits run as).
#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "engine/backend/cuda/cuda_backend.h"
#include "tests/gpu/gpu_available.h"
#include "tests/ops/harness/backends.h"

namespace dlbench::op_harness {
namespace {

using backend::cuda::ConvDirection;
using backend::cuda::ConvRoute;
using backend::cuda::CudaBackend;

// Columns of a few KiB, so most products here run in several chunks.
constexpr std::size_t kTestColumnBytes = 24 << 10;

// The case went where the route says.
void check_routes(backend::Backend& be, ConvRoute route) {
  auto& gpu = static_cast<CudaBackend&>(be);
  std::size_t gemm_count = 0;
  for (const auto& c : gpu.conv_choices()) {
    if (route == ConvRoute::kMeasured || route == ConvRoute::kPadded) {
      EXPECT_GT(c.cudnn_ms, 0.0f);
      EXPECT_GT(c.gemm_ms, 0.0f);
    }
    gemm_count += c.gemm ? 1 : 0;
  }
  // Some shapes and dtypes cannot run as a product (no choice is recorded then);
  // cuda_backend_test.cc checks that the product routes do record choices.
  // Convolutions over fewer than 8 input channels time their padded widths where routes are
  // measured (the default only where the copy is a small share of what the backend holds),
  // run on the narrowest where padding is pinned, and stay as they are otherwise.
  std::size_t padded = 0;
  for (const auto& c : gpu.padding_choices()) {
    EXPECT_FALSE(c.padded_ms.empty());
    for (const auto& [width, ms] : c.padded_ms) {
      EXPECT_GT(width, c.params.c);
      EXPECT_GT(ms, 0.0f) << "padded to " << width;
    }
    EXPECT_GT(c.unpadded_ms, 0.0f);
    padded += c.channels != c.params.c ? 1 : 0;
    if (route == ConvRoute::kPadded) {
      EXPECT_EQ(c.channels, c.padded_ms.front().first);
    }
  }
  if (route == ConvRoute::kPadded) {
    EXPECT_EQ(padded, gpu.padding_choices().size());
    // A forward or backward-weights plan at fewer than 8 channels was made by the padding
    // choice: its pass as it is, or one at a padded width. One made elsewhere would mean a call
    // skipped the choice.
    for (const auto& c : gpu.conv_choices()) {
      if (c.direction == ConvDirection::kBackwardData || c.params.c >= 8) continue;
      const bool chosen = std::any_of(
          gpu.padding_choices().begin(), gpu.padding_choices().end(), [&](const auto& pc) {
            if (pc.direction != c.direction || pc.dtype != c.dtype) return false;
            if (pc.params.fields() == c.params.fields()) return true;
            backend::ConvParams wide = pc.params;
            wide.c = c.params.c;
            return wide.fields() == c.params.fields() && c.params.c > pc.params.c;
          });
      EXPECT_TRUE(chosen) << "a " << c.params.c << "-channel pass planned outside the choice";
    }
  }
  if (route != ConvRoute::kMeasured && route != ConvRoute::kPadded) {
    EXPECT_TRUE(gpu.padding_choices().empty());
  }
  // The stem forwards and weight gradients the stem kernels can run were timed on them and on the
  // route chosen for them where routes are measured; pinned to them, they ran there and nothing
  // else planned them.
  for (const auto& c : gpu.stem_choices()) {
    EXPECT_TRUE(backend::cuda::stem_kernel_fits(c.params, c.dtype));
    EXPECT_GT(c.route_ms, 0.0f);
    EXPECT_GT(c.stem_ms, 0.0f);
  }
  if (route == ConvRoute::kStem) {
    EXPECT_TRUE(gpu.stem_choices().empty());
    for (const auto& c : gpu.conv_choices())
      EXPECT_FALSE(c.direction != ConvDirection::kBackwardData &&
                   backend::cuda::stem_kernel_fits(c.params, c.dtype))
          << "a stem pass planned on cuDNN's side while the stem kernels are pinned";
  } else if (route != ConvRoute::kMeasured && route != ConvRoute::kPadded) {
    EXPECT_TRUE(gpu.stem_choices().empty());
    EXPECT_EQ(gpu.stem_passes(), 0u);
  }
  if (route == ConvRoute::kCudnn) {
    EXPECT_TRUE(gpu.conv_choices().empty());
  }
  if (route == ConvRoute::kGemm) {
    EXPECT_EQ(gemm_count, gpu.conv_choices().size());
  }
  // Pinned to the graph API: every shape cuDNN has an engine for runs there (the graph route
  // falls back to Find's algorithm only where it has none, never for these small shapes).
  if (route == ConvRoute::kGraph) {
    EXPECT_TRUE(gpu.conv_choices().empty());
    EXPECT_GT(gpu.graph_routes(), 0u);
  }
}

// A route line's start: the convolution's window, input and output, stride, batch, pass and
// dtype.
void print_shape(const backend::ConvParams& p, const char* pass, DType dtype) {
  std::printf("conv%lldx%lld %lldx%lldx%lld->%lld s%d n%lld %-11s %-4s",
              static_cast<long long>(p.r), static_cast<long long>(p.s), static_cast<long long>(p.h),
              static_cast<long long>(p.w), static_cast<long long>(p.c), static_cast<long long>(p.k),
              p.stride_h, static_cast<long long>(p.n), pass, to_string(dtype));
}

// Each convolution that could run as a product: cuDNN's best time, the product's, the choice;
// each over few channels, its time at each padded width; each stem pass, its time on the route
// and on the stem kernel.
void print_routes(backend::Backend& be) {
  const char* directions[] = {"fwd", "bwd-data", "bwd-weights"};
  auto gflop = [](const backend::ConvParams& p) {
    return 2.0 * static_cast<double>(p.macs()) / 1e9;
  };
  for (const auto& c : static_cast<CudaBackend&>(be).conv_choices()) {
    print_shape(c.params, directions[static_cast<int>(c.direction)], c.dtype);
    std::printf(" cudnn %8.3f ms (%5.1f TFLOP/s)  gemm %8.3f ms (%5.1f)  -> %s\n", c.cudnn_ms,
                gflop(c.params) / c.cudnn_ms, c.gemm_ms, gflop(c.params) / c.gemm_ms,
                c.gemm ? "gemm" : "cudnn");
  }
  for (const auto& c : static_cast<CudaBackend&>(be).padding_choices()) {
    print_shape(c.params, directions[static_cast<int>(c.direction)], c.dtype);
    std::printf(" %lld channels %8.3f ms", static_cast<long long>(c.params.c), c.unpadded_ms);
    for (const auto& [width, ms] : c.padded_ms)
      std::printf("  padded to %lld %8.3f ms", static_cast<long long>(width), ms);
    std::printf("  -> %lld\n", static_cast<long long>(c.channels));
  }
  for (const auto& c : static_cast<CudaBackend&>(be).stem_choices()) {
    const bool stats = c.direction == ConvDirection::kForward && c.params.statistics;
    print_shape(c.params, stats ? "fwd+stats" : directions[static_cast<int>(c.direction)], c.dtype);
    std::printf(" route %8.3f ms (%5.1f TFLOP/s)  stem kernel %8.3f ms (%5.1f)  -> %s\n",
                c.route_ms, gflop(c.params) / c.route_ms, c.stem_ms, gflop(c.params) / c.stem_ms,
                c.stem ? "stem kernel" : "route");
  }
}

Variant cuda_variant(std::string name, ConvRoute route, bool conv_only,
                     std::size_t conv_slice_bytes = 0) {
  Variant v;
  v.name = std::move(name);
  v.conv_only = conv_only;
  v.precisions = {kF32, kTf32, kF16, kBf16};
  v.supports = backend::cuda::cuda_supports;
  v.make = [route, conv_slice_bytes](std::string* why_not) -> std::unique_ptr<backend::Backend> {
    if (!gpu_available()) {
      *why_not = "no GPU (cudaGetDeviceCount failed or found none)";
      return nullptr;
    }
    auto be = std::make_unique<CudaBackend>(0);
    be->set_conv_route(route);
    be->set_column_bytes(kTestColumnBytes);
    if (conv_slice_bytes > 0) be->set_conv_slice_bytes(conv_slice_bytes);
    return be;
  };
  v.conv_after = [route](backend::Backend& be) { check_routes(be, route); };
  // Timed with the tests' columns, a product over im2col ran in chunks of ~80 rows: the
  // stem's was reported at 247-545 ms, and never chosen.
  v.for_perf = [](backend::Backend& be) {
    static_cast<CudaBackend&>(be).set_column_bytes(CudaBackend::kColumnBytes);
  };
  v.print_conv_routes = print_routes;
  return v;
}

}  // namespace

void add_cuda_variants(std::vector<Variant>& out) {
  out.push_back(cuda_variant("cuda", ConvRoute::kMeasured, false));
  out.push_back(cuda_variant("cuda/cudnn", ConvRoute::kCudnn, true));
  out.push_back(cuda_variant("cuda/gemm", ConvRoute::kGemm, true));
  out.push_back(cuda_variant("cuda/graph", ConvRoute::kGraph, true));
  // Inputs of fewer than 8 channels padded to 4 or 8 (cuda_conv_padded.cu), whatever it costs.
  out.push_back(cuda_variant("cuda/padded", ConvRoute::kPadded, true));
  // ResNet's stem forward and weight gradient on our own kernels (cuda_conv_stem.cu,
  // cuda_conv_stem_wgrad.cu) wherever they fit.
  out.push_back(cuda_variant("cuda/stem", ConvRoute::kStem, true));
  // Any limit below one sample's bytes makes a slice of every sample.
  out.push_back(cuda_variant("cuda/sliced", ConvRoute::kMeasured, true, 1));
}

}  // namespace dlbench::op_harness
