// Text that is not UTF-8 (a Latin-1 file name, an argument, a name in the database) in every
// output end to end: each JSON output is written whole and parses, with U+FFFD where the
// invalid bytes were; commands keep their own exit codes; the terminal, CSV, Markdown and HTML
// outputs do not fail either.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/store/store.h"
#include "engine/core/json_text.h"
#include "tests/store/store_test_util.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::dlbench;
using testing::temp_folder;

// "café" in Latin-1: the é is the single byte 0xE9, which is not UTF-8.
const std::string kLatin1 = "caf\xE9";
// What JSON outputs hold instead: the é became U+FFFD.
const std::string kReplaced = "caf\xEF\xBF\xBD";

using testing::read_file;

// The parsed output, or a failure naming the command and what it printed.
json parsed(const testing::CommandResult& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 0) << what << "\n" << r.err;
  json doc = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(doc.is_discarded()) << what << " printed no JSON:\n" << r.out << r.err;
  return doc;
}

TEST(NonUtf8TextTest, MonitorKeepsTheCommandsExitCodeAndWritesValidJson) {
  std::string dir = temp_folder("text-monitor");
  std::string out = dir + "/m.json";
  auto r = dlbench("--json monitor --gpus none --json " + out + " -- sh -c 'exit 5' '" + kLatin1 +
                   ".txt'");
  EXPECT_EQ(r.exit_code, 5) << r.err;
  json file = json::parse(read_file(out), nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(file.is_discarded()) << "m.json: " << read_file(out);
  ASSERT_EQ(file["command"].size(), 4u);
  EXPECT_EQ(file["command"][3], kReplaced + ".txt");
  EXPECT_EQ(file["exit_code"], 5);
  json printed = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(printed.is_discarded()) << r.out;
  EXPECT_EQ(printed["command"][3], kReplaced + ".txt");
}

// A database whose runs carry Latin-1 bytes in every kind of text field.
std::string latin1_database(const std::string& dir) {
  std::string db = dir + "/r.db";
  auto s = store::open_store(db);
  s->save_suite({kLatin1 + "-1", kLatin1, dir + "/" + kLatin1 + ".toml", 1'790'000'000, 2, 0});
  for (int i = 0; i < 2; ++i) {
    store::RunRecord r = testing::sample_run("resnet50", 400 + 500 * i);
    r.precision = i ? "fp16" : "fp32";
    r.suite = store::SuiteLink{kLatin1 + "-1", kLatin1, i, "key" + std::to_string(i)};
    r.machine.hostname = "h\xF4te";
    r.machine.environment["host"]["os"] = "Syst\xE8me";
    r.config["data"] = "/data/" + kLatin1;
    r.metrics.push_back({"custom/" + kLatin1, 1.0, "\xB5s", "micro\xB5"});
    s->save_run(r);
  }
  store::RunRecord failed = testing::sample_run(kLatin1 + "net", 0);
  failed.status = "failed";
  failed.error = "cannot open '/data/" + kLatin1 + "': \xFF\xFE";
  s->save_run(failed);
  return db;
}

TEST(NonUtf8TextTest, StoredLatin1NamesLeaveEveryJsonOutputWhole) {
  std::string dir = temp_folder("text-store");
  std::string db = latin1_database(dir);
  std::string with_db = "--db " + db + " ";

  json list = parsed(dlbench(with_db + "--json runs list"), "runs list --json");
  ASSERT_EQ(list["runs"].size(), 3u);
  EXPECT_EQ(list["runs"][0]["model"], kReplaced + "net");
  EXPECT_EQ(list["runs"][1]["suite"]["name"], kReplaced);
  EXPECT_EQ(list["runs"][1]["machine"]["hostname"], "h\xEF\xBF\xBDte");

  json exported = parsed(dlbench(with_db + "runs export --format json"), "runs export");
  ASSERT_EQ(exported["runs"].size(), 3u);
  EXPECT_EQ(exported["runs"][0]["error"],
            "cannot open '/data/" + kReplaced + "': \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(exported["runs"][1]["config"]["data"], "/data/" + kReplaced);

  json shown = parsed(dlbench(with_db + "--json runs show 3"), "runs show --json");
  EXPECT_EQ(shown["model"], kReplaced + "net");

  json report = parsed(dlbench(with_db + "report --runs 1,2,3 --format json"), "report json");
  EXPECT_FALSE(report["tables"].empty());
  json suite = parsed(dlbench(with_db + "report --last-suite --format json"), "suite report");
  EXPECT_NE(suite["title"].get<std::string>().find(kReplaced), std::string::npos);
  parsed(dlbench(with_db + "compare 1 2 --format json"), "compare json");
}

TEST(NonUtf8TextTest, StoredLatin1NamesLeaveTheOtherOutputsWorking) {
  std::string dir = temp_folder("text-other");
  std::string db = latin1_database(dir);
  std::string with_db = "--db " + db + " ";
  for (const char* args :
       {"runs list", "runs show 3", "runs export --format csv", "report --runs 1,2,3 --format csv",
        "report --runs 1,2,3 --format md", "report --runs 1,2,3 --format text", "compare 1 2"}) {
    auto r = dlbench(with_db + args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    EXPECT_FALSE(r.out.empty()) << args;
  }
  std::string html = dir + "/report.html";
  auto r = dlbench(with_db + "report --runs 1,2,3 --out " + html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string page = read_file(html);
  EXPECT_EQ(valid_utf8(page), page) << "the HTML report is not valid UTF-8";
  EXPECT_NE(page.find("h\xEF\xBF\xBDte"), std::string::npos);
}

// The case end to end: a suite file whose name (and so the suite's) is Latin-1.
TEST(NonUtf8TextTest, SuiteFromALatin1FileNameRunsAndReports) {
  std::string dir = temp_folder("text-suite");
  std::string db = dir + "/r.db", suite = dir + "/" + kLatin1 + ".toml";
  std::ofstream(suite) << "[defaults]\ndevice = \"cpu\"\nwarmup = 1\nsteps = 1\n"
                          "[[run]]\nmodel = \"resnet50\"\ninput = 32\nbatch = 2\n";
  auto ran = dlbench("--db " + db + " suite '" + suite + "'");
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  json list = parsed(dlbench("--db " + db + " --json runs list"), "runs list --json");
  ASSERT_EQ(list["runs"].size(), 1u);
  EXPECT_EQ(list["runs"][0]["suite"]["name"], kReplaced);
  parsed(dlbench("--db " + db + " runs export --format json"), "runs export");
  parsed(dlbench("--db " + db + " report --last-suite --format json"), "report json");
  auto html = dlbench("--db " + db + " report --last-suite --out " + dir + "/report.html");
  EXPECT_EQ(html.exit_code, 0) << html.err;
}

}  // namespace
}  // namespace dlbench
