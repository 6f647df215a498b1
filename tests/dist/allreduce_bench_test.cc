// dlbench micro allreduce's pure parts (sizes, bandwidth, the summed pattern) and its measuring
// loop on the CPU backend against simulated peers: the fill, the check and the counts of
// wrong elements are the real code, only the other ranks are made up.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "bench/runner/allreduce_bench.h"
#include "engine/core/error.h"

namespace dlbench::runner {
namespace {

ErrorKind kind_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no Error thrown";
  return ErrorKind::kInternal;
}

TEST(AllreduceBenchTest, ParsesSizesInPowersOf1024) {
  EXPECT_EQ(parse_bytes("8", "--min-bytes"), 8);
  EXPECT_EQ(parse_bytes("64K", "--min-bytes"), 64 << 10);
  EXPECT_EQ(parse_bytes("1M", "--max-bytes"), 1 << 20);
  EXPECT_EQ(parse_bytes("1G", "--max-bytes"), std::int64_t{1} << 30);
  EXPECT_EQ(parse_bytes("3gib", "--max-bytes"), std::int64_t{3} << 30);
  EXPECT_EQ(parse_bytes("512kb", "--max-bytes"), 512 << 10);
  EXPECT_EQ(parse_bytes("100B", "--max-bytes"), 100);
  for (const char* bad :
       {"", "M", "1X", "-1", "1.5M", "1 M", "99999999999999999999", "9000000000000G"})
    EXPECT_EQ(kind_of([&] { parse_bytes(bad, "--max-bytes"); }), ErrorKind::kUsage) << bad;
}

TEST(AllreduceBenchTest, ErrorsNameTheFlag) {
  try {
    parse_bytes("1X", "--max-bytes");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--max-bytes '1X'"), std::string::npos) << e.what();
  }
}

TEST(AllreduceBenchTest, ParsesFloatDtypesOnly) {
  EXPECT_EQ(parse_allreduce_dtype("f32"), DType::kF32);
  EXPECT_EQ(parse_allreduce_dtype("f16"), DType::kF16);
  EXPECT_EQ(parse_allreduce_dtype("bf16"), DType::kBF16);
  for (const char* bad : {"f64", "fp16", "i32", ""})
    EXPECT_EQ(kind_of([&] { parse_allreduce_dtype(bad); }), ErrorKind::kUsage) << bad;
}

TEST(AllreduceBenchTest, DefaultSizesDoubleFrom8BytesTo1GiB) {
  const std::vector<AllreduceSize> sizes = allreduce_sizes(AllreduceConfig{});
  ASSERT_EQ(sizes.size(), 28u);  // 2^3 .. 2^30
  EXPECT_EQ(sizes.front().bytes, 8);
  EXPECT_EQ(sizes.front().count, 2);
  EXPECT_EQ(sizes.back().bytes, std::int64_t{1} << 30);
  EXPECT_EQ(sizes.back().count, std::int64_t{1} << 28);
}

TEST(AllreduceBenchTest, SizesAreWholeElementsAndSkipLessThanOne) {
  AllreduceConfig c;
  c.min_bytes = 3;
  c.max_bytes = 100;
  c.factor = 3;
  std::vector<std::int64_t> bytes;
  for (const AllreduceSize& s : allreduce_sizes(c)) {
    bytes.push_back(s.bytes);
    EXPECT_EQ(s.bytes, s.count * 4);
  }
  EXPECT_EQ(bytes, (std::vector<std::int64_t>{8, 24, 80}));  // 3 bytes hold no f32

  c.dtype = DType::kF16;
  c.min_bytes = 1;
  c.max_bytes = 8;
  c.factor = 2;
  bytes.clear();
  for (const AllreduceSize& s : allreduce_sizes(c)) bytes.push_back(s.bytes);
  EXPECT_EQ(bytes, (std::vector<std::int64_t>{2, 4, 8}));
}

TEST(AllreduceBenchTest, HugeMaxDoesNotOverflow) {
  AllreduceConfig c;
  c.min_bytes = 1;
  c.max_bytes = std::numeric_limits<std::int64_t>::max();
  c.factor = 3;
  const std::vector<AllreduceSize> sizes = allreduce_sizes(c);
  for (std::size_t i = 1; i < sizes.size(); ++i) EXPECT_GT(sizes[i].bytes, sizes[i - 1].bytes);
}

TEST(AllreduceBenchTest, RejectsImpossibleConfigurations) {
  auto with = [](auto change) {
    AllreduceConfig c;
    change(c);
    return kind_of([&] { allreduce_sizes(c); });
  };
  EXPECT_EQ(with([](AllreduceConfig& c) { c.min_bytes = 2 << 20, c.max_bytes = 1 << 20; }),
            ErrorKind::kUsage);
  EXPECT_EQ(with([](AllreduceConfig& c) { c.min_bytes = 0; }), ErrorKind::kUsage);
  EXPECT_EQ(with([](AllreduceConfig& c) { c.factor = 1; }), ErrorKind::kUsage);
  EXPECT_EQ(with([](AllreduceConfig& c) { c.iters = 0; }), ErrorKind::kUsage);
  EXPECT_EQ(with([](AllreduceConfig& c) { c.warmup = -1; }), ErrorKind::kUsage);
  EXPECT_EQ(with([](AllreduceConfig& c) { c.min_bytes = 1, c.max_bytes = 3; }),
            ErrorKind::kUsage);  // no whole f32
}

TEST(AllreduceBenchTest, BusBandwidthIsNcclTestsFormula) {
  EXPECT_DOUBLE_EQ(bus_bandwidth(10, 1), 0);
  EXPECT_DOUBLE_EQ(bus_bandwidth(10, 2), 10);
  EXPECT_DOUBLE_EQ(bus_bandwidth(10, 4), 15);
  EXPECT_DOUBLE_EQ(bus_bandwidth(10, 8), 17.5);
}

TEST(AllreduceBenchTest, PatternSumsAreExactInEveryDtype) {
  struct Limit {
    DType dtype;
    int exact;  // largest whole number the dtype holds exactly
  };
  for (Limit l : {Limit{DType::kF32, 1 << 24}, Limit{DType::kF16, 2048}, {DType::kBF16, 256}}) {
    for (int ranks : {1, 2, 3, 7, 8, 16, 17, 32, 100, 256, 1000}) {
      const int m = pattern_modulus(l.dtype, ranks);
      ASSERT_GE(m, 1);
      ASSERT_LE(m, 16);
      EXPECT_LE(static_cast<std::int64_t>(m - 1) * ranks, l.exact) << ranks;
      if (ranks <= l.exact) {
        EXPECT_GE(m, 2) << "the pattern must not be all zeros";
      }
      for (std::int64_t i = 0; i < 3 * m + 5; ++i) {
        double sum = 0;
        for (int r = 0; r < ranks; ++r) {
          const float v = pattern_value(i, r, m);
          ASSERT_GE(v, 0);
          ASSERT_LT(v, m);
          ASSERT_EQ(v, static_cast<float>(static_cast<int>(v)));
          sum += v;
        }
        ASSERT_EQ(expected_sum(i, ranks, m), static_cast<float>(sum)) << i << " " << ranks;
      }
    }
  }
  // Neighbouring elements and neighbouring ranks differ, so a shifted or swapped buffer shows.
  EXPECT_NE(pattern_value(0, 0, 16), pattern_value(1, 0, 16));
  EXPECT_NE(pattern_value(0, 0, 16), pattern_value(0, 1, 16));
}

// Rank 0 of `ranks`; the others are simulated: a sum adds their patterns on the host.
// corrupt >= 0 makes that element of every sum one too large.
class SimulatedPeers final : public dist::Communicator {
 public:
  SimulatedPeers(int ranks, DType dtype, std::int64_t corrupt = -1)
      : ranks_(ranks), modulus_(pattern_modulus(dtype, ranks)), corrupt_(corrupt) {}
  int rank() const override { return 0; }
  int size() const override { return ranks_; }
  std::string name() const override { return "simulated"; }
  void allreduce_sum(const Tensor& t) override {
    float* p = t.data_as<float>();
    for (std::int64_t i = 0; i < t.numel(); ++i)
      for (int r = 1; r < ranks_; ++r) p[i] += pattern_value(i, r, modulus_);
    if (corrupt_ >= 0 && corrupt_ < t.numel()) p[corrupt_] += 1;
    ++sums;
  }
  void wait() override {}
  void broadcast(const Tensor&, int) override {}
  std::vector<double> allgather(double v) override { return std::vector<double>(ranks_, v); }
  std::vector<std::uint64_t> allgather(std::uint64_t v) override {
    return std::vector<std::uint64_t>(ranks_, v);
  }
  void abort() noexcept override {}
  int sums = 0;

 private:
  int ranks_, modulus_;
  std::int64_t corrupt_;
};

TEST(AllreduceBenchTest, MeasuresEverySizeAndFindsNothingWrong) {
  auto cpu = backend::make_backend(Device::cpu());
  SimulatedPeers peers(3, DType::kF32);
  AllreduceConfig c;
  c.max_bytes = 64 << 10;
  c.iters = 3;
  c.warmup = 2;
  int started = 0, rows = 0;
  AllreduceHooks hooks;
  hooks.on_start = [&](const AllreduceResult& r) { started += r.rows.empty(); };
  hooks.on_row = [&](const AllreduceRow&) { ++rows; };
  hooks.on_mismatch = [](const AllreduceMismatch& m) { ADD_FAILURE() << "wrong at " << m.index; };
  const AllreduceResult r = run_allreduce_rank(*cpu, peers, c, hooks);
  EXPECT_TRUE(r.root);
  EXPECT_EQ(r.communicator, "simulated");
  EXPECT_EQ(r.ranks, 3);
  EXPECT_EQ(r.devices, (std::vector<std::string>{"cpu", "cpu", "cpu"}));
  EXPECT_EQ(started, 1);
  ASSERT_EQ(r.rows.size(), 14u);  // 8 B .. 64 KiB
  EXPECT_EQ(rows, 14);
  EXPECT_EQ(peers.sums, 14 * (3 + 2 + 1));  // timed, warm-up and the checked one
  EXPECT_EQ(r.wrong, 0u);
  EXPECT_FALSE(r.large_busbw_gbs);  // no size reached 64 MiB
  for (const AllreduceRow& row : r.rows) {
    EXPECT_GT(row.time_us, 0);
    EXPECT_NEAR(row.algbw_gbs, row.bytes / (row.time_us * 1e-6) / 1e9, 1e-9 * row.algbw_gbs);
    EXPECT_NEAR(row.busbw_gbs, row.algbw_gbs * 4.0 / 3.0, 1e-12 + 1e-9 * row.busbw_gbs);
  }
  const nlohmann::json doc = to_json(r);
  EXPECT_EQ(doc["results"].size(), 14u);
  EXPECT_EQ(doc["wrong"].get<std::uint64_t>(), 0u);
}

TEST(AllreduceBenchTest, CountsWrongElementsAcrossChunks) {
  auto cpu = backend::make_backend(Device::cpu());
  // 20 MiB of f32 spans more than one 4 Mi-element chunk of the fill and the check.
  const std::int64_t corrupt = (std::int64_t{9} << 19) + 3;
  SimulatedPeers peers(2, DType::kF32, corrupt);
  AllreduceConfig c;
  c.min_bytes = c.max_bytes = 20 << 20;
  c.iters = 1;
  c.warmup = 0;
  std::vector<AllreduceMismatch> seen;
  AllreduceHooks hooks;
  hooks.on_mismatch = [&](const AllreduceMismatch& m) { seen.push_back(m); };
  const AllreduceResult r = run_allreduce_rank(*cpu, peers, c, hooks);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].wrong, 2u);  // one wrong element, reported by each of the 2 ranks
  EXPECT_EQ(r.wrong, 2u);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].wrong, 1u);
  EXPECT_EQ(seen[0].index, corrupt);
  EXPECT_EQ(seen[0].got, seen[0].expected + 1);
  EXPECT_EQ(seen[0].bytes, 20 << 20);
}

TEST(AllreduceBenchTest, OneCpuRankOrHalfPrecisionOnCpuIsAUsageError) {
  dist::LaunchPlan single{LaunchMode::kSingle, {Device::cpu()}};
  EXPECT_EQ(kind_of([&] { check_plan(single, AllreduceConfig{}); }), ErrorKind::kUsage);
  dist::LaunchPlan mpi{LaunchMode::kMpi, {Device::cpu()}};
  EXPECT_NO_THROW(check_plan(mpi, AllreduceConfig{}));
  AllreduceConfig f16;
  f16.dtype = DType::kF16;
  EXPECT_EQ(kind_of([&] { check_plan(mpi, f16); }), ErrorKind::kUsage);
  dist::LaunchPlan gpus{LaunchMode::kThreads, {Device::cuda(0), Device::cuda(1)}};
  EXPECT_NO_THROW(check_plan(gpus, f16));
}

}  // namespace
}  // namespace dlbench::runner
