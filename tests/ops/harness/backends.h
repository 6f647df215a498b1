// The backend variants the op harness runs every case on: cpu; and, in a CUDA build, cuda (the
// convolution route measured per shape), cuda/cudnn, cuda/gemm, cuda/graph and cuda/padded (the
// route pinned; backends_cuda.cc) and cuda/sliced (convolutions in one-sample slices of the
// batch). The CUDA variants build 24 KiB of
// im2col columns at a time, so most products run in several chunks (perf mode: the backend's
// default, as in runs). A variant that needs a GPU says why it
// cannot run when there is none, and the test skips.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/memory.h"
#include "tests/ops/harness/tensors.h"

namespace dlbench::op_harness {

struct Variant {
  std::string name;  // "cpu", "cuda", "cuda/cudnn", "cuda/gemm", "cuda/sliced"
  bool is_cpu = false;
  bool conv_only = false;  // a route of convolutions: other ops run on "cuda" alone
  std::vector<Precision> precisions;
  // Answers Backend::supports without making the backend (no GPU needed).
  std::function<backend::Support(backend::OpKind, const backend::OpParams&, DType)> supports;
  // The backend, or null with the reason in *why_not (no GPU).
  std::function<std::unique_ptr<backend::Backend>(std::string* why_not)> make;
  // Checks after a convolution case ran (which route it took); may be empty.
  std::function<void(backend::Backend&)> conv_after;
  // Perf mode's --show-conv-routes: prints each convolution's measured routes; may be empty.
  std::function<void(backend::Backend&)> print_conv_routes;
  // Perf mode: undoes the limits only tests want, so a case is timed as a run would do it;
  // may be empty.
  std::function<void(backend::Backend&)> for_perf;
};

std::vector<Variant> variants();
// The CUDA variants, defined in backends_cuda.cc (CUDA builds only).
void add_cuda_variants(std::vector<Variant>& out);

// A case's tensors on one backend: allocated, filled with the host values in the tensor's
// dtype at a precision (outputs with NaN bytes), and read back as f32.
class DeviceTensors {
 public:
  DeviceTensors(backend::Backend& be, const std::vector<HostTensor>& host, const Precision& p);
  std::span<const Tensor> tensors() const { return views_; }
  std::vector<float> download(std::size_t i) const;

 private:
  backend::Backend* be_;
  std::vector<Buffer> buffers_;
  std::vector<Tensor> views_;
};

// Rounds the compute-dtype tensors of a case to the precision, as every backend will see them.
void round_inputs(std::vector<HostTensor>& t, const Precision& p);

}  // namespace dlbench::op_harness
