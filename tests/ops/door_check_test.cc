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

// Attention: q and o [batch * seq_q, heads * head_dim], k and v [batch * seq_kv, ...], the
// lengths i32 [batch], the statistics f32 [batch, heads, seq_q]; and the CPU refuses a length
// outside [0, seq] before writing anything.
TEST(DoorChecks, AttentionChecksItsOperands) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  backend::AttentionParams p;
  p.batch = 2, p.heads = 2, p.seq_q = 3, p.seq_kv = 4, p.head_dim = 2;
  HostTensor q({6, 4}), kv({8, 4}), o({6, 4}), stats({2, 2, 3}), flat_stats({12});
  std::vector<std::int32_t> good{3, 1}, too_long{3, 5}, three{3, 3, 3};
  auto i32 = [](std::vector<std::int32_t>& v) {
    return Tensor(v.data(), {static_cast<std::int64_t>(v.size())}, DType::kI32, Device::cpu());
  };
  EXPECT_NO_THROW(be->attention_forward(p, q.tensor(), kv.tensor(), kv.tensor(), i32(good),
                                        Tensor(), o.tensor(), stats.tensor()));
  // k given as many rows as q: seq_kv says 4 per sample.
  EXPECT_THROW(be->attention_forward(p, q.tensor(), q.tensor(), kv.tensor(), Tensor(), Tensor(),
                                     o.tensor(), stats.tensor()),
               Error);
  EXPECT_THROW(be->attention_forward(p, q.tensor(), kv.tensor(), kv.tensor(), Tensor(), Tensor(),
                                     o.tensor(), flat_stats.tensor()),
               Error);
  EXPECT_THROW(be->attention_forward(p, q.tensor(), kv.tensor(), kv.tensor(), i32(three), Tensor(),
                                     o.tensor(), stats.tensor()),
               Error);  // a length per sample
  HostTensor float_lengths({2});
  EXPECT_THROW(be->attention_forward(p, q.tensor(), kv.tensor(), kv.tensor(),
                                     float_lengths.tensor(), Tensor(), o.tensor(), stats.tensor()),
               Error);
  backend::AttentionParams inf_scale = p;
  inf_scale.scale = INFINITY;
  EXPECT_THROW(be->attention_forward(inf_scale, q.tensor(), kv.tensor(), kv.tensor(), Tensor(),
                                     Tensor(), o.tensor(), stats.tensor()),
               Error);
  // kv_lengths[1] = 5 > seq_kv: refused, and o keeps its values.
  o.data[0] = 42.0f;
  EXPECT_THROW(be->attention_forward(p, q.tensor(), kv.tensor(), kv.tensor(), Tensor(),
                                     i32(too_long), o.tensor(), stats.tensor()),
               Error);
  EXPECT_EQ(o.data[0], 42.0f);
  // dk shaped as q.
  EXPECT_THROW(be->attention_backward(p, q.tensor(), kv.tensor(), kv.tensor(), o.tensor(),
                                      o.tensor(), stats.tensor(), Tensor(), Tensor(), q.tensor(),
                                      q.tensor(), kv.tensor(), GradMode::kOverwrite),
               Error);
}

// The LSTM: x [steps * batch, input] and y [steps * batch, hidden] time-major, the flat
// weights [4 hidden (input + hidden + 2)], states [batch, hidden] where given, and a reserve of
// at least what the backend asks for; a refused call writes nothing.
TEST(DoorChecks, LstmChecksItsOperands) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  backend::LstmParams p;
  p.batch = 2, p.steps = 3, p.input = 4, p.hidden = 5;
  HostTensor x(p.input_shape()), w({p.weights()}), y(p.output_shape()), h(p.state_shape()),
      c(p.state_shape());
  HostTensor reserve({static_cast<std::int64_t>(be->lstm_reserve_bytes(p, DType::kF32) / 4 + 1)});
  HostTensor short_reserve({1}), batch_major({2, 3, 4}), short_w({p.weights() - 1}),
      transposed_state({5, 2});
  const auto forward = [&](HostTensor& in, HostTensor& weights, HostTensor& h0, HostTensor& res) {
    be->lstm_forward(p, in.tensor(), weights.tensor(), h0.tensor(), c.tensor(), y.tensor(),
                     Tensor(), Tensor(), res.tensor());
  };
  EXPECT_NO_THROW(forward(x, w, h, reserve));
  y.data[0] = 42.0f;
  EXPECT_THROW(forward(batch_major, w, h, reserve), Error);  // x as [batch, steps, input]
  EXPECT_THROW(forward(x, short_w, h, reserve), Error);
  EXPECT_THROW(forward(x, w, transposed_state, reserve), Error);
  EXPECT_THROW(forward(x, w, h, short_reserve), Error);
  EXPECT_EQ(y.data[0], 42.0f);
  backend::LstmParams empty = p;
  empty.steps = 0;
  EXPECT_THROW(be->lstm_forward(empty, x.tensor(), w.tensor(), Tensor(), Tensor(), y.tensor(),
                                Tensor(), Tensor(), Tensor()),
               Error);  // no steps (x and y are shaped for 3: only the count is wrong)
  // Backward needs the forward's reserve, and dx shaped as x.
  HostTensor dx(p.input_shape()), dw({p.weights()});
  EXPECT_THROW(
      be->lstm_backward(p, x.tensor(), w.tensor(), Tensor(), Tensor(), y.tensor(), y.tensor(),
                        Tensor(), Tensor(), Tensor(), dx.tensor(), GradMode::kOverwrite, Tensor(),
                        Tensor(), dw.tensor(), GradMode::kOverwrite),
      Error);
  EXPECT_THROW(
      be->lstm_backward(p, x.tensor(), w.tensor(), Tensor(), Tensor(), y.tensor(), y.tensor(),
                        Tensor(), Tensor(), reserve.tensor(), y.tensor(), GradMode::kOverwrite,
                        Tensor(), Tensor(), dw.tensor(), GradMode::kOverwrite),
      Error);
}

// The additive attention: time-major q [queries * batch, width], k and values [keys * batch, ...],
// v [width] of q's dtype, g [1] f32, i32 lengths [batch], f32 probs [batch, queries, keys], the
// gradients shaped as what they belong to; the CPU refuses a length past the keys; a refused call
// writes nothing.
TEST(DoorChecks, AdditiveAttentionChecksItsOperands) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  backend::AdditiveAttentionParams p;
  p.batch = 2, p.queries = 3, p.keys = 4, p.width = 5, p.value_width = 6;
  HostTensor q(p.query_shape()), k(p.key_shape()), values(p.value_shape()), v({p.width}), g({1}),
      o(p.output_shape()), probs(p.probs_shape());
  for (float& x : v.data) x = 1.0f;
  g.data[0] = 1.0f;
  std::vector<std::int32_t> good{4, 2}, too_long{4, 5}, three{4, 4, 4};
  auto i32 = [](std::vector<std::int32_t>& l) {
    return Tensor(l.data(), {static_cast<std::int64_t>(l.size())}, DType::kI32, Device::cpu());
  };
  const auto forward = [&](const Tensor& queries, const Tensor& keys, const Tensor& lengths,
                           const Tensor& out, const Tensor& pr) {
    be->additive_attention_forward(p, queries, keys, values.tensor(), v.tensor(), g.tensor(),
                                   lengths, out, pr);
  };
  EXPECT_NO_THROW(forward(q.tensor(), k.tensor(), i32(good), o.tensor(), probs.tensor()));
  o.data[0] = 42.0f;
  HostTensor batch_major({p.batch, p.queries * p.width}), transposed_probs({2, 4, 3});
  EXPECT_THROW(forward(batch_major.tensor(), k.tensor(), i32(good), o.tensor(), probs.tensor()),
               Error);
  EXPECT_THROW(forward(q.tensor(), q.tensor(), i32(good), o.tensor(), probs.tensor()),
               Error);  // keys of the queries' count
  EXPECT_THROW(forward(q.tensor(), k.tensor(), i32(three), o.tensor(), probs.tensor()), Error);
  EXPECT_THROW(forward(q.tensor(), k.tensor(), i32(too_long), o.tensor(), probs.tensor()), Error);
  EXPECT_THROW(forward(q.tensor(), k.tensor(), Tensor(), o.tensor(), probs.tensor()), Error);
  EXPECT_THROW(forward(q.tensor(), k.tensor(), i32(good), o.tensor(), transposed_probs.tensor()),
               Error);
  EXPECT_THROW(forward(q.tensor(), k.tensor(), i32(good), q.tensor(), probs.tensor()),
               Error);  // the context is value_width wide
  EXPECT_EQ(o.data[0], 42.0f);
  // Backward: each gradient shaped as its operand.
  HostTensor dq(p.query_shape()), dk(p.key_shape()), dv({p.width}), wide_dv({p.width + 1});
  const auto backward = [&](const Tensor& dq_, const Tensor& dv_) {
    be->additive_attention_backward(p, q.tensor(), k.tensor(), values.tensor(), v.tensor(),
                                    g.tensor(), i32(good), probs.tensor(), o.tensor(),
                                    {dq_, dk.tensor(), Tensor(), dv_, Tensor()});
  };
  EXPECT_NO_THROW(backward(dq.tensor(), dv.tensor()));
  EXPECT_THROW(backward(dk.tensor(), dv.tensor()), Error);
  EXPECT_THROW(backward(dq.tensor(), wide_dv.tensor()), Error);
}

// Reversing sequences: x and y [steps * batch, width] in different memory, i32 lengths per
// sample; the CPU refuses a length past the steps before writing anything.
TEST(DoorChecks, ReverseSequencesChecksItsOperands) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  const backend::SequenceParams p{3, 2};
  HostTensor x({6, 4}), y({6, 4}), ragged({5, 4});
  std::vector<std::int32_t> good{3, 1}, too_long{3, 4}, three{3, 3, 3};
  auto i32 = [](std::vector<std::int32_t>& v) {
    return Tensor(v.data(), {static_cast<std::int64_t>(v.size())}, DType::kI32, Device::cpu());
  };
  const auto call = [&](const Tensor& lengths, HostTensor& in, HostTensor& out) {
    be->reverse_sequences(p, lengths, in.tensor(), out.tensor(), GradMode::kOverwrite);
  };
  EXPECT_NO_THROW(call(i32(good), x, y));
  y.data[0] = 42.0f;
  EXPECT_THROW(call(i32(good), x, x), Error);       // in place: rows would overwrite their sources
  EXPECT_THROW(call(i32(good), ragged, y), Error);  // 5 rows: not 3 steps of 2
  EXPECT_THROW(call(i32(good), x, ragged), Error);  // y shaped otherwise than x
  EXPECT_THROW(call(i32(three), x, y), Error);
  HostTensor float_lengths({2});
  EXPECT_THROW(call(float_lengths.tensor(), x, y), Error);
  EXPECT_THROW(call(i32(too_long), x, y), Error);
  EXPECT_EQ(y.data[0], 42.0f);
}

// The positional encoding: x and y [rows, width] of one float dtype on the backend's device,
// rows whole sequences, the width even (sines, then cosines), the sequence at least 1; a refused
// call writes nothing.
TEST(DoorChecks, PositionalEncodingChecksItsOperands) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  backend::PositionalEncodingParams p;
  p.sequence = 3, p.scale = 2.0f;
  HostTensor x({6, 4}), y({6, 4}), odd_x({6, 3}), odd_y({6, 3}), ragged({5, 4}), narrow({6, 2});
  const auto call = [&](const Tensor& in, const Tensor& out) {
    be->positional_encoding(p, in, out, GradMode::kOverwrite);
  };
  EXPECT_NO_THROW(call(x.tensor(), y.tensor()));
  EXPECT_NO_THROW(call(x.tensor(), x.tensor()));  // in place
  y.data[0] = 42.0f;
  EXPECT_THROW(call(odd_x.tensor(), odd_y.tensor()), Error);    // odd width
  EXPECT_THROW(call(ragged.tensor(), ragged.tensor()), Error);  // 5 rows: not sequences of 3
  EXPECT_THROW(call(x.tensor(), narrow.tensor()), Error);       // y shaped otherwise
  EXPECT_THROW(call(x.tensor().reshaped({24}), y.tensor().reshaped({24})), Error);  // not rank 2
  EXPECT_THROW(call(x.tensor(), Tensor(y.data.data(), {6, 4}, DType::kF16, Device::cpu())),
               Error);  // dtypes differ
  std::vector<std::int32_t> ints(24);
  const Tensor int_t(ints.data(), {6, 4}, DType::kI32, Device::cpu());
  EXPECT_THROW(call(int_t, int_t), Error);  // not a float dtype
  const Tensor elsewhere(x.data.data(), {6, 4}, DType::kF32, Device::cuda(0));
  EXPECT_THROW(call(elsewhere, elsewhere), Error);  // both on another device than the backend's
  EXPECT_THROW(call(HostTensor({6, 0}).tensor(), HostTensor({6, 0}).tensor()), Error);  // no width
  backend::PositionalEncodingParams no_positions = p;
  no_positions.sequence = 0;
  EXPECT_THROW(be->positional_encoding(no_positions, x.tensor(), y.tensor(), GradMode::kOverwrite),
               Error);
  backend::PositionalEncodingParams nan_scale = p;
  nan_scale.scale = std::nanf("");
  EXPECT_THROW(be->positional_encoding(nan_scale, x.tensor(), y.tensor(), GradMode::kOverwrite),
               Error);
  EXPECT_EQ(y.data[0], 42.0f);
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

// Greedy decoding's choice: logits [batch, vocabulary] of a float dtype, i32 tokens, finished
// and lengths per sentence, one i32 count, and an [EOS] id inside the vocabulary.
TEST(DoorChecks, GreedyPickChecksItsOperands) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  backend::GreedyParams p{2, 5, 2, 0};
  HostTensor logits({2, 5}), wide({2, 6}), float_count({1});
  std::vector<std::int32_t> tokens(2), finished(2), lengths(2), count(1), three(3);
  auto i32 = [](std::vector<std::int32_t>& v) {
    return Tensor(v.data(), {static_cast<std::int64_t>(v.size())}, DType::kI32, Device::cpu());
  };
  const auto call = [&](const backend::GreedyParams& q, const Tensor& l, const Tensor& t,
                        const Tensor& c) {
    be->greedy_pick(q, l, t, i32(finished), i32(lengths), c);
  };
  EXPECT_NO_THROW(call(p, logits.tensor(), i32(tokens), i32(count)));
  EXPECT_THROW(call(p, wide.tensor(), i32(tokens), i32(count)), Error);
  EXPECT_THROW(call(p, logits.tensor(), i32(three), i32(count)), Error);
  EXPECT_THROW(call(p, logits.tensor(), i32(tokens), float_count.tensor()), Error);
  EXPECT_THROW(call(p, i32(three), i32(tokens), i32(count)), Error);  // ids are no scores
  backend::GreedyParams outside = p;
  outside.eos = 5;
  EXPECT_THROW(call(outside, logits.tensor(), i32(tokens), i32(count)), Error);
}

// Beam search's choice: a beam in [1, 8] no wider than the vocabulary, f32 attention and
// coverage [rows, sources], f32 scores and i32 state, tokens and parents per row.
TEST(DoorChecks, BeamPickChecksItsOperands) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  backend::BeamParams p;
  p.batch = 1, p.beam = 2, p.vocabulary = 5, p.sources = 3;
  HostTensor logits({2, 5}), attention({2, 3}), coverage({2, 3}), scores({2}), wide({2, 4});
  std::vector<std::int32_t> finished(2), lengths(2), tokens(2), parents(2), count(1);
  auto i32 = [](std::vector<std::int32_t>& v) {
    return Tensor(v.data(), {static_cast<std::int64_t>(v.size())}, DType::kI32, Device::cpu());
  };
  const auto call = [&](const backend::BeamParams& q, const Tensor& att, const Tensor& cov,
                        const Tensor& parent_rows) {
    be->beam_pick(q, logits.tensor(), att, {scores.tensor(), i32(finished), i32(lengths), cov},
                  i32(tokens), parent_rows, i32(count));
  };
  EXPECT_NO_THROW(call(p, attention.tensor(), coverage.tensor(), i32(parents)));
  EXPECT_THROW(call(p, wide.tensor(), coverage.tensor(), i32(parents)), Error);
  EXPECT_THROW(call(p, attention.tensor(), wide.tensor(), i32(parents)), Error);
  EXPECT_THROW(call(p, attention.tensor(), coverage.tensor(), scores.tensor()), Error);
  for (std::int64_t beam : {0, 9}) {
    backend::BeamParams q = p;
    q.beam = beam;
    EXPECT_THROW(call(q, attention.tensor(), coverage.tensor(), i32(parents)), Error) << beam;
  }
}

}  // namespace
}  // namespace dlbench::ops_test
