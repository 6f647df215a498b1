#include "bench/report/table_formats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <regex>

#include <nlohmann/json.hpp>

#include "bench/store/export.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"

namespace dlbench::report {
namespace {

// Markdown cells cannot hold a pipe or a line break.
std::string md_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

void write_markdown(const Table& t, std::ostream& out) {
  out << "## " << t.title << "\n\n";
  if (!t.note.empty()) out << t.note << "\n\n";
  out << "|";
  for (const std::string& c : t.columns) out << " " << md_cell(c) << " |";
  out << "\n|";
  for (std::size_t i = 0; i < t.columns.size(); ++i) out << "---|";
  out << "\n";
  for (const auto& row : t.rows) {
    out << "|";
    for (const std::string& c : row) out << " " << md_cell(c) << " |";
    out << "\n";
  }
  out << "\n";
}

// CSV is one table with one header row. One table (compare) is written as it is; several (a
// report) as one long table, a row per cell, named by its table, row and column (pandas: pivot
// one table's rows on row and column).
void write_csv(const std::vector<Table>& tables, std::ostream& out) {
  auto line = [&out](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i)
      out << (i ? "," : "") << store::csv_field(cells[i]);
    out << "\n";
  };
  if (tables.size() == 1) {
    line(tables[0].columns);
    for (const auto& row : tables[0].rows) line(row);
    return;
  }
  out << "table,title,row,column,value\n";
  for (const Table& t : tables)
    for (std::size_t r = 0; r < t.rows.size(); ++r)
      for (std::size_t c = 0; c < t.rows[r].size() && c < t.columns.size(); ++c)
        out << store::csv_field(t.id) << "," << store::csv_field(t.title) << "," << r + 1 << ","
            << store::csv_field(t.columns[c]) << "," << store::csv_field(t.rows[r][c]) << "\n";
}

// A cell as JSON: a plain decimal ("812.45", "-3", "12") is a number, an empty cell null, and
// anything else ("n/a (no GPU)", "3.21x", a version in a text column) the text it is.
nlohmann::json json_cell(const std::string& text, bool is_text) {
  if (is_text) return text;
  if (text.empty()) return nullptr;
  static const std::regex kDecimal("-?(0|[1-9][0-9]*)(\\.[0-9]+)?");
  if (!std::regex_match(text, kDecimal)) return text;
  const double value = std::strtod(text.c_str(), nullptr);
  if (text.find('.') == std::string::npos && std::fabs(value) < 9.0e15)
    return static_cast<std::int64_t>(value);
  return value;
}

}  // namespace

TableFormat parse_table_format(const std::string& text) {
  if (text == "md" || text == "markdown") return TableFormat::kMarkdown;
  if (text == "csv") return TableFormat::kCsv;
  if (text == "json") return TableFormat::kJson;
  if (text == "text") return TableFormat::kText;
  throw Error(ErrorKind::kUsage, "unknown format '" + text + "'", "use md, csv, json or text");
}

// Columns line up by characters, not bytes: "1.23x \u00b1 0.02" and "temp. max \u00b0C" hold
// two-byte UTF-8 characters. (Counts every byte but continuation bytes.)
namespace {
std::size_t shown_width(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}
}  // namespace

void write_text_table(const Table& t, std::ostream& out) {
  std::vector<std::size_t> width(t.columns.size(), 0);
  for (std::size_t i = 0; i < t.columns.size(); ++i) width[i] = shown_width(t.columns[i]);
  for (const auto& row : t.rows)
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], shown_width(row[i]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size() && i < width.size(); ++i) {
      if (i) text += "  ";
      text += cells[i] + std::string(width[i] - shown_width(cells[i]), ' ');
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  line(t.columns);
  for (const auto& row : t.rows) line(row);
}

void write_tables(const std::string& title, const std::vector<Table>& tables, TableFormat format,
                  std::ostream& out) {
  if (format == TableFormat::kJson) {
    nlohmann::json doc = {
        {"schema", "dlbench.report/1"}, {"title", title}, {"tables", nlohmann::json::array()}};
    for (const Table& t : tables) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& row : t.rows) {
        nlohmann::json o = nlohmann::json::object();
        for (std::size_t i = 0; i < row.size() && i < t.columns.size(); ++i)
          o[t.columns[i]] =
              json_cell(row[i], std::find(t.text_columns.begin(), t.text_columns.end(),
                                          t.columns[i]) != t.text_columns.end());
        rows.push_back(o);
      }
      doc["tables"].push_back({{"id", t.id},
                               {"title", t.title},
                               {"note", t.note},
                               {"columns", t.columns},
                               {"rows", rows}});
    }
    out << dump_json(doc, 2) << "\n";
    return;
  }
  if (format == TableFormat::kCsv) {
    write_csv(tables, out);
    return;
  }
  if (format == TableFormat::kMarkdown) out << "# " << title << "\n\n";
  if (format == TableFormat::kText) out << title << "\n\n";
  for (const Table& t : tables) {
    if (t.rows.empty()) continue;
    switch (format) {
      case TableFormat::kMarkdown:
        write_markdown(t, out);
        break;
      default:
        out << t.title << "\n";
        write_text_table(t, out);
        out << "\n";
    }
  }
}

}  // namespace dlbench::report
