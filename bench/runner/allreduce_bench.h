// dlbench micro allreduce: an nccl-tests-style all-reduce benchmark over dist::Communicator,
// so it measures whatever carries a data-parallel job's gradients: NCCL between the GPUs of one
// process (--gpus) or of an MPI job, or MPI itself between CPU processes.
//
// For each size: the time of one in-place sum all-reduce, the algorithm bandwidth
// algbw = bytes / time, the bus bandwidth busbw = algbw * 2(n-1)/n (what each link carries in
// a ring all-reduce, comparable across rank counts), and how many elements were wrong.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/backend/backend.h"
#include "engine/core/dtype.h"
#include "engine/dist/communicator.h"
#include "engine/dist/launch.h"

namespace dlbench::runner {

struct AllreduceConfig {
  std::int64_t min_bytes = 8;
  std::int64_t max_bytes = std::int64_t{1} << 30;
  std::int64_t factor = 2;  // each size is the previous one times this
  int iters = 20;           // timed all-reduces per size
  int warmup = 5;           // untimed all-reduces per size, before the timed ones
  DType dtype = DType::kF32;
};

// "8", "64K", "1M", "1G" (powers of 1024; an optional trailing B or iB) -> bytes. Throws
// Error(kUsage) naming `flag` on anything else.
std::int64_t parse_bytes(const std::string& text, const std::string& flag);
// "f32", "f16", "bf16"; Error(kUsage) otherwise.
DType parse_allreduce_dtype(const std::string& text);
// Error(kUsage) for an impossible configuration (min > max, factor < 2, iters < 1, ...).
void validate(const AllreduceConfig& config);

struct AllreduceSize {
  std::int64_t bytes = 0;  // count * element size
  std::int64_t count = 0;  // elements
};
// min, min*factor, min*factor^2, ... up to max, each rounded down to whole elements; a size
// under one element is skipped. Error(kUsage) when validate fails or no size is left.
std::vector<AllreduceSize> allreduce_sizes(const AllreduceConfig& config);

// Bus bandwidth of an all-reduce over `ranks` (nccl-tests' definition): 0 for one rank.
double bus_bandwidth(double algbw, int ranks);

// The data every rank sums: element i of rank r is (7i + r) mod m, small whole numbers whose
// sums over the ranks stay exact in the dtype (every partial sum too, in any order), so the
// result can be compared exactly. m is at most 16 and shrinks with the ranks so that
// (m - 1) * ranks never exceeds the largest whole number the dtype holds exactly.
int pattern_modulus(DType dtype, int ranks);
float pattern_value(std::int64_t i, int rank, int modulus);
float expected_sum(std::int64_t i, int ranks, int modulus);

struct AllreduceRow {
  std::int64_t bytes = 0, count = 0;
  double time_us = 0;       // per all-reduce: the slowest rank's
  double algbw_gbs = 0;     // bytes / time, GB/s (1e9 bytes)
  double busbw_gbs = 0;     // algbw * 2(n-1)/n
  std::uint64_t wrong = 0;  // wrong elements, summed over the ranks
};

struct AllreduceResult {
  bool root = false;         // this process holds rank 0 (only it prints)
  std::string communicator;  // "nccl 2.28.9", "mpi (Open MPI v4.1.4)"
  std::string launch;        // "single", "threads", "mpi"
  int ranks = 1;
  std::vector<std::string> devices;  // each rank's device, by rank
  std::string backend;               // rank 0's backend, "cuda:0 (NVIDIA H100 ...)"
  AllreduceConfig config;
  std::vector<AllreduceRow> rows;
  std::uint64_t wrong = 0;  // over every size and rank
  // The mean bus bandwidth over every size, as nccl-tests' "Avg bus bandwidth" (small sizes
  // pull it down: they measure launch latency); none without sizes.
  std::optional<double> avg_busbw_gbs;
  // The mean bus bandwidth over the sizes of at least kLargeBytes; none when no size was.
  std::optional<double> large_busbw_gbs;
  int large_sizes = 0;  // how many sizes that mean covers
};
constexpr std::int64_t kLargeBytes = std::int64_t{64} << 20;

// A rank's wrong elements at one size, and its first wrong one.
struct AllreduceMismatch {
  int rank = 0;
  std::int64_t bytes = 0;
  std::uint64_t wrong = 0;
  std::int64_t index = 0;
  double got = 0, expected = 0;
};

struct AllreduceHooks {
  // On rank 0 only: once the communicator is up (no rows yet), then after each size.
  std::function<void(const AllreduceResult&)> on_start;
  std::function<void(const AllreduceRow&)> on_row;
  // On any rank whose own result was wrong (before the counts are summed).
  std::function<void(const AllreduceMismatch&)> on_mismatch;
};

// Error(kUsage) for what plan cannot do: one CPU replica (nothing to all-reduce with; MPI
// ranks are the CPU's replicas), or f16/bf16 on CPUs (MPI sums f32).
void check_plan(const dist::LaunchPlan& plan, const AllreduceConfig& config);

// Runs the benchmark on every replica of plan and returns this process's view (every rank
// gathers the same numbers). A single replica on a GPU measures NCCL over one rank. Checks
// check_plan first.
AllreduceResult run_allreduce_bench(const dist::LaunchPlan& plan, const AllreduceConfig& config,
                                    const AllreduceHooks& hooks = {});

// One rank's part of run_allreduce_bench on a communicator of the caller's (tests give a fake
// one); launch is left empty. Every rank of comm must call it with the same config.
AllreduceResult run_allreduce_rank(backend::Backend& backend, dist::Communicator& comm,
                                   const AllreduceConfig& config, const AllreduceHooks& hooks = {});

nlohmann::json to_json(const AllreduceResult& result);

}  // namespace dlbench::runner
