// The op harness's layer mode: each nn::Layer's backward against central finite differences of
// its own forward, on tiny shapes, on every backend the harness has (cpu, and cuda in a CUDA
// build). The layer runs directly through its forward/backward with a StepContext, on tensors
// of the backend under test; the scalar probed is L = Σ y ⊙ R over its outputs for a fixed
// random R, so dL/dy = R (a loss layer: L = R · loss, its gradient scaled by R through the
// loss scale). Every parameter and input gradient is probed, and a case may also check that
// accumulate mode adds the same gradient on top of what was there.
//
// Case files register their lists with DLBENCH_LAYER_CASES; the test names read
// ops/layer/<layer>.<params>/<backend>/f32.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/shape.h"
#include "engine/nn/layer.h"
#include "tests/ops/harness/backends.h"
#include "tests/ops/harness/op_case.h"

namespace dlbench::op_harness {

struct LayerCase {
  std::string layer;   // "conv2d"
  std::string params;  // "3x3_padded"
  std::function<std::unique_ptr<nn::Layer>()> make;
  std::vector<Shape> inputs;
  // Inputs given fixed values (ids as exact integers, targets): no gradient, never probed.
  std::map<std::size_t, std::vector<float>> fixed;
  std::vector<std::size_t> i32_inputs;  // of the fixed ones, those that are i32 (ids)
  // Also checks accumulate mode: input 0's gradient (when it has one) and, where the layer
  // accumulates parameter gradients, every parameter's.
  bool accumulate = false;
  // When > 0, each probe is also held to |numeric - analytic| <= it * max(1e-2, |numeric|).
  double probe_tolerance = 0;
  // An op the layer runs that not every backend has (a fused ReLU epilogue): where
  // Backend::supports says no (asked at f32), the case skips with the backend's reason.
  std::optional<nn::ReluEpilogue> needs = std::nullopt;
  // For layers whose forward is not simply an op the op harness checks (a transposed
  // convolution run as a convolution's backward, a concatenation made of column copies): the
  // outputs from the inputs and parameters, on the host. The forward is held to it before the
  // gradients are probed, since a gradient check alone passes any linear forward whose
  // backward is its adjoint.
  std::function<std::vector<std::vector<float>>(const std::vector<std::vector<float>>& inputs,
                                                const std::vector<std::vector<float>>& params)>
      reference = nullptr;
  // With `accumulate`: checks every input's gradient in accumulate mode, not input 0's alone
  // (a layer that adds some gradients through scratch of its own: the LSTM's states).
  bool accumulate_every_input = false;
};

using LayerCaseMaker = std::vector<LayerCase> (*)();
std::vector<LayerCaseMaker>& layer_makers();
struct LayerRegistrar {
  explicit LayerRegistrar(LayerCaseMaker make) { layer_makers().push_back(make); }
};

void run_layer_mode(const LayerCase& c, const Variant& v);

}  // namespace dlbench::op_harness

// At file scope of a case file: registers a function returning its layer cases.
#define DLBENCH_LAYER_CASES(make)                                                       \
  static const ::dlbench::op_harness::LayerRegistrar DLBENCH_CASES_CONCAT(layer_cases_, \
                                                                          __LINE__) {   \
    make                                                                                \
  }
