// The bodies of the harness's tests: one case on one backend variant at one precision.
#pragma once

#include "tests/ops/harness/backends.h"
#include "tests/ops/harness/op_case.h"

namespace dlbench::op_harness {

// Test mode: the CPU backend against the case's float64 reference; any other backend
// against the CPU backend on the same rounded inputs.
void run_test_mode(const OpCase& c, const Variant& v, const Precision& p);
// Grad mode (f32): central differences of the reference forward against the reference
// backward and the backend's backward.
void run_grad_mode(const GradCase& c, const Variant& v);

bool is_conv(backend::OpKind kind);

}  // namespace dlbench::op_harness
