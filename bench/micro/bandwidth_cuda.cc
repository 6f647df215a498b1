// dlbench micro bandwidth on GPUs: three arrays in device memory; the copy kernel, cudaMemcpy
// device to device and the triad kernel, each timed iteration by iteration with events.
#include <algorithm>

#include "bench/micro/bandwidth_bench.h"
#include "bench/micro/micro_cuda.h"
#include "bench/micro/micro_kernels.h"
#include "bench/micro/micro_pattern.h"
#include "engine/backend/cuda/cuda_backend.h"

namespace dlbench::micro {
namespace {

template <class Body>
void time_device(BandwidthRow& row, const BandwidthConfig& config, cudaStream_t stream,
                 backend::cuda::Event& start, backend::cuda::Event& stop, Body body) {
  time_row(row, config, [&] { return time_ms(stream, start, stop, body) * 1e-3; });
}

}  // namespace

BandwidthResult run_bandwidth_cuda(int device, const BandwidthConfig& config,
                                   const BandwidthHooks& hooks) {
  use_gpu(device);
  BandwidthResult r;
  r.device = "cuda:" + std::to_string(device);
  r.backend = gpu_description(device);
  r.method = "float4 kernels (256 threads a block, one float4 a thread); cudaMemcpyAsync";
  r.config = config;
  if (hooks.on_start) hooks.on_start(r);

  backend::cuda::CudaAllocator allocator(device);
  const std::int64_t n = config.array_bytes / std::int64_t(sizeof(float));
  const std::size_t bytes = std::size_t(n) * sizeof(float);
  Buffer xb(allocator, bytes), yb(allocator, bytes), zb(allocator, bytes);
  float* x = static_cast<float*>(xb.data());
  float* y = static_cast<float*>(yb.data());
  float* z = static_cast<float*>(zb.data());
  backend::cuda::Stream stream;
  backend::cuda::Event start, stop;
  WrongCounter wrong(allocator);
  auto check = [&](BandwidthRow& row, kernels::Expect expect) {
    wrong.reset(stream);
    kernels::count_wrong(y, n, expect, wrong.get(), stream);
    row.checked = n;
    row.wrong = wrong.read(stream);
  };
  auto poison = [&] { CUDA_CHECK(cudaMemsetAsync(y, 0xff, bytes, stream)); };
  const std::int64_t two = 2 * std::int64_t(bytes), three = 3 * std::int64_t(bytes);

  kernels::fill_copy_source(x, n, stream);
  poison();
  BandwidthRow copy{"copy", two};
  time_device(copy, config, stream, start, stop, [&] { kernels::copy(x, y, n, stream); });
  check(copy, kernels::Expect::kCopy);
  r.rows.push_back(copy);
  if (hooks.on_row) hooks.on_row(r.rows.back());

  poison();
  BandwidthRow memcpy_row{"memcpy", two};
  time_device(memcpy_row, config, stream, start, stop,
              [&] { CUDA_CHECK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, stream)); });
  check(memcpy_row, kernels::Expect::kCopy);
  r.rows.push_back(memcpy_row);
  if (hooks.on_row) hooks.on_row(r.rows.back());

  kernels::fill_triad_inputs(x, z, n, stream);
  poison();
  BandwidthRow triad{"triad", three};
  time_device(triad, config, stream, start, stop,
              [&] { kernels::triad(y, x, z, kTriadScalar, n, stream); });
  check(triad, kernels::Expect::kTriad);
  r.rows.push_back(triad);
  if (hooks.on_row) hooks.on_row(r.rows.back());
  return r;
}

}  // namespace dlbench::micro
