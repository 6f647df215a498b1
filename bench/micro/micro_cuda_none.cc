// A CPU-only build: the GPU halves of the micro-benchmarks say that this build has none.
#include "bench/micro/bandwidth_bench.h"
#include "bench/micro/gemm_bench.h"
#include "bench/micro/transfer_bench.h"
#include "engine/core/error.h"

namespace dlbench::micro {
namespace {

[[noreturn]] void no_cuda() {
  throw Error(ErrorKind::kUsage, "this dlbench was built without CUDA",
              "rebuild with the CUDA toolkit, or measure the CPU with --device cpu");
}

}  // namespace

GemmResult run_gemm_cuda(int, const GemmConfig&, const GemmHooks&) {
  no_cuda();
}
BandwidthResult run_bandwidth_cuda(int, const BandwidthConfig&, const BandwidthHooks&) {
  no_cuda();
}
TransferResult run_transfer_bench(int, const TransferConfig&, const TransferHooks&) {
  no_cuda();
}
P2pResult run_p2p_bench(const P2pConfig& config, const P2pHooks& hooks) {
  validate(config);
  P2pResult r;
  r.config = config;
  if (hooks.on_start) hooks.on_start(r);
  return r;  // no GPUs, no pairs
}

}  // namespace dlbench::micro
