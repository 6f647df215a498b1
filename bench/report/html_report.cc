#include "bench/report/html_report.h"

#include <ctime>
#include <string>

#include "bench/report/chart_js.h"
#include "bench/report/charts.h"
#include "bench/report/html_text.h"
#include "bench/report/scaling_table.h"

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

constexpr const char* kStyle = R"css(
:root { --ink:#1f2933; --muted:#616e7c; --line:#e4e7eb; --card:#fff; --bg:#f5f7fa; --accent:#2563eb; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--ink); background:var(--bg); }
header { background:#111827; color:#f9fafb; padding:24px 40px; }
header h1 { margin:0 0 4px; font-size:22px; font-weight:600; }
header p { margin:2px 0; color:#cbd2d9; }
main { padding:24px 40px 60px; max-width:1500px; }
h2 { font-size:18px; margin:32px 0 12px; padding-bottom:6px; border-bottom:2px solid var(--line); }
.grid { display:grid; grid-template-columns:repeat(auto-fill,minmax(560px,1fr)); gap:18px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:14px 16px; box-shadow:0 1px 2px rgba(0,0,0,.04); }
.card h3 { margin:0 0 8px; font-size:14px; font-weight:600; }
.card .box { position:relative; height:300px; }
.note { color:var(--muted); font-size:13px; margin:4px 0 10px; }
table { border-collapse:collapse; width:100%; background:var(--card); font-size:13px; }
th, td { border-bottom:1px solid var(--line); padding:5px 10px; text-align:left; white-space:nowrap; }
th { background:#f0f4f8; font-weight:600; position:sticky; top:0; }
td.num { text-align:right; font-variant-numeric:tabular-nums; }
.tablewrap { overflow-x:auto; border:1px solid var(--line); border-radius:8px; }
dl.legend { display:grid; grid-template-columns:max-content 1fr; gap:2px 14px; margin:0; }
dl.legend dt { font-weight:600; } dl.legend dd { margin:0; color:var(--muted); }
footer { color:var(--muted); font-size:12px; margin-top:40px; }
.scaling { display:flex; flex-wrap:wrap; gap:18px; margin-bottom:18px; }
.scaling > div:first-child { flex:1 1 460px; min-width:0; }
.scaling > .card { flex:1.6 1 560px; min-width:0; }
)css";

// Draws every chart of the embedded data, then records on <body> how many canvases ended up
// with pixels and any script error, which the browser test reads from the dumped DOM.
constexpr const char* kScript = R"js(
(function () {
  const body = document.body;
  const errors = [];
  const fail = (m) => { errors.push(String(m)); body.dataset.jsErrors = errors.join(' | '); };
  window.addEventListener('error', (e) => fail(e.message));
  try {
    const charts = JSON.parse(document.getElementById('dlbench-charts').textContent);
    const palette = ['#2563eb','#f59e0b','#10b981','#ef4444','#8b5cf6','#0ea5e9','#ec4899',
                     '#84cc16','#64748b','#14b8a6'];
    Chart.defaults.animation = false;
    Chart.defaults.responsive = true;
    Chart.defaults.maintainAspectRatio = false;
    Chart.defaults.font.family = getComputedStyle(body).fontFamily;
    Chart.defaults.color = '#3e4c59';
    const canvases = [];
    const sections = {};
    const root = document.getElementById('charts');
    for (const spec of charts) {
      const target = spec.target ? document.getElementById(spec.target) : null;
      if (!target && !sections[spec.section]) {
        const h = document.createElement('h2'); h.textContent = spec.section; root.appendChild(h);
        const g = document.createElement('div'); g.className = 'grid'; root.appendChild(g);
        sections[spec.section] = g;
      }
      const card = document.createElement('div'); card.className = 'card';
      const title = document.createElement('h3'); title.textContent = spec.title;
      const box = document.createElement('div'); box.className = 'box';
      const canvas = document.createElement('canvas');
      box.appendChild(canvas); card.appendChild(title); card.appendChild(box);
      (target || sections[spec.section]).appendChild(card);
      const line = spec.type === 'line';
      const datasets = spec.datasets.map((d, i) => ({
        label: d.label, data: d.data, yAxisID: d.axis || 'y', borderDash: d.dashed ? [6, 4] : [],
        backgroundColor: palette[i % palette.length] + (line ? '33' : 'cc'),
        borderColor: palette[i % palette.length], borderWidth: line ? (d.points ? 2 : 1.5) : 0,
        pointRadius: line ? (d.points ? 3 : 0) : undefined, borderRadius: line ? 0 : 3, spanGaps: true }));
      const scales = { y: { beginAtZero: true, title: { display: true, text: spec.unit } } };
      if (line) scales.x = { type: 'linear', title: { display: true, text: spec.xTitle || 'seconds into the measured phase' } };
      else scales.x = { ticks: { autoSkip: false, maxRotation: 40 } };
      if (spec.xInteger) scales.x.ticks = { precision: 0 };
      if (spec.y2Unit) scales.y2 = { position: 'right', beginAtZero: true, grid: { drawOnChartArea: false },
                                     title: { display: true, text: spec.y2Unit } };
      new Chart(canvas, { type: spec.type, data: { labels: spec.labels || [], datasets },
        options: { scales, interaction: { mode: line ? 'nearest' : 'index', intersect: false },
                   plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } } } } });
      canvases.push(canvas);
    }
    let drawn = 0;
    for (const c of canvases) {
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) { drawn++; break; }
    }
    body.dataset.chartsTotal = String(canvases.length);
    body.dataset.chartsDrawn = String(drawn);
    body.dataset.resources = String(performance.getEntriesByType('resource').length);
  } catch (e) { fail(e && e.stack ? e.stack : e); }
})();
)js";

bool numeric(const std::string& cell) {
  if (cell.empty()) return false;
  char* end = nullptr;
  std::strtod(cell.c_str(), &end);
  return end && (*end == '\0' || (*end == 'x' && end[1] == '\0'));
}

void write_table(const Table& t, std::ostream& out, const char* heading = "h2") {
  out << "<" << heading << ">" << escape_html(t.title) << "</" << heading << ">\n";
  if (!t.note.empty()) out << "<p class=\"note\">" << escape_html(t.note) << "</p>\n";
  out << "<div class=\"tablewrap\"><table><thead><tr>";
  for (const std::string& c : t.columns) out << "<th>" << escape_html(c) << "</th>";
  out << "</tr></thead><tbody>\n";
  for (const auto& row : t.rows) {
    out << "<tr>";
    for (const std::string& c : row)
      out << (numeric(c) ? "<td class=\"num\">" : "<td>") << escape_html(c) << "</td>";
    out << "</tr>\n";
  }
  out << "</tbody></table></div>\n";
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

}  // namespace

void write_html(const ReportData& d, std::ostream& out) {
  int ok = 0;
  for (const store::RunRecord& r : d.runs) ok += r.status == "ok";
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << escape_html(d.title) << "</title>\n<style>" << kStyle << "</style>\n"
      << "</head><body>\n<header><h1>" << escape_html(d.title) << "</h1>\n"
      << "<p>" << d.runs.size() << " run(s), " << ok << " ok, on " << d.machines.size()
      << " machine(s) &middot; generated " << utc(d.generated_unix_s) << " from "
      << escape_html(d.source) << "</p>\n";
  for (const store::MachineRecord& m : d.machines)
    out << "<p>machine " << m.id << " (" << escape_html(m.fingerprint.substr(0, 12))
        << "): " << escape_html(m.hostname) << " &middot; " << escape_html(m.description)
        << "</p>\n";
  out << "</header>\n<main>\n<h2>How to read this report</h2>\n<dl class=\"legend\">\n"
      << "<dt>throughput</dt><dd>samples processed in the measured steps &divide; their wall "
         "time (device synchronized); warm-up steps excluded</dd>\n"
      << "<dt>speedup</dt><dd>throughput of fp16/bf16/tf32 &divide; throughput of fp32 for "
         "the same machine, model, mode, batch and input</dd>\n"
      << "<dt>telemetry</dt><dd>sampled during the measured phase only; mean is "
         "time-weighted; kernel busy is the share of time any kernel ran (nvidia-smi's "
         "GPU-Util), not how much of the GPU was used &mdash; SM and tensor activity say "
         "that</dd>\n"
      << "<dt>memory</dt><dd>planned = the engine's planned peak; allocator peak = the most "
         "its own allocations held during the measured steps (workspaces included), or a "
         "framework's allocator peak; RSS = the process's peak resident memory; GPU = the most "
         "device memory in use</dd>\n"
      << "<dt>energy per sample</dt><dd>GPU board energy over the measured phase &divide; "
         "samples processed (GPUs with NVML energy counters only)</dd>\n";
  const std::vector<ScalingGroup> scaling = scaling_groups(d.runs);
  if (!scaling.empty())
    out << "<dt>scaling efficiency</dt><dd>(samples/s &divide; replicas) &divide; (samples/s "
           "&divide; replicas at the smallest count) of the same workload and per-replica "
           "batch; 100% is linear</dd>\n";
  out << "</dl>\n";
  write_scaling_section(scaling, out);
  out << "<div id=\"charts\"></div>\n";
  for (const Table& t : report_tables(d))
    if (!t.rows.empty() && t.id != "scaling") write_table(t, out);
  out << "<footer>dlbench report &middot; charts by Chart.js " << chart_js_version()
      << " (MIT), embedded &middot; this file makes no network requests</footer>\n</main>\n"
      << "<script id=\"dlbench-charts\" type=\"application/json\">"
      << embedded_json(report_charts(d)) << "</script>\n"
      << "<script>" << script_safe(chart_js_source()) << "</script>\n"
      << "<script>" << kScript << "</script>\n</body></html>\n";
}

}  // namespace dlbench::report
