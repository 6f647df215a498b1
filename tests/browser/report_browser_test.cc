// Opens a generated report in headless Chromium (Debian `chromium`) and reads back what its
// script recorded on <body>: how many charts there are, how many canvases got pixels, script
// errors, and how many resources the page fetched (none: the file is self-contained). Skips
// when chromium is not installed.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "bench/store/store.h"
#include "tests/report/gpu_fixture.h"
#include "tests/store/store_test_util.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

std::string find_chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

std::string body_attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  std::regex re("<body[^>]*\\s" + name + "=\"([^\"]*)\"");
  return std::regex_search(dom, m, re) ? m[1].str() : "";
}

testing::CommandResult dump_dom(const std::string& chromium, const std::string& dir,
                                const std::string& html) {
  return testing::run_command(
      "timeout 120 " + chromium +
      " --headless --no-sandbox --disable-gpu --disable-background-networking"
      " --disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage"
      " --user-data-dir=" +
      dir + "/profile --virtual-time-budget=5000 --dump-dom file://" + html);
}

// The page's script ran to its end, drew each of its (at least 4) charts, threw nothing and
// loaded nothing from the network.
void expect_every_chart_drawn(const std::string& dom) {
  std::string total = body_attribute(dom, "data-charts-total");
  ASSERT_FALSE(total.empty()) << "the report's script did not finish:\n" << dom.substr(0, 3000);
  EXPECT_GE(std::stoi(total), 4);  // throughput, speedup, memory, telemetry
  EXPECT_EQ(body_attribute(dom, "data-charts-drawn"), total);
  EXPECT_EQ(body_attribute(dom, "data-js-errors"), "");
  EXPECT_EQ(body_attribute(dom, "data-resources"), "0");
  // Bars carry their values (our own label plugin ran).
  EXPECT_GT(std::stoi("0" + body_attribute(dom, "data-value-labels")), 0);
}
TEST(ReportBrowserTest, EveryChartRendersWithoutErrorsOrNetwork) {
  std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed";
  std::string dir = testing::temp_folder("browser");
  std::string db = dir + "/r.db", html = dir + "/report.html";
  {
    // fp32 and fp16 of one workload (a speedup chart), telemetry with samples (timelines).
    auto s = store::open_store(db);
    store::RunRecord fp32 = testing::sample_run("resnet50", 400);
    fp32.precision = "fp32";
    s->save_run(fp32);
    s->save_run(testing::sample_run("resnet50", 900));
  }
  auto report = testing::dlbench("--db " + db + " report --runs 1,2 --out " + html);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  auto r = dump_dom(chromium, dir, html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_every_chart_drawn(r.out);
}

// The quick suite as an H100 writes it (four precisions, training and inference, one run
// throttled): the page opens with the machine, draws training and inference on charts of their
// own, both speedup charts and the power and clock telemetry, every bar with its value.
TEST(ReportBrowserTest, GpuReportReadsWithoutHovering) {
  std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed";
  std::string dir = testing::temp_folder("browser-gpu");
  std::string db = dir + "/r.db", html = dir + "/report.html";
  {
    auto s = store::open_store(db);
    // The machine's measured bf16 peak, as `micro gemm` stores it: its card shows it.
    store::RunRecord gemm = testing::h100_run("micro", "bf16", 0);
    gemm.model = "micro gemm";
    gemm.device = "cuda:0";
    gemm.metrics = {{"gemm/bf16/best", 712, "TFLOP/s", "8192x8192x8192"}};
    gemm.telemetry.clear();
    gemm.samples.clear();
    s->save_run(gemm);
    for (const char* mode : {"train", "infer"})
      for (const char* precision : {"fp32", "tf32", "fp16", "bf16"})
        s->save_run(testing::h100_run(mode, precision, 1000.0 * (1 + std::string(mode).size()),
                                      std::string(precision) == "fp16" ? 40 : 0));
  }
  auto report = testing::dlbench("--db " + db + " report --last 8 --out " + html);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  auto r = dump_dom(chromium, dir, html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_every_chart_drawn(r.out);
  EXPECT_NE(r.out.find("<h1>1x NVIDIA H100 80GB HBM3 \xC2\xB7 AMD EPYC 9654"), std::string::npos);
  for (const char* title :
       {"<h3>Training throughput (images/s, higher is better)</h3>",
        "<h3>Inference throughput (images/s, higher is better)</h3>",
        "<h3>Speedup over TF32 (same model, mode and batch)</h3>",
        "<h3>Speedup over FP32 (strict, no TF32) (same model, mode and batch)</h3>",
        "<h3>Clocks per run (MHz), against the maximum SM clock</h3>",
        "<h3>Board power per run (W), against the power limit</h3>",
        "<td class=\"flag\">throttled: power cap during 40 % of the run</td>",
        "<dt>Compute (measured, cuda:0)</dt>", "bf16 712.0 TFLOP/s (micro gemm run 1)",
        "fp8 not measured"})
    EXPECT_NE(r.out.find(title), std::string::npos) << title;
}

// A scaling sweep (1, 2 and 4 GPUs): the scaling chart, with its second axis, draws into its
// section.
TEST(ReportBrowserTest, ScalingChartRendersWithoutErrors) {
  std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed";
  std::string dir = testing::temp_folder("browser-scaling");
  std::string db = dir + "/r.db", html = dir + "/report.html";
  {
    auto s = store::open_store(db);
    for (int gpus : {1, 2, 4}) {
      store::RunRecord r = testing::sample_run("resnet50", 900.0 * gpus * (gpus == 1 ? 1 : 0.9));
      if (gpus > 1)
        r.result["data_parallel"] = {{"replicas", gpus},
                                     {"launch", "threads"},
                                     {"global_batch", 128 * gpus},
                                     {"replicas_identical", true},
                                     {"interconnect", "NVLink"}};
      s->save_run(r);
    }
  }
  auto report = testing::dlbench("--db " + db + " report --runs 1,2,3 --out " + html);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  auto r = dump_dom(chromium, dir, html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("<h2>Multi-GPU scaling</h2>"), std::string::npos);
  EXPECT_NE(r.out.find("id=\"scaling-chart-0\"><div class=\"card\">"), std::string::npos)
      << "the scaling chart was not drawn into its section";
  std::string total = body_attribute(r.out, "data-charts-total");
  ASSERT_FALSE(total.empty()) << "the report's script did not finish:\n" << r.out.substr(0, 2000);
  EXPECT_EQ(body_attribute(r.out, "data-charts-drawn"), total);
  EXPECT_EQ(body_attribute(r.out, "data-js-errors"), "");
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Hostile names as models, hosts, a failed run's error and the suite's name (the report's
// title): the page keeps its own three scripts, every chart still draws, and each name shows
// as text (in the dumped DOM, a text node's < > & read &lt; &gt; &amp;).
TEST(ReportBrowserTest, HostileNamesShowAsTextAndEveryChartRenders) {
  std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed";
  std::string dir = testing::temp_folder("browser-hostile");
  std::string db = dir + "/r.db", html = dir + "/report.html";
  const std::vector<std::string> names = {"<!--<script>", "</script><script>alert(1)</script>",
                                          "&amp;\"'", "caf\xE9"};
  {
    auto s = store::open_store(db);
    const std::string invocation = names[0] + "-1";
    s->save_suite({invocation, names[0], dir + "/s.toml", 1'790'000'000, 9, 0});
    int index = 0;
    for (std::size_t i = 0; i < names.size(); ++i)
      for (const char* precision : {"fp32", "fp16"}) {
        store::RunRecord r =
            testing::sample_run(names[i], std::string(precision) == "fp32" ? 400 : 900);
        r.precision = precision;
        r.machine.fingerprint = i % 2 ? "aa" : "bb";  // two machines: hosts in chart legends
        r.machine.hostname = names[(i + 1) % names.size()];
        r.suite = store::SuiteLink{invocation, names[0], index, std::to_string(index)};
        ++index;
        s->save_run(r);
      }
    store::RunRecord failed = testing::sample_run(names[1], 0);
    failed.status = "failed";
    failed.error = names[0] + " " + names[3];
    failed.suite = store::SuiteLink{invocation, names[0], index, std::to_string(index)};
    s->save_run(failed);
  }
  auto report = testing::dlbench("--db " + db + " report --last-suite --out " + html);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  auto r = dump_dom(chromium, dir, html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_every_chart_drawn(r.out);
  EXPECT_EQ(count(r.out, "<script"), 3u) << "a name was parsed as markup";
  EXPECT_NE(r.out.find("<td>&lt;!--&lt;script&gt;</td>"), std::string::npos);
  EXPECT_NE(r.out.find("<p class=\"scope\">dlbench report: suite &lt;!--&lt;script&gt;"),
            std::string::npos);
  EXPECT_NE(r.out.find("<td>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</td>"),
            std::string::npos);
  EXPECT_NE(r.out.find("<td>&amp;amp;\"'</td>"), std::string::npos);
  EXPECT_NE(r.out.find("<td>caf\xEF\xBF\xBD</td>"), std::string::npos);  // U+FFFD for 0xE9
}

}  // namespace
}  // namespace dlbench
