// The CUDA variants of the op harness: the measured convolution route (the default) and the
// two pinned routes, each checked after a convolution case ran (cuda_backend.h: ConvRoute).
#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include "engine/backend/cuda/cuda_backend.h"
#include "tests/ops/harness/backends.h"

namespace dlbench::op_harness {
namespace {

using backend::cuda::ConvRoute;
using backend::cuda::CudaBackend;

// Columns of a few KiB, so most products here run in several chunks.
constexpr std::size_t kTestColumnBytes = 24 << 10;

bool gpu_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

// The case went where the route says.
void check_routes(backend::Backend& be, ConvRoute route) {
  auto& gpu = static_cast<CudaBackend&>(be);
  std::size_t gemm_count = 0;
  for (const auto& c : gpu.conv_choices()) {
    if (route == ConvRoute::kMeasured) {
      EXPECT_GT(c.cudnn_ms, 0.0f);
      EXPECT_GT(c.gemm_ms, 0.0f);
    }
    gemm_count += c.gemm ? 1 : 0;
  }
  // Some shapes and dtypes cannot run as a product (no choice is recorded then);
  // cuda_backend_test.cc checks that the product routes do record choices.
  if (route == ConvRoute::kCudnn) {
    EXPECT_TRUE(gpu.conv_choices().empty());
  }
  if (route == ConvRoute::kGemm) {
    EXPECT_EQ(gemm_count, gpu.conv_choices().size());
  }
}

Variant cuda_variant(std::string name, ConvRoute route, bool conv_only) {
  Variant v;
  v.name = std::move(name);
  v.conv_only = conv_only;
  v.precisions = {kF32, kTf32, kF16, kBf16};
  v.supports = backend::cuda::cuda_supports;
  v.make = [route](std::string* why_not) -> std::unique_ptr<backend::Backend> {
    if (!gpu_available()) {
      *why_not = "no GPU (cudaGetDeviceCount failed or found none)";
      return nullptr;
    }
    auto be = std::make_unique<CudaBackend>(0);
    be->set_conv_route(route);
    be->set_column_bytes(kTestColumnBytes);
    return be;
  };
  v.conv_after = [route](backend::Backend& be) { check_routes(be, route); };
  return v;
}

}  // namespace

void add_cuda_variants(std::vector<Variant>& out) {
  out.push_back(cuda_variant("cuda", ConvRoute::kMeasured, false));
  out.push_back(cuda_variant("cuda/cudnn", ConvRoute::kCudnn, true));
  out.push_back(cuda_variant("cuda/gemm", ConvRoute::kGemm, true));
}

}  // namespace dlbench::op_harness
