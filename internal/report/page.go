package report

// pageHTML is the report template: inline CSS and JS only (no network).
// Every human text goes through {{t "id"}} (messages_en.go, messages_zh.go).
const pageHTML = `<!doctype html>
<html lang="{{.Lang}}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{t "page.title" .Run.Run.ID}}</title>
<style>{{.UPlotCSS}}</style>
<style>
body{font:14px/1.4 system-ui,"Noto Sans CJK SC","Microsoft YaHei",sans-serif;margin:20px;color:#222;max-width:1200px}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:24px 0 8px}
code,pre{font:12px ui-monospace,monospace} pre{background:#f6f6f6;padding:8px;overflow:auto;white-space:pre-wrap}
table{border-collapse:collapse} td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}
.verdict{font-size:16px;padding:8px;border-left:4px solid #888;background:#fafafa}
.bad{border-color:#c0392b} .ok{border-color:#27ae60}
.chart{margin:12px 0}
.marks{font-size:12px;color:#444;margin:2px 0 0 8px} .marks span{margin-right:14px;white-space:nowrap}
.marks i{display:inline-block;width:18px;height:0;border-top:2px dashed;vertical-align:middle;margin-right:4px}
.marks i.v{width:0;height:12px;border-top:0;border-left:2px dashed}
.note{font-size:12px;color:#555;margin:2px 0 0 8px}
</style></head><body>
<h1>{{t "page.h1" .Run.Run.ID .Status}}</h1>
<div><code>{{.Command}}</code></div>
<div>{{t "page.started" (time .Run.Run.Start) .Duration}}{{if .Run.Run.Host}}{{t "page.host" .Run.Run.Host}}{{end}}{{if .Run.Run.Cwd}}{{t "page.cwd" .Run.Run.Cwd}}{{end}}</div>
<h2>{{t "h.postmortem"}}</h2>
{{with .Summary}}{{if .Verdict}}
<div id="verdict" class="verdict {{if eq .Cause "ok"}}ok{{else}}bad{{end}}">{{.Verdict}} {{t "pm.exit" .ExitCode}}</div>
{{if .Recommendations}}<h3>{{t "h.change"}}</h3><ul>{{range .Recommendations}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Incidents}}<h3>{{t "h.explanation"}}</h3>{{range .Incidents}}<p><b>{{.Explanation.Verdict}}</b>{{if .Explanation.Alternatives}} ({{t "pm.or"}} {{range $i, $a := .Explanation.Alternatives}}{{if $i}}, {{end}}{{$a}}{{end}}){{end}} ({{.Kind}}): {{.Explanation.Summary}}</p>
{{if .Explanation.Arithmetic}}<pre>{{range .Explanation.Arithmetic}}{{.}}
{{end}}</pre>{{end}}{{end}}{{end}}
{{with .CopyOnRead}}<h3>{{t "h.copy_on_read"}}</h3>
<p>{{t "cor.text" .Workers .Measured}}</p>
<table id="copy-on-read"><tr><th>{{t "cor.pid"}}</th><th>{{t "cor.parent"}}</th><th>{{t "cor.first"}}</th><th>{{t "cor.last"}}</th><th>{{t "cor.growth"}}</th><th>{{t "cor.parent_growth"}}</th><th>{{t "cor.over"}}</th><th>{{t "cor.copying"}}</th></tr>
{{range .PerWorker}}<tr><td>{{.PID}}</td><td>{{.ParentPID}}</td><td>{{bytes .FirstPrivate}}</td><td>{{bytes .LastPrivate}}</td><td>{{bytes .Growth}}</td><td>{{bytes .ParentGrowth}}</td><td>{{printf "%.0f s" .Seconds}}</td><td>{{if .Grew}}{{t "yes"}}{{else}}{{t "no"}}{{end}}</td></tr>
{{end}}</table>{{end}}
{{if .Notes}}<h3>{{t "h.evidence"}}</h3><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Exception}}<h3>{{t "h.exception"}}</h3><pre>{{.Exception}}</pre>{{end}}
{{if .KernelLines}}<h3>{{t "h.kernel"}}</h3><pre>{{range .KernelLines}}{{.}}
{{end}}</pre>{{end}}
{{if .OrphansKilled}}<p>{{t "pm.orphans" .OrphansKilled}}</p>{{end}}
{{else}}<div id="verdict" class="verdict bad">{{t "pm.none" $.Status}}</div>{{end}}{{end}}
<h2>{{t "h.peaks"}}</h2>
<table id="peaks">{{range .Peaks}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table>
<h2>{{t "h.charts"}}</h2>
<div id="charts"></div>
<h2>{{t "h.events"}}</h2>
<table id="events"><tr><th>{{t "ev.time"}}</th><th>{{t "ev.kind"}}</th><th>{{t "ev.source"}}</th><th>{{t "ev.pid"}}</th><th>{{t "ev.message"}}</th></tr>
{{range .Run.Events}}<tr><td>{{time .Time}}</td><td>{{.Kind}}</td><td>{{.Source}}</td><td>{{if .PID}}{{.PID}}{{end}}</td><td>{{.Message}}</td></tr>
{{end}}</table>
<p style="color:#888">{{t "page.footer" .Version}}</p>
<script>{{.UPlotJS}}</script>
<script id="data" type="application/json">{{.JSON}}</script>
<script id="palette" type="application/json">{{.Palette}}</script>
<script>
(function(){
const D = JSON.parse(document.getElementById('data').textContent);
const P = JSON.parse(document.getElementById('palette').textContent);
function fmt(v, unit){
  if (v == null) return '-';
  if (unit === 's') return (v*1000).toFixed(1)+' ms';
  if (unit !== 'bytes') return String(v);
  const u = ['B','KiB','MiB','GiB','TiB']; let i = 0; let a = Math.abs(v);
  while (a >= 1024 && i < u.length-1) { a /= 1024; v /= 1024; i++; }
  return v.toFixed(i ? 2 : 0)+' '+u[i];
}
// Times are 24-hour ISO in the viewer's time zone: "2026-12-01 17:57:05"
// in the legend, "17:57:05" on the ticks with the date under the first; ticks
// fall on whole seconds (no "…:25.500").
const pad = n => String(n).padStart(2, '0');
function hms(d){ return pad(d.getHours())+':'+pad(d.getMinutes())+':'+pad(d.getSeconds()); }
function ymd(d){ return d.getFullYear()+'-'+pad(d.getMonth()+1)+'-'+pad(d.getDate()); }
function isoTime(s){ if (s == null) return '-'; const d = new Date(s*1000); return ymd(d)+' '+hms(d); }
const TIME_INCRS = [1,2,5,10,15,30,60,120,300,600,900,1800,3600,7200,10800,21600,43200,86400,172800,604800];
function timeTicks(u, vals){ return vals.map((v, i) => { const d = new Date(v*1000); return i === 0 ? hms(d)+'\n'+ymd(d) : hms(d); }); }
// Axis ticks of byte charts fall on round binary sizes (512 MiB, 1.5 GiB),
// not on uPlot's decimal steps (200 MB showed as "190.73 MiB"); labels
// drop trailing zeros.
const BYTE_INCRS = [];
for (let k = 0; k <= 4; k++) for (const m of [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]) BYTE_INCRS.push(m * Math.pow(1024, k));
function axisFmt(v, unit){
  const s = fmt(v, unit);
  return unit === 'bytes' ? s.replace(/(\.\d*?)0+ /, '$1 ').replace('. ', ' ') : s;
}
const markColor = k => (P.markers[k] || {}).color || '#999';
const markLabel = k => (P.markers[k] || {}).label || k;
function marks(u){
  const ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
  ctx.save(); ctx.lineWidth = 1.5;
  for (const e of D.events) {
    const x = Math.round(u.valToPos(e.t, 'x', true));
    if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
    ctx.strokeStyle = markColor(e.kind); ctx.setLineDash([4,3]);
    ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top+h); ctx.stroke();
  }
  ctx.restore();
}
function limitLine(c){ return u => {
  if (c.limit == null) return;
  const y = Math.round(u.valToPos(c.limit, 'y', true)); const ctx = u.ctx;
  ctx.save(); ctx.strokeStyle = markColor('limit'); ctx.setLineDash([8,4]);
  ctx.beginPath(); ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left+u.bbox.width, y); ctx.stroke(); ctx.restore();
};}
// markLegend lists the markers this chart draws: the limit line and each
// event kind with an event inside the chart's time range.
function markLegend(c){
  const lo = c.x[0], hi = c.x[c.x.length-1];
  const kinds = [];
  for (const e of D.events) if (e.t >= lo - 1 && e.t <= hi + 1 && !kinds.includes(e.kind)) kinds.push(e.kind);
  const items = (c.limit != null ? [['limit', false]] : []).concat(kinds.map(k => [k, true]));
  const div = document.createElement('div'); div.className = 'marks'; div.dataset.kinds = items.map(x => x[0]).join(',');
  if (!items.length) return div;
  div.append(D.text.markers + ' ');
  for (const [k, vertical] of items) {
    const s = document.createElement('span'); const i = document.createElement('i');
    if (vertical) i.className = 'v';
    i.style.borderColor = markColor(k); s.append(i, markLabel(k)); div.append(s);
  }
  return div;
}
const root = document.getElementById('charts');
if (!D.charts.length) root.textContent = D.text.no_samples;
for (const c of D.charts) {
  const el = document.createElement('div'); el.className = 'chart'; root.appendChild(el);
  const series = [{label: D.text.time, value: (u, v) => isoTime(v)}].concat(c.series.map((n, i) => ({label: n, stroke: c.colors[i], width: 1.5, spanGaps: false,
    paths: c.step[i] ? uPlot.paths.stepped({align: 1}) : undefined, value: (u, v) => fmt(v, c.unit)})));
  const yr = c.limit != null ? {range: (u, lo, hi) => [0, Math.max(hi, c.limit) * 1.05]} : {};
  const y = c.unit === 'bytes' ? {values: (u, vals) => vals.map(v => axisFmt(v, c.unit)), size: 80, incrs: BYTE_INCRS} : {values: (u, vals) => vals.map(v => fmt(v, c.unit)), size: 80};
  const u = new uPlot({title: c.title, width: Math.max(400, Math.min(1150, window.innerWidth - 60)), height: 260,
    scales: {x: {time: true, range: (u, lo, hi) => u.data[0].length === 1 ? [u.data[0][0] - 60, u.data[0][0] + 1] : [lo, hi]}, y: yr},
    axes: [{values: timeTicks, incrs: TIME_INCRS, space: 90}, y],
    series, hooks: {draw: [marks, limitLine(c)]}}, [c.x].concat(c.cols), el);
  el.uplot = u;
  el.appendChild(markLegend(c));
  if (c.note) { const n = document.createElement('p'); n.className = 'note'; n.textContent = c.note; el.appendChild(n); }
}
document.body.dataset.charts = String(D.charts.length);
})();
</script>
</body></html>
`
