// The checks at the Backend's door of the sequence models' ops (attention, the LSTM, additive
// attention, reversed sequences, positional encoding, greedy and beam decoding) reject wrong
// shapes and dtypes with dlbench::Error before any backend code runs.
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/backend/backend.h"
#include "tests/ops/host_tensor.h"

namespace dlbench::ops_test {
namespace {

using backend::GradMode;

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
