// The report's tables as CSV and JSON: one CSV table with one header (no '#' lines between
// tables), and numbers that stay numbers in JSON while text that looks like one stays text.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "bench/report/table_formats.h"

namespace dlbench::report {
namespace {

std::vector<Table> two_tables() {
  Table runs{"runs", "Runs", "", {"run", "model", "samples/s", "CV %"}, {}};
  runs.rows = {{"1", "resnet50", "812.45", ""}, {"2", "vgg16", "13.09", "2.8"}};
  Table machines{"machines", "Machines", "", {"machine", "CUDA", "note"}, {}};
  machines.rows = {{"1", "13.0", "n/a (no GPU)"}};
  machines.text_columns = {"CUDA"};
  return {runs, machines};
}

TEST(TableFormatsTest, CsvIsOneTableWithOneHeader) {
  std::ostringstream out;
  write_tables("report", two_tables(), TableFormat::kCsv, out);
  std::istringstream lines(out.str());
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "table,title,row,column,value");
  int rows = 0;
  while (std::getline(lines, line)) {
    ++rows;
    EXPECT_NE(line.rfind("#", 0), 0u) << line;
    EXPECT_FALSE(line.empty());
  }
  EXPECT_EQ(rows, 2 * 4 + 3);  // a row per cell
  EXPECT_NE(out.str().find("runs,Runs,1,samples/s,812.45\n"), std::string::npos) << out.str();
}

TEST(TableFormatsTest, OneTableIsWrittenAsItIs) {
  std::ostringstream out;
  write_tables("compare", {two_tables()[0]}, TableFormat::kCsv, out);
  EXPECT_EQ(out.str(), "run,model,samples/s,CV %\n1,resnet50,812.45,\n2,vgg16,13.09,2.8\n");
}

TEST(TableFormatsTest, JsonKeepsNumbersAsNumbers) {
  std::ostringstream out;
  write_tables("report", two_tables(), TableFormat::kJson, out);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  const nlohmann::json& runs = doc["tables"][0]["rows"];
  EXPECT_EQ(runs[0]["run"], 1);
  EXPECT_TRUE(runs[0]["run"].is_number_integer());
  EXPECT_DOUBLE_EQ(runs[0]["samples/s"].get<double>(), 812.45);
  EXPECT_TRUE(runs[0]["CV %"].is_null());
  EXPECT_EQ(runs[1]["model"], "vgg16");
  const nlohmann::json& machine = doc["tables"][1]["rows"][0];
  EXPECT_EQ(machine["CUDA"], "13.0");  // a version, declared text
  EXPECT_EQ(machine["note"], "n/a (no GPU)");
}

}  // namespace
}  // namespace dlbench::report
