// The op harness's case interface (ggml's test-backend-ops is the model): one case per op and
// parameter set, its parameters printed in the test name, run on every backend variant and
// precision from the one list:
//   test mode: the CPU backend against the case's float64 reference, every other backend
//              against the CPU backend on the same rounded inputs;
//   grad mode: central differences of the float64 reference forward against the reference
//              backward and each backend's backward (a GradCase, in the same case file).
// What a backend does not support (Backend::supports) is skipped with its reason.
//
// Case files (tests/ops/cases/*_cases.cc) register their lists with DLBENCH_OP_CASES and
// DLBENCH_GRAD_CASES; the test names read ops/<mode>/<op>.<params>/<backend>/<precision>.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/tensor.h"
#include "tests/ops/harness/tensors.h"

namespace dlbench::op_harness {

// The expected float64 values of one written tensor (an index into the case's tensors).
struct Check {
  std::size_t tensor;
  Vec expected;
  Tolerance tol;
};

// Elements of a written tensor the op must leave bit for bit as they were (the rows a sparse
// update did not touch): a tolerance would let a backend nudge them.
struct Unchanged {
  std::size_t tensor;
  std::vector<std::size_t> elements;
};

class OpCase {
 public:
  virtual ~OpCase() = default;
  virtual std::string op() const = 0;      // "conv_backward_data"
  virtual std::string params() const = 0;  // "n2_7x7x16_k24_1x1_s1_p0_d1_nobias_accumulate"
  virtual backend::OpKind kind() const = 0;
  // Whether the op reads Precision::math (TF32 is a precision of its own only then).
  virtual bool has_math_mode() const { return false; }
  // What Backend::supports is asked about, at a precision.
  virtual backend::OpParams op_params(const Precision&) const { return std::monostate{}; }
  // The tensors run() takes, in its order, with their starting values in f32 (a backend sizes
  // the workspaces). The harness rounds the compute-dtype ones to the precision under test.
  virtual std::vector<HostTensor> tensors(const backend::Backend&) const = 0;
  virtual void run(backend::Backend&, const Precision&, std::span<const Tensor> t) const = 0;
  // The float64 reference for the CPU backend at f32, from the tensors as the backend saw them.
  virtual std::vector<Check> reference(const std::vector<HostTensor>& t) const = 0;
  // How close another backend must come to the CPU backend at a precision, per written tensor.
  virtual Tolerance against_cpu(const Precision&, std::size_t tensor) const = 0;
  // When true, other backends are held to the float64 reference instead of the CPU backend
  // (with against_cpu's tolerances): where the CPU may legitimately choose differently (ties).
  virtual bool against_reference() const { return false; }
  // When true, the CPU's f32 result is rounded to the precision before the comparison: what
  // another backend must produce when it rounds once (with an exact tolerance).
  virtual bool round_cpu_result() const { return false; }
  // When true, running the case again on the same inputs must write the same bits on every
  // backend (a gather in a fixed order, no atomics): what training's repeatability rests on.
  virtual bool repeatable() const { return false; }
  virtual std::vector<Unchanged> unchanged() const { return {}; }
  // Perf mode: the floating-point operations of one run() (0: not counted), and whether the
  // case is perf-sized (ResNet-50 shapes: run by --perf only, never as a test).
  virtual double flops() const { return 0; }
  virtual bool perf_only() const { return false; }
};

// A case at a benchmark's size (ResNet-50's shapes at batch 128): run by perf mode only,
// never as a test (no float64 reference at this size).
class PerfCase final : public OpCase {
 public:
  explicit PerfCase(std::unique_ptr<OpCase> inner) : inner_(std::move(inner)) {}
  std::string op() const override { return inner_->op(); }
  std::string params() const override { return inner_->params(); }
  backend::OpKind kind() const override { return inner_->kind(); }
  bool has_math_mode() const override { return inner_->has_math_mode(); }
  backend::OpParams op_params(const Precision& p) const override { return inner_->op_params(p); }
  std::vector<HostTensor> tensors(const backend::Backend& be) const override {
    return inner_->tensors(be);
  }
  void run(backend::Backend& be, const Precision& p, std::span<const Tensor> t) const override {
    inner_->run(be, p, t);
  }
  std::vector<Check> reference(const std::vector<HostTensor>&) const override { return {}; }
  Tolerance against_cpu(const Precision&, std::size_t) const override { return {0, 0}; }
  double flops() const override { return inner_->flops(); }
  bool perf_only() const override { return true; }

 private:
  std::unique_ptr<OpCase> inner_;
};

// The batch of perf-sized cases: ResNet-50's training batch.
constexpr std::int64_t kPerfBatch = 128;

// A gradient check: for L(v) = sum_i f(v)_i r_i with the reference forward f and a random r
// (r plays dy; absent for a scalar loss), dL/dv_j ~ (L(v + h e_j) - L(v - h e_j)) / 2h. Both
// the reference backward and the backend's backward must match it.
struct GradCase {
  std::string op;      // the forward op, "conv2d"
  std::string params;  // "stride2"
  backend::OpKind kind;
  backend::OpParams op_params;
  std::vector<HostTensor> tensors;  // the forward's inputs, r, and the backward's outputs
  struct Derivative {
    std::size_t input, gradient;  // tensor indices: what is perturbed, where its gradient goes
  };
  std::vector<Derivative> wrt;
  int weight = -1;  // the tensor holding r; -1 when the forward is a scalar loss
  std::function<Vec(const std::vector<Vec>&)> forward;
  std::function<std::vector<Vec>(const std::vector<Vec>&)> reference_backward;  // per wrt
  std::function<void(backend::Backend&, std::span<const Tensor>)> backward;
};

using CaseList = std::vector<std::unique_ptr<OpCase>>;
using OpCaseMaker = CaseList (*)();
using GradCaseMaker = std::vector<GradCase> (*)();

struct Registry {
  std::vector<OpCaseMaker> op_makers;
  std::vector<GradCaseMaker> grad_makers;
};
Registry& registry();

struct Registrar {
  explicit Registrar(OpCaseMaker make) { registry().op_makers.push_back(make); }
  explicit Registrar(GradCaseMaker make) { registry().grad_makers.push_back(make); }
};

}  // namespace dlbench::op_harness

#define DLBENCH_CASES_CONCAT_INNER(a, b) a##b
#define DLBENCH_CASES_CONCAT(a, b) DLBENCH_CASES_CONCAT_INNER(a, b)
// At file scope of a case file: registers a function returning its cases.
#define DLBENCH_OP_CASES(make)                                                              \
  static const ::dlbench::op_harness::Registrar DLBENCH_CASES_CONCAT(op_cases_, __LINE__) { \
    make                                                                                    \
  }
#define DLBENCH_GRAD_CASES(make)                                                              \
  static const ::dlbench::op_harness::Registrar DLBENCH_CASES_CONCAT(grad_cases_, __LINE__) { \
    make                                                                                      \
  }
