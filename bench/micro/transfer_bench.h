// dlbench micro transfer: host-to-device and device-to-host copies over PCIe (or NVLink-C2C),
// from pinned (cudaMallocHost) and pageable (plain malloc) host memory, over a sweep of sizes.
// Each size is timed with events around cudaMemcpyAsync on one stream; GB/s = bytes / time
// (1e9 bytes). The destination of the last timed copy is checked word by word against the
// pattern the source holds (micro_pattern.h's transfer_word).
//
// p2p: every ordered pair of GPUs, cudaMemcpyPeerAsync of a large buffer (bandwidth) and of
// 4 bytes (latency), peer access enabled where the driver allows; the destination checked.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/store/records.h"

namespace dlbench::micro {

struct TransferConfig {
  std::int64_t min_bytes = std::int64_t{64} << 10;
  std::int64_t max_bytes = std::int64_t{256} << 20;
  std::int64_t factor = 4;
  int warmup = 2;
  int iters = 10;
};
// min, min*factor, ... up to max, each rounded down to whole 4-byte words. Error(kUsage) naming
// the flag for an impossible sweep (min < 4, min > max, factor < 2, iters < 1, warmup < 0).
std::vector<std::int64_t> transfer_sizes(const TransferConfig& config);

struct TransferRow {
  std::string direction;  // "h2d", "d2h"
  std::string memory;     // "pinned", "pageable"
  std::int64_t bytes = 0;
  double time_us = 0;  // per copy, mean over the timed ones
  double gb_per_s = 0;
  std::int64_t checked = 0, wrong = 0;  // 4-byte words
};

struct TransferResult {
  std::string device, backend;
  TransferConfig config;
  std::vector<TransferRow> rows;
  std::int64_t wrong = 0;
};

struct TransferHooks {
  std::function<void(const TransferResult&)> on_start;
  std::function<void(const TransferRow&)> on_row;
};

// Error(kResource) when the GPU does not exist; Error(kUsage) in a CPU-only build.
TransferResult run_transfer_bench(int device, const TransferConfig& config,
                                  const TransferHooks& hooks = {});
nlohmann::json to_json(const TransferResult& result);
// transfer/<direction>_<memory>/<bytes> per size and /best, in GB/s; transfer/wrong.
std::vector<store::MetricRecord> metrics(const TransferResult& result);

struct P2pConfig {
  std::int64_t bytes = std::int64_t{256} << 20;
  int warmup = 2;
  int iters = 10;
  int latency_iters = 100;
};
void validate(const P2pConfig& config);  // Error(kUsage) naming the flag

struct P2pPair {
  int src = 0, dst = 0;  // CUDA device indices
  bool peer_access = false;
  double gb_per_s = 0;
  double latency_us = 0;
  std::int64_t checked = 0, wrong = 0;  // f32 elements
  std::string code;  // how the two connect, as `dlbench info` ("NV18", "PHB"); the caller's
};

struct P2pResult {
  std::vector<std::string> gpus;  // "cuda:0 (NVIDIA H100 80GB HBM3)", by CUDA index
  P2pConfig config;
  std::vector<P2pPair> pairs;  // every ordered pair (src != dst)
  std::int64_t wrong = 0;
  const P2pPair* pair(int src, int dst) const;
};

struct P2pHooks {
  std::function<void(const P2pResult&)> on_start;
  std::function<void(const P2pPair&)> on_pair;
};

// Every GPU this process sees; with fewer than two, no pairs.
P2pResult run_p2p_bench(const P2pConfig& config, const P2pHooks& hooks = {});
nlohmann::json to_json(const P2pResult& result);
// p2p/<src>-<dst>/gb_per_s and /latency_us; p2p/wrong.
std::vector<store::MetricRecord> metrics(const P2pResult& result);

}  // namespace dlbench::micro
