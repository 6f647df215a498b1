// dlbench report: an HTML report with charts (or tables: md, csv, json, text) of stored runs;
// dlbench compare A B: two runs, suites or machines side by side. Both read only the store.
#include <fstream>
#include <iostream>
#include <sstream>

#include "bench/report/compare.h"
#include "bench/report/html_report.h"
#include "bench/report/relative.h"
#include "bench/report/table_formats.h"
#include "cli/commands.h"
#include "cli/compare_frameworks.h"
#include "cli/number_text.h"
#include "cli/output_file.h"
#include "cli/store_options.h"
#include "engine/core/error.h"

namespace dlbench::cli {
namespace {

struct ReportOptions {
  report::Selection selection;
  bool last = false;
  std::string runs;
  std::string format = "html";
  std::string out;
  std::string relative_to;
};

struct CompareOptions {
  std::string a, b;
  std::string kind = "auto";
  std::string format = "text";
};

std::vector<std::int64_t> parse_ids(const std::string& text) {
  std::vector<std::int64_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      std::size_t used = 0;
      long long id = std::stoll(item, &used);
      if (used != item.size() || id < 1) throw std::invalid_argument(item);
      ids.push_back(id);
    } catch (const std::exception&) {
      throw Error(ErrorKind::kUsage, "--runs takes run ids such as 3,4,7, not '" + text + "'",
                  "see 'dlbench runs list' for the ids");
    }
  }
  return ids;
}

}  // namespace

void add_report_command(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* cmd =
      app.add_subcommand("report", "Write a report (HTML with charts, or tables) of stored runs");
  cmd->add_option("--last", opts->selection.last, "The newest N runs (1 when N is left out)")
      ->expected(0, 1)
      ->default_str("1")
      ->type_name("N");
  cmd->add_flag("--last-suite", opts->selection.last_suite, "The newest suite invocation");
  cmd->add_option("--suite", opts->selection.suite,
                  "The newest invocation of suite NAME (or an invocation id)");
  cmd->add_option("--runs", opts->runs, "These runs: ids separated by commas");
  cmd->add_option("--machine", opts->selection.machine,
                  "Every run of this machine (id, hostname or fingerprint prefix)");
  cmd->add_option("--relative-to", opts->relative_to,
                  "Divide each workload's throughput by a reference's: a stored machine (id, "
                  "hostname or fingerprint prefix), a results file (runs export --format json) "
                  "or a shipped reference (h100-sxm-80gb)")
      ->type_name("REF");
  cmd->add_option("--format", opts->format, "html, md, csv, json or text")->capture_default_str();
  cmd->add_option("--out", opts->out, "Write to FILE (default: report.html for html, else stdout)");
  cmd->callback([opts, cmd, &global] {
    if (cmd->count("--last") && opts->selection.last == 0) opts->selection.last = 1;
    if (!opts->runs.empty()) opts->selection.ids = parse_ids(opts->runs);
    bool html = opts->format == "html";
    report::TableFormat format =
        html ? report::TableFormat::kText : report::parse_table_format(opts->format);
    std::string path = opts->out.empty() && html ? "report.html" : opts->out;
    auto db = open_store(global);
    report::ReportData data = report::load_report(*db, opts->selection);
    if (!opts->relative_to.empty())
      data.relative =
          report::relative_performance(data.runs, report::load_reference(*db, opts->relative_to));
    // Opened after the database and the selection, and replaced only when written whole.
    OutputFile file(path);
    if (html)
      report::write_html(data, file.stream());
    else
      report::write_tables(data.title, report::report_tables(data), format, file.stream());
    file.commit();
    if (file.is_file()) {
      if (!global.quiet)
        std::cerr << "report of " << count_text(static_cast<long long>(data.runs.size()), "run")
                  << ": ";
      std::cout << path << "\n";
    }
  });

  auto cmp = std::make_shared<CompareOptions>();
  CLI::App* c = app.add_subcommand(
      "compare",
      "Two runs, suites or machines side by side, with ratios; or, with --frameworks, one model "
      "run in several frameworks");
  c->add_option("a", cmp->a,
                "Run id, suite name or invocation, or machine (A); with "
                "--frameworks: the model");
  c->add_option("b", cmp->b, "The same kind of thing (B)");
  c->add_option("--as", cmp->kind, "What A and B are: runs, suites, machines or auto")
      ->capture_default_str();
  c->add_option("--format", cmp->format, "text, md, csv or json")->capture_default_str();
  auto frameworks = add_framework_compare_options(*c);
  c->callback([cmp, frameworks, &global] {
    if (!frameworks->frameworks.empty()) {
      if (cmp->a.empty() || !cmp->b.empty())
        throw Error(ErrorKind::kUsage, "compare --frameworks takes one model",
                    "e.g. dlbench compare --frameworks native,pytorch resnet50");
      run_framework_compare(*frameworks, cmp->a, global);
      return;
    }
    if (cmp->b.empty())
      throw Error(ErrorKind::kUsage, "compare needs two things to compare (A and B)",
                  "e.g. dlbench compare 3 7, or dlbench compare --frameworks native,pytorch "
                  "resnet50");
    auto db = open_store(global);
    report::Comparison result =
        report::compare(*db, cmp->a, cmp->b, report::parse_compare_kind(cmp->kind));
    report::TableFormat format = report::parse_table_format(global.json ? "json" : cmp->format);
    if (format == report::TableFormat::kText) {
      std::cout << result.title << "\n\n";
      report::write_text_table(result.table, std::cout);
      std::cout << "\n" << result.table.note << "\n";
    } else {
      report::write_tables(result.title, {result.table}, format, std::cout);
    }
  });
}

}  // namespace dlbench::cli
