// Opens a generated report in headless Chromium (Debian `chromium`) and reads back what its
// script recorded on <body>: how many charts there are, how many canvases got pixels, script
// errors, and how many resources the page fetched (none: the file is self-contained). Skips
// when chromium is not installed.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <regex>

#include "bench/store/store.h"
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
  std::string total = body_attribute(r.out, "data-charts-total");
  ASSERT_FALSE(total.empty()) << "the report's script did not finish:\n" << r.out.substr(0, 2000);
  EXPECT_GE(std::stoi(total), 4);  // throughput, speedup, memory, telemetry
  EXPECT_EQ(body_attribute(r.out, "data-charts-drawn"), total);
  EXPECT_EQ(body_attribute(r.out, "data-js-errors"), "");
  EXPECT_EQ(body_attribute(r.out, "data-resources"), "0");
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

}  // namespace
}  // namespace dlbench
