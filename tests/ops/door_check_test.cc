// The checks at the Backend's door reject wrong shapes and dtypes with dlbench::Error before
// any backend code runs.
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/cpu/cpu_backend.h"
#if DLBENCH_HAVE_CUDA
#include "engine/backend/cuda/cuda_backend.h"
#endif
#include "tests/ops/host_tensor.h"

namespace dlbench::ops_test {
namespace {

using backend::GradMode;

TEST(DoorChecks, WrongShapesAreRejected) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  backend::ConvParams p;
  p.n = 1, p.h = 4, p.w = 4, p.c = 2, p.k = 3, p.r = 3, p.s = 3, p.pad_h = p.pad_w = 1;
  HostTensor x(p.input_shape()), w(p.weight_shape()), y(p.output_shape());
  HostTensor wrong({1, 4, 4, 3});      // input channels off by one
  HostTensor wrong_out({1, 3, 4, 3});  // output height off by one
  EXPECT_THROW(be->conv_forward(p, wrong.tensor(), w.tensor(), Tensor(), y.tensor()), Error);
  EXPECT_THROW(be->conv_forward(p, x.tensor(), w.tensor(), Tensor(), wrong_out.tensor()), Error);
  EXPECT_THROW(
      be->conv_backward_data(p, y.tensor(), w.tensor(), wrong.tensor(), GradMode::kOverwrite),
      Error);
  p.bias = true;  // bias promised but not given
  EXPECT_THROW(be->conv_forward(p, x.tensor(), w.tensor(), Tensor(), y.tensor()), Error);

  backend::MatmulParams mp;
  mp.m = 2, mp.k = 3, mp.n = 4;
  HostTensor mx({2, 3}), mw({3, 4}), my({2, 4});  // w transposed: must be [n, k]
  EXPECT_THROW(be->matmul_forward(mp, mx.tensor(), mw.tensor(), Tensor(), my.tensor()), Error);

  // The GELU epilogues: a pre-activation only with GELU, not GELU and ReLU at once, and its
  // gradient overwriting only.
  HostTensor nw({4, 3}), dy({2, 4}), dx({2, 3}), pre3({2, 3});
  EXPECT_THROW(be->matmul_forward(mp, mx.tensor(), nw.tensor(), Tensor(), my.tensor(), my.tensor()),
               Error);
  backend::MatmulParams both = mp;
  both.gelu = true, both.activation = backend::Activation::kRelu;
  EXPECT_THROW(be->matmul_forward(both, mx.tensor(), nw.tensor(), Tensor(), my.tensor()), Error);
  backend::MatmulParams dgelu = mp;
  dgelu.gelu_gradient = true;
  EXPECT_NO_THROW(be->matmul_backward_data(dgelu, dy.tensor(), nw.tensor(), dx.tensor(),
                                           GradMode::kOverwrite, pre3.tensor()));
  EXPECT_THROW(be->matmul_backward_data(dgelu, dy.tensor(), nw.tensor(), dx.tensor(),
                                        GradMode::kAccumulate, pre3.tensor()),
               Error);
  EXPECT_THROW(be->matmul_backward_data(dgelu, dy.tensor(), nw.tensor(), dx.tensor(),
                                        GradMode::kOverwrite, my.tensor()),
               Error);  // the GELU input shaped as dy, not dx

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

// Layer norm: x must be [rows, width] with width last, its statistics [rows] and its parameters
// [width], all f32 but x's, and epsilon finite; GELU's operands one shape; dropout's counter i32
// [1].
TEST(DoorChecks, LayerNormAndGeluCheckTheirShapes) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  backend::LayerNormParams p;
  p.rows = 4, p.width = 3;
  HostTensor x({4, 3}), y({4, 3}), rows({4}), cols({3}), x_t({3, 4}), short_rows({3});
  EXPECT_NO_THROW(be->layer_norm_forward(p, x.tensor(), cols.tensor(), cols.tensor(), y.tensor(),
                                         rows.tensor(), rows.tensor()));
  // Twelve values, but the width is not the last dimension.
  EXPECT_THROW(be->layer_norm_forward(p, x_t.tensor(), cols.tensor(), cols.tensor(), x_t.tensor(),
                                      rows.tensor(), rows.tensor()),
               Error);
  EXPECT_THROW(be->layer_norm_forward(p, x.tensor(), rows.tensor(), cols.tensor(), y.tensor(),
                                      rows.tensor(), rows.tensor()),
               Error);  // gamma [rows]
  EXPECT_THROW(be->layer_norm_backward(p, x.tensor(), y.tensor(), cols.tensor(), rows.tensor(),
                                       short_rows.tensor(), y.tensor(), GradMode::kOverwrite,
                                       cols.tensor(), cols.tensor()),
               Error);                    // saved_inv_std [3]
  std::vector<std::int32_t> int_rows(4);  // statistics must be f32
  EXPECT_THROW(be->layer_norm_forward(p, x.tensor(), cols.tensor(), cols.tensor(), y.tensor(),
                                      Tensor(int_rows.data(), {4}, DType::kI32, Device::cpu()),
                                      rows.tensor()),
               Error);
  backend::LayerNormParams nan_eps = p;
  nan_eps.epsilon = std::nanf("");
  EXPECT_THROW(be->layer_norm_forward(nan_eps, x.tensor(), cols.tensor(), cols.tensor(), y.tensor(),
                                      rows.tensor(), rows.tensor()),
               Error);
  EXPECT_THROW(be->gelu_forward(x.tensor(), x_t.tensor()), Error);
  EXPECT_THROW(be->gelu_backward(x.tensor(), x.tensor(), rows.tensor(), GradMode::kOverwrite),
               Error);
  HostTensor float_step({1});
  EXPECT_THROW(be->dropout_forward({0.1f, 1}, float_step.tensor(), x.tensor(), y.tensor()), Error);
}

// Label smoothing lies in [0, 1] and does not combine with class weights.
TEST(DoorChecks, CrossEntropyOptionsAreChecked) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  HostTensor logits({2, 3}), loss({1}), dlogits({2, 3}), weights({3});
  std::vector<std::int32_t> labels{0, -100};
  const Tensor l(labels.data(), {2}, DType::kI32, Device::cpu());
  backend::CrossEntropyParams p;
  p.label_smoothing = 0.1f;
  EXPECT_NO_THROW(
      be->softmax_cross_entropy(logits.tensor(), l, loss.tensor(), dlogits.tensor(), 1.0f, {}, p));
  EXPECT_THROW(be->softmax_cross_entropy(logits.tensor(), l, loss.tensor(), dlogits.tensor(), 1.0f,
                                         weights.tensor(), p),
               Error);
  for (float bad : {-0.1f, 1.5f, std::nanf("")}) {
    p.label_smoothing = bad;
    EXPECT_THROW(
        be->softmax_cross_entropy(logits.tensor(), l, loss.tensor(), dlogits.tensor(), 1.0f, {}, p),
        Error);
  }
}

// A loss scale is a finite number or one f32 on the backend's device; the doors refuse the rest
// before anything is written.
TEST(DoorChecks, LossScalesAreChecked) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  HostTensor logits({2, 3}), loss({1}), dlogits({2, 3}), pair({2}), one({1});
  std::vector<std::int32_t> labels{0, 2}, whole{8};
  const Tensor l(labels.data(), {2}, DType::kI32, Device::cpu());
  loss.data[0] = 42.0f;
  one.data[0] = 8.0f;
  auto run = [&](const backend::LossScale& s) {
    be->softmax_cross_entropy(logits.tensor(), l, loss.tensor(), dlogits.tensor(), s);
  };
  for (const backend::LossScale& bad :
       {backend::LossScale(std::nanf("")), backend::LossScale(INFINITY),
        backend::LossScale(pair.tensor()),
        backend::LossScale(Tensor(whole.data(), {1}, DType::kI32, Device::cpu())),
        backend::LossScale(Tensor(one.data.data(), {1}, DType::kF32, Device::cuda(0)))})
    EXPECT_THROW(run(bad), Error);
  EXPECT_EQ(loss.data[0], 42.0f);
  // The same scale as a number and from a tensor gives the same gradient.
  run(backend::LossScale(8.0f));
  const std::vector<float> from_number = dlogits.data;
  run(backend::LossScale(one.tensor()));
  EXPECT_EQ(dlogits.data, from_number);
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

TEST(DoorChecks, EmbeddingAndColumnOpsCheckShapesAndDTypes) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  HostTensor table({5, 3}), y({2, 3}), wrong_y({2, 4}), touched_f32({5});
  std::vector<std::int32_t> ids = {0, 4}, touched(5), short_touched(4);
  const Tensor id_t(ids.data(), {2}, DType::kI32, Device::cpu());
  const Tensor float_ids(table.data.data(), {2}, DType::kF32, Device::cpu());
  EXPECT_THROW(be->embedding_forward(table.tensor(), id_t, wrong_y.tensor()), Error);
  EXPECT_THROW(be->embedding_forward(table.tensor(), float_ids, y.tensor()), Error);
  EXPECT_THROW(be->embedding_forward(y.tensor().reshaped({6}), id_t, y.tensor()), Error);
  auto backward = [&](const Tensor& dy, const Tensor& ids_t, const Tensor& touched_t) {
    be->embedding_backward(dy, ids_t, Tensor(), table.tensor(), touched_t, GradMode::kOverwrite);
  };
  const Tensor touched_t(touched.data(), {5}, DType::kI32, Device::cpu());
  EXPECT_NO_THROW(backward(y.tensor(), id_t, touched_t));
  EXPECT_THROW(backward(wrong_y.tensor(), id_t, touched_t), Error);
  EXPECT_THROW(backward(y.tensor(), float_ids, touched_t), Error);
  EXPECT_THROW(backward(y.tensor(), id_t, touched_f32.tensor()), Error);  // marks are i32
  EXPECT_THROW(
      backward(y.tensor(), id_t, Tensor(short_touched.data(), {4}, DType::kI32, Device::cpu())),
      Error);

  HostTensor logits({4, 1}), wide({4, 2}), targets({4, 1}), loss({1}), dlogits({4, 1});
  EXPECT_THROW(be->sigmoid_binary_cross_entropy(wide.tensor(), targets.tensor(), loss.tensor(),
                                                wide.tensor(), 1.0f),
               Error);
  EXPECT_THROW(be->sigmoid_binary_cross_entropy(logits.tensor(), wide.tensor(), loss.tensor(),
                                                dlogits.tensor(), 1.0f),
               Error);
  EXPECT_THROW(be->sigmoid_binary_cross_entropy(logits.tensor(), targets.tensor(), targets.tensor(),
                                                dlogits.tensor(), 1.0f),
               Error);
}

TEST(DoorChecks, AdamChecksItsBuffersAndCounter) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  const backend::AdamParams p;
  HostTensor w({3, 2}), g({3, 2}), m({3, 2}), v({3, 2}), short_v({5}), float_step({1});
  std::int32_t step = 0;
  std::vector<std::int32_t> touched(3), short_touched(2);
  const Tensor step_t(&step, {1}, DType::kI32, Device::cpu());
  EXPECT_THROW(
      be->adam_update(p, float_step.tensor(), w.tensor(), g.tensor(), m.tensor(), v.tensor()),
      Error);
  EXPECT_THROW(be->adam_update(p, step_t, w.tensor(), g.tensor(), m.tensor(), short_v.tensor()),
               Error);
  EXPECT_THROW(
      be->sparse_adam_update(p, step_t, w.tensor(), g.tensor(), m.tensor(), v.tensor(),
                             Tensor(short_touched.data(), {2}, DType::kI32, Device::cpu())),
      Error);
  EXPECT_THROW(
      be->sparse_adam_update(p, step_t, w.tensor().reshaped({6}), g.tensor(), m.tensor(),
                             v.tensor(), Tensor(touched.data(), {3}, DType::kI32, Device::cpu())),
      Error);
  // Clipping: the gradients' sum of squares (f32 [1]) exactly when a max norm is set.
  HostTensor sum_squares({1}), two({2});
  backend::AdamParams clipped = p;
  clipped.max_grad_norm = 5.0f;
  EXPECT_THROW(be->adam_update(clipped, step_t, w.tensor(), g.tensor(), m.tensor(), v.tensor()),
               Error);
  EXPECT_THROW(be->adam_update(p, step_t, w.tensor(), g.tensor(), m.tensor(), v.tensor(),
                               sum_squares.tensor()),
               Error);
  EXPECT_THROW(be->adam_update(clipped, step_t, w.tensor(), g.tensor(), m.tensor(), v.tensor(),
                               two.tensor()),
               Error);
  backend::AdamParams negative = clipped;
  negative.max_grad_norm = -1.0f;
  EXPECT_THROW(be->adam_update(negative, step_t, w.tensor(), g.tensor(), m.tensor(), v.tensor(),
                               sum_squares.tensor()),
               Error);
  EXPECT_EQ(step, 0);  // a refused update does not count a step
  EXPECT_THROW(be->sum_squares(w.tensor(), two.tensor(), GradMode::kOverwrite), Error);
  EXPECT_NO_THROW(be->adam_update(clipped, step_t, w.tensor(), g.tensor(), m.tensor(), v.tensor(),
                                  sum_squares.tensor()));
  EXPECT_EQ(step, 1);
}

// The support rules of the embedding-model ops: the CPU runs them in f32; CUDA runs the compute
// ops in every float dtype and Adam on f32 master buffers only; every op has a name.
TEST(DoorChecks, EmbeddingModelOpsSayWhatTheyRun) {
  using backend::OpKind;
  const OpKind compute[] = {OpKind::kEmbeddingForward, OpKind::kEmbeddingBackward,
                            OpKind::kCopyColumns, OpKind::kSigmoidBinaryCrossEntropy};
  const OpKind adams[] = {OpKind::kAdamUpdate, OpKind::kSparseAdamUpdate};
  for (int op = static_cast<int>(OpKind::kEmbeddingForward);
       op <= static_cast<int>(backend::kLastOpKind); ++op)
    EXPECT_STRNE(to_string(static_cast<OpKind>(op)), "?") << op;
  for (OpKind op : compute) {
    EXPECT_TRUE(backend::cpu::cpu_supports(op, {}, DType::kF32)) << to_string(op);
    EXPECT_FALSE(backend::cpu::cpu_supports(op, {}, DType::kBF16)) << to_string(op);
  }
  for (OpKind op : adams) {
    EXPECT_TRUE(backend::cpu::cpu_supports(op, backend::AdamParams{}, DType::kF32));
    EXPECT_FALSE(backend::cpu::cpu_supports(op, backend::AdamParams{}, DType::kF16));
  }
#if DLBENCH_HAVE_CUDA
  for (OpKind op : compute)
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16})
      EXPECT_TRUE(backend::cuda::cuda_supports(op, {}, t)) << to_string(op) << " " << to_string(t);
  for (OpKind op : adams) {
    EXPECT_TRUE(backend::cuda::cuda_supports(op, backend::AdamParams{}, DType::kF32));
    const backend::Support half = backend::cuda::cuda_supports(op, {}, DType::kBF16);
    EXPECT_FALSE(half);
    EXPECT_NE(half.reason.find("f32 master"), std::string::npos) << half.reason;
  }
#endif
}

}  // namespace
}  // namespace dlbench::ops_test
