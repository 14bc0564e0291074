// torchmem dashboard, runs and run pages (helpers in app.js).
"use strict";

// Peak keys are store.PeakKey (internal/store/peaks.go); TestDashboardPeakKeys
// checks that the names used here are declared there.
function runPeak(peaks, pred) {
  let best = null;
  for (const [k, v] of Object.entries(peaks || {})) if (pred(k) && (best === null || v > best)) best = v;
  return best;
}

async function runsPage() {
  let body;
  try { body = await getJSON("/api/v1/runs?limit=500"); } catch (e) { showError(e); return; }
  setStatus(body.runs.length + " runs");
  if (!body.runs.length) { replace("runs", el("p", {class: "muted"}, "No run recorded yet: start one with torchmem run -- python train.py")); return; }
  replace("runs", table(["ID", "Start", "#Duration", "Status", "#Exit", "#Peak host", "#Peak GPU", "Command"], body.runs.map(r => {
    const end = r.end ? new Date(r.end) : (r.status === "running" ? new Date() : null);
    const hostPeak = runPeak(r.peaks, k => k === "cgroup_usage" || k === "pss_total" || k === "rss_total");
    const gpuPeak = runPeak(r.peaks, k => /^gpu\d+_used$/.test(k));
    return el("tr", {"data-run": r.id}, td(el("a", {href: "/runs/" + encodeURIComponent(r.id)}, r.id)), td(fmtTime(r.start)),
      td(fmtDur(end ? end - new Date(r.start) : null), "num"), td(el("span", {class: "status-" + r.status.replace(" ", ".")}, r.status)),
      td(r.exit_code != null ? r.exit_code : r.signal != null ? "signal " + r.signal : "–", "num"),
      numTd("run." + r.id + ".peak_host", hostPeak), numTd("run." + r.id + ".peak_gpu", gpuPeak), td((r.command || []).join(" ").slice(0, 200), "cmd"));
  })));
}

// ---------- run page ----------

// seriesOf turns API samples into chart families: [{title, series, data}].
function seriesOf(samples) {
  const t = samples.map(s => new Date(s.t).getTime() / 1000);
  const col = f => samples.map(s => { const v = f(s); return v === undefined ? null : v; });
  const has = a => a.some(v => v !== null);
  const fam = (title, defs, value) => {
    const keep = defs.filter(d => has(d.data));
    return keep.length ? {title, series: keep.map((d, i) => ({label: d.label, stroke: PALETTE[i % PALETTE.length], value})), data: [t, ...keep.map(d => d.data)]} : null;
  };
  const ngpu = Math.max(0, ...samples.map(s => (s.gpu_used || []).length), ...samples.map(s => (s.gpu_job_used || []).length));
  const gpu = [];
  for (let i = 0; i < ngpu; i++) {
    gpu.push({label: "GPU " + i + " used (device)", data: col(s => (s.gpu_used || [])[i])});
    gpu.push({label: "GPU " + i + " used by job", data: col(s => (s.gpu_job_used || [])[i])});
  }
  return [
    fam("Job host memory", [
      {label: "cgroup usage", data: col(s => s.cgroup_usage)}, {label: "RSS total", data: col(s => s.rss_total)},
      {label: "PSS total", data: col(s => s.pss_total)}, {label: "swap", data: col(s => s.swap_total)}]),
    // Apart: the host's tens of GiB would flatten the job's lines.
    fam("Host memory available", [{label: "host available (MemAvailable)", data: col(s => s.host_available)}]),
    fam("GPU memory", gpu),
    fam("PyTorch allocator", [{label: "allocated", data: col(s => s.alloc_allocated)}, {label: "reserved", data: col(s => s.alloc_reserved)}]),
    fam("Optimizer step", [{label: "step", data: col(s => s.step)}], "count"),
  ].filter(Boolean);
}

const runView = {id: null, events: [], plots: [], zoomed: false};

function drawCharts(samples, res) {
  const fams = seriesOf(samples);
  const box = document.getElementById("charts");
  document.body.dataset.charts = String(fams.length);
  document.body.dataset.points = String(samples.length);
  const r = samples.length ? fmtTime(samples[0].t) + " – " + fmtTime(samples[samples.length - 1].t) : "no samples";
  document.getElementById("range").textContent = "(" + r + ", " + samples.length + " points" + (res ? ", " + res + " ms buckets" : "") + ")";
  if (runView.plots.length === fams.length && runView.plots.every((p, i) => p.series.length === fams[i].data.length)) {
    runView.plots.forEach((p, i) => p.setData(fams[i].data));
    return;
  }
  runView.plots.forEach(p => p.destroy());
  box.replaceChildren();
  runView.plots = fams.map(f => {
    const div = el("div", {class: "chart"});
    box.append(div);
    div.dataset.zoom = "data";
    div.events = runView.events;
    const opts = chartOpts(div, f.title, f.series);
    opts.hooks = {setSelect: [u => zoomTo(u)]};
    const p = new uPlot(opts, f.data, div);
    div.addEventListener("dblclick", () => loadSamples());
    return p;
  });
}

// zoomTo fetches the selected range at full resolution (within max_points).
function zoomTo(u) {
  if (u.select.width < 5) return;
  const from = u.posToVal(u.select.left, "x"), to = u.posToVal(u.select.left + u.select.width, "x");
  u.setSelect({left: 0, width: 0, top: 0, height: 0}, false);
  loadSamples(Math.floor(from * 1000), Math.ceil(to * 1000));
}

async function loadSamples(from, to) {
  runView.zoomed = Boolean(from || to);
  // One bucket per pixel: buckets keep their maxima, so peaks survive.
  const q = new URLSearchParams({max_points: String(Math.min(4000, Math.max(500, Math.round(window.innerWidth))))});
  if (from) q.set("from", String(from));
  if (to) q.set("to", String(to));
  try {
    const b = await getJSON("/api/v1/runs/" + encodeURIComponent(runView.id) + "/samples?" + q);
    const res = b.samples.reduce((m, s) => Math.max(m, s.res_ms || 0), 0);
    drawCharts(b.samples, res);
  } catch (e) { showError(e); }
}

function renderRun(r) {
  document.getElementById("title").textContent = "Run " + r.id + ": " + (r.command || []).join(" ");
  document.title = "torchmem · run " + r.id;
  const end = r.end ? new Date(r.end) : null;
  const cards = [
    card("Status", el("span", {class: "status-" + r.status.replace(" ", "."), "data-k": "run.status", "data-v": r.status}, r.status),
      r.exit_code != null ? "exit " + r.exit_code : r.signal != null ? "signal " + r.signal : ""),
    card("Started", fmtTime(r.start), r.host || ""),
    card("Duration", fmtDur((end || new Date()) - new Date(r.start)), end ? "ended " + fmtTime(r.end) : "running"),
  ];
  for (const k of Object.keys(r.peaks || {}).sort()) cards.push(card((k.startsWith("alloc_peak") ? "allocator " + k.slice(6) : "peak " + k).replace(/_/g, " "), num("run.peak." + k, r.peaks[k])));
  cards.push(card("Report", el("a", {href: "/runs/" + encodeURIComponent(r.id) + "/report.html"}, "self-contained HTML"), "for mail or tickets"));
  if (r.labels) cards.push(card("Labels", Object.entries(r.labels).map(([k, v]) => k + "=" + v).join(" ")));
  replace("summary", cards);
  renderPostmortem(r.summary);
}

function renderPostmortem(sum) {
  if (!sum) { replace("postmortem"); return; }
  const kids = [el("h2", {}, "Post-mortem")];
  if (sum.verdict || sum.cause) kids.push(el("div", {class: "verdict"}, el("b", {}, sum.cause || ""), sum.verdict ? " — " + sum.verdict : ""));
  if (sum.exception) kids.push(el("pre", {}, sum.exception));
  if ((sum.recommendations || []).length) kids.push(el("ul", {}, sum.recommendations.map(x => el("li", {}, x))));
  if ((sum.kernel_lines || []).length) kids.push(el("pre", {}, sum.kernel_lines.join("\n")));
  kids.push(el("details", {}, el("summary", {}, "raw post-mortem"), el("pre", {}, JSON.stringify(sum, null, 2))));
  replace("postmortem", kids);
}

function renderEvents(evs) {
  if (!evs.length) { replace("events", el("p", {class: "muted"}, "No events.")); return; }
  replace("events", table(["Time", "Kind", "Source", "PID", "Message"], evs.map(e =>
    el("tr", {"data-kind": e.kind}, td(fmtTime(e.t)), td(e.kind), td(e.source), td(e.pid || "–"), td(e.message)))));
}

async function runPage() {
  runView.id = decodeURIComponent(location.pathname.split("/")[2] || "");
  document.getElementById("reset").addEventListener("click", () => loadSamples());
  try {
    const [r, ev] = await Promise.all([getJSON("/api/v1/runs/" + encodeURIComponent(runView.id)), getJSON("/api/v1/runs/" + encodeURIComponent(runView.id) + "/events")]);
    runView.id = r.id;
    runView.events = ev.events;
    renderRun(r);
    renderEvents(ev.events);
    await loadSamples();
    setStatus("run " + r.id + (r.status === "running" ? " · refreshed every 10 s" : ""));
    // A running run grows: follow it unless the user zoomed in.
    if (r.status === "running") setInterval(() => { if (!runView.zoomed) loadSamples(); }, 10000);
    document.body.dataset.readyMs = String(Math.round(performance.now()));
    document.body.dataset.ready = "1";
  } catch (e) { showError(e); document.body.dataset.ready = "error"; }
}

