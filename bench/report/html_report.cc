#include "bench/report/html_report.h"

#include <ctime>
#include <string>

#include "bench/report/chart_js.h"
#include "bench/report/charts.h"
#include "bench/report/html_assets.h"
#include "bench/report/html_text.h"
#include "bench/report/machine_card.h"
#include "bench/report/scaling_table.h"
#include "bench/report/telemetry_view.h"
#include "bench/result/noise.h"

namespace dlbench::report {
namespace {

// Inside <script>, "</" could end the element early: JavaScript allows "<\/" instead. (The
// JSON data block is written by embedded_json, which escapes every "<".)
std::string script_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

bool numeric(const std::string& cell) {
  if (cell.empty()) return false;
  char* end = nullptr;
  std::strtod(cell.c_str(), &end);
  return end && (*end == '\0' || (*end == 'x' && end[1] == '\0'));
}

// A column whose every filled cell is a number is right-aligned, its header with it.
std::vector<bool> numeric_columns(const Table& t) {
  std::vector<bool> out(t.columns.size(), false);
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    bool any = false, all = true;
    for (const auto& row : t.rows) {
      if (c >= row.size() || row[c].empty()) continue;
      any = true;
      all = all && numeric(row[c]);
    }
    out[c] = any && all;
  }
  return out;
}

// What the page leaves out of a table: columns empty in every row, and the machine column when
// the report covers one machine (its name is the page's title).
Table shown_columns(const Table& t, bool one_machine) {
  Table out{
      t.id,           t.title, t.note, {}, std::vector<std::vector<std::string>>(t.rows.size()),
      t.text_columns, t.flags};
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    bool empty = true;
    for (const auto& row : t.rows) empty = empty && (c >= row.size() || row[c].empty());
    // The warning codes: the page marks the cells and lists the warnings' text instead.
    const bool flagged = !t.flags.empty() && t.columns[c] == "warnings";
    if ((empty && !t.rows.empty()) || (one_machine && t.columns[c] == "machine") || flagged)
      continue;
    out.columns.push_back(t.columns[c]);
    for (std::size_t r = 0; r < t.rows.size(); ++r)
      out.rows[r].push_back(c < t.rows[r].size() ? t.rows[r][c] : "");
  }
  return out;
}

// A flagged cell's warning sign: its footnote's number, linked, with the text as tooltip.
std::string flag_marks(const Table& t, std::size_t row, const std::string& column) {
  std::string marks;
  for (std::size_t i = 0; i < t.flags.size(); ++i)
    if (t.flags[i].row == row && t.flags[i].column == column)
      marks += " <a class=\"warn\" href=\"#" + escape_html(t.id) + "-note-" +
               std::to_string(i + 1) + "\" title=\"" + escape_html(t.flags[i].text) +
               "\">&#9888;<sup>" + std::to_string(i + 1) + "</sup></a>";
  return marks;
}

void write_table_body(const Table& t, std::ostream& out, const char* table_class = "") {
  const std::vector<bool> num = numeric_columns(t);
  out << "<div class=\"tablewrap\"><table class=\"" << table_class << "\"><thead><tr>";
  for (std::size_t c = 0; c < t.columns.size(); ++c)
    out << (num[c] ? "<th class=\"num\">" : "<th>") << escape_html(t.columns[c]) << "</th>";
  out << "</tr></thead><tbody>\n";
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    out << "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool flag = row[c].rfind("throttled:", 0) == 0;  // throttle_text's flag stands out
      out << (c < num.size() && num[c] ? "<td class=\"num\">"
              : flag                   ? "<td class=\"flag\">"
                                       : "<td>")
          << escape_html(row[c]) << (c < t.columns.size() ? flag_marks(t, r, t.columns[c]) : "")
          << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody></table></div>\n";
  if (t.flags.empty()) return;
  out << "<ol class=\"footnotes\">\n";
  for (std::size_t i = 0; i < t.flags.size(); ++i)
    out << "<li id=\"" << escape_html(t.id) << "-note-" << i + 1 << "\">&#9888; "
        << escape_html(t.flags[i].text) << "</li>\n";
  out << "</ol>\n";
}

void write_table(const Table& t, std::ostream& out, const char* heading = "h2",
                 bool one_machine = false) {
  out << "<" << heading << ">" << escape_html(t.title) << "</" << heading << ">\n";
  if (!t.note.empty()) out << "<p class=\"note\">" << escape_html(t.note) << "</p>\n";
  write_table_body(shown_columns(t, one_machine), out);
}

// A table of many columns and few rows (the machines) turned on its side, so that it fits the
// page: one row per column, one column per row; long values wrap.
void write_transposed(const Table& t, std::ostream& out) {
  Table side{t.id, t.title, t.note, {""}, {}};
  for (const auto& row : t.rows) side.columns.push_back(row.empty() ? "" : row[0]);
  for (std::size_t c = 1; c < t.columns.size(); ++c) {
    std::vector<std::string> line = {t.columns[c]};
    for (const auto& row : t.rows) line.push_back(c < row.size() ? row[c] : "");
    side.rows.push_back(std::move(line));
  }
  out << "<h2>" << escape_html(t.title) << "</h2>\n<p class=\"note\">" << escape_html(t.note)
      << "</p>\n";
  write_table_body(side, out, "wrap");
}

// Per workload: its chart (drawn by the script into the empty slot) next to its table.
void write_scaling_section(const std::vector<ScalingGroup>& groups, std::ostream& out) {
  if (groups.empty()) return;
  out << "<h2>Multi-GPU scaling</h2>\n<p class=\"note\">" << escape_html(kScalingCaption)
      << "</p>\n";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    out << "<div class=\"scaling\"><div id=\"" << scaling_chart_target(i)
        << "\"></div><div class=\"card\">\n";
    write_table(scaling_table(groups[i]), out, "h3");
    out << "</div></div>\n";
  }
}

std::string utc(std::int64_t unix_s) {
  char text[40];
  std::time_t t = unix_s;
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return text;
}

bool any_gpu(const ReportData& d) {
  if (has_gpu_telemetry(d.runs)) return true;
  for (const store::MachineRecord& m : d.machines)
    if (m.environment.is_object() && m.environment.contains("gpus") &&
        m.environment["gpus"].is_array() && !m.environment["gpus"].empty())
      return true;
  return false;
}

// What the numbers mean; the GPU-only ones only where the report shows GPU numbers.
void write_legend(const ReportData& d, bool scaling, bool speedups, std::ostream& out) {
  const bool gpu = any_gpu(d);
  out << "<h2>How to read this report</h2>\n<dl class=\"legend\">\n"
      << "<dt>throughput</dt><dd>samples processed in the measured steps &divide; their wall "
         "time (device synchronized); warm-up steps excluded</dd>\n"
      << "<dt>precisions</dt><dd>FP32 (strict, no TF32) = every product in 32-bit floating "
         "point"
      << (gpu ? " with TF32 tensor cores off; TF32 = FP32 data, products on TF32 tensor cores; "
                "FP16 (mixed) and BF16 (mixed) = 16-bit compute with FP32 master weights (FP16 "
                "with dynamic loss scaling)"
              : "")
      << "</dd>\n"
      << (speedups ? "<dt>speedup</dt><dd>throughput of a precision &divide; throughput of "
                     "strict FP32, and of TF32, for the same machine, model, mode, batch and "
                     "input</dd>\n"
                   : "")
      << "<dt>TFLOP/s, MFU</dt><dd>the model's FLOPs per sample &times; throughput; MFU = "
         "that &divide; the measured peak of the run's precision on its device (the newest "
         "<code>micro gemm</code> of the machine when the run was stored; empty where there was "
         "none, never a datasheet figure)</dd>\n"
      << "<dt>memory</dt><dd>planned = the engine's planned peak; allocator peak = the most "
         "its own allocations held during the measured steps (workspaces included), or a "
         "framework's allocator peak; RSS = the process's peak resident memory"
      << (gpu ? "; GPU = the most device memory in use" : "") << "</dd>\n";
  if (gpu)
    out << "<dt>GPU telemetry</dt><dd>sampled during the measured phase only; means are "
           "time-weighted. SM activity = SMs with a warp assigned, tensor-core activity and "
           "DRAM bandwidth (% of the GPU's peak) come from NVML GPM (Hopper and newer); kernel "
           "busy is the share of time any kernel ran (nvidia-smi's GPU-Util), not how much of "
           "the GPU was used</dd>\n"
        << "<dt>throttling</dt><dd>the share of the measured phase during which NVML named a "
           "reason that held the clocks down (power cap, power brake, thermal or hardware "
           "slowdown); power limit = NVML's power-management limit</dd>\n"
        << "<dt>energy per sample</dt><dd>GPU board energy over the measured phase &divide; "
           "samples processed; samples/J its inverse; mean power = the energy counters' "
           "increase &divide; the time they covered</dd>\n";
  else
    out << "<dt>telemetry</dt><dd>the process's CPU (% of one core) and memory and the host's "
           "memory, sampled during the measured phase only; means are time-weighted</dd>\n";
  out << "<dt>noise warnings</dt><dd>&#9888; next to a throughput, with the figures in its "
         "footnote: step time CV above "
      << 100 * result::kHighStepCv << " %, fewer than " << result::kFewSteps
      << " measured steps, the process given less than " << 100 * result::kContendedShare
      << " % of its cgroup's CPU while other processes took the rest"
      << (gpu ? ", GPU clocks held down for " + std::to_string(int(100 * result::kThrottledShare)) +
                    " % of the measured phase or more"
              : std::string())
      << ", or repeats whose throughputs span more than " << 100 * result::kRepeatSpread
      << " % of their median</dd>\n"
      << "<dt>repeats</dt><dd>a run measured N times (<code>--repeat N</code>), each built, "
         "warmed up and measured anew: its throughput is the median repeat's, and the repeat "
         "range is (max &minus; min) &divide; median</dd>\n";
  if (scaling)
    out << "<dt>scaling efficiency</dt><dd>(samples/s &divide; replicas) &divide; (samples/s "
           "&divide; replicas at the smallest count) of the same workload and per-replica "
           "batch; 100% is linear</dd>\n";
  out << "</dl>\n";
}

}  // namespace

void write_html(const ReportData& d, std::ostream& out) {
  int ok = 0, throttled_runs = 0, noisy_runs = 0;
  for (const store::RunRecord& r : d.runs) {
    ok += r.status == "ok";
    throttled_runs += throttled(r);
    noisy_runs += !run_warnings(r).empty();
  }
  const std::string title = machine_title(d);
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << escape_html(title) << " &middot; dlbench</title>\n<style>" << report_style()
      << "</style>\n"
      << "</head><body>\n<header><h1>" << escape_html(title) << "</h1>\n"
      << "<p class=\"scope\">" << escape_html(d.title) << " &middot; " << d.runs.size()
      << (d.runs.size() == 1 ? " run, " : " runs, ") << ok << " ok &middot; generated "
      << utc(d.generated_unix_s) << " from " << escape_html(d.source)
      << "</p>\n</header>\n<main>\n";
  write_machine_cards(d, out);
  if (throttled_runs > 0)
    out << "<p class=\"alert\">" << throttled_runs << " of " << d.runs.size()
        << " runs had their GPU clocks throttled: see \"Telemetry per run\".</p>\n";
  if (noisy_runs > 0)
    out << "<p class=\"alert\">" << noisy_runs << " of " << d.runs.size()
        << " runs carry noise warnings (&#9888; next to their throughput in \"Runs\", listed "
           "under it): their numbers are less certain than they look.</p>\n";
  const std::vector<ScalingGroup> scaling = scaling_groups(d.runs);
  write_scaling_section(scaling, out);
  out << "<div id=\"charts\"></div>\n";
  for (const Table& t : report_tables(d)) {
    if (t.rows.empty() || t.id == "scaling") continue;
    if (t.id == "machines") {
      write_transposed(t, out);
    } else if (t.id == "telemetry") {
      out << "<details><summary>Every telemetry metric of every run (" << t.rows.size()
          << " rows)</summary>\n";
      write_table(t, out);
      out << "</details>\n";
    } else {
      write_table(t, out, "h2", d.machines.size() == 1);
    }
  }
  const nlohmann::json charts = report_charts(d);
  bool speedups = false;
  for (const nlohmann::json& c : charts)
    speedups = speedups || c["section"] == "Precision speedups";
  write_legend(d, !scaling.empty(), speedups, out);
  out << "<footer>dlbench report &middot; charts by Chart.js " << chart_js_version()
      << " (MIT), embedded &middot; this file makes no network requests</footer>\n</main>\n"
      << "<script id=\"dlbench-charts\" type=\"application/json\">" << embedded_json(charts)
      << "</script>\n"
      << "<script>" << script_safe(chart_js_source()) << "</script>\n"
      << "<script>" << report_script() << "</script>\n</body></html>\n";
}

}  // namespace dlbench::report
