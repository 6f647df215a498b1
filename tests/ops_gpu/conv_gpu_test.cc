// Convolution forward, backward-data and backward-weights against the CPU backend, in every
// precision and both gradient modes, on each route a shape can take: measured (the default),
// pinned to cuDNN, pinned to the cuBLASLt matrix product (cuda_conv_gemm.cu: im2col in
// chunks, here made small so a product runs in several).

#include <string>
#include <tuple>

#include "tests/ops/op_cases.h"
#include "tests/ops_gpu/gpu_test_util.h"

namespace dlbench::gpu_test {
namespace {

using op_cases::conv;
using op_cases::name;

using backend::Conv2dParams;

// ResNet's shapes shrunk (1x1, 3x3, the 7x7 stride-2 stem on 3 channels, stride-2
// downsamples), odd channel counts and sizes, dilation, and one tensor-core-sized 3x3 block.
const std::vector<Conv2dParams> kCases = {
    conv(2, 7, 7, 16, 24, 1, 1, 1, 0, false),
    conv(2, 8, 8, 8, 16, 1, 1, 2, 0, true),
    conv(2, 10, 10, 16, 16, 3, 3, 1, 1, true),
    conv(2, 20, 20, 3, 8, 7, 7, 2, 3, false),
    conv(1, 19, 17, 3, 8, 7, 7, 2, 3, true),
    conv(3, 13, 9, 5, 7, 3, 3, 2, 1, true),
    conv(2, 9, 13, 5, 7, 1, 3, 1, 0, true),
    conv(2, 11, 11, 4, 6, 3, 3, 1, 2, false, 2),
    conv(4, 14, 14, 64, 64, 3, 3, 1, 1, false),
    // 1x1 at stride 2 on odd sizes (the last row and column are not read), odd channels (one
    // channel per thread), 16-byte channel packs, and a tall stride-1 product.
    conv(3, 9, 11, 5, 7, 1, 1, 2, 0, true),
    conv(2, 14, 14, 64, 32, 1, 1, 2, 0, false),
    conv(2, 28, 28, 64, 96, 1, 1, 1, 0, false),
};

struct ConvData {
  HostTensor x, w, bias, dy;
};

ConvData make_data(const Conv2dParams& p, DType dtype) {
  ConvData d{ops_test::random_tensor(p.input_shape(), 1),
             ops_test::random_tensor(p.weight_shape(), 2), ops_test::random_tensor({p.k}, 3),
             ops_test::random_tensor(p.output_shape(), 4)};
  for (HostTensor* t : {&d.x, &d.w, &d.bias, &d.dy}) round_in_place(dtype, *t);
  return d;
}

Conv2dParams with_math(Conv2dParams p, const Precision& prec) {
  p.math = prec.math;
  return p;
}

using backend::cuda::ConvRoute;

constexpr std::size_t kTestColumnBytes = 24 << 10;

const char* route_name(ConvRoute r) {
  return r == ConvRoute::kMeasured ? "measured" : r == ConvRoute::kCudnn ? "cudnn" : "gemm";
}

class ConvGpu : public GpuOpTestP<std::tuple<Precision, ConvRoute>> {
 protected:
  void SetUp() override {
    GpuOpTestP::SetUp();
    if (IsSkipped()) return;
    gpu().set_conv_route(std::get<1>(GetParam()));
    // Columns of a few KiB, so most products here run in several chunks.
    gpu().set_column_bytes(kTestColumnBytes);
  }
  void TearDown() override {
    if (IsSkipped()) return;
    // Every shape and direction went where the route says.
    const ConvRoute route = std::get<1>(GetParam());
    std::size_t gemm_count = 0;
    for (const auto& c : gpu().conv_choices()) {
      if (route == ConvRoute::kMeasured) {
        EXPECT_GT(c.cudnn_ms, 0.0f);
        EXPECT_GT(c.gemm_ms, 0.0f);
      }
      gemm_count += c.gemm ? 1 : 0;
    }
    if (route == ConvRoute::kCudnn) {
      EXPECT_TRUE(gpu().conv_choices().empty());
    } else {
      EXPECT_FALSE(gpu().conv_choices().empty());
    }
    if (route == ConvRoute::kGemm) {
      EXPECT_EQ(gemm_count, gpu().conv_choices().size());
    }
  }
};

TEST_P(ConvGpu, Forward) {
  const Precision& prec = std::get<0>(GetParam());
  for (Conv2dParams p : kCases) {
    p = with_math(p, prec);
    SCOPED_TRACE(name(p));
    ConvData d = make_data(p, prec.dtype);
    HostTensor y_cpu(p.output_shape());
    cpu().conv2d_forward(p, d.x.tensor(), d.w.tensor(), p.bias ? d.bias.tensor() : Tensor(),
                         y_cpu.tensor());
    GpuTensor x = upload(d.x, prec.dtype), w = upload(d.w, prec.dtype),
              b = upload(d.bias, prec.dtype);
    GpuTensor y = poisoned(p.output_shape(), prec.dtype);
    gpu().conv2d_forward(p, x.tensor(), w.tensor(), p.bias ? b.tensor() : Tensor(), y.tensor());
    EXPECT_TRUE(gpu_close(name(p) + " y", y.download(), y_cpu.data,
                          sum_tolerance(prec, p.r * p.s * p.c + 1)));
  }
}

TEST_P(ConvGpu, BackwardData) {
  const Precision& prec = std::get<0>(GetParam());
  for (Conv2dParams p : kCases) {
    p = with_math(p, prec);
    for (GradMode mode : {GradMode::kOverwrite, GradMode::kAccumulate}) {
      SCOPED_TRACE(name(p) + " " + ops_test::mode_name(mode));
      ConvData d = make_data(p, prec.dtype);
      HostTensor dx_cpu = ops_test::random_tensor(p.input_shape(), 5);
      round_in_place(prec.dtype, dx_cpu);
      GpuTensor dx = upload(dx_cpu, prec.dtype);
      if (mode == GradMode::kOverwrite) dx.poison();
      cpu().conv2d_backward_data(p, d.dy.tensor(), d.w.tensor(), dx_cpu.tensor(), mode);
      GpuTensor dy = upload(d.dy, prec.dtype), w = upload(d.w, prec.dtype);
      gpu().conv2d_backward_data(p, dy.tensor(), w.tensor(), dx.tensor(), mode);
      EXPECT_TRUE(gpu_close(name(p) + " dx " + ops_test::mode_name(mode), dx.download(),
                            dx_cpu.data, sum_tolerance(prec, p.r * p.s * p.k + 1)));
    }
  }
}

TEST_P(ConvGpu, BackwardWeights) {
  const Precision& prec = std::get<0>(GetParam());
  for (Conv2dParams p : kCases) {
    p = with_math(p, prec);
    for (GradMode mode : {GradMode::kOverwrite, GradMode::kAccumulate}) {
      SCOPED_TRACE(name(p) + " " + ops_test::mode_name(mode));
      ConvData d = make_data(p, prec.dtype);
      HostTensor dw_cpu = ops_test::random_tensor(p.weight_shape(), 6);
      HostTensor db_cpu = ops_test::random_tensor({p.k}, 7);
      round_in_place(prec.dtype, dw_cpu), round_in_place(prec.dtype, db_cpu);
      GpuTensor dw = upload(dw_cpu, prec.dtype), db = upload(db_cpu, prec.dtype);
      if (mode == GradMode::kOverwrite) dw.poison(), db.poison();
      cpu().conv2d_backward_weights(p, d.x.tensor(), d.dy.tensor(), dw_cpu.tensor(),
                                    p.bias ? db_cpu.tensor() : Tensor(), mode);
      GpuTensor x = upload(d.x, prec.dtype), dy = upload(d.dy, prec.dtype);
      gpu().conv2d_backward_weights(p, x.tensor(), dy.tensor(), dw.tensor(),
                                    p.bias ? db.tensor() : Tensor(), mode);
      const std::int64_t pixels = p.n * p.out_h() * p.out_w();
      EXPECT_TRUE(gpu_close(name(p) + " dw " + ops_test::mode_name(mode), dw.download(),
                            dw_cpu.data, sum_tolerance(prec, pixels + 1)));
      if (p.bias) {
        EXPECT_TRUE(gpu_close(name(p) + " dbias " + ops_test::mode_name(mode), db.download(),
                              db_cpu.data, sum_tolerance(prec, pixels + 1)));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    PrecisionsAndRoutes, ConvGpu,
    ::testing::Combine(::testing::ValuesIn(all_precisions()),
                       ::testing::Values(ConvRoute::kMeasured, ConvRoute::kCudnn,
                                         ConvRoute::kGemm)),
    [](const ::testing::TestParamInfo<std::tuple<Precision, ConvRoute>>& info) {
      return std::string(std::get<0>(info.param).name) + "_" + route_name(std::get<1>(info.param));
    });

// A repeated shape runs on its cached plan: no second measurement.
TEST_F(GpuOpTest, ConvPlansAreMeasuredOncePerShape) {
  const Conv2dParams p = kCases[2];
  ConvData d = make_data(p, DType::kF32);
  GpuTensor x = upload(d.x, DType::kF32), w = upload(d.w, DType::kF32),
            b = upload(d.bias, DType::kF32);
  GpuTensor y = poisoned(p.output_shape(), DType::kF32);
  gpu().conv2d_forward(p, x.tensor(), w.tensor(), b.tensor(), y.tensor());
  const std::size_t plans = gpu().conv_plans_cached();
  for (int i = 0; i < 3; ++i)
    gpu().conv2d_forward(p, x.tensor(), w.tensor(), b.tensor(), y.tensor());
  EXPECT_EQ(gpu().conv_plans_cached(), plans);
}

}  // namespace
}  // namespace dlbench::gpu_test
