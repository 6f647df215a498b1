// bench/micro's pure parts (flags, shapes, rates, datasheet peaks, tolerances, records) and the
// CPU benchmarks themselves on tiny sizes; the measured peak read back from a store.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "bench/micro/bandwidth_bench.h"
#include "bench/micro/gemm_bench.h"
#include "bench/micro/micro_record.h"
#include "bench/micro/transfer_bench.h"
#include "bench/store/measured_peak.h"
#include "engine/core/error.h"
#include "tests/store/store_test_util.h"

namespace dlbench {
namespace {

using micro::GemmPrecision;

ErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::kInternal;  // nothing thrown
}

TEST(GemmBenchTest, ParsesPrecisionListsAndRefusesUnknownOnes) {
  EXPECT_EQ(micro::parse_gemm_precisions("all").size(), 7u);
  const auto two = micro::parse_gemm_precisions("bf16,fp8,bf16");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0], GemmPrecision::kBf16);
  EXPECT_EQ(two[1], GemmPrecision::kFp8);
  for (const char* bad : {"", "fp99", "bf16,", "BF16"})
    EXPECT_EQ(kind_of([&] { micro::parse_gemm_precisions(bad); }), ErrorKind::kUsage) << bad;
  EXPECT_STREQ(micro::rate_unit(GemmPrecision::kInt8), "TOP/s");
  EXPECT_STREQ(micro::rate_unit(GemmPrecision::kBf16), "TFLOP/s");
}

TEST(GemmBenchTest, ParsesSquareAndRectangularShapes) {
  const auto shapes = micro::parse_gemm_shapes("8192,16384x8192x4096");
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(micro::dims_text(shapes[0]), "8192x8192x8192");
  EXPECT_EQ(shapes[1].m, 16384);
  EXPECT_EQ(shapes[1].n, 8192);
  EXPECT_EQ(shapes[1].k, 4096);
  for (const char* bad : {"", "0", "12x", "1x2", "1x2x3x4", "-5", "axb", "9999999999", "2097152"})
    EXPECT_EQ(kind_of([&] { micro::parse_gemm_shapes(bad); }), ErrorKind::kUsage) << bad;
}

TEST(GemmBenchTest, DefaultShapesSuitEveryPrecision) {
  for (DeviceType d : {DeviceType::kCpu, DeviceType::kCuda}) {
    micro::GemmConfig c;
    c.precisions = micro::parse_gemm_precisions("all");
    c.shapes = micro::default_gemm_shapes(d);
    EXPECT_NO_THROW(micro::validate(c));  // int8 needs multiples of 4
  }
  // The GPU sweep holds the shapes the H100 peak is measured on.
  bool big = false;
  for (const auto& s : micro::default_gemm_shapes(DeviceType::kCuda))
    big = big || (s.m == 16384 && s.n == 8192 && s.k == 8192);
  EXPECT_TRUE(big);
}

TEST(GemmBenchTest, ValidateNamesTheFlag) {
  micro::GemmConfig c;
  c.precisions = {GemmPrecision::kInt8};
  c.shapes = micro::parse_gemm_shapes("6");
  try {
    micro::validate(c);
    FAIL() << "int8 at 6x6x6 passed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("multiples of 4"), std::string::npos) << e.what();
  }
  c.shapes = {};
  c.iters = 0;
  EXPECT_EQ(kind_of([&] { micro::validate(c); }), ErrorKind::kUsage);
}

TEST(GemmBenchTest, RatesAreOperationsOverTime) {
  const micro::GemmShape s{8192, 8192, 8192, ""};
  EXPECT_DOUBLE_EQ(micro::gemm_ops(s), 2.0 * 8192 * 8192 * 8192);
  // 1.1 TFLOP in 1.5 ms is 733 TFLOP/s.
  EXPECT_NEAR(micro::tera_rate(micro::gemm_ops(s), 1.5e-3), 733.0, 0.1);
  EXPECT_EQ(micro::tera_rate(1e12, 0), 0);
}

TEST(GemmBenchTest, DatasheetPeaksMatchTheWhitepapers) {
  // H100 SXM5 at NVIDIA's tensor clock: 989.4 TFLOP/s bf16, 1978.9 fp8 and int8, 494.7 tf32.
  auto h100 = [](GemmPrecision p) { return micro::datasheet_peak(9, 0, 132, 1830, p); };
  EXPECT_NEAR(h100(GemmPrecision::kBf16)->tera, 989.4, 0.1);
  EXPECT_NEAR(h100(GemmPrecision::kFp16)->tera, 989.4, 0.1);
  EXPECT_NEAR(h100(GemmPrecision::kFp8)->tera, 1978.9, 0.1);
  EXPECT_NEAR(h100(GemmPrecision::kInt8)->tera, 1978.9, 0.1);
  EXPECT_NEAR(h100(GemmPrecision::kTf32)->tera, 494.7, 0.1);
  // Its FP64 and FP32 figures are at the 1980 MHz max clock: 66.9 TFLOP/s each.
  EXPECT_NEAR(micro::datasheet_peak(9, 0, 132, 1980, GemmPrecision::kFp64)->tera, 66.9, 0.1);
  EXPECT_NEAR(micro::datasheet_peak(9, 0, 132, 1980, GemmPrecision::kFp32)->tera, 66.9, 0.1);
  EXPECT_NE(h100(GemmPrecision::kBf16)->basis.find("132 SMs x 1830 MHz x 4096"), std::string::npos);
  // A100: 312 bf16, 19.5 fp64 and fp32, 156 tf32, 624 int8, no fp8.
  auto a100 = [](GemmPrecision p) { return micro::datasheet_peak(8, 0, 108, 1410, p); };
  EXPECT_NEAR(a100(GemmPrecision::kBf16)->tera, 311.9, 0.1);
  EXPECT_NEAR(a100(GemmPrecision::kFp64)->tera, 19.5, 0.1);
  EXPECT_NEAR(a100(GemmPrecision::kTf32)->tera, 155.9, 0.1);
  EXPECT_NEAR(a100(GemmPrecision::kInt8)->tera, 623.8, 0.1);
  EXPECT_FALSE(a100(GemmPrecision::kFp8));
  // Elsewhere: not known, rather than a guess.
  EXPECT_FALSE(micro::datasheet_peak(8, 6, 84, 1860, GemmPrecision::kBf16));
  EXPECT_FALSE(micro::datasheet_peak(10, 0, 148, 1965, GemmPrecision::kBf16));
  EXPECT_FALSE(micro::datasheet_peak(9, 0, 0, 1830, GemmPrecision::kBf16));
}

TEST(GemmBenchTest, ToleranceIsTheOutputRoundingAndNanIsAlwaysWrong) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(std::fabs(nan - 3.0) <=
               micro::gemm_tolerance(GemmPrecision::kFp32, DeviceType::kCuda, 3.0, 10.0));
  EXPECT_EQ(micro::gemm_tolerance(GemmPrecision::kInt8, DeviceType::kCuda, 100, 500), 0);
  // bf16 out: 300 is within 2 x 2^-8 x 300 of a rounding of it.
  EXPECT_NEAR(micro::gemm_tolerance(GemmPrecision::kBf16, DeviceType::kCuda, 300, 0), 2.34, 0.01);
  // oneDNN writes bf16 products in f32.
  EXPECT_LT(micro::gemm_tolerance(GemmPrecision::kBf16, DeviceType::kCpu, 300, 0), 1e-4);
}

TEST(GemmBenchTest, SummaryTakesEachPrecisionsBestShape) {
  micro::GemmConfig c;
  c.precisions = {GemmPrecision::kFp32, GemmPrecision::kFp8};
  std::vector<micro::GemmRow> rows(3);
  rows[0].precision = rows[1].precision = GemmPrecision::kFp32;
  rows[0].shape = {64, 64, 64, ""};
  rows[0].rate = 1.5;
  rows[1].shape = {128, 128, 128, ""};
  rows[1].rate = 2.5;
  rows[2].precision = GemmPrecision::kFp8;
  rows[2].skipped = "no fp8 here";
  const auto s = micro::summarize(c, rows);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].best_rate, 2.5);
  EXPECT_EQ(s[0].best_shape.m, 128);
  EXPECT_EQ(s[1].best_rate, 0);
  EXPECT_EQ(s[1].skipped, "no fp8 here");
}

TEST(GemmBenchTest, CpuProductsAreCheckedAndRight) {
  micro::GemmConfig c;
  c.precisions = {GemmPrecision::kFp32, GemmPrecision::kBf16, GemmPrecision::kFp64};
  c.shapes = micro::parse_gemm_shapes("48,64x32x80");
  c.iters = 2;
  c.warmup = 1;
  c.min_seconds = 0;
  c.samples = 16;
  const micro::GemmResult r = micro::run_gemm_bench(Device::cpu(), c);
  ASSERT_EQ(r.rows.size(), 6u);
  EXPECT_EQ(r.wrong, 0);
  for (const auto& row : r.rows) {
    if (row.precision == GemmPrecision::kFp64) {
      EXPECT_NE(row.skipped.find("not measured on CPUs"), std::string::npos);
      continue;
    }
    if (row.precision == GemmPrecision::kBf16 && !micro::cpu_has_bf16()) {
      EXPECT_NE(row.skipped.find("not supported on this CPU"), std::string::npos);
      continue;
    }
    EXPECT_TRUE(row.skipped.empty()) << row.skipped;
    EXPECT_EQ(row.checked, 16);
    EXPECT_GT(row.rate, 0);
    EXPECT_EQ(row.max_error, 0);  // whole numbers in f32: exact
  }
  const auto m = micro::metrics(r);
  bool best = false;
  for (const auto& metric : m) best = best || metric.tag == store::gemm_best_tag("fp32");
  EXPECT_TRUE(best);
  EXPECT_EQ(micro::to_json(r)["wrong"], 0);
}

TEST(BandwidthBenchTest, CpuCopyAndTriadAreCheckedAndRight) {
  micro::BandwidthConfig c;
  c.array_bytes = 1 << 20;
  c.iters = 2;
  c.warmup = 1;
  const micro::BandwidthResult r = micro::run_bandwidth_bench(Device::cpu(), c, std::nullopt);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].test, "copy");
  EXPECT_EQ(r.rows[0].bytes_moved, 2 << 20);
  EXPECT_EQ(r.rows[1].test, "triad");
  EXPECT_EQ(r.rows[1].bytes_moved, 3 << 20);
  for (const auto& row : r.rows) {
    EXPECT_EQ(row.checked, (1 << 20) / 4);
    EXPECT_EQ(row.wrong, 0);
    EXPECT_GT(row.best_gb_per_s, 0);
    EXPECT_GE(row.best_gb_per_s, row.mean_gb_per_s);
  }
  EXPECT_FALSE(micro::to_json(r)["theoretical_gb_per_s"].is_number());
}

TEST(BandwidthBenchTest, RatesAndLimits) {
  EXPECT_DOUBLE_EQ(micro::gb_per_s(3e9, 1.0), 3.0);
  EXPECT_EQ(micro::gb_per_s(1, 0), 0);
  micro::BandwidthConfig c;
  c.array_bytes = 100;
  EXPECT_EQ(kind_of([&] { micro::validate(c); }), ErrorKind::kUsage);
  EXPECT_EQ(micro::default_array_bytes(DeviceType::kCuda), std::int64_t{1} << 30);
}

TEST(TransferBenchTest, SizesSweepInWholeWords) {
  micro::TransferConfig c;
  c.min_bytes = 6;
  c.max_bytes = 100;
  c.factor = 4;
  EXPECT_EQ(micro::transfer_sizes(c), (std::vector<std::int64_t>{4, 24, 96}));
  c.factor = 1;
  EXPECT_EQ(kind_of([&] { micro::transfer_sizes(c); }), ErrorKind::kUsage);
  c.factor = 2;
  c.min_bytes = 200;
  EXPECT_EQ(kind_of([&] { micro::transfer_sizes(c); }), ErrorKind::kUsage);
}

// Two stored gemm results of one machine: the newest ok one of the device gives the peak.
TEST(MeasuredPeakTest, TheNewestOkGemmOfTheMachineAndDeviceGivesThePeak) {
  const std::string folder = testing::temp_folder("measured-peak");
  auto db = store::open_store(folder + "/results.db");
  const nlohmann::json env = testing::sample_run().machine.environment;
  auto record = [&](double bf16, const std::string& device, std::int64_t wrong) {
    micro::MicroRecordInput in{"gemm",
                               device,
                               "bf16",
                               {{"config", {{"iters", 20}}}},
                               {{store::gemm_best_tag("bf16"), bf16, "TFLOP/s", "8192x8192x8192"}},
                               env,
                               wrong};
    return micro::micro_record(in);
  };
  EXPECT_FALSE(store::newest_measured_peak(*db, "box", "cuda:0", "bf16"));
  db->save_run(record(700, "cuda:0", 0));
  db->save_run(record(750, "cuda:0", 0));
  db->save_run(record(900, "cuda:0", 3));  // wrong elements: stored as failed, never a peak
  db->save_run(record(10, "cuda:1", 0));
  const auto peak = store::newest_measured_peak(*db, "box", "cuda:0", "bf16");
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->value, 750);
  EXPECT_EQ(peak->unit, "TFLOP/s");
  EXPECT_EQ(store::newest_measured_peak(*db, "box", "cuda:1", "bf16")->value, 10);
  EXPECT_FALSE(store::newest_measured_peak(*db, "box", "cuda:0", "fp8"));
  const auto runs = db->list_runs({});
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[1].status, "failed");
  EXPECT_EQ(runs[0].model, "micro gemm");
  EXPECT_EQ(runs[0].mode, "micro");
}

}  // namespace
}  // namespace dlbench
