// The LSTM layer as oneDNN's lstm_forward and lstm_backward (one layer, left to right).
//
// x and y are oneDNN's "tnc" as they are (time-major rows), the states "ldnc" with one layer and
// one direction. Our weights are cuDNN's layout, [W_ih | W_hh | b_ih | b_hh] with each matrix
// [gate * H + unit, column], which is oneDNN's "ldgoi"; the primitives choose their own layouts
// and the weights are reordered into them each call (the CPU is the reference here, not the
// fast path). oneDNN's LSTM has one bias, so it gets b_ih + b_hh, and its gradient goes to both.
//
// The reserve holds oneDNN's training workspace and after it the last step's h and c (each part
// aligned as our buffers are): the backward primitive takes them as arguments whether or not
// the caller kept them.
#include <algorithm>
#include <cstring>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/memory.h"

namespace dlbench::backend::cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

struct LstmDescs {
  memory::desc x, y, state, weights_layer, weights_iter, bias;
};

LstmDescs lstm_descs(const LstmParams& p) {
  return {f32_desc({p.steps, p.batch, p.input}, Tag::tnc),
          f32_desc({p.steps, p.batch, p.hidden}, Tag::tnc),
          f32_desc({1, 1, p.batch, p.hidden}, Tag::ldnc),
          f32_desc({1, 1, p.input, 4, p.hidden}, Tag::ldgoi),
          f32_desc({1, 1, p.hidden, 4, p.hidden}, Tag::ldgoi),
          f32_desc({1, 1, 4, p.hidden}, Tag::ldgo)};
}

memory::desc any_layout(const memory::desc& d) {
  return memory::desc(d.dims(), memory::data_type::f32, Tag::any);
}

// Our layout `ours` as the primitive wants it (`want`): a buffer and a reorder where they differ.
// `into_ours` reverses the direction (the backward's gradients back into our layout).
LstmWeights weights_for(const memory::desc& ours, const memory::desc& want,
                        const dnnl::engine& engine, bool into_ours = false) {
  LstmWeights w{ours, {}, {}};
  if (want == ours) return w;
  const memory::desc& from = into_ours ? want : ours;
  const memory::desc& to = into_ours ? ours : want;
  w.buffer = memory(to, engine);
  w.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine, from, engine, to));
  return w;
}

// The memory a primitive reads: ours as it is, or reordered into the buffer.
memory weights_in(const LstmWeights& w, const dnnl::engine& engine, dnnl::stream& stream,
                  void* data) {
  memory user(w.ours, engine, data);
  if (!w.reorder) return user;
  memory buffer = w.buffer;  // a handle: the same memory
  w.reorder.execute(stream, user, buffer);
  return buffer;
}

// A state argument: the caller's tensor, or the stand-in where the caller gave none.
memory state_or(const memory::desc& d, const dnnl::engine& engine, const Tensor& t,
                const memory& stand_in) {
  return t.defined() ? memory(d, engine, t.data()) : stand_in;
}

// The arguments forward and backward share: x, the states to start from, the weights in the
// layouts the primitive chose, the one bias (b_ih + b_hh, summed into the entry's buffer each
// call: layers of one shape share the entry) and y.
Args common_args(const LstmParams& p, const LstmPrimitives& e, const LstmWeights& layer,
                 const LstmWeights& iter, const dnnl::engine& engine, dnnl::stream& stream,
                 const Tensor& x, const Tensor& w, const Tensor& h0, const Tensor& c0,
                 const Tensor& y) {
  const LstmDescs d = lstm_descs(p);
  auto* weights = w.data_as<float>();
  const std::int64_t g = p.gates();
  auto* bias = static_cast<float*>(e.bias.get_data_handle());
  const float* b_ih = weights + g * (p.input + p.hidden);
  for (std::int64_t i = 0; i < g; ++i) bias[i] = b_ih[i] + b_ih[g + i];
  return {{DNNL_ARG_SRC_LAYER, memory(d.x, engine, x.data())},
          {DNNL_ARG_SRC_ITER, state_or(d.state, engine, h0, e.zeros)},
          {DNNL_ARG_SRC_ITER_C, state_or(d.state, engine, c0, e.zeros)},
          {DNNL_ARG_WEIGHTS_LAYER, weights_in(layer, engine, stream, weights)},
          {DNNL_ARG_WEIGHTS_ITER, weights_in(iter, engine, stream, weights + g * p.input)},
          {DNNL_ARG_BIAS, e.bias},
          {DNNL_ARG_DST_LAYER, memory(d.y, engine, y.data())}};
}

// The reserve as training uses it: oneDNN's workspace, then the last step's h and c.
Args reserve_args(const LstmParams& p, const LstmPrimitives& e, const dnnl::engine& engine,
                  const Tensor& reserve) {
  const memory::desc state = lstm_descs(p).state;
  auto* base = static_cast<std::byte*>(reserve.data());
  const std::size_t state_bytes = align_up(state.get_size());
  return {{DNNL_ARG_WORKSPACE, memory(e.forward_pd.workspace_desc(), engine, base)},
          {DNNL_ARG_DST_ITER, memory(state, engine, base + e.workspace_bytes)},
          {DNNL_ARG_DST_ITER_C, memory(state, engine, base + e.workspace_bytes + state_bytes)}};
}

}  // namespace

LstmPrimitives& CpuBackend::lstm_primitives(const LstmParams& p, bool training) const {
  const PrimitiveKey key{{training ? 1 : 0, p.batch, p.steps, p.input, p.hidden}};
  return lstm_primitives_.get(key, [&] {
    const LstmDescs d = lstm_descs(p);
    const dnnl::lstm_forward::desc desc(
        training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference,
        dnnl::rnn_direction::unidirectional_left2right, d.x, d.state, d.state,
        any_layout(d.weights_layer), any_layout(d.weights_iter), d.bias, d.y, d.state, d.state);
    LstmPrimitives e;
    e.forward_pd = dnnl::lstm_forward::primitive_desc(desc, engine_);
    e.forward = dnnl::lstm_forward(e.forward_pd);
    e.weights_layer = weights_for(d.weights_layer, e.forward_pd.weights_layer_desc(), engine_);
    e.weights_iter = weights_for(d.weights_iter, e.forward_pd.weights_iter_desc(), engine_);
    e.bias = memory(d.bias, engine_);
    e.zeros = memory(d.state, engine_);
    std::memset(e.zeros.get_data_handle(), 0, d.state.get_size());
    e.spare_h = memory(d.state, engine_);
    e.spare_c = memory(d.state, engine_);
    if (training) e.workspace_bytes = align_up(e.forward_pd.workspace_desc().get_size());
    return e;
  });
}

void CpuBackend::make_lstm_backward(const LstmParams& p, LstmPrimitives& e) const {
  const LstmDescs d = lstm_descs(p);
  const memory::desc wl = any_layout(d.weights_layer), wi = any_layout(d.weights_iter);
  const dnnl::lstm_backward::desc desc(dnnl::prop_kind::backward,
                                       dnnl::rnn_direction::unidirectional_left2right, d.x, d.state,
                                       d.state, wl, wi, d.bias, d.y, d.state, d.state, d.x, d.state,
                                       d.state, wl, wi, d.bias, d.y, d.state, d.state);
  e.backward_pd = dnnl::lstm_backward::primitive_desc(desc, engine_, e.forward_pd);
  e.backward = dnnl::lstm_backward(e.backward_pd);
  e.back_weights_layer = weights_for(d.weights_layer, e.backward_pd.weights_layer_desc(), engine_);
  e.back_weights_iter = weights_for(d.weights_iter, e.backward_pd.weights_iter_desc(), engine_);
  e.diff_layer = memory(e.backward_pd.diff_weights_layer_desc(), engine_);
  e.diff_iter = memory(e.backward_pd.diff_weights_iter_desc(), engine_);
  e.diff_bias = memory(e.backward_pd.diff_bias_desc(), engine_);
  e.ours_diff_layer = weights_for(d.weights_layer, e.backward_pd.diff_weights_layer_desc(), engine_,
                                  /*into_ours=*/true);
  e.ours_diff_iter = weights_for(d.weights_iter, e.backward_pd.diff_weights_iter_desc(), engine_,
                                 /*into_ours=*/true);
  e.dx = memory(d.x, engine_);
}

std::size_t CpuBackend::lstm_reserve_bytes(const LstmParams& p, DType) const {
  try {
    return lstm_primitives(p, true).workspace_bytes + 2 * align_up(lstm_descs(p).state.get_size());
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, "lstm_reserve_bytes");
  }
}

void CpuBackend::lstm_forward_impl(const LstmParams& p, const Tensor& x, const Tensor& w,
                                   const Tensor& h0, const Tensor& c0, const Tensor& y,
                                   const Tensor& hn, const Tensor& cn, const Tensor& reserve) {
  const char* op = "lstm_forward";
  require_f32(x, op, "x"), require_f32(w, op, "w"), require_f32(y, op, "y");
  const bool training = reserve.defined();
  const LstmDescs d = lstm_descs(p);
  try {
    LstmPrimitives& e = lstm_primitives(p, training);
    Args args =
        common_args(p, e, e.weights_layer, e.weights_iter, engine_, stream_, x, w, h0, c0, y);
    if (training) {
      // The last states go to the reserve, where backward finds them, and are copied out after.
      args.merge(reserve_args(p, e, engine_, reserve));
    } else {
      args.emplace(DNNL_ARG_DST_ITER, state_or(d.state, engine_, hn, e.spare_h));
      args.emplace(DNNL_ARG_DST_ITER_C, state_or(d.state, engine_, cn, e.spare_c));
    }
    execute(op, e.forward, args);
    if (training) {
      const std::size_t bytes = d.state.get_size();
      if (hn.defined()) std::memcpy(hn.data(), args.at(DNNL_ARG_DST_ITER).get_data_handle(), bytes);
      if (cn.defined())
        std::memcpy(cn.data(), args.at(DNNL_ARG_DST_ITER_C).get_data_handle(), bytes);
    }
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
}

void CpuBackend::lstm_backward_impl(const LstmParams& p, const Tensor& x, const Tensor& w,
                                    const Tensor& h0, const Tensor& c0, const Tensor& y,
                                    const Tensor& dy, const Tensor& dhn, const Tensor& dcn,
                                    const Tensor& reserve, const Tensor& dx, GradMode mode,
                                    const Tensor& dh0, const Tensor& dc0, const Tensor& dw,
                                    GradMode dw_mode) {
  const char* op = "lstm_backward";
  require_f32(x, op, "x"), require_f32(w, op, "w"), require_f32(dy, op, "dy");
  const LstmDescs d = lstm_descs(p);
  try {
    LstmPrimitives& e = lstm_primitives(p, true);
    if (!e.backward) make_lstm_backward(p, e);
    const std::int64_t g = p.gates();
    // oneDNN adds into its weights' gradients.
    for (const memory& m : {e.diff_layer, e.diff_iter, e.diff_bias})
      std::memset(m.get_data_handle(), 0, m.get_desc().get_size());
    const bool accumulate = mode == GradMode::kAccumulate;
    Args args = common_args(p, e, e.back_weights_layer, e.back_weights_iter, engine_, stream_, x, w,
                            h0, c0, y);
    args.merge(reserve_args(p, e, engine_, reserve));
    args.insert({
        {DNNL_ARG_DIFF_DST_LAYER, mem(d.y, dy)},
        {DNNL_ARG_DIFF_DST_ITER, state_or(d.state, engine_, dhn, e.zeros)},
        {DNNL_ARG_DIFF_DST_ITER_C, state_or(d.state, engine_, dcn, e.zeros)},
        {DNNL_ARG_DIFF_SRC_LAYER, accumulate ? e.dx : mem(d.x, dx)},
        {DNNL_ARG_DIFF_SRC_ITER, state_or(d.state, engine_, dh0, e.spare_h)},
        {DNNL_ARG_DIFF_SRC_ITER_C, state_or(d.state, engine_, dc0, e.spare_c)},
        {DNNL_ARG_DIFF_WEIGHTS_LAYER, e.diff_layer},
        {DNNL_ARG_DIFF_WEIGHTS_ITER, e.diff_iter},
        {DNNL_ARG_DIFF_BIAS, e.diff_bias},
    });
    execute(op, e.backward, args);
    if (accumulate)
      add_into(dx.data_as<float>(), static_cast<const float*>(e.dx.get_data_handle()), x.numel());
    if (!dw.defined()) return;
    // The gradients in our layout: reordered where the backward chose another, then written
    // into (or added to) dw's four parts, the one bias gradient into both biases.
    auto ours = [&](const LstmWeights& o, const memory& diff) {
      if (!o.reorder) return static_cast<const float*>(diff.get_data_handle());
      execute(op, o.reorder, {{DNNL_ARG_FROM, diff}, {DNNL_ARG_TO, o.buffer}});
      return static_cast<const float*>(o.buffer.get_data_handle());
    };
    const float* parts[] = {ours(e.ours_diff_layer, e.diff_layer),
                            ours(e.ours_diff_iter, e.diff_iter),
                            static_cast<const float*>(e.diff_bias.get_data_handle()),
                            static_cast<const float*>(e.diff_bias.get_data_handle())};
    const std::int64_t sizes[] = {g * p.input, g * p.hidden, g, g};
    float* out = dw.data_as<float>();
    for (int i = 0; i < 4; ++i) {
      if (dw_mode == GradMode::kAccumulate)
        add_into(out, parts[i], sizes[i]);
      else
        std::copy(parts[i], parts[i] + sizes[i], out);
      out += sizes[i];
    }
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
}

}  // namespace dlbench::backend::cpu
