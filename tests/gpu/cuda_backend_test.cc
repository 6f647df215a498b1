// The CUDA backend's own behaviour, apart from op results (those are op harness cases, run on
// the cuda variants): convolution plans measured once per shape, the routes' choices (padded
// input channels among them), pooling workspaces, recordings that notice the workspace moving,
// and batch norm's fixed-order sums (the same bits run after run). Labelled gpu; each test
// skips itself without a GPU.
#include <algorithm>
#include <string>
#include <vector>

#include "tests/gpu/cuda_test_util.h"
#include "tests/gpu/grow_workspace.h"

namespace dlbench::gpu_test {
namespace {

// A repeated shape runs on its cached plan: no second measurement.
TEST_F(GpuOpTest, ConvPlansAreMeasuredOncePerShape) {
  backend::ConvParams p;
  p.n = 2, p.h = 10, p.w = 10, p.c = 16, p.k = 16, p.r = 3, p.s = 3;
  p.pad_h = p.pad_w = 1, p.bias = true;
  const HostTensor hx = ops_test::random_tensor(p.input_shape(), 1);
  const HostTensor hw = ops_test::random_tensor(p.weight_shape(), 2);
  const HostTensor hb = ops_test::random_tensor({p.k}, 3);
  GpuTensor x = upload(hx, DType::kF32), w = upload(hw, DType::kF32), b = upload(hb, DType::kF32);
  GpuTensor y = poisoned(p.output_shape(), DType::kF32);
  gpu().conv_forward(p, x.tensor(), w.tensor(), b.tensor(), y.tensor());
  const std::size_t plans = gpu().conv_plans_cached();
  for (int i = 0; i < 3; ++i) gpu().conv_forward(p, x.tensor(), w.tensor(), b.tensor(), y.tensor());
  EXPECT_EQ(gpu().conv_plans_cached(), plans);
}

// A 3x3 convolution with bias and ReLU, its inputs, and its forward and backward results.
struct ConvRun {
  backend::ConvParams p;
  HostTensor x, w, b, dy;
  explicit ConvRun(std::int64_t n, std::int64_t channels = 16) {
    p.n = n, p.h = 10, p.w = 10, p.c = channels, p.k = 16, p.r = 3, p.s = 3;
    p.pad_h = p.pad_w = 1, p.bias = true, p.activation = backend::Activation::kRelu;
    x = ops_test::random_tensor(p.input_shape(), 1),
    w = ops_test::random_tensor(p.weight_shape(), 2);
    b = ops_test::random_tensor({p.k}, 3), dy = ops_test::random_tensor(p.output_shape(), 4);
  }
  // The ReLU's own backward comes first, elsewhere: the backward calls see none.
  backend::ConvParams backward() const {
    backend::ConvParams q = p;
    q.activation = backend::Activation::kNone;
    return q;
  }
};
struct ConvOutputs {
  std::vector<float> y, dx, dw, db;
};

ConvOutputs run_conv(backend::cuda::CudaBackend& be, const ConvRun& c) {
  const backend::ConvParams& p = c.p;
  GpuTensor x(be, p.input_shape(), DType::kF32), w(be, p.weight_shape(), DType::kF32);
  GpuTensor b(be, {p.k}, DType::kF32), dy(be, p.output_shape(), DType::kF32);
  x.upload(c.x.data), w.upload(c.w.data), b.upload(c.b.data), dy.upload(c.dy.data);
  GpuTensor y(be, p.output_shape(), DType::kF32), dx(be, p.input_shape(), DType::kF32);
  GpuTensor dw(be, p.weight_shape(), DType::kF32), db(be, {p.k}, DType::kF32);
  for (GpuTensor* t : {&y, &dx, &dw, &db}) t->poison();
  be.conv_forward(p, x.tensor(), w.tensor(), b.tensor(), y.tensor());
  be.conv_backward_data(c.backward(), dy.tensor(), w.tensor(), dx.tensor(), GradMode::kOverwrite);
  be.conv_backward_weights(c.backward(), x.tensor(), dy.tensor(), dw.tensor(), db.tensor(),
                           GradMode::kOverwrite);
  return {y.download(), dx.download(), dw.download(), db.download()};
}

ConvOutputs run_conv(backend::cpu::CpuBackend& be, ConvRun c) {
  const backend::ConvParams& p = c.p;
  HostTensor y = ops_test::poisoned(p.output_shape()), dx = ops_test::poisoned(p.input_shape());
  HostTensor dw = ops_test::poisoned(p.weight_shape()), db = ops_test::poisoned({p.k});
  be.conv_forward(p, c.x.tensor(), c.w.tensor(), c.b.tensor(), y.tensor());
  be.conv_backward_data(c.backward(), c.dy.tensor(), c.w.tensor(), dx.tensor(),
                        GradMode::kOverwrite);
  be.conv_backward_weights(c.backward(), c.x.tensor(), c.dy.tensor(), dw.tensor(), db.tensor(),
                           GradMode::kOverwrite);
  return {y.data, dx.data, dw.data, db.data};
}

// Both within f32 summation tolerance (algorithms may differ, so not bit for bit): forward and
// backward-data sum c r s and k r s terms, backward-weights n out_h out_w.
void expect_close(const ConvOutputs& got, const ConvOutputs& want, const backend::ConvParams& p) {
  EXPECT_TRUE(gpu_close("y", got.y, want.y, op_harness::sum_tolerance(p.c * p.r * p.s)));
  EXPECT_TRUE(gpu_close("dx", got.dx, want.dx, op_harness::sum_tolerance(p.k * p.r * p.s)));
  EXPECT_TRUE(gpu_close("dw", got.dw, want.dw, op_harness::sum_tolerance(p.n * p.h * p.w)));
  EXPECT_TRUE(gpu_close("db", got.db, want.db, op_harness::sum_tolerance(p.n * p.h * p.w)));
}

// Five samples in slices of 2, 2 and 1: the one-sample slice takes the two-sample slice's
// choice instead of measuring again, and every direction matches the whole batch in one call.
TEST_F(GpuOpTest, AnUnevenSliceTakesTheLargerSlicesChoice) {
  const ConvRun c(5);
  backend::cuda::CudaBackend sliced(0);
  sliced.set_conv_slice_bytes(2 * sizeof(float) * static_cast<std::size_t>(c.p.h * c.p.w * c.p.c));
  const ConvOutputs parts = run_conv(sliced, c);
  expect_close(parts, run_conv(gpu(), c), c.p);
  // Slices of 2 and of 1 in each of the three directions; only the 2s were measured.
  EXPECT_EQ(sliced.conv_plans_cached(), 6u);
  EXPECT_EQ(sliced.conv_plans_measured(), 3u);
}

// A batch past kConvMeasureBatch is measured on that many samples, once per direction, and
// the winner's results over the whole batch are the CPU's.
TEST_F(GpuOpTest, ALargeBatchIsMeasuredOnItsHead) {
  const ConvRun c(backend::cuda::CudaBackend::kConvMeasureBatch + 3);
  const ConvOutputs whole = run_conv(gpu(), c);
  expect_close(whole, run_conv(cpu(), c), c.p);
  EXPECT_EQ(gpu().conv_plans_cached(), 6u);  // the head's plans and the whole batch's
  EXPECT_EQ(gpu().conv_plans_measured(), 3u);
}

// An input of fewer than 8 channels runs its forward and backward-weights on a zero-padded copy
// where padding is pinned (3 channels on 4), with the CPU's results, after timing both ways;
// backward-data writes the 3 channels' gradient as it is.
TEST_F(GpuOpTest, AFewChannelInputRunsOnPaddedChannelsWherePinned) {
  const ConvRun c(2, 3);
  backend::cuda::CudaBackend padded(0);
  padded.set_conv_route(backend::cuda::ConvRoute::kPadded);
  const ConvOutputs want = run_conv(cpu(), c);
  expect_close(run_conv(padded, c), want, c.p);
  ASSERT_EQ(padded.padding_choices().size(), 2u);
  for (const auto& choice : padded.padding_choices()) {
    EXPECT_NE(choice.direction, backend::cuda::ConvDirection::kBackwardData);
    EXPECT_EQ(choice.channels, 4);
    EXPECT_GT(choice.unpadded_ms, 0.0f);
  }
  // Chosen, the calls run padded without timing again: the forward and backward-weights.
  const std::size_t before = padded.padded_passes();
  expect_close(run_conv(padded, c), want, c.p);
  EXPECT_EQ(padded.padded_passes(), before + 2);
  EXPECT_EQ(padded.padding_choices().size(), 2u);
}

// A 1x1 convolution can run as a product: the measured route times both ways, the gemm
// route takes the product every time (each harness case checks only what it ran).
TEST_F(GpuOpTest, ConvProductRoutesRecordTheirChoices) {
  backend::ConvParams p;
  p.n = 2, p.h = 7, p.w = 7, p.c = 16, p.k = 24, p.r = 1, p.s = 1;
  const HostTensor hx = ops_test::random_tensor(p.input_shape(), 1);
  const HostTensor hw = ops_test::random_tensor(p.weight_shape(), 2);
  for (backend::cuda::ConvRoute route :
       {backend::cuda::ConvRoute::kMeasured, backend::cuda::ConvRoute::kGemm}) {
    backend::cuda::CudaBackend be(0);
    be.set_conv_route(route);
    GpuTensor x(be, p.input_shape(), DType::kF32), w(be, p.weight_shape(), DType::kF32);
    GpuTensor y(be, p.output_shape(), DType::kF32);
    x.upload(hx.data), w.upload(hw.data);
    be.conv_forward(p, x.tensor(), w.tensor(), Tensor(), y.tensor());
    ASSERT_FALSE(be.conv_choices().empty());
    for (const auto& c : be.conv_choices()) {
      if (route == backend::cuda::ConvRoute::kGemm) {
        EXPECT_TRUE(c.gemm);
      } else {
        EXPECT_GT(c.cudnn_ms, 0.0f);
        EXPECT_GT(c.gemm_ms, 0.0f);
      }
    }
  }
}

backend::PoolParams max_pool(std::int64_t h, std::int64_t w, std::int64_t c, int window,
                             int stride) {
  backend::PoolParams p;
  p.kind = backend::PoolKind::kMax, p.n = 2, p.h = h, p.w = w, p.c = c;
  p.window_h = p.window_w = window, p.stride_h = p.stride_w = stride;
  return p;
}

// A recording holds the workspace's address. Once an op outside it reallocates the workspace, the
// recording is no longer current and refuses to launch rather than replay into freed memory; one
// made after the growth is current and runs.
TEST_F(GpuOpTest, ARecordingIsNotCurrentAfterTheWorkspaceGrows) {
  GpuTensor t(gpu(), {64}, DType::kF32);
  gpu().begin_capture();
  gpu().fill(t.tensor(), 2.0f);
  const std::unique_ptr<backend::DeviceGraph> graph = gpu().end_capture();
  ASSERT_NE(graph, nullptr);
  EXPECT_TRUE(graph->current());
  graph->launch();
  gpu().synchronize();
  EXPECT_EQ(t.download(), std::vector<float>(64, 2.0f));

  const std::size_t before = grow_workspace(gpu());
  EXPECT_GT(gpu().workspace_bytes(), before);
  EXPECT_FALSE(graph->current());
  try {
    graph->launch();
    ADD_FAILURE() << "a recording launched after the workspace it holds was reallocated";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_NE(std::string(e.what()).find("record it again"), std::string::npos) << e.what();
  }

  gpu().begin_capture();
  gpu().fill(t.tensor(), 3.0f);
  const std::unique_ptr<backend::DeviceGraph> again = gpu().end_capture();
  EXPECT_TRUE(again->current());
  again->launch();
  gpu().synchronize();
  EXPECT_EQ(t.download(), std::vector<float>(64, 3.0f));
}

// The workspace grows by half again past a request, so that slowly growing requests reallocate
// rarely; a recording gives that headroom back first (it would hold it for as long as it is
// replayed), and what it holds then fits the largest request exactly: that request again runs
// in place, one larger reallocates.
TEST_F(GpuOpTest, ARecordingFitsTheWorkspaceToItsLargestRequest) {
  auto bytes = [](std::int64_t channels) {
    return static_cast<std::size_t>(channels) * kWorkspacePerChannel;
  };
  // Twice all scratch held and more, so that the buffer grows to this request exactly.
  const auto first =
      static_cast<std::int64_t>(2 * gpu().workspace_bytes() / kWorkspacePerChannel / 64 + 1024) *
      64;
  request_workspace(gpu(), first);
  const std::size_t others = gpu().workspace_bytes() - align_up(bytes(first));
  // Past the buffer by a quarter: it grows by half.
  const std::int64_t largest = first + first / 4;
  request_workspace(gpu(), largest);
  ASSERT_EQ(gpu().workspace_bytes(), others + align_up(align_up(bytes(first)) * 3 / 2));

  GpuTensor t(gpu(), {64}, DType::kF32);
  gpu().begin_capture();
  gpu().fill(t.tensor(), 2.0f);
  const std::unique_ptr<backend::DeviceGraph> graph = gpu().end_capture();
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(gpu().workspace_bytes(), others + align_up(bytes(largest)));

  request_workspace(gpu(), largest);
  EXPECT_TRUE(graph->current()) << "the largest request reallocated the fitted workspace";
  graph->launch();
  gpu().synchronize();
  EXPECT_EQ(t.download(), std::vector<float>(64, 2.0f));
  request_workspace(gpu(), largest + 64);
  EXPECT_FALSE(graph->current());
}

// A convolution's first call times candidates (Find's algorithms, the product, the fused
// statistics graph) before it runs the one chosen. Those requests are the search's: a watch of
// the first call reports what later calls ask for, and the own workspace, fitted after the
// first call, holds the chosen route's request, not the largest candidate's. ResNet-50's f16
// shapes (batch 32), each direction, on a backend that has planned nothing.
TEST_F(GpuOpTest, TheFirstCallsSearchCountsInNoWatchAndNoFit) {
  struct Layer {
    const char* name;
    std::int64_t hw, c, k, r;
    int stride;
  };
  for (const Layer& l :
       {Layer{"layer1 conv3 1x1", 56, 64, 256, 1, 1}, Layer{"layer1 conv2 3x3", 56, 64, 64, 3, 1},
        Layer{"layer2.0 conv2 3x3/2", 56, 128, 128, 3, 2},
        Layer{"layer3 conv1 1x1", 14, 1024, 256, 1, 1}}) {
    SCOPED_TRACE(l.name);
    backend::ConvParams p;
    p.n = 32, p.h = p.w = l.hw, p.c = l.c, p.k = l.k, p.r = p.s = l.r;
    p.stride_h = p.stride_w = l.stride, p.pad_h = p.pad_w = static_cast<int>(l.r / 2);
    backend::ConvParams forward = p;
    forward.statistics = true;
    backend::cuda::CudaBackend be(0);
    GpuTensor x(be, p.input_shape(), DType::kF16), w(be, p.weight_shape(), DType::kF16);
    GpuTensor y(be, p.output_shape(), DType::kF16), dy(be, p.output_shape(), DType::kF16);
    GpuTensor dx(be, p.input_shape(), DType::kF16), dw(be, p.weight_shape(), DType::kF16);
    GpuTensor stats(be, forward.statistics_shape(), DType::kF32);
    x.upload(ops_test::random_tensor(p.input_shape(), 1).data);
    w.upload(ops_test::random_tensor(p.weight_shape(), 2).data);
    dy.upload(ops_test::random_tensor(p.output_shape(), 3).data);
    // The layer's three passes on `on`.
    auto step = [&](backend::cuda::CudaBackend& on) {
      on.conv_forward(forward, x.tensor(), w.tensor(), Tensor(), y.tensor(), Tensor(),
                      stats.tensor());
      on.conv_backward_data(p, dy.tensor(), w.tensor(), dx.tensor(), GradMode::kOverwrite);
      on.conv_backward_weights(p, x.tensor(), dy.tensor(), dw.tensor(), Tensor(),
                               GradMode::kOverwrite);
      on.synchronize();
    };
    auto watched_step = [&](backend::cuda::CudaBackend& on) {
      on.begin_workspace_watch();
      step(on);
      return on.end_workspace_watch();
    };
    const std::size_t first = watched_step(be);
    const std::size_t later = watched_step(be);
    EXPECT_EQ(first, later) << "the first call's watch counted its search";
    EXPECT_EQ(be.conv_plans_measured(), 3u);

    // Unwatched, the calls' requests are the backend's to keep: after the fit it holds the
    // largest of them (as the watch reported it), and the next calls run without growing it.
    backend::cuda::CudaBackend own(0);
    step(own);
    own.fit_workspace();
    const std::size_t fitted = own.workspace_bytes();
    EXPECT_EQ(align_up(watched_step(own)), fitted) << "the fit kept a search's request";
    step(own);
    EXPECT_EQ(own.workspace_bytes(), fitted);
  }
}

// Max pooling saves a uint8 argmax per output element, int32 past a 16x16 window.
TEST_F(GpuOpTest, PoolWorkspaceIsOneByteArgmaxPerOutput) {
  const backend::PoolParams vgg = max_pool(8, 8, 64, 2, 2);
  EXPECT_EQ(gpu().pool_workspace_bytes(vgg), static_cast<std::size_t>(vgg.output_shape().numel()));
  const backend::PoolParams big = max_pool(20, 19, 3, 17, 1);
  EXPECT_EQ(gpu().pool_workspace_bytes(big),
            static_cast<std::size_t>(big.output_shape().numel()) * 4);
  EXPECT_EQ(gpu().pool_workspace_bytes(backend::PoolParams::global_average(2, 7, 7, 16)), 0u);
}

class BatchNormDeterminism : public GpuOpTestP<Precision> {};

// The sums run in a fixed order (no atomics), so running an op twice gives the same bits.
TEST_P(BatchNormDeterminism, RunTwiceSameBits) {
  const Precision& prec = GetParam();
  backend::BatchNormParams p;
  p.rows = 256 * 14 * 14, p.channels = 256;
  const Shape data_shape{p.rows, p.channels}, channel_shape{p.channels};
  struct {
    HostTensor x, gamma, beta, running_mean, running_var, dy;
  } d{ops_test::random_tensor(data_shape, 11),
      ops_test::random_positive(channel_shape, 12, 0.5f, 1.5f),
      ops_test::random_tensor(channel_shape, 13),
      ops_test::random_tensor(channel_shape, 14),
      ops_test::random_positive(channel_shape, 15, 0.5f, 2.0f),
      ops_test::random_tensor(data_shape, 16)};
  round_in_place(prec.dtype, d.x), round_in_place(prec.dtype, d.dy);
  GpuTensor x = upload(d.x, prec.dtype), dy = upload(d.dy, prec.dtype),
            gamma = upload(d.gamma, DType::kF32), beta = upload(d.beta, DType::kF32);
  GpuTensor y = poisoned(data_shape, prec.dtype), dx = poisoned(data_shape, prec.dtype),
            mean = poisoned(channel_shape, DType::kF32),
            inv_std = poisoned(channel_shape, DType::kF32),
            dgamma = poisoned(channel_shape, DType::kF32),
            dbeta = poisoned(channel_shape, DType::kF32);
  std::vector<std::vector<float>> first;
  for (int run = 0; run < 2; ++run) {
    GpuTensor rmean = upload(d.running_mean, DType::kF32),
              rvar = upload(d.running_var, DType::kF32);
    gpu().batch_norm_forward_training(p, x.tensor(), gamma.tensor(), beta.tensor(), y.tensor(),
                                      mean.tensor(), inv_std.tensor(), rmean.tensor(),
                                      rvar.tensor());
    gpu().batch_norm_backward(p, x.tensor(), dy.tensor(), gamma.tensor(), mean.tensor(),
                              inv_std.tensor(), dx.tensor(), dgamma.tensor(), dbeta.tensor(),
                              GradMode::kOverwrite);
    std::vector<std::vector<float>> out = {y.download(),    mean.download(), inv_std.download(),
                                           rvar.download(), dx.download(),   dgamma.download(),
                                           dbeta.download()};
    if (run == 0) {
      first = std::move(out);
      continue;
    }
    const char* names[] = {"y",  "saved_mean", "saved_inv_std", "running_var",
                           "dx", "dgamma",     "dbeta"};
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto [a, b] = std::mismatch(out[i].begin(), out[i].end(), first[i].begin());
      EXPECT_TRUE(a == out[i].end()) << names[i] << " differs between runs at index "
                                     << (a - out[i].begin()) << ": " << *a << " vs " << *b;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, BatchNormDeterminism, ::testing::ValuesIn(float_precisions()),
                         precision_name);

}  // namespace
}  // namespace dlbench::gpu_test
