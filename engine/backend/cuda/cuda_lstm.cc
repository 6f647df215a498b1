// The LSTM ops on cuDNN's RNN API (cudnn_lstm.h has the descriptors): cudnnRNNForward, then in
// backward cudnnRNNBackwardData_v8 and cudnnRNNBackwardWeights_v8, in the order cuDNN requires.
// Our flat weights are cuDNN's weight space itself (the plan checked the layout), so nothing
// is copied. Every sequence runs the whole length and no lengths go to the device, so the calls
// have fixed shapes. cuDNN writes dx; an accumulating dx goes through the workspace first.
// devSeqLengths is null in all three calls: cuDNN has not required it since 8.9.1 (PyTorch passes
// null too), and every sequence is the full length anyway.
#include <algorithm>
#include <utility>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/core/memory.h"

namespace dlbench::backend::cuda {
namespace {

// An optional operand as cuDNN takes it: null where absent (zeros in, not written out).
void* or_null(const Tensor& t) {
  return t.defined() ? t.data() : nullptr;
}

}  // namespace

const CudnnLstm& CudaBackend::lstm_plan(const LstmParams& p, DType dtype) const {
  const LstmKey key{p.batch,
                    p.steps,
                    p.input,
                    p.hidden,
                    static_cast<std::int64_t>(p.math),
                    static_cast<std::int64_t>(dtype)};
  auto it = lstm_plans_.find(key);
  if (it == lstm_plans_.end()) {
    activate();
    it = lstm_plans_.emplace(key, std::make_unique<CudnnLstm>(cudnn_, p, dtype)).first;
  }
  return *it->second;
}

std::size_t CudaBackend::lstm_reserve_bytes(const LstmParams& p, DType dtype) const {
  return lstm_plan(p, dtype).reserve_bytes();
}

void CudaBackend::lstm_forward_impl(const LstmParams& p, const Tensor& x, const Tensor& w,
                                    const Tensor& h0, const Tensor& c0, const Tensor& y,
                                    const Tensor& hn, const Tensor& cn, const Tensor& reserve) {
  activate();
  const char* op = "lstm_forward";
  for (const auto& [t, what] : {std::pair{&x, "x"},
                                {&w, "w"},
                                {&y, "y"},
                                {&h0, "h0"},
                                {&c0, "c0"},
                                {&hn, "hn"},
                                {&cn, "cn"},
                                {&reserve, "reserve"}})
    if (t->defined()) require_here(*t, op, what);
  const CudnnLstm& plan = lstm_plan(p, x.dtype());
  const bool training = reserve.defined();
  void* work = workspace(plan.work_bytes());
  CUDNN_CHECK(cudnnRNNForward(
      cudnn_, plan.rnn(), training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE, nullptr,
      plan.x(), x.data(), plan.y(), y.data(), plan.state(), or_null(h0), or_null(hn), plan.state(),
      or_null(c0), or_null(cn), plan.weight_bytes(), w.data(), plan.work_bytes(), work,
      training ? plan.reserve_bytes() : 0, training ? reserve.data() : nullptr));
}

void CudaBackend::lstm_backward_impl(const LstmParams& p, const Tensor& x, const Tensor& w,
                                     const Tensor& h0, const Tensor& c0, const Tensor& y,
                                     const Tensor& dy, const Tensor& dhn, const Tensor& dcn,
                                     const Tensor& reserve, const Tensor& dx, GradMode mode,
                                     const Tensor& dh0, const Tensor& dc0, const Tensor& dw,
                                     GradMode dw_mode) {
  activate();
  const char* op = "lstm_backward";
  for (const auto& [t, what] : {std::pair{&x, "x"},
                                {&w, "w"},
                                {&y, "y"},
                                {&dy, "dy"},
                                {&h0, "h0"},
                                {&c0, "c0"},
                                {&dhn, "dhn"},
                                {&dcn, "dcn"},
                                {&reserve, "reserve"},
                                {&dx, "dx"},
                                {&dh0, "dh0"},
                                {&dc0, "dc0"},
                                {&dw, "dw"}})
    if (t->defined()) require_here(*t, op, what);
  const CudnnLstm& plan = lstm_plan(p, x.dtype());
  // cuDNN overwrites dx: an accumulating one is written after the work space, then added.
  const bool accumulate = mode == GradMode::kAccumulate;
  const std::size_t work_bytes = align_up(plan.work_bytes());
  auto* work = static_cast<std::byte*>(workspace(work_bytes + (accumulate ? dx.bytes() : 0)));
  const Tensor dx_out =
      accumulate ? Tensor(work + work_bytes, dx.shape(), dx.dtype(), dx.device()) : dx;
  CUDNN_CHECK(cudnnRNNBackwardData_v8(
      cudnn_, plan.rnn(), nullptr, plan.y(), y.data(), dy.data(), plan.x(), dx_out.data(),
      plan.state(), or_null(h0), or_null(dhn), or_null(dh0), plan.state(), or_null(c0),
      or_null(dcn), or_null(dc0), plan.weight_bytes(), w.data(), plan.work_bytes(), work,
      plan.reserve_bytes(), reserve.data()));
  if (accumulate) accumulate_impl(dx_out, dx);
  if (!dw.defined()) return;
  // cuDNN (9.x on an H200) refuses CUDNN_WGRAD_MODE_SET with CUDNN_STATUS_NOT_SUPPORTED:
  // overwriting is adding to zeros.
  if (dw_mode == GradMode::kOverwrite)
    CUDA_CHECK(cudaMemsetAsync(dw.data(), 0, dw.bytes(), stream_));
  CUDNN_CHECK(cudnnRNNBackwardWeights_v8(
      cudnn_, plan.rnn(), CUDNN_WGRAD_MODE_ADD, nullptr, plan.x(), x.data(), plan.state(),
      or_null(h0), plan.y(), y.data(), plan.weight_bytes(), dw.data(), plan.work_bytes(), work,
      plan.reserve_bytes(), reserve.data()));
}

}  // namespace dlbench::backend::cuda
