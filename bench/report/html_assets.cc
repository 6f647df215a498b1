#include "bench/report/html_assets.h"

namespace dlbench::report {
namespace {

constexpr const char* kStyle = R"css(
:root { --ink:#1f2933; --muted:#616e7c; --line:#e4e7eb; --card:#fff; --bg:#f5f7fa; --accent:#2563eb; --warn:#b45309; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--ink); background:var(--bg); }
header { background:#111827; color:#f9fafb; padding:24px 40px; }
header h1 { margin:0 0 4px; font-size:24px; font-weight:600; }
header p { margin:2px 0; color:#cbd2d9; }
main { padding:24px 40px 60px; }
h2 { font-size:18px; margin:32px 0 12px; padding-bottom:6px; border-bottom:2px solid var(--line); }
.grid { display:grid; grid-template-columns:1fr; gap:18px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:14px 16px; box-shadow:0 1px 2px rgba(0,0,0,.04); }
.card h3 { margin:0 0 8px; font-size:14px; font-weight:600; }
.card .box { position:relative; height:340px; }
.card .box.tall { height:480px; }
.note { color:var(--muted); font-size:13px; margin:4px 0 10px; }
.alert, td.flag { color:var(--warn); font-weight:600; }
a.warn, span.warn { color:var(--warn); text-decoration:none; font-weight:600; cursor:help; }
ol.footnotes { color:var(--muted); font-size:13px; margin:4px 0 14px; padding-left:22px; }
table { border-collapse:collapse; width:100%; background:var(--card); font-size:13px; }
th, td { border-bottom:1px solid var(--line); padding:5px 10px; text-align:left; white-space:nowrap; }
th { background:#f0f4f8; font-weight:600; position:sticky; top:0; white-space:normal; vertical-align:bottom; }
th.num, td.num { text-align:right; font-variant-numeric:tabular-nums; }
table.wrap th, table.wrap td { white-space:normal; overflow-wrap:anywhere; }
.tablewrap { overflow-x:auto; border:1px solid var(--line); border-radius:8px; }
.machine { margin-top:8px; }
.machine h2 { margin-top:0; }
.machine-body { display:flex; flex-wrap:wrap; gap:24px 40px; }
dl.facts { display:grid; grid-template-columns:max-content minmax(0,1fr); gap:3px 16px; margin:0; flex:1 1 420px; min-width:0; }
dl.facts dt { color:var(--muted); } dl.facts dd { margin:0; overflow-wrap:anywhere; }
.headline { flex:1 1 520px; min-width:0; overflow-x:auto; }
.headline h3 { margin:0 0 6px; font-size:14px; }
.headline table { background:none; }
.headline th { background:none; position:static; }
.headline td.big { font-size:19px; font-weight:600; }
.headline th.num { white-space:normal; }
details { margin:14px 0; }
details > summary { cursor:pointer; color:var(--accent); font-weight:600; }
dl.legend { display:grid; grid-template-columns:max-content 1fr; gap:2px 14px; margin:0; }
dl.legend dt { font-weight:600; } dl.legend dd { margin:0; color:var(--muted); }
footer { color:var(--muted); font-size:12px; margin-top:40px; }
.scaling { display:flex; flex-wrap:wrap; gap:18px; margin-bottom:18px; }
.scaling > div:first-child { flex:1 1 460px; min-width:0; }
.scaling > .card { flex:1.6 1 560px; min-width:0; }
)css";

constexpr const char* kScript = R"js(
(function () {
  const body = document.body;
  const errors = [];
  const fail = (m) => { errors.push(String(m)); body.dataset.jsErrors = errors.join(' | '); };
  window.addEventListener('error', (e) => fail(e.message));
  let valueLabels = 0;
  // A value on each bar: above it when the text fits the bar's width, else turned upright;
  // left out only where the bar is too thin for any text.
  const format = (v) => {
    const a = Math.abs(v), d = a >= 100 ? 0 : a >= 10 ? 1 : 2;
    return v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  };
  const valueLabelPlugin = {
    id: 'dlbenchValueLabels',
    afterDatasetsDraw(chart, args, opts) {
      if (!opts || !opts.enabled) return;
      const ctx = chart.ctx;
      ctx.save();
      ctx.font = '11px ' + Chart.defaults.font.family;
      ctx.fillStyle = '#1f2933';
      chart.data.datasets.forEach((ds, i) => {
        const meta = chart.getDatasetMeta(i);
        if (meta.hidden || meta.type !== 'bar') return;
        meta.data.forEach((bar, j) => {
          const v = ds.data[j];
          if (v === null || v === undefined || !isFinite(v)) return;
          const text = format(v) + (opts.suffix || '');
          const w = ctx.measureText(text).width;
          if (w + 2 <= bar.width) {
            ctx.textAlign = 'center'; ctx.textBaseline = 'bottom';
            ctx.fillText(text, bar.x, bar.y - 2);
          } else if (bar.width >= 8) {
            ctx.save(); ctx.translate(bar.x, bar.y - 3); ctx.rotate(-Math.PI / 2);
            ctx.textAlign = 'left'; ctx.textBaseline = 'middle'; ctx.fillText(text, 0, 0);
            ctx.restore();
          } else {
            return;
          }
          valueLabels++;
        });
      });
      ctx.restore();
    }
  };
  try {
    const charts = JSON.parse(document.getElementById('dlbench-charts').textContent);
    const palette = ['#2563eb','#f59e0b','#10b981','#ef4444','#8b5cf6','#0ea5e9','#ec4899',
                     '#84cc16','#64748b','#14b8a6'];
    Chart.register(valueLabelPlugin);
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
      const box = document.createElement('div'); box.className = spec.tall ? 'box tall' : 'box';
      const canvas = document.createElement('canvas');
      box.appendChild(canvas); card.appendChild(title); card.appendChild(box);
      (target || sections[spec.section]).appendChild(card);
      const line = spec.type === 'line';
      const datasets = spec.datasets.map((d, i) => {
        const asLine = line || d.type === 'line';
        const color = d.color || (d.type === 'line' && !line ? '#dc2626' : palette[i % palette.length]);
        return { label: d.label, data: d.data, type: d.type || undefined, yAxisID: d.axis || 'y',
          borderDash: d.dashed ? [6, 4] : [],
          backgroundColor: color + (asLine ? '33' : 'cc'), borderColor: color,
          borderWidth: asLine ? (d.points ? 2 : 1.5) : 0, fill: false,
          pointRadius: asLine ? (d.points ? 3 : 0) : undefined, borderRadius: asLine ? 0 : 3,
          maxBarThickness: 140, spanGaps: true, order: d.type === 'line' ? -1 : 0 };
      });
      const scales = { y: { beginAtZero: true, title: { display: true, text: spec.unit } } };
      if (spec.valueLabels) scales.y.grace = '12%';
      if (line) scales.x = { type: 'linear', title: { display: true, text: spec.xTitle || 'seconds into the measured phase' } };
      else scales.x = { ticks: { autoSkip: false, maxRotation: 40 } };
      if (spec.xInteger) scales.x.ticks = { precision: 0 };
      if (spec.y2Unit) scales.y2 = { position: 'right', beginAtZero: true, grid: { drawOnChartArea: false },
                                     title: { display: true, text: spec.y2Unit } };
      // A category "workload · machine" is written on two lines.
      const labels = (spec.labels || []).map((l) => l.includes(' \u00b7 ') ? l.split(' \u00b7 ') : l);
      new Chart(canvas, { type: spec.type, data: { labels, datasets },
        options: { scales, layout: { padding: { top: spec.valueLabels ? 16 : 0 } },
                   interaction: { mode: line ? 'nearest' : 'index', intersect: false },
                   plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } },
                              dlbenchValueLabels: { enabled: !!spec.valueLabels, suffix: spec.valueSuffix || '' } } } });
      canvases.push(canvas);
    }
    let drawn = 0;
    for (const c of canvases) {
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) { drawn++; break; }
    }
    body.dataset.chartsTotal = String(canvases.length);
    body.dataset.chartsDrawn = String(drawn);
    body.dataset.valueLabels = String(valueLabels);
    body.dataset.resources = String(performance.getEntriesByType('resource').length);
  } catch (e) { fail(e && e.stack ? e.stack : e); }
})();
)js";

}  // namespace

const char* report_style() {
  return kStyle;
}

const char* report_script() {
  return kScript;
}

}  // namespace dlbench::report
