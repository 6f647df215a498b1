// A report --relative-to in headless Chromium: the relative chart draws with every other chart,
// with no script error and no network request. Skips when chromium is not installed.
#include <gtest/gtest.h>

#include <fstream>

#include "bench/store/export.h"
#include "bench/store/store.h"
#include "tests/browser/chromium.h"
#include "tests/report/gpu_fixture.h"
#include "tests/store/store_test_util.h"

namespace dlbench {
namespace {

using testing::body_attribute;

TEST(RelativeBrowserTest, RelativeChartRendersWithoutErrors) {
  const std::string chromium = testing::find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed";
  const std::string dir = testing::temp_folder("browser-relative");
  const std::string db = dir + "/r.db", html = dir + "/report.html", ref = dir + "/ref.json";
  {
    // This machine: the quick suite's shape; the reference (a file): half as fast, except fp32
    // training, which it lacks.
    auto s = store::open_store(db);
    std::vector<store::RunRecord> reference;
    for (const char* mode : {"train", "infer"})
      for (const char* precision : {"fp32", "tf32", "fp16", "bf16"}) {
        const store::RunRecord r =
            testing::h100_run(mode, precision, 1000.0 + 100 * reference.size());
        s->save_run(r);
        store::RunRecord half = r;
        half.throughput /= 2;
        half.machine.fingerprint = "ffeeddccbbaa99887766";
        half.machine.hostname = "reference-box";
        if (std::string(mode) != "train" || std::string(precision) != "fp32")
          reference.push_back(half);
      }
    std::ofstream out(ref);
    store::export_json(reference, out);
  }
  auto report =
      testing::dlbench("--db " + db + " report --last 8 --relative-to " + ref + " --out " + html);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  auto r = testing::dump_dom(chromium, dir, html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string total = body_attribute(r.out, "data-charts-total");
  ASSERT_FALSE(total.empty()) << "the report's script did not finish:\n" << r.out.substr(0, 3000);
  EXPECT_EQ(body_attribute(r.out, "data-charts-drawn"), total);
  EXPECT_EQ(body_attribute(r.out, "data-js-errors"), "");
  EXPECT_EQ(body_attribute(r.out, "data-resources"), "0");
  EXPECT_NE(r.out.find("<h2>Relative performance</h2>"), std::string::npos);
  EXPECT_NE(r.out.find("<h3>Throughput relative to " + ref + " = 1</h3>"), std::string::npos);
  EXPECT_NE(r.out.find("<td>geometric mean</td>"), std::string::npos);
  EXPECT_NE(r.out.find("no reference run"), std::string::npos);
}

}  // namespace
}  // namespace dlbench
