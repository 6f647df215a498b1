// The report's tables as text: aligned columns for the terminal, Markdown, CSV and JSON.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "bench/report/report_data.h"

namespace dlbench::report {

enum class TableFormat { kText, kMarkdown, kCsv, kJson };

// "md", "csv", "json", "text"; Error (usage) otherwise.
TableFormat parse_table_format(const std::string& text);

// Tables without rows are left out (their title is kept in JSON). CSV is one table: a single
// table as it is, several as one long table (table, title, row, column, value). JSON writes a
// cell that is a plain decimal as a number (outside Table::text_columns), an empty one as null.
void write_tables(const std::string& title, const std::vector<Table>& tables, TableFormat format,
                  std::ostream& out);

// One table with aligned columns, for `runs list` and `compare`.
void write_text_table(const Table& table, std::ostream& out);

}  // namespace dlbench::report
