#include "bench/runner/allreduce_bench.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <limits>
#include <mutex>

#include "engine/backend/backend.h"
#include "engine/core/error.h"
#include "engine/core/memory.h"
#include "engine/dist/replicas.h"
#if DLBENCH_HAVE_CUDA
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/dist/nccl_communicator.h"
#endif

namespace dlbench::runner {
namespace {

// Fills and checks move this many elements at a time (a multiple of the pattern's period).
constexpr std::int64_t kChunkElements = std::int64_t{1} << 22;
// The largest whole number each dtype holds exactly: 2^(significand bits + 1).
constexpr int kExactF32 = 1 << 24, kExactF16 = 1 << 11, kExactBF16 = 1 << 8;
constexpr int kMaxModulus = 16;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Tensor slice(const Tensor& t, std::int64_t offset, std::int64_t count) {
  auto* base =
      static_cast<char*>(t.data()) + offset * static_cast<std::int64_t>(size_of(t.dtype()));
  return Tensor(base, Shape{count}, t.dtype(), t.device());
}

std::uint64_t device_code(const Device& d) {
  return (d.type == DeviceType::kCuda ? std::uint64_t{1} << 32 : 0) |
         static_cast<std::uint32_t>(d.index);
}
Device device_of(std::uint64_t code) {
  return code >> 32 ? Device::cuda(static_cast<int>(code & 0xffffffffu)) : Device::cpu();
}

// One rank's buffers: the all-reduced data, this rank's pattern for one chunk (ready in the
// dtype, copied into the data chunk by chunk), an f32 chunk for casts, and the host side.
class RankData {
 public:
  RankData(backend::Backend& b, const AllreduceConfig& config, std::int64_t max_count, int rank,
           int ranks)
      : backend_(b), dtype_(config.dtype), modulus_(pattern_modulus(dtype_, ranks)) {
    const std::int64_t period = modulus_;
    chunk_ = std::min(kChunkElements, max_count + period - 1) / period * period;
    data_ = Buffer(b.allocator(), static_cast<std::size_t>(max_count) * size_of(dtype_));
    pattern_buf_ = Buffer(b.allocator(), static_cast<std::size_t>(chunk_) * size_of(dtype_));
    f32_buf_ = Buffer(b.allocator(), static_cast<std::size_t>(chunk_) * sizeof(float));
    host_.resize(static_cast<std::size_t>(chunk_));
    expected_.resize(host_.size());
    for (std::int64_t i = 0; i < chunk_; ++i) {
      host_[i] = pattern_value(i, rank, modulus_);
      expected_[i] = expected_sum(i, ranks, modulus_);
    }
    const Tensor pattern = tensor(pattern_buf_, dtype_, chunk_);
    if (dtype_ == DType::kF32) {
      b.from_host(host_.data(), pattern);
    } else {
      b.from_host(host_.data(), tensor(f32_buf_, DType::kF32, chunk_));
      b.cast(tensor(f32_buf_, DType::kF32, chunk_), pattern);
    }
  }

  Tensor data(std::int64_t count) const { return tensor(data_, dtype_, count); }

  void fill(const Tensor& t) {
    const Tensor pattern = tensor(pattern_buf_, dtype_, chunk_);
    for (std::int64_t at = 0; at < t.numel(); at += chunk_) {
      const std::int64_t n = std::min(chunk_, t.numel() - at);
      backend_.copy(slice(pattern, 0, n), slice(t, at, n));
    }
  }

  // Compares every element of t with its exact sum; returns the wrong ones and the first.
  AllreduceMismatch check(const Tensor& t) {
    AllreduceMismatch m;
    for (std::int64_t at = 0; at < t.numel(); at += chunk_) {
      const std::int64_t n = std::min(chunk_, t.numel() - at);
      Tensor part = slice(t, at, n);
      if (dtype_ != DType::kF32) {
        Tensor f32 = tensor(f32_buf_, DType::kF32, n);
        backend_.cast(part, f32);
        part = f32;
      }
      backend_.to_host(part, host_.data());
      for (std::int64_t i = 0; i < n; ++i) {
        if (host_[i] == expected_[i]) continue;  // NaN never passes
        if (m.wrong++ == 0) {
          m.index = at + i;
          m.got = host_[i];
          m.expected = expected_[i];
        }
      }
    }
    return m;
  }

 private:
  Tensor tensor(const Buffer& b, DType dtype, std::int64_t count) const {
    return Tensor(b.data(), Shape{count}, dtype, backend_.device());
  }

  backend::Backend& backend_;
  DType dtype_;
  int modulus_;
  std::int64_t chunk_ = 0;
  Buffer data_, pattern_buf_, f32_buf_;
  std::vector<float> host_, expected_;
};

}  // namespace

std::int64_t parse_bytes(const std::string& text, const std::string& flag) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string unit = lower(text.substr(digits));
  std::int64_t scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  if (unit == "k" || unit == "kb" || unit == "kib") scale = std::int64_t{1} << 10;
  if (unit == "m" || unit == "mb" || unit == "mib") scale = std::int64_t{1} << 20;
  if (unit == "g" || unit == "gb" || unit == "gib") scale = std::int64_t{1} << 30;
  const std::int64_t limit = std::numeric_limits<std::int64_t>::max();
  if (digits == 0 || digits > 18 || scale == 0 ||
      std::stoll(text.substr(0, digits)) > limit / scale)
    throw Error(
        ErrorKind::kUsage, flag + " '" + text + "' is not a size in bytes",
        "give a whole number with an optional K, M or G (powers of 1024), e.g. " + flag + " 64M");
  return std::stoll(text.substr(0, digits)) * scale;
}

DType parse_allreduce_dtype(const std::string& text) {
  if (text == "f32") return DType::kF32;
  if (text == "f16") return DType::kF16;
  if (text == "bf16") return DType::kBF16;
  throw Error(ErrorKind::kUsage, "--dtype '" + text + "' is not an all-reduce dtype",
              "use f32, f16 or bf16");
}

void validate(const AllreduceConfig& c) {
  auto usage = [](const std::string& what, const std::string& hint) {
    throw Error(ErrorKind::kUsage, what, hint);
  };
  if (c.min_bytes < 1) usage("--min-bytes must be at least 1", "for example --min-bytes 8");
  if (c.max_bytes < c.min_bytes)
    usage("--min-bytes " + std::to_string(c.min_bytes) + " is larger than --max-bytes " +
              std::to_string(c.max_bytes),
          "give --min-bytes <= --max-bytes, e.g. --min-bytes 8 --max-bytes 1G");
  if (c.factor < 2) usage("--factor must be at least 2", "for example --factor 2");
  if (c.iters < 1) usage("--iters must be at least 1", "for example --iters 20");
  if (c.warmup < 0) usage("--warmup cannot be negative", "for example --warmup 5");
  if (c.dtype == DType::kI32 || c.dtype == DType::kI64)
    usage(std::string("--dtype ") + to_string(c.dtype) + " is not summed here",
          "use f32, f16 or bf16");
}

std::vector<AllreduceSize> allreduce_sizes(const AllreduceConfig& c) {
  validate(c);
  const auto element = static_cast<std::int64_t>(size_of(c.dtype));
  std::vector<AllreduceSize> sizes;
  for (std::int64_t bytes = c.min_bytes;; bytes *= c.factor) {
    const std::int64_t count = bytes / element;
    if (count > 0) sizes.push_back({count * element, count});
    if (bytes > c.max_bytes / c.factor) break;  // the next size would pass max_bytes
  }
  if (sizes.empty())
    throw Error(ErrorKind::kUsage,
                "no size from --min-bytes to --max-bytes holds one " +
                    std::string(to_string(c.dtype)) + " element (" + std::to_string(element) +
                    " bytes)",
                "raise --max-bytes");
  return sizes;
}

double bus_bandwidth(double algbw, int ranks) {
  return ranks < 2 ? 0.0 : algbw * 2.0 * (ranks - 1) / ranks;
}

int pattern_modulus(DType dtype, int ranks) {
  const int exact = dtype == DType::kF16    ? kExactF16
                    : dtype == DType::kBF16 ? kExactBF16
                                            : kExactF32;
  return std::clamp(exact / std::max(ranks, 1) + 1, 1, kMaxModulus);
}

float pattern_value(std::int64_t i, int rank, int modulus) {
  return static_cast<float>((7 * (i % modulus) + rank % modulus) % modulus);
}

float expected_sum(std::int64_t i, int ranks, int modulus) {
  // Every run of `modulus` consecutive ranks contributes 0 + 1 + ... + (modulus - 1).
  const std::int64_t cycles = ranks / modulus;
  std::int64_t sum = cycles * modulus * (modulus - 1) / 2;
  for (int r = static_cast<int>(cycles * modulus); r < ranks; ++r)
    sum += static_cast<std::int64_t>(pattern_value(i, r, modulus));
  return static_cast<float>(sum);
}

void check_plan(const dist::LaunchPlan& plan, const AllreduceConfig& config) {
  const bool on_cpu = plan.devices.empty() || plan.devices[0].type == DeviceType::kCpu;
  if (on_cpu && plan.mode == LaunchMode::kSingle)
    throw Error(ErrorKind::kUsage, "an all-reduce on the CPU needs 2+ MPI ranks (one process each)",
                "mpirun -np 2 dlbench micro allreduce --device cpu --dist mpi");
  if (on_cpu && config.dtype != DType::kF32)
    throw Error(
        ErrorKind::kUsage,
        std::string("--dtype ") + to_string(config.dtype) + " needs GPUs: MPI sums f32 only",
        "use --dtype f32 with --device cpu");
}

AllreduceResult run_allreduce_rank(backend::Backend& b, dist::Communicator& comm,
                                   const AllreduceConfig& config, const AllreduceHooks& hooks) {
  const std::vector<AllreduceSize> sizes = allreduce_sizes(config);
  const int ranks = comm.size();
  AllreduceResult mine;
  mine.root = comm.rank() == 0;
  mine.communicator = comm.name();
  mine.ranks = ranks;
  mine.backend = b.name();
  mine.config = config;
  for (std::uint64_t code : comm.allgather(device_code(b.device())))
    mine.devices.push_back(to_string(device_of(code)));
  if (mine.root && hooks.on_start) hooks.on_start(mine);

  RankData data(b, config, sizes.back().count, comm.rank(), ranks);
  double large_sum = 0;
  int large_count = 0;
  for (const AllreduceSize& size : sizes) {
    const Tensor t = data.data(size.count);
    data.fill(t);
    for (int i = 0; i < config.warmup; ++i) comm.allreduce_sum(t);
    comm.wait();
    b.synchronize();
    comm.barrier();
    // Host wall clock around device-synchronized iterations, and the slowest rank's: a
    // training step waits for the last rank's all-reduce, so that is the time that counts
    // (device events would time one rank's stream and miss the wait for the others).
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < config.iters; ++i) comm.allreduce_sum(t);
    comm.wait();
    b.synchronize();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    const std::vector<double> seconds = comm.allgather(elapsed.count() / config.iters);

    // In place, the timed sums kept growing; the checked one starts from the pattern again.
    data.fill(t);
    comm.allreduce_sum(t);
    comm.wait();
    AllreduceMismatch mismatch = data.check(t);
    mismatch.rank = comm.rank();
    mismatch.bytes = size.bytes;
    if (mismatch.wrong > 0 && hooks.on_mismatch) hooks.on_mismatch(mismatch);

    AllreduceRow row{size.bytes, size.count};
    row.time_us = *std::max_element(seconds.begin(), seconds.end()) * 1e6;
    if (row.time_us > 0) row.algbw_gbs = static_cast<double>(size.bytes) / row.time_us * 1e-3;
    row.busbw_gbs = bus_bandwidth(row.algbw_gbs, ranks);
    for (std::uint64_t w : comm.allgather(mismatch.wrong)) row.wrong += w;
    mine.rows.push_back(row);
    mine.wrong += row.wrong;
    if (size.bytes >= kLargeBytes) {
      large_sum += row.busbw_gbs;
      ++large_count;
    }
    if (mine.root && hooks.on_row) hooks.on_row(row);
  }
  if (large_count > 0) mine.large_busbw_gbs = large_sum / large_count;
  mine.large_sizes = large_count;
  if (!mine.rows.empty()) {
    double sum = 0;
    for (const AllreduceRow& row : mine.rows) sum += row.busbw_gbs;
    mine.avg_busbw_gbs = sum / static_cast<double>(mine.rows.size());
  }
  return mine;
}

AllreduceResult run_allreduce_bench(const dist::LaunchPlan& plan, const AllreduceConfig& config,
                                    const AllreduceHooks& hooks) {
  allreduce_sizes(config);
  check_plan(plan, config);
  AllreduceResult result;
  std::mutex mutex;
  AllreduceHooks locked = hooks;  // replica threads report mismatches one at a time
  if (hooks.on_start)
    locked.on_start = [&](const AllreduceResult& r) {
      AllreduceResult with_launch = r;
      with_launch.launch = to_string(plan.mode);
      hooks.on_start(with_launch);
    };
  if (hooks.on_mismatch)
    locked.on_mismatch = [&](const AllreduceMismatch& m) {
      std::lock_guard<std::mutex> lock(mutex);
      hooks.on_mismatch(m);
    };
  dist::run_replicas(plan, [&](dist::Replica& replica) {
    dist::Communicator* comm = replica.communicator;
    std::unique_ptr<dist::Communicator> single;  // NCCL over one GPU: no link, still a cost
#if DLBENCH_HAVE_CUDA
    if (comm == nullptr) {
      auto* cuda = dynamic_cast<backend::cuda::CudaBackend*>(&replica.backend);
      DLBENCH_CHECK(cuda != nullptr, "a single replica without a communicator runs on a GPU");
      backend::cuda::CudaBackend* one[] = {cuda};
      single = std::move(dist::make_local_nccl_communicators(one).front());
      comm = single.get();
    }
#endif
    DLBENCH_CHECK(comm != nullptr, "an all-reduce needs a communicator");
    AllreduceResult mine = run_allreduce_rank(replica.backend, *comm, config, locked);
    mine.launch = to_string(plan.mode);
    // Every local replica gathers the same numbers; rank 0's view (or an MPI rank's own) wins.
    if (mine.root || plan.mode == LaunchMode::kMpi) {
      std::lock_guard<std::mutex> lock(mutex);
      result = std::move(mine);
    }
  });
  return result;
}

nlohmann::json to_json(const AllreduceResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const AllreduceRow& row : r.rows)
    rows.push_back({{"bytes", row.bytes},
                    {"count", row.count},
                    {"time_us", row.time_us},
                    {"algbw_gb_per_s", row.algbw_gbs},
                    {"busbw_gb_per_s", row.busbw_gbs},
                    {"wrong", row.wrong}});
  nlohmann::json doc = {{"benchmark", "allreduce"},
                        {"communicator", r.communicator},
                        {"launch", r.launch},
                        {"ranks", r.ranks},
                        {"devices", r.devices},
                        {"backend", r.backend},
                        {"dtype", to_string(r.config.dtype)},
                        {"min_bytes", r.config.min_bytes},
                        {"max_bytes", r.config.max_bytes},
                        {"factor", r.config.factor},
                        {"iterations", r.config.iters},
                        {"warmup", r.config.warmup},
                        {"results", rows},
                        {"wrong", r.wrong}};
  doc["avg_busbw_gb_per_s_64mib_and_up"] =
      r.large_busbw_gbs ? nlohmann::json(*r.large_busbw_gbs) : nlohmann::json(nullptr);
  doc["avg_busbw_gb_per_s"] =  // every size, as nccl-tests averages
      r.avg_busbw_gbs ? nlohmann::json(*r.avg_busbw_gbs) : nlohmann::json(nullptr);
  return doc;
}

}  // namespace dlbench::runner
