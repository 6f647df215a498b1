// Matmul forward (with bias/ReLU epilogues), backward-data and backward-weights on cuBLASLt
// against the CPU backend, in every precision and both gradient modes.

#include "tests/ops/op_cases.h"
#include "tests/ops_gpu/gpu_test_util.h"

namespace dlbench::gpu_test {
namespace {

using op_cases::mm;
using op_cases::name;

using backend::Activation;
using backend::MatmulParams;

// Odd sizes (no alignment for vector loads), every epilogue, a classifier head (ResNet's
// 2048 -> classes) and a tensor-core-sized block.
const std::vector<MatmulParams> kCases = {
    mm(4, 16, 8, true, Activation::kRelu),    mm(3, 5, 7, false, Activation::kNone),
    mm(16, 64, 32, true, Activation::kNone),  mm(8, 33, 10, false, Activation::kRelu),
    mm(6, 2048, 10, true, Activation::kNone), mm(64, 256, 128, true, Activation::kRelu),
};

MatmulParams backward_params(MatmulParams p) {
  p.activation = Activation::kNone;  // the graph runs the activation's backward first
  return p;
}

struct MatmulData {
  HostTensor x, w, bias, dy;
};

MatmulData make_data(const MatmulParams& p, DType dtype) {
  MatmulData d{ops_test::random_tensor({p.m, p.k}, 31), ops_test::random_tensor({p.n, p.k}, 32),
               ops_test::random_tensor({p.n}, 33), ops_test::random_tensor({p.m, p.n}, 34)};
  for (HostTensor* t : {&d.x, &d.w, &d.bias, &d.dy}) round_in_place(dtype, *t);
  return d;
}

class MatmulGpu : public GpuOpTestP<Precision> {};

TEST_P(MatmulGpu, Forward) {
  const Precision& prec = GetParam();
  for (MatmulParams p : kCases) {
    p.math = prec.math;
    SCOPED_TRACE(name(p));
    MatmulData d = make_data(p, prec.dtype);
    HostTensor y_cpu({p.m, p.n});
    cpu().matmul_forward(p, d.x.tensor(), d.w.tensor(), p.bias ? d.bias.tensor() : Tensor(),
                         y_cpu.tensor());
    GpuTensor x = upload(d.x, prec.dtype), w = upload(d.w, prec.dtype),
              b = upload(d.bias, prec.dtype), y = poisoned({p.m, p.n}, prec.dtype);
    gpu().matmul_forward(p, x.tensor(), w.tensor(), p.bias ? b.tensor() : Tensor(), y.tensor());
    EXPECT_TRUE(gpu_close(name(p) + " y", y.download(), y_cpu.data, sum_tolerance(prec, p.k + 1)));
  }
}

TEST_P(MatmulGpu, BackwardData) {
  const Precision& prec = GetParam();
  for (MatmulParams p : kCases) {
    p = backward_params(p), p.math = prec.math;
    for (GradMode mode : {GradMode::kOverwrite, GradMode::kAccumulate}) {
      SCOPED_TRACE(name(p) + " " + ops_test::mode_name(mode));
      MatmulData d = make_data(p, prec.dtype);
      HostTensor dx_cpu = ops_test::random_tensor({p.m, p.k}, 35);
      round_in_place(prec.dtype, dx_cpu);
      GpuTensor dx = upload(dx_cpu, prec.dtype);
      if (mode == GradMode::kOverwrite) dx.poison();
      cpu().matmul_backward_data(p, d.dy.tensor(), d.w.tensor(), dx_cpu.tensor(), mode);
      GpuTensor dy = upload(d.dy, prec.dtype), w = upload(d.w, prec.dtype);
      gpu().matmul_backward_data(p, dy.tensor(), w.tensor(), dx.tensor(), mode);
      EXPECT_TRUE(gpu_close(name(p) + " dx " + ops_test::mode_name(mode), dx.download(),
                            dx_cpu.data, sum_tolerance(prec, p.n + 1)));
    }
  }
}

TEST_P(MatmulGpu, BackwardWeights) {
  const Precision& prec = GetParam();
  for (MatmulParams p : kCases) {
    p = backward_params(p), p.math = prec.math;
    for (GradMode mode : {GradMode::kOverwrite, GradMode::kAccumulate}) {
      SCOPED_TRACE(name(p) + " " + ops_test::mode_name(mode));
      MatmulData d = make_data(p, prec.dtype);
      HostTensor dw_cpu = ops_test::random_tensor({p.n, p.k}, 36);
      HostTensor db_cpu = ops_test::random_tensor({p.n}, 37);
      round_in_place(prec.dtype, dw_cpu), round_in_place(prec.dtype, db_cpu);
      GpuTensor dw = upload(dw_cpu, prec.dtype), db = upload(db_cpu, prec.dtype);
      if (mode == GradMode::kOverwrite) dw.poison(), db.poison();
      cpu().matmul_backward_weights(p, d.x.tensor(), d.dy.tensor(), dw_cpu.tensor(),
                                    p.bias ? db_cpu.tensor() : Tensor(), mode);
      GpuTensor x = upload(d.x, prec.dtype), dy = upload(d.dy, prec.dtype);
      gpu().matmul_backward_weights(p, x.tensor(), dy.tensor(), dw.tensor(),
                                    p.bias ? db.tensor() : Tensor(), mode);
      EXPECT_TRUE(gpu_close(name(p) + " dw " + ops_test::mode_name(mode), dw.download(),
                            dw_cpu.data, sum_tolerance(prec, p.m + 1)));
      if (p.bias) {
        EXPECT_TRUE(gpu_close(name(p) + " dbias " + ops_test::mode_name(mode), db.download(),
                              db_cpu.data, sum_tolerance(prec, p.m + 1)));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, MatmulGpu, ::testing::ValuesIn(all_precisions()),
                         precision_name);

}  // namespace
}  // namespace dlbench::gpu_test
