package report

// pageHTML is the report template: inline CSS and JS only (no network).
const pageHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>torchmem run {{.Run.Run.ID}}</title>
<style>{{.UPlotCSS}}</style>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:20px;color:#222;max-width:1200px}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:24px 0 8px}
code,pre{font:12px ui-monospace,monospace} pre{background:#f6f6f6;padding:8px;overflow:auto;white-space:pre-wrap}
table{border-collapse:collapse} td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}
.verdict{font-size:16px;padding:8px;border-left:4px solid #888;background:#fafafa}
.bad{border-color:#c0392b} .ok{border-color:#27ae60}
.chart{margin:12px 0}
</style></head><body>
<h1>torchmem run {{.Run.Run.ID}} — {{.Run.Run.Status}}</h1>
<div><code>{{.Command}}</code></div>
<div>started {{time .Run.Run.Start}}, ran {{.Duration}}{{if .Run.Run.Host}}, host {{.Run.Run.Host}}{{end}}{{if .Run.Run.Cwd}}, in {{.Run.Run.Cwd}}{{end}}</div>

<h2>Post-mortem</h2>
{{with .Summary}}{{if .Verdict}}
<div id="verdict" class="verdict {{if eq .Cause "ok"}}ok{{else}}bad{{end}}">{{.Verdict}} (exit status {{.ExitCode}})</div>
{{if .Recommendations}}<h3>What to change</h3><ul>{{range .Recommendations}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Incidents}}<h3>Explanation</h3>{{range .Incidents}}<p><b>{{.Explanation.Verdict}}</b>{{if .Explanation.Alternatives}} (or {{range $i, $a := .Explanation.Alternatives}}{{if $i}}, {{end}}{{$a}}{{end}}){{end}} ({{.Kind}}): {{.Explanation.Summary}}</p>
{{if .Explanation.Arithmetic}}<pre>{{range .Explanation.Arithmetic}}{{.}}
{{end}}</pre>{{end}}{{end}}{{end}}
{{with .CopyOnRead}}<h3>DataLoader workers: copy-on-read</h3>
<p>{{.Workers}} of {{.Measured}} workers measured copied the dataset on read (written private memory, smaps_rollup Private_Dirty; the parent's anonymous RSS from /proc/PID/status).</p>
<table id="copy-on-read"><tr><th>worker pid</th><th>parent pid</th><th>private first</th><th>private last</th><th>growth</th><th>parent growth</th><th>over</th><th>copying</th></tr>
{{range .PerWorker}}<tr><td>{{.PID}}</td><td>{{.ParentPID}}</td><td>{{bytes .FirstPrivate}}</td><td>{{bytes .LastPrivate}}</td><td>{{bytes .Growth}}</td><td>{{bytes .ParentGrowth}}</td><td>{{printf "%.0f s" .Seconds}}</td><td>{{if .Grew}}yes{{else}}no{{end}}</td></tr>
{{end}}</table>{{end}}
{{if .Notes}}<h3>Evidence</h3><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Exception}}<h3>Exception</h3><pre>{{.Exception}}</pre>{{end}}
{{if .KernelLines}}<h3>Kernel log</h3><pre>{{range .KernelLines}}{{.}}
{{end}}</pre>{{end}}
{{if .OrphansKilled}}<p>{{.OrphansKilled}} process(es) left behind by the job were killed at the end.</p>{{end}}
{{else}}<div id="verdict" class="verdict bad">No post-mortem: the run is {{$.Run.Run.Status}}.</div>{{end}}{{end}}

<h2>Peaks</h2>
<table>{{range .Peaks}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table>

<h2>Memory over time</h2>
<div id="charts"></div>

<h2>Events</h2>
<table id="events"><tr><th>time</th><th>kind</th><th>source</th><th>pid</th><th>message</th></tr>
{{range .Run.Events}}<tr><td>{{time .Time}}</td><td>{{.Kind}}</td><td>{{.Source}}</td><td>{{if .PID}}{{.PID}}{{end}}</td><td>{{.Message}}</td></tr>
{{end}}</table>
<p style="color:#888">Made by torchmem; charts by uPlot {{.Version}} (MIT), inlined.</p>

<script>{{.UPlotJS}}</script>
<script id="data" type="application/json">{{.JSON}}</script>
<script>
(function(){
const D = JSON.parse(document.getElementById('data').textContent);
const COLORS = ['#1f77b4','#d62728','#2ca02c','#9467bd','#ff7f0e','#8c564b','#e377c2','#17becf'];
const EV = {oom_kill:'#c0392b', cgroup_oom:'#c0392b', cuda_oom:'#c0392b', exception:'#c0392b', warn:'#e67e22', cgroup_threshold:'#e67e22', cleanup:'#2980b9', snapshot:'#8e44ad', exit:'#555', signal:'#555'};
function fmt(v, unit){
  if (v == null) return '-';
  if (unit === 's') return (v*1000).toFixed(1)+' ms';
  if (unit !== 'bytes') return String(v);
  const u = ['B','KiB','MiB','GiB','TiB']; let i = 0; let a = Math.abs(v);
  while (a >= 1024 && i < u.length-1) { a /= 1024; v /= 1024; i++; }
  return v.toFixed(i ? 2 : 0)+' '+u[i];
}
// Axis ticks of byte charts fall on round binary sizes (512 MiB, 1.5 GiB),
// not on uPlot's decimal steps (200 MB showed as "190.73 MiB"); labels
// drop trailing zeros.
const BYTE_INCRS = [];
for (let k = 0; k <= 4; k++) for (const m of [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]) BYTE_INCRS.push(m * Math.pow(1024, k));
function axisFmt(v, unit){
  const s = fmt(v, unit);
  return unit === 'bytes' ? s.replace(/(\.\d*?)0+ /, '$1 ').replace('. ', ' ') : s;
}
function marks(u){
  const ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
  ctx.save(); ctx.lineWidth = 1.5;
  for (const e of D.events) {
    const x = Math.round(u.valToPos(e.t, 'x', true));
    if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
    ctx.strokeStyle = EV[e.kind] || '#999'; ctx.setLineDash([4,3]);
    ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top+h); ctx.stroke();
  }
  ctx.restore();
}
function limitLine(c){ return u => {
  if (c.limit == null) return;
  const y = Math.round(u.valToPos(c.limit, 'y', true)); const ctx = u.ctx;
  ctx.save(); ctx.strokeStyle = '#c0392b'; ctx.setLineDash([8,4]);
  ctx.beginPath(); ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left+u.bbox.width, y); ctx.stroke(); ctx.restore();
};}
const root = document.getElementById('charts');
if (!D.charts.length) root.textContent = 'No samples were stored for this run.';
for (const c of D.charts) {
  const el = document.createElement('div'); el.className = 'chart'; root.appendChild(el);
  const series = [{}].concat(c.series.map((n, i) => ({label: n, stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: true, value: (u, v) => fmt(v, c.unit)})));
  const yr = c.limit != null ? {range: (u, lo, hi) => [0, Math.max(hi, c.limit) * 1.05]} : {};
  new uPlot({title: c.title, width: Math.max(400, Math.min(1150, window.innerWidth - 60)), height: 260,
    scales: {x: {time: true}, y: yr}, series: series,
    axes: [{}, Object.assign({size: 80, values: (u, vals) => vals.map(v => axisFmt(v, c.unit))}, c.unit === 'bytes' ? {incrs: BYTE_INCRS} : {})],
    hooks: {draw: [marks, limitLine(c)]}}, [c.x].concat(c.cols), el);
}
document.body.dataset.charts = String(D.charts.length);
})();
</script>
</body></html>
`
