// dlbench micro transfer and p2p on GPUs: cudaMemcpyAsync between host and device, and
// cudaMemcpyPeerAsync between devices, timed with events on one stream.
#include <cstring>
#include <memory>
#include <vector>

#include "bench/micro/bandwidth_bench.h"
#include "bench/micro/micro_cuda.h"
#include "bench/micro/micro_kernels.h"
#include "bench/micro/micro_pattern.h"
#include "bench/micro/transfer_bench.h"
#include "engine/backend/cuda/cuda_backend.h"

namespace dlbench::micro {
namespace {

using backend::cuda::CudaAllocator;
using backend::cuda::Event;
using backend::cuda::Stream;

// Page-locked host memory: the copy engines read and write it directly.
class PinnedAllocator final : public DeviceAllocator {
 public:
  Device device() const override { return Device::cpu(); }
  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    CUDA_CHECK(cudaMallocHost(&p, bytes));
    return p;
  }
  void deallocate(void* p) noexcept override { CUDA_CHECK_NOTHROW(cudaFreeHost(p)); }
};

void fill_host_words(std::uint32_t* data, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) data[i] = transfer_word(std::uint64_t(i));
}
std::int64_t count_host_wrong(const std::uint32_t* data, std::int64_t count) {
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < count; ++i) wrong += data[i] != transfer_word(std::uint64_t(i));
  return wrong;
}

}  // namespace

TransferResult run_transfer_bench(int device, const TransferConfig& config,
                                  const TransferHooks& hooks) {
  const std::vector<std::int64_t> sizes = transfer_sizes(config);
  use_gpu(device);
  TransferResult r;
  r.device = "cuda:" + std::to_string(device);
  r.backend = gpu_description(device);
  r.config = config;
  if (hooks.on_start) hooks.on_start(r);
  const std::int64_t largest = sizes.back();
  CudaAllocator gpu(device);
  PinnedAllocator pinned;
  HostAllocator pageable;
  Buffer device_buffer(gpu, std::size_t(largest));
  Buffer pinned_buffer(pinned, std::size_t(largest)),
      pageable_buffer(pageable, std::size_t(largest));
  Stream stream;
  Event start, stop;
  WrongCounter wrong(gpu);

  for (const char* direction : {"h2d", "d2h"})
    for (const char* memory : {"pinned", "pageable"}) {
      const bool h2d = std::strcmp(direction, "h2d") == 0;
      Buffer& host_buffer = std::strcmp(memory, "pinned") == 0 ? pinned_buffer : pageable_buffer;
      auto* host = static_cast<std::uint32_t*>(host_buffer.data());
      auto* dev = static_cast<std::uint32_t*>(device_buffer.data());
      for (std::int64_t bytes : sizes) {
        const std::int64_t words = bytes / 4;
        // The source holds the pattern, the destination is poisoned (all bits zero).
        if (h2d) {
          fill_host_words(host, words);
          CUDA_CHECK(cudaMemsetAsync(dev, 0, std::size_t(bytes), stream));
        } else {
          kernels::fill_words(dev, words, stream);
          std::memset(host, 0, std::size_t(bytes));
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
        auto copy = [&] {
          if (h2d)
            CUDA_CHECK(
                cudaMemcpyAsync(dev, host, std::size_t(bytes), cudaMemcpyHostToDevice, stream));
          else
            CUDA_CHECK(
                cudaMemcpyAsync(host, dev, std::size_t(bytes), cudaMemcpyDeviceToHost, stream));
        };
        for (int i = 0; i < config.warmup; ++i) copy();
        const double ms = time_ms(stream, start, stop, [&] {
          for (int i = 0; i < config.iters; ++i) copy();
        });
        TransferRow row{direction, memory, bytes};
        row.time_us = ms * 1e3 / config.iters;
        row.gb_per_s = gb_per_s(double(bytes) * config.iters, ms * 1e-3);
        row.checked = words;
        if (h2d) {
          wrong.reset(stream);
          kernels::count_wrong(dev, words, kernels::Expect::kWords, wrong.get(), stream);
          row.wrong = wrong.read(stream);
        } else {
          CUDA_CHECK(cudaStreamSynchronize(stream));
          row.wrong = count_host_wrong(host, words);
        }
        r.wrong += row.wrong;
        r.rows.push_back(row);
        if (hooks.on_row) hooks.on_row(r.rows.back());
      }
    }
  return r;
}

P2pResult run_p2p_bench(const P2pConfig& config, const P2pHooks& hooks) {
  validate(config);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  P2pResult r;
  r.config = config;
  for (int i = 0; i < count; ++i) r.gpus.push_back(gpu_description(i));
  if (hooks.on_start) hooks.on_start(r);
  if (count < 2) return r;

  // Per GPU: an allocator, a stream, events, a source and a destination buffer, a counter.
  struct Gpu {
    explicit Gpu(int index, std::int64_t bytes)
        : allocator(index),
          src(allocator, std::size_t(bytes)),
          dst(allocator, std::size_t(bytes)),
          wrong(allocator) {}
    CudaAllocator allocator;
    Buffer src, dst;
    Stream stream;
    Event start, stop;
    WrongCounter wrong;
  };
  std::vector<std::unique_ptr<Gpu>> gpus;
  const std::int64_t n = config.bytes / 4;
  for (int i = 0; i < count; ++i) {
    use_gpu(i);
    gpus.push_back(std::make_unique<Gpu>(i, config.bytes));
    kernels::fill_copy_source(static_cast<float*>(gpus[i]->src.data()), n, gpus[i]->stream);
    CUDA_CHECK(cudaStreamSynchronize(gpus[i]->stream));
  }
  for (int s = 0; s < count; ++s)
    for (int d = 0; d < count; ++d) {
      if (s == d) continue;
      P2pPair p;
      p.src = s;
      p.dst = d;
      int can = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can, s, d));
      use_gpu(s);
      if (can) {
        const cudaError_t e = cudaDeviceEnablePeerAccess(d, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
          (void)cudaGetLastError();
        else
          CUDA_CHECK(e);
      }
      p.peer_access = can != 0;
      Gpu& from = *gpus[s];
      Gpu& to = *gpus[d];
      use_gpu(d);
      CUDA_CHECK(cudaMemsetAsync(to.dst.data(), 0xff, std::size_t(n) * 4, to.stream));
      CUDA_CHECK(cudaStreamSynchronize(to.stream));
      use_gpu(s);
      auto copy = [&](std::size_t bytes) {
        CUDA_CHECK(cudaMemcpyPeerAsync(to.dst.data(), d, from.src.data(), s, bytes, from.stream));
      };
      for (int i = 0; i < config.warmup; ++i) copy(std::size_t(n) * 4);
      const double ms = time_ms(from.stream, from.start, from.stop, [&] {
        for (int i = 0; i < config.iters; ++i) copy(std::size_t(n) * 4);
      });
      p.gb_per_s = gb_per_s(double(n) * 4 * config.iters, ms * 1e-3);
      const double latency_ms = time_ms(from.stream, from.start, from.stop, [&] {
        for (int i = 0; i < config.latency_iters; ++i) copy(4);
      });
      p.latency_us = latency_ms * 1e3 / config.latency_iters;
      use_gpu(d);
      to.wrong.reset(to.stream);
      kernels::count_wrong(to.dst.data(), n, kernels::Expect::kCopy, to.wrong.get(), to.stream);
      p.checked = n;
      p.wrong = to.wrong.read(to.stream);
      r.wrong += p.wrong;
      r.pairs.push_back(p);
      if (hooks.on_pair) hooks.on_pair(r.pairs.back());
    }
  return r;
}

}  // namespace dlbench::micro
