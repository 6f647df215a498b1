// dlbench runs list|show|delete|export|import: what the results database holds.
#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>

#include "bench/report/table_formats.h"
#include "bench/store/export.h"
#include "bench/store/export_table.h"
#include "bench/store/import.h"
#include "bench/store/max_batch.h"
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/store_options.h"
#include "cli/text_table.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"

namespace dlbench::cli {
namespace {

struct RunsOptions {
  store::RunFilter filter;
  std::int64_t id = 0;
  std::string format = "csv";
  bool wide = false;
  std::string out;
  std::string file;
  bool dry_run = false;
};

std::string local_time(std::int64_t unix_s) {
  char text[32];
  std::time_t t = unix_s;
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", std::localtime(&t));
  return text;
}

void list(const GlobalOptions& global, const store::RunFilter& filter) {
  auto db = open_store(global);
  std::vector<store::RunRecord> runs = db->list_runs(filter);
  if (global.json) {
    store::export_json(runs, std::cout);
    return;
  }
  report::Table t{"runs",
                  "",
                  "",
                  {"id", "when", "machine", "model", "mode", "precision", "batch", "input",
                   "device", "samples/s", "status", "suite"},
                  {}};
  for (const store::RunRecord& r : runs)
    t.rows.push_back({std::to_string(r.id), local_time(r.created_unix_s),
                      std::to_string(r.machine.id) + " " + r.machine.fingerprint.substr(0, 12),
                      r.model, r.mode, r.precision,
                      // A largest-batch search that fit nothing stores batch 0.
                      store::is_max_batch(r) && r.batch == 0 ? "none" : std::to_string(r.batch),
                      // NCF and the micro benchmarks take no input size.
                      r.input_size > 0 ? std::to_string(r.input_size) : "-", r.device,
                      // A micro benchmark has no samples: its figures are its metrics.
                      r.measured() && r.mode != "micro" && r.throughput > 0
                          ? report::fixed(r.throughput, 2)
                          : "",
                      r.status, r.suite ? r.suite->name : ""});
  if (runs.empty()) {
    std::cerr << "no runs in " << db->location() << "\n";
    return;
  }
  report::write_text_table(t, std::cout);
}

void show(const GlobalOptions& global, std::int64_t id) {
  auto db = open_store(global);
  std::optional<store::RunRecord> r = db->get_run(id);
  if (!r)
    throw Error(ErrorKind::kUsage, "no run " + std::to_string(id) + " in " + db->location(),
                "see 'dlbench runs list'");
  if (global.json) {
    std::cout << dump_json(store::to_json(*r), 2) << "\n";
    return;
  }
  Section s("Run " + std::to_string(r->id) + ": " + r->model + " " + r->mode + " " + r->precision);
  s.row("When", local_time(r->created_unix_s))
      .row("Status", report::status_text(*r))
      .row("Machine", std::to_string(r->machine.id) + " (" + r->machine.fingerprint.substr(0, 12) +
                          ") " + r->machine.hostname + ", " + r->machine.description)
      .row("Device", r->device)
      .row("Batch", std::to_string(r->batch))
      .row("Input", r->input_size > 0 ? std::to_string(r->input_size) : "none")
      .row("Framework", r->framework);
  if (r->suite) s.row("Suite", r->suite->name + " (" + r->suite->invocation + ")");
  for (const result::NoiseWarning& w : report::run_warnings(*r))
    s.row("Warning", w.text + " [" + w.code + "]");
  s.print(std::cout);
  report::Table m{"metrics", "", "", {"metric", "value", "unit"}, {}};
  for (const store::MetricRecord& x : r->metrics)
    m.rows.push_back({x.tag, report::fixed(x.value, std::fabs(x.value) < 10 ? 4 : 2), x.unit});
  if (!m.rows.empty()) {
    std::cout << "\nMetrics\n";
    report::write_text_table(m, std::cout);
  }
  report::Table t{"telemetry", "", "", {"telemetry", "mean", "p95", "max", "unit"}, {}};
  for (const store::TelemetryMetricRecord& x : r->telemetry) {
    if (!x.reason.empty()) continue;
    auto v = [](const std::optional<double>& d) { return d ? report::fixed(*d, 2) : ""; };
    t.rows.push_back({x.name, v(x.mean), v(x.p95), v(x.max), x.unit});
  }
  if (!t.rows.empty()) {
    std::cout << "\nTelemetry of the measured phase\n";
    report::write_text_table(t, std::cout);
  }
}

// The runs of FILE, stored in one transaction; runs already stored are skipped (import.h).
void import(const GlobalOptions& global, const RunsOptions& opts) {
  // Read and checked before the database is opened: a bad file leaves it untouched.
  std::vector<store::RunRecord> runs = store::read_runs_file(opts.file);
  auto db = open_store(global);
  const store::ImportCounts n = db->import_runs(runs, opts.dry_run);
  std::cout << (opts.dry_run ? "would import " : "imported ") << n.imported << " of " << runs.size()
            << (runs.size() == 1 ? " run" : " runs") << " into " << db->location() << "; skipped "
            << n.skipped << " already stored\n";
}

}  // namespace

void add_runs_command(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<RunsOptions>();
  CLI::App* runs = app.add_subcommand("runs", "List, show, delete, export and import stored runs");
  runs->require_subcommand(1);

  CLI::App* ls = runs->add_subcommand("list", "List stored runs, newest first");
  ls->add_option("--last", opts->filter.last, "Only the newest N runs");
  ls->add_option("--model", opts->filter.model, "Only runs of this model");
  ls->add_option("--machine", opts->filter.machine,
                 "Only runs of this machine (id, hostname or "
                 "fingerprint prefix)");
  ls->callback([opts, &global] { list(global, opts->filter); });

  CLI::App* sh = runs->add_subcommand("show", "Everything stored about one run");
  sh->add_option("id", opts->id, "Run id")->required();
  sh->callback([opts, &global] { show(global, opts->id); });

  CLI::App* del = runs->add_subcommand("delete", "Delete one run and its metrics and telemetry");
  del->add_option("id", opts->id, "Run id")->required();
  del->callback([opts, &global] {
    auto db = open_store(global);
    if (!db->delete_run(opts->id))
      throw Error(ErrorKind::kUsage, "no run " + std::to_string(opts->id) + " in " + db->location(),
                  "see 'dlbench runs list'");
    if (!global.quiet) std::cerr << "deleted run " << opts->id << "\n";
  });

  CLI::App* im = runs->add_subcommand(
      "import", "Store the runs of a file 'runs export --format json' wrote (on any machine)");
  im->add_option("file", opts->file, "The exported JSON file")->required();
  im->add_flag("--dry-run", opts->dry_run, "Check the file and count what would be imported");
  im->callback([opts, &global] { import(global, *opts); });

  CLI::App* ex = runs->add_subcommand(
      "export", "Export stored runs: CSV (long or --wide), JSON, or benchmark-json for dashboards");
  ex->add_option("--format", opts->format,
                 "csv (one row per run and metric), json (everything), or benchmark-json "
                 "([{name, unit, value, extra}] of each run's throughput, as "
                 "github-action-benchmark reads it)")
      ->capture_default_str();
  ex->add_flag("--wide", opts->wide,
               "With --format csv: one row per run, one column per headline metric");
  ex->add_option("--out", opts->out, "Write to FILE instead of stdout");
  ex->add_option("--last", opts->filter.last, "Only the newest N runs");
  ex->add_option("--model", opts->filter.model, "Only runs of this model");
  ex->add_option("--machine", opts->filter.machine, "Only runs of this machine");
  ex->callback([opts, &global] {
    if (opts->format != "csv" && opts->format != "json" && opts->format != "benchmark-json")
      throw Error(ErrorKind::kUsage, "unknown export format '" + opts->format + "'",
                  "use --format csv, json or benchmark-json");
    if (opts->wide && opts->format != "csv")
      throw Error(ErrorKind::kUsage, "--wide shapes a CSV table, not --format " + opts->format,
                  "use --format csv --wide");
    auto db = open_store(global);
    std::vector<store::RunRecord> runs;
    for (const store::RunRecord& r : db->list_runs(opts->filter))
      runs.push_back(opts->format == "json" ? db->get_run(r.id).value_or(r) : r);
    OutputFile out(opts->out);
    if (opts->format == "json")
      store::export_json(runs, out.stream());
    else if (opts->format == "benchmark-json")
      store::export_benchmark_json(runs, out.stream());
    else if (opts->wide)
      store::export_csv_wide(runs, out.stream());
    else
      store::export_csv(runs, out.stream());
    out.commit();
  });
}

}  // namespace dlbench::cli
