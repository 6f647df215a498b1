// The "Largest batch" section of a report in headless Chromium: the table and the chart of
// stored dlbench maxbatch results, with a model that does not fit even at batch 1 said in
// words, drawn with no script error and no network request. Skips when chromium is missing.
#include <gtest/gtest.h>

#include "bench/store/max_batch.h"
#include "bench/store/store.h"
#include "tests/browser/chromium.h"
#include "tests/report/gpu_fixture.h"
#include "tests/store/store_test_util.h"

namespace dlbench {
namespace {

using testing::body_attribute;

// A search on the fixture's H100: `batch` 0 for one that fit nothing.
store::RunRecord search(const std::string& model, Precision precision, std::int64_t batch) {
  result::MaxBatchResult m;
  m.config.model = model;
  m.config.precision = precision;
  m.config.launch.device = Device::cuda(0);
  m.config.input_size = 224;
  m.max_batch_cap = 65536;
  m.budget_bytes = 79.0 * (1ull << 30);
  m.budget_source = "free device memory";
  m.predicted = true;
  m.prediction = {2.0 * (1ull << 30), 0.14 * (1ull << 30)};
  m.predicted_batch = 550;
  m.batch = batch;
  m.throughput = batch > 0 ? 2500 : 0;
  m.measured_peak_bytes = batch > 0 ? 78.0 * (1ull << 30) : 0;
  m.predicted_peak_bytes = batch > 0 ? m.prediction.at(batch) : 0;
  m.attempts = {{batch + 1, false, 4.0, 0, 0, "cuda:0 is out of memory"}};
  if (batch > 0) m.attempts.push_back({batch, true, 9.0, 2500, m.measured_peak_bytes, ""});
  m.search_seconds = 13;
  store::RunRecord r = store::max_batch_record(m);
  r.machine = testing::h100_run("train", "fp32", 1).machine;
  return r;
}

TEST(MaxBatchBrowserTest, LargestBatchTableAndChartRender) {
  const std::string chromium = testing::find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed";
  const std::string dir = testing::temp_folder("browser-maxbatch");
  const std::string db = dir + "/r.db", html = dir + "/report.html";
  {
    auto s = store::open_store(db);
    s->save_run(search("resnet50", Precision::kFp32, 540));
    s->save_run(search("resnet50", Precision::kFp16, 1024));
    s->save_run(search("vgg16", Precision::kFp32, 0));
  }
  auto report = testing::dlbench("--db " + db + " report --last 3 --out " + html);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  auto r = testing::dump_dom(chromium, dir, html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string total = body_attribute(r.out, "data-charts-total");
  ASSERT_FALSE(total.empty()) << "the report's script did not finish:\n" << r.out.substr(0, 3000);
  EXPECT_NE(total, "0");
  EXPECT_EQ(body_attribute(r.out, "data-charts-drawn"), total);
  EXPECT_EQ(body_attribute(r.out, "data-js-errors"), "");
  EXPECT_EQ(body_attribute(r.out, "data-resources"), "0");
  EXPECT_NE(r.out.find("<h2>Largest batch</h2>"), std::string::npos);
  EXPECT_NE(r.out.find(">does not fit even at batch 1</td>"), std::string::npos);
  EXPECT_NE(r.out.find(">1024</td>"), std::string::npos);
}

}  // namespace
}  // namespace dlbench
