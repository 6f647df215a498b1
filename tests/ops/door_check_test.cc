// The checks at the Backend's door reject wrong shapes and dtypes with dlbench::Error before
// any backend code runs.
#include <vector>

#include "engine/backend/backend.h"
#include "tests/ops/op_test_util.h"

namespace dlbench::ops_test {
namespace {

using backend::GradMode;

TEST(DoorChecks, WrongShapesAreRejected) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  backend::Conv2dParams p;
  p.n = 1, p.h = 4, p.w = 4, p.c = 2, p.k = 3, p.r = 3, p.s = 3, p.pad_h = p.pad_w = 1;
  HostTensor x(p.input_shape()), w(p.weight_shape()), y(p.output_shape());
  HostTensor wrong({1, 4, 4, 3});      // input channels off by one
  HostTensor wrong_out({1, 3, 4, 3});  // output height off by one
  EXPECT_THROW(be->conv2d_forward(p, wrong.tensor(), w.tensor(), Tensor(), y.tensor()), Error);
  EXPECT_THROW(be->conv2d_forward(p, x.tensor(), w.tensor(), Tensor(), wrong_out.tensor()), Error);
  EXPECT_THROW(
      be->conv2d_backward_data(p, y.tensor(), w.tensor(), wrong.tensor(), GradMode::kOverwrite),
      Error);
  p.bias = true;  // bias promised but not given
  EXPECT_THROW(be->conv2d_forward(p, x.tensor(), w.tensor(), Tensor(), y.tensor()), Error);

  backend::MatmulParams mp;
  mp.m = 2, mp.k = 3, mp.n = 4;
  HostTensor mx({2, 3}), mw({3, 4}), my({2, 4});  // w transposed: must be [n, k]
  EXPECT_THROW(be->matmul_forward(mp, mx.tensor(), mw.tensor(), Tensor(), my.tensor()), Error);

  HostTensor a({6}), b({7});
  EXPECT_THROW(be->add(a.tensor(), b.tensor(), a.tensor()), Error);
  EXPECT_THROW(be->accumulate(a.tensor(), b.tensor()), Error);

  backend::BatchNormParams bp;
  bp.rows = 4, bp.channels = 3;
  HostTensor bx({4, 3}), c3({3}), c2({2});
  EXPECT_THROW(be->batch_norm_forward_inference(bp, bx.tensor(), c3.tensor(), c2.tensor(),
                                                c3.tensor(), c3.tensor(), bx.tensor()),
               Error);
}

TEST(DoorChecks, WrongDTypeAndUnallocatedAreRejected) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  HostTensor logits({2, 3}), loss({1}), dlogits({2, 3});
  std::vector<float> float_labels(2);  // labels must be i32
  EXPECT_THROW(be->softmax_cross_entropy(
                   logits.tensor(), Tensor(float_labels.data(), {2}, DType::kF32, Device::cpu()),
                   loss.tensor(), dlogits.tensor(), 1.0f),
               Error);
  HostTensor a({4});
  EXPECT_THROW(be->copy(a.tensor(), Tensor(nullptr, {4}, DType::kF32, Device::cpu())), Error);
  EXPECT_THROW(be->fill_uniform_int(a.tensor(), 3, 3, 1), Error);  // empty range
}

}  // namespace
}  // namespace dlbench::ops_test
