// The door checks of the recurrent ops (Backend::lstm_forward and _backward, and
// reverse_sequences for the bidirectional layer): every operand's shape and dtype, the optional
// states, and the reserve's size. The backends implement the *_impl hooks.
#include <algorithm>
#include <string>
#include <utility>

#include "engine/backend/backend.h"
#include "engine/backend/door_checks.h"

namespace dlbench::backend {
namespace {

// The sizes, x and w: x [steps * batch, input] of a float dtype, w [p.weights()] of the same.
void check_lstm(const LstmParams& p, const Tensor& x, const Tensor& w, const char* op) {
  DLBENCH_CHECK(p.batch >= 1 && p.steps >= 1 && p.input >= 1 && p.hidden >= 1,
                std::string(op) + ": batch, steps, input and hidden must be >= 1");
  DLBENCH_CHECK(x.defined(), std::string(op) + ": x is not allocated");
  DLBENCH_CHECK(x.dtype() == DType::kF32 || x.dtype() == DType::kF16 || x.dtype() == DType::kBF16,
                std::string(op) + ": x must be f32, f16 or bf16, not " + to_string(x.dtype()));
  check(x, p.input_shape(), x.dtype(), op, "x");
  check(w, {p.weights()}, x.dtype(), op, "w");
}

// A state (h or c, or a gradient of one): [batch, hidden] of x's dtype where given.
void check_state(const LstmParams& p, const Tensor& t, DType dtype, const char* op,
                 const char* what) {
  if (t.defined()) check(t, p.state_shape(), dtype, op, what);
}

void check_reserve(std::size_t needed, const Tensor& reserve, const char* op) {
  DLBENCH_CHECK(reserve.bytes() >= needed, std::string(op) + ": the reserve holds " +
                                               std::to_string(reserve.bytes()) + " bytes, " +
                                               std::to_string(needed) + " needed");
}

}  // namespace

std::size_t Backend::largest_lstm_reserve_bytes(const LstmParams& p) const {
  std::size_t bytes = 0;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    if (!supports(OpKind::kLstmForward, p, dtype)) continue;
    try {
      bytes = std::max(bytes, lstm_reserve_bytes(p, dtype));
    } catch (const Error&) {
    }
  }
  return bytes;
}

void Backend::lstm_forward(const LstmParams& p, const Tensor& x, const Tensor& w, const Tensor& h0,
                           const Tensor& c0, const Tensor& y, const Tensor& hn, const Tensor& cn,
                           const Tensor& reserve) {
  const char* op = "lstm_forward";
  check_lstm(p, x, w, op);
  check(y, p.output_shape(), x.dtype(), op, "y");
  check_state(p, h0, x.dtype(), op, "h0");
  check_state(p, c0, x.dtype(), op, "c0");
  check_state(p, hn, x.dtype(), op, "hn");
  check_state(p, cn, x.dtype(), op, "cn");
  if (reserve.defined()) check_reserve(lstm_reserve_bytes(p, x.dtype()), reserve, op);
  lstm_forward_impl(p, x, w, h0, c0, y, hn, cn, reserve);
}

void Backend::lstm_backward(const LstmParams& p, const Tensor& x, const Tensor& w, const Tensor& h0,
                            const Tensor& c0, const Tensor& y, const Tensor& dy, const Tensor& dhn,
                            const Tensor& dcn, const Tensor& reserve, const Tensor& dx,
                            GradMode mode, const Tensor& dh0, const Tensor& dc0, const Tensor& dw,
                            GradMode dw_mode) {
  const char* op = "lstm_backward";
  check_lstm(p, x, w, op);
  check(y, p.output_shape(), x.dtype(), op, "y");
  check(dy, p.output_shape(), x.dtype(), op, "dy");
  check(dx, p.input_shape(), x.dtype(), op, "dx");
  for (const auto& [t, what] : {std::pair{&h0, "h0"},
                                {&c0, "c0"},
                                {&dhn, "dhn"},
                                {&dcn, "dcn"},
                                {&dh0, "dh0"},
                                {&dc0, "dc0"}})
    check_state(p, *t, x.dtype(), op, what);
  if (dw.defined()) check(dw, {p.weights()}, x.dtype(), op, "dw");
  DLBENCH_CHECK(reserve.defined(), std::string(op) + ": the forward's reserve is not allocated");
  check_reserve(lstm_reserve_bytes(p, x.dtype()), reserve, op);
  lstm_backward_impl(p, x, w, h0, c0, y, dy, dhn, dcn, reserve, dx, mode, dh0, dc0, dw, dw_mode);
}

void Backend::reverse_sequences(const SequenceParams& p, const Tensor& lengths, const Tensor& x,
                                const Tensor& y, GradMode mode) {
  const char* op = "reverse_sequences";
  DLBENCH_CHECK(p.steps >= 1 && p.batch >= 1, std::string(op) + ": steps and batch must be >= 1");
  DLBENCH_CHECK(x.defined() && x.rank() == 2 && x.dim(0) == p.steps * p.batch,
                std::string(op) + ": x must be [steps * batch, width]");
  check_same(x, y, op, "y");
  check(lengths, {p.batch}, DType::kI32, op, "lengths");
  DLBENCH_CHECK(x.data() != y.data(), std::string(op) + ": y must not be x (rows move)");
  reverse_sequences_impl(p, lengths, x, y, mode);
}

}  // namespace dlbench::backend
