// What the CPU backend runs: every op in f32 (oneDNN and our loops compute in f32 only), fills
// and copies also of i32 (labels, token ids), and the matmul's ReLU epilogue (a oneDNN post-op).
// The dtype asked about is the op's float dtype: embeddings take i32 ids, Adam an i32 step
// and i32 row marks, and sample_negatives i32 ids beside f32 labels, which is what "f32" means for
// them. The convolution's ReLU epilogue is a oneDNN post-op too; batch norm's residual and ReLU
// tail is oneDNN's batch norm, then one pass of our own (cpu_batch_norm.cc). A convolution does not
// write a batch norm's statistics here (a batch norm takes them where they are handed over, as the
// reference).
#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {

Support cpu_supports(OpKind op, const OpParams& params, DType dtype) {
  // oneDNN's batch norm sums x in the primitive that normalizes it: statistics written by the
  // convolution before it would save no pass here, only add one.
  if (const auto* conv = std::get_if<ConvParams>(&params); conv && conv->statistics)
    return Support::no("the CPU's batch norm computes its statistics itself");
  const bool integer_ok =
      op == OpKind::kFill || op == OpKind::kFillUniformInt || op == OpKind::kCopy;
  if (dtype == DType::kF32 || (integer_ok && dtype == DType::kI32)) return Support::yes();
  return Support::no(std::string("the CPU backend runs ") + to_string(op) + " in f32" +
                     (integer_ok ? " or i32" : "") + ", not " + to_string(dtype));
}

Support CpuBackend::supports(OpKind op, const OpParams& params, DType dtype) const {
  return cpu_supports(op, params, dtype);
}

}  // namespace dlbench::backend::cpu
