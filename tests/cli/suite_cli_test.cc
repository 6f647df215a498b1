// Suite files are checked whole before anything runs (issue 15, classes 2 and 7): a refused
// suite exits 2 with "FILE:LINE: what" and a hint in the file's terms (never a --flag), and
// leaves the results database as it was (not created, or byte for byte unchanged).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tests/store/store_test_util.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

namespace fs = std::filesystem;
using testing::dlbench;

// Known good lines for the tests to break one at a time.
const char* const kHead = "name = \"tiny\"\n[defaults]\ndevice = \"cpu\"\nwarmup = 0\nsteps = 1\n";
const char* const kRun = "[[run]]\nmodel = \"resnet50\"\ninput = 32\nbatch = 2\n";

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class SuiteCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = testing::temp_folder(std::string("suite-") + info->name());
    db_ = dir_ + "/r.db";
    file_ = dir_ + "/s.toml";
  }

  void write(const std::string& text) { std::ofstream(file_, std::ios::binary) << text; }

  testing::CommandResult suite(const std::string& flags = "") {
    return dlbench("--db " + db_ + " suite " + file_ + (flags.empty() ? "" : " " + flags));
  }

  // The suite is refused as a usage error at FILE:LINE with `words` in the message, the
  // database is not created, and no hint names a command-line flag.
  void expect_refused(const std::string& text, int line, const std::string& words) {
    write(text);
    auto r = suite();
    EXPECT_EQ(r.exit_code, 2) << text << "\n" << r.err;
    EXPECT_NE(r.err.find("dlbench: " + file_ + ":" + std::to_string(line) + ": "),
              std::string::npos)
        << "expected line " << line << " of:\n"
        << text << "\n"
        << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << text << "\n" << r.err;
    EXPECT_EQ(r.err.find("--"), std::string::npos) << "a flag in a suite's error:\n" << r.err;
    EXPECT_FALSE(fs::exists(db_)) << text << "\ncreated the database";
  }

  std::string dir_, db_, file_;
};

// Class 2: nesting that exhausted toml++'s stack (exit 139) is refused before parsing.

std::string repeat(const std::string& part, int n, const std::string& separator) {
  std::string text;
  for (int i = 0; i < n; ++i) text += (i ? separator : "") + part;
  return text;
}

TEST_F(SuiteCliTest, DeepDottedKeyIsRefusedBeforeParsing) {
  expect_refused(std::string(kHead) + kRun + repeat("a", 50'000, ".") + " = 1\n", 10,
                 "nested more than 64 levels");
}

TEST_F(SuiteCliTest, DeepTableHeaderIsRefusedBeforeParsing) {
  expect_refused("# a comment\n\n[" + repeat("t", 50'000, ".") + "]\nx = 1\n", 3,
                 "nested more than 64 levels");
}

TEST_F(SuiteCliTest, DeepArraysAndInlineTablesAreRefusedBeforeParsing) {
  expect_refused("x = " + std::string(50'000, '[') + std::string(50'000, ']') + "\n", 1,
                 "nested more than 64 levels");
  expect_refused("x = " + repeat("{a=", 50'000, "") + "1" + std::string(50'000, '}') + "\n", 1,
                 "nested more than 64 levels");
  // Inline dotted keys add to the brackets around them.
  expect_refused("x = [{" + repeat("b", 70, ".") + " = 1}]\n", 1, "nested more than 64 levels");
}

TEST_F(SuiteCliTest, BracketsAndDotsInStringsAndCommentsDoNotCount) {
  write("description = \"" + std::string(200, '[') + repeat("a", 99, ".") + "\"\n# " +
        std::string(200, '{') + "\n" + kHead + kRun);
  auto r = suite("--check");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(SuiteCliTest, FileOverOneMebibyteIsRefusedNamingTheLimit) {
  write(std::string(kHead) + kRun + "# " + std::string(1 << 20, 'x') + "\n");
  auto r = suite();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(file_ + ": larger than 1 MiB, the limit for a suite file"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(db_));
}

TEST_F(SuiteCliTest, InvalidUtf8AndNulBytesAreRefusedWithTheirLine) {
  expect_refused(std::string(kHead) + "description = \"caf\xe9\"\n" + kRun, 6,
                 "not UTF-8 (byte 0xe9 in column 19)");
  expect_refused(std::string(kHead) + kRun + "# \xed\xa0\x80 a surrogate\n", 10, "not UTF-8");
  expect_refused(std::string(kHead) + std::string("steps = 1\0\n", 11) + kRun, 6,
                 "a NUL byte in column 10");
}

// Class 7: every key known, every value checked, in the file's terms.

TEST_F(SuiteCliTest, UnknownTopLevelKeyIsRefusedWithASuggestion) {
  expect_refused(std::string("nmae = \"x\"\n") + kRun, 1, "unknown key 'nmae'");
  write(std::string("nmae = \"x\"\n") + kRun);
  EXPECT_NE(suite().err.find("did you mean 'name'?"), std::string::npos);
}

TEST_F(SuiteCliTest, MisspeltTableIsRefusedWithASuggestion) {
  expect_refused("name = \"tiny\"\n\n[default]\nwarmup = 0\n" + std::string(kRun), 3,
                 "unknown table [default]");
  write("[default]\nwarmup = 0\n" + std::string(kRun));
  EXPECT_NE(suite().err.find("did you mean [defaults]?"), std::string::npos);
  expect_refused(std::string(kHead) + "[[runs]]\nmodel = \"vgg16\"\n", 6, "unknown table [[runs]]");
  expect_refused(std::string(kHead) + kRun + "bacth = 3\n", 10, "unknown key 'bacth' in [[run]]");
  write(std::string(kHead) + kRun + "bacth = 3\n");
  EXPECT_NE(suite().err.find("did you mean 'batch'?"), std::string::npos);
}

TEST_F(SuiteCliTest, ValuesOfTheWrongTypeAreRefused) {
  expect_refused(std::string("name = 5\n") + kRun, 1, "name must be a string, not an integer");
  expect_refused(std::string(kHead) + kRun + "steps = 2.5\n", 10,
                 "steps must be an integer, not a floating-point number");
  expect_refused(std::string(kHead) + kRun + "mode = [[\"train\"]]\n", 10,
                 "mode must be a string, not an array");
  expect_refused("defaults = 3\n" + std::string(kRun), 1, "defaults must be a table");
  expect_refused(std::string(kHead) + "[run]\nmodel = \"vgg16\"\n", 6,
                 "run must be an array of tables");
}

TEST_F(SuiteCliTest, BadValuesNameTheLineAndHintInTheFilesTerms) {
  const std::string head = kHead;
  expect_refused(head + kRun + "mode = \"trian\"\n", 10, "mode must be train or infer");
  write(head + kRun + "mode = \"trian\"\n");
  EXPECT_NE(suite().err.find("hint: did you mean mode = \"train\"?"), std::string::npos);
  expect_refused(head + kRun + "device = \"gpu\"\n", 10, "device must be cpu, cuda or cuda:N");
  expect_refused(head + kRun + "precision = \"fp8\"\n", 10, "precision must be one of");
  expect_refused(head + "[[run]]\nmodel = \"resnet50\"\ninput = 32\nbatch = 0\n", 9,
                 "batch must be from 1 to 16777216, not 0");
  write(head + "[[run]]\nmodel = \"resnet50\"\ninput = 32\nbatch = 0\n");
  EXPECT_NE(suite().err.find("hint: e.g. batch = 32"), std::string::npos);
  // A rule of the runner's (runner::validated) at the line of the value it names.
  expect_refused(head + "[[run]]\nmodel = \"resnet50\"\ninput = 32\nprecision = \"fp16\"\n", 9,
                 "precision fp16 needs a GPU backend");
}

TEST_F(SuiteCliTest, UnknownModelAndInputAreRefusedBeforeTheDatabaseIsTouched) {
  ASSERT_EQ(dlbench("--db " + db_ + " runs list").exit_code, 0);  // an existing database
  const std::string before = read_bytes(db_);
  ASSERT_FALSE(before.empty());
  for (const std::string& run :
       {std::string("[[run]]\nmodel = \"vgg17\"\n"),
        std::string("[[run]]\ninput = 33\nmodel = \"vgg16\"\nmode = [\"train\", \"infer\"]\n")}) {
    write(std::string(kHead) + run);
    auto r = suite();
    EXPECT_EQ(r.exit_code, 2) << run << r.err;
    EXPECT_NE(r.err.find(file_ + ":7: "), std::string::npos) << r.err;
    EXPECT_EQ(read_bytes(db_), before) << run << "changed the database";
  }
  write(std::string(kHead) + "[[run]]\nmodel = \"vgg17\"\n");
  EXPECT_NE(suite().err.find("did you mean model = \"vgg16\"?"), std::string::npos);
  write(std::string(kHead) + "[[run]]\nmodel = \"vgg16\"\n\ninput = 33\n");
  auto r = suite();
  EXPECT_NE(r.err.find(file_ + ":9: input of vgg16 must be one of"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: e.g. input = 224"), std::string::npos) << r.err;
  EXPECT_EQ(read_bytes(db_), before);
}

TEST_F(SuiteCliTest, RunWithoutAModelIsRefused) {
  expect_refused(std::string(kHead) + "\n[[run]]\nbatch = 2\n", 7, "this [[run]] names no model");
  // A model in [defaults] serves every run.
  write("[defaults]\nmodel = \"resnet50\"\ndevice = \"cpu\"\n[[run]]\ninput = 32\n");
  auto r = suite("--check");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "resnet50 train fp32 batch 128 input 32 on cpu\n");
}

TEST_F(SuiteCliTest, IntervalIsCheckedBeforeTheSuiteIsLoaded) {
  write(std::string(kHead) + kRun);
  for (const char* interval : {"0", "inf", "nan", "-1"}) {
    auto r = suite(std::string("--interval ") + interval);
    EXPECT_EQ(r.exit_code, 2) << interval << r.err;
    EXPECT_NE(r.err.find("sampling interval"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(db_));
  }
  write("not a suite");  // the flag is refused first, whatever the file holds
  EXPECT_NE(suite("--interval 0").err.find("sampling interval"), std::string::npos);
}

TEST_F(SuiteCliTest, NumbersThatAreNotFiniteOrWouldWrapAreRefused) {
  const std::string head = std::string(kHead) + kRun;  // the [[run]]'s last line is 9
  expect_refused(head + "lr = inf\n", 10, "lr must be a finite number, not inf");
  expect_refused(head + "lr = 1e300\n", 10, "lr must be a finite number");
  expect_refused(head + "lr = -0.5\n", 10, "lr must be a finite number >= 0");
  expect_refused(head + "seed = -1\n", 10, "seed must not be negative, not -1");
  expect_refused(head + "seconds = inf\n", 10, "seconds must be a finite number, not inf");
  expect_refused(head + "seconds = nan\n", 10, "seconds must be a finite number, not nan");
  expect_refused(head + "seconds = 1e9\n", 10, "seconds must be a finite number from 0 to");
  expect_refused(head + "steps = 4294967297\n", 10,
                 "steps must be from 1 to 10000000, not 4294967297");
  expect_refused(
      std::string(kHead) + "[[run]]\nmodel = \"resnet50\"\nbatch = 2\ninput = 4294967328\n", 9,
      "input must be a positive size (pixels, voxels or tokens), not 4294967328");
  expect_refused(head + "momentum = [0.9, 1.5]\n", 10, "momentum must be from 0 up to");
}

TEST_F(SuiteCliTest, EmptyArraysAndDefaultsArraysAreRefused) {
  expect_refused(std::string(kHead) + kRun + "mode = []\n", 10, "mode is an empty array");
  expect_refused("[defaults]\nmode = [\"train\", \"infer\"]\n" + std::string(kRun), 2,
                 "mode in [defaults] takes one value, not an array");
}

TEST_F(SuiteCliTest, SuiteOfMoreThanTenThousandRunsIsRefused) {
  std::string batches = "[1", steps = "[1";
  for (int i = 2; i <= 101; ++i) batches += ", " + std::to_string(i);
  for (int i = 2; i <= 100; ++i) steps += ", " + std::to_string(i);
  expect_refused(std::string(kHead) + "[[run]]\nmodel = \"resnet50\"\ninput = 32\nbatch = " +
                     batches + "]\nsteps = " + steps + "]\n",
                 6, "the suite expands to more than 10000 runs");
}

TEST_F(SuiteCliTest, CheckListsTheRunsAndOpensNoDatabase) {
  write(std::string(kHead) + kRun + "mode = [\"train\", \"infer\"]\n");
  auto r = suite("--check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "resnet50 train fp32 batch 2 input 32 on cpu\n"
            "resnet50 infer fp32 batch 2 input 32 on cpu\n");
  EXPECT_NE(r.err.find("2 runs, all valid"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(db_));
}

TEST_F(SuiteCliTest, ShippedSuitesAreValid) {
  for (const char* name : {"quick", "quick-cpu", "recommendation", "vision", "language"}) {
    auto r = dlbench("--db " + db_ + " suite " + std::string(DLBENCH_SOURCE_DIR) + "/suites/" +
                     name + ".toml --check");
    EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.err;
    EXPECT_FALSE(r.out.empty());
  }
  EXPECT_FALSE(fs::exists(db_));
}

// The GPU quick suite runs every precision people compare on Ampere and Hopper (strict fp32,
// tf32, fp16, bf16) for each workload, and measures at most 90 s in all (runs x seconds), so
// with warm-ups and setup it stays within about 3 minutes on an H100.
TEST_F(SuiteCliTest, QuickSuiteRunsFourPrecisionsPerWorkloadWithinItsTime) {
  const std::string file = std::string(DLBENCH_SOURCE_DIR) + "/suites/quick.toml";
  auto r = dlbench("--db " + db_ + " suite " + file + " --check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::set<std::string>> precisions;  // "resnet50 train" -> precisions
  std::istringstream lines(r.out);
  int runs = 0;
  for (std::string model, mode, precision, rest; lines >> model >> mode >> precision;) {
    std::getline(lines, rest);
    precisions[model + " " + mode].insert(precision);
    ++runs;
  }
  ASSERT_EQ(precisions.size(), 4u) << r.out;
  for (const auto& [workload, set] : precisions)
    EXPECT_EQ(set, (std::set<std::string>{"bf16", "fp16", "fp32", "tf32"})) << workload;
  std::smatch seconds;
  const std::string text = testing::read_file(file);
  ASSERT_TRUE(std::regex_search(text, seconds, std::regex("\\nseconds = ([0-9.]+)"))) << text;
  EXPECT_LE(runs * std::stod(seconds[1]), 90.0) << runs << " runs of " << seconds[1] << " s";
}

}  // namespace
}  // namespace dlbench
