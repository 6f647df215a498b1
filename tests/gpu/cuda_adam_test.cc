// The CUDA Adam update's step counter lives on the device, so three replays of one recorded
// update take steps 1, 2 and 3; the optimizers support f32 only. Op results are harness cases
// (tests/ops/cases/optimizer_cases.cc).
#include <cstring>
#include <string>
#include <vector>

#include "tests/gpu/cuda_test_util.h"

namespace dlbench::gpu_test {
namespace {

using backend::AdamParams;

constexpr Tolerance kAdamTolerance{1e-7, 1e-6};

AdamParams adam(float lr, float wd, bool decoupled, float grad_scale = 1.0f) {
  AdamParams p;
  p.learning_rate = lr, p.weight_decay = wd, p.decoupled = decoupled, p.grad_scale = grad_scale;
  return p;
}

// The optimizer state on both backends.
struct State {
  HostTensor w, m, v;
  std::int32_t step = 0;
};

class AdamGpu : public GpuOpTest {
 protected:
  void expect_same(const State& cpu_state, const GpuTensor& w, const GpuTensor& m,
                   const GpuTensor& v, const GpuTensor& step) {
    EXPECT_TRUE(gpu_close("weights", w.download(), cpu_state.w.data, kAdamTolerance));
    EXPECT_TRUE(gpu_close("m", m.download(), cpu_state.m.data, kAdamTolerance));
    EXPECT_TRUE(gpu_close("v", v.download(), cpu_state.v.data, {1e-12, 1e-6}));
    EXPECT_EQ(step.download(), std::vector<float>{static_cast<float>(cpu_state.step)});
  }
};

TEST_F(AdamGpu, RecordedUpdateReplaysWithTheDeviceStep) {
  constexpr std::int64_t kSize = 4099;
  const AdamParams p = adam(1e-2f, 0.05f, true);
  State s{ops_test::random_tensor({kSize}, 511), HostTensor({kSize}), HostTensor({kSize})};
  HostTensor g_cpu = ops_test::random_tensor({kSize}, 512);
  GpuTensor w = upload(s.w, DType::kF32), m = upload(s.m, DType::kF32),
            v = upload(s.v, DType::kF32), step = upload(HostTensor({1}), DType::kI32),
            g = upload(g_cpu, DType::kF32);
  gpu().begin_capture();
  gpu().adam_update(p, step.tensor(), w.tensor(), g.tensor(), m.tensor(), v.tensor());
  std::unique_ptr<backend::DeviceGraph> graph = gpu().end_capture();
  ASSERT_NE(graph, nullptr);
  for (int t = 1; t <= 3; ++t) {
    graph->launch();
    cpu().adam_update(p, Tensor(&s.step, {1}, DType::kI32, Device::cpu()), s.w.tensor(),
                      g_cpu.tensor(), s.m.tensor(), s.v.tensor());
  }
  gpu().synchronize();
  expect_same(s, w, m, v, step);
}

TEST_F(AdamGpu, SupportIsF32Only) {
  for (backend::OpKind op : {backend::OpKind::kAdamUpdate, backend::OpKind::kSparseAdamUpdate}) {
    EXPECT_TRUE(gpu().supports(op, {}, DType::kF32));
    EXPECT_FALSE(gpu().supports(op, {}, DType::kF16));
    EXPECT_FALSE(gpu().supports(op, {}, DType::kBF16));
  }
  for (backend::OpKind op :
       {backend::OpKind::kEmbeddingForward, backend::OpKind::kEmbeddingBackward,
        backend::OpKind::kCopyColumns, backend::OpKind::kSigmoidBinaryCrossEntropy})
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) EXPECT_TRUE(gpu().supports(op, {}, t));
}

}  // namespace
}  // namespace dlbench::gpu_test
