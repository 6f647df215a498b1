// runs import and report --relative-to end to end: the shipped H100 reference imported as
// another machine, imported twice, a corrupt file refused with the database unchanged, CPU
// runs without an H100 counterpart, and the reference against itself (1.00 everywhere).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/store/store.h"
#include "engine/core/json_text.h"
#include "tests/store/store_test_util.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::dlbench;
using testing::temp_folder;

const std::string kReference = std::string(DLBENCH_SOURCE_DIR) + "/references/h100-sxm-80gb.json";
// The H100 the reference was measured on (its fingerprint's first 12 characters).
const char* kH100 = "c57e08e30761";

std::size_t stored_runs(const std::string& db) {
  auto r = dlbench("--db " + db + " --json runs list");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out)["runs"].size();
}

TEST(RelativeCliTest, ImportKeepsTheMachineAndSkipsWhatIsStored) {
  const std::string db = temp_folder("import-cli") + "/r.db";
  auto dry = dlbench("--db " + db + " runs import --dry-run " + kReference);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("would import 16 of 16 runs"), std::string::npos) << dry.out;
  auto first = dlbench("--db " + db + " runs import " + kReference);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("imported 16 of 16 runs"), std::string::npos) << first.out;
  auto second = dlbench("--db " + db + " runs import " + kReference);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("imported 0 of 16 runs"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("skipped 16 already stored"), std::string::npos) << second.out;
  auto list = dlbench("--db " + db + " runs list --machine " + kH100);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find(kH100), std::string::npos) << list.out;
  EXPECT_EQ(stored_runs(db), 16u);
}

TEST(RelativeCliTest, ACorruptFileIsRefusedAndStoresNothing) {
  const std::string dir = temp_folder("import-corrupt-cli");
  const std::string db = dir + "/r.db", bad = dir + "/bad.json";
  ASSERT_EQ(dlbench("--db " + db + " runs import " + kReference).exit_code, 0);
  const std::string text = testing::read_file(kReference);
  std::ofstream(bad) << text.substr(0, text.size() / 2);
  auto r = dlbench("--db " + db + " runs import " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("bad.json is not JSON"), std::string::npos) << r.err;
  EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;  // message and hint
  EXPECT_EQ(stored_runs(db), 16u);
  EXPECT_EQ(dlbench("--db " + db + " runs import " + dir + "/missing.json").exit_code, 3);
}

TEST(RelativeCliTest, CpuRunsHaveNoH100CounterpartAndSayIt) {
  const std::string db = temp_folder("relative-cpu") + "/r.db";
  {
    auto s = store::open_store(db);
    store::RunRecord r = testing::sample_run("resnet50", 12.5);
    r.device = "cpu";
    r.precision = "fp32";
    r.batch = 2;
    r.input_size = 32;
    s->save_run(r);
  }
  auto text = dlbench("--db " + db + " report --last --format text --relative-to h100-sxm-80gb");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Relative to h100-sxm-80gb"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("no reference run"), std::string::npos) << text.out;
  auto unknown = dlbench("--db " + db + " report --last --relative-to rtx-8000");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("dlbench runs list"), std::string::npos) << unknown.err;
  EXPECT_EQ(stored_runs(db), 1u);  // the reference was read, not stored
}

// The imported H100 runs against the same runs as a shipped name, a file and a stored machine:
// 1.00 for every workload and for their geometric mean.
TEST(RelativeCliTest, TheReferenceAgainstItselfIsOneEverywhere) {
  const std::string db = temp_folder("relative-self") + "/r.db";
  ASSERT_EQ(dlbench("--db " + db + " runs import " + kReference).exit_code, 0);
  for (const std::string& ref : {std::string("h100-sxm-80gb"), kReference, std::string(kH100)}) {
    auto r = dlbench("--db " + db + " report --machine " + kH100 + " --format json --relative-to " +
                     ref);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json doc = json::parse(r.out);
    const json* relative = nullptr;
    for (const json& t : doc["tables"])
      if (t["id"] == "relative") relative = &t;
    ASSERT_NE(relative, nullptr) << r.out.substr(0, 2000);
    ASSERT_EQ((*relative)["rows"].size(), 17u) << ref;  // 16 workloads and the geometric mean
    for (const json& row : (*relative)["rows"]) EXPECT_EQ(row["ratio"], 1.0) << dump_json(row);
  }
  EXPECT_EQ(stored_runs(db), 16u);
  // The HTML report's machine card carries the headline ratio.
  const std::string html = temp_folder("relative-self-html") + "/r.html";
  auto r = dlbench("--db " + db + " report --machine " + kH100 + " --relative-to h100-sxm-80gb " +
                   "--out " + html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string page = testing::read_file(html);
  const std::size_t card = page.find("<section class=\"machine card\">");
  const std::size_t headline = page.find("<strong>Relative to h100-sxm-80gb</strong>");
  ASSERT_NE(headline, std::string::npos);
  EXPECT_LT(card, headline);
  EXPECT_LT(headline, page.find("</section>", card));
  EXPECT_NE(page.find("1.00x (geometric mean of 16 workloads; 1.00x to 1.00x)", headline),
            std::string::npos);
}

}  // namespace
}  // namespace dlbench
