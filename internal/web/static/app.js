// torchmem dashboard: node, runs and run pages over the JSON API.
// No framework, no network beyond this agent. Every number shown is an
// element with data-k (what it is) and data-v (the raw API value), so a
// test can check the page against the API.
"use strict";

// fmtBytes matches internal/units.Bytes: "512 B", "1.50 GiB".
function fmtBytes(n) {
  if (n === null || n === undefined) return "–";
  if (n < 0) return "-" + fmtBytes(-n);
  const u = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let f = n, i = 0;
  while (f >= 1024 && i < u.length - 1) { f /= 1024; i++; }
  return i === 0 ? n + " B" : f.toFixed(2) + " " + u[i];
}
function fmtTime(s) { return s ? new Date(s).toLocaleString() : "–"; }
function fmtDur(ms) {
  if (ms === null || ms === undefined || ms < 0) return "–";
  const s = Math.round(ms / 1000), h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60);
  return h ? h + "h" + String(m).padStart(2, "0") + "m" : m ? m + "m" + String(s % 60).padStart(2, "0") + "s" : s + "s";
}

// el builds an element: el("td", {class: "num"}, child, "text", ...).
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const k of kids.flat()) {
    if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
  }
  return e;
}
// num is a shown number: key, raw value, formatted text.
function num(key, v, fmt) {
  return el("span", {"data-k": key, "data-v": v === null || v === undefined ? "" : String(v)}, (fmt || fmtBytes)(v));
}
function td(x, cls) { return el("td", {class: cls}, x); }
function numTd(key, v, fmt) { return td(num(key, v, fmt), "num"); }
function table(head, rows) {
  return el("table", {}, el("thead", {}, el("tr", {}, head.map(h => el("th", {class: h.startsWith("#") ? "num" : null}, h.replace(/^#/, ""))))),
    el("tbody", {}, rows));
}
function card(label, value, src) {
  return el("div", {class: "card"}, el("div", {class: "label"}, label), el("div", {class: "value"}, value), src ? el("div", {class: "src"}, src) : null);
}
function bar(frac) {
  const f = Math.max(0, Math.min(1, frac || 0));
  return el("div", {class: "bar" + (f > 0.9 ? " hi" : ""), title: (100 * f).toFixed(1) + "%"}, el("div", {style: "width:" + (100 * f).toFixed(1) + "%"}));
}
function replace(id, ...kids) { const e = document.getElementById(id); e.replaceChildren(...kids.flat()); return e; }
function setStatus(t) { document.getElementById("status").textContent = t; }

async function getJSON(path) {
  const r = await fetch(path, {credentials: "same-origin", cache: "no-store"});
  const body = await r.json().catch(() => ({error: r.status + " " + r.statusText}));
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}
function showError(err) {
  replace("notices", el("div", {class: "notice error"}, String(err.message || err)));
}

// ---------- node page ----------

const live = {t: [], avail: [], gpus: {}, plot: null, max: 3600};

function renderNode(n) {
  const s = n.sample;
  document.getElementById("title").textContent = "Node " + n.host;
  setStatus((s ? "sampled " + new Date(s.time).toLocaleTimeString() : "no sample") + " · every " + n.interval_seconds + " s · " + n.version);
  const notes = [];
  if (n.sample_error) notes.push(el("div", {class: "notice error"}, "sampling failed: " + n.sample_error));
  if (n.history_error) notes.push(el("div", {class: "notice error"}, "history: " + n.history_error));
  for (const t of (s && s.notices) || []) notes.push(el("div", {class: "notice"}, t));
  replace("notices", notes);
  if (!s) return;
  renderHost(s.host);
  renderGPUs(s.gpu);
  renderJobs(s, n.runs || []);
  pushLive(s);
}

function renderHost(h) {
  const m = h.meminfo || {};
  const swapUsed = m.swap_total_bytes != null && m.swap_free_bytes != null ? m.swap_total_bytes - m.swap_free_bytes : null;
  const cards = [
    card("Host memory available", num("host.available", m.mem_available_bytes), "of " + fmtBytes(m.mem_total_bytes) + " · /proc/meminfo"),
    card("Host memory total", num("host.total", m.mem_total_bytes), "/proc/meminfo"),
    card("Swap used", num("host.swap_used", swapUsed), "of " + fmtBytes(m.swap_total_bytes)),
    card("Shared memory (/dev/shm)", num("host.shmem", m.shmem_bytes), "Shmem"),
  ];
  if (h.psi && h.psi.some) {
    const pct = v => v.toFixed(2) + " %";
    cards.push(card("Memory pressure (some, 10 s)", num("host.psi_some_avg10", h.psi.some.avg10, pct), "60 s: " + pct(h.psi.some.avg60) + " · PSI"));
    if (h.psi.full) cards.push(card("Memory pressure (full, 10 s)", num("host.psi_full_avg10", h.psi.full.avg10, pct), "60 s: " + pct(h.psi.full.avg60) + " · PSI"));
  }
  cards.push(card("cgroups", h.cgroup_mode || "–"));
  replace("host", cards);
}

function renderGPUs(g) {
  const devs = g.devices || [];
  if (!devs.length) {
    replace("gpus", el("p", {class: "muted"}, g.error ? "GPU backend error: " + g.error : "No GPU (backend: " + ((g.info && g.info.backend) || "none") + ")."));
    return;
  }
  const procs = {};
  for (const p of g.processes || []) (procs[p.gpu_index] = procs[p.gpu_index] || []).push(p.pid || p.host_pid);
  replace("gpus", table(["GPU", "Name", "#Used", "#Reserved", "#Total", "Use", "Processes"], devs.map(d =>
    el("tr", {}, td(d.index), td(d.name), numTd("gpu." + d.index + ".used", d.used_bytes), numTd("gpu." + d.index + ".reserved", d.reserved_bytes),
      numTd("gpu." + d.index + ".total", d.total_bytes), td(bar(d.used_bytes / d.total_bytes)), td((procs[d.index] || []).join(", ") || "–"))
  )), el("p", {class: "muted small"}, "Backend " + g.info.backend + (g.info.driver_version ? ", driver " + g.info.driver_version : "")));
}

function renderJobs(s, runs) {
  const jobs = s.jobs || [];
  if (!jobs.length) { replace("jobs", el("p", {class: "muted"}, "No PyTorch process on this node.")); return; }
  const runOf = {};
  for (const r of runs) if (r.job) runOf[r.job] = r;
  replace("jobs", jobs.map(j => renderJob(j, runOf[j.id])));
}

function renderJob(j, run) {
  const t = j.totals, id = j.id, cg = j.cgroup;
  const cards = [
    card("Processes", num("job." + id + ".processes", t.processes, String), t.workers + " DataLoader workers"),
    card("RSS", num("job." + id + ".rss", t.rss_bytes), "status"),
    card("PSS", num("job." + id + ".pss", t.pss_bytes), (t.sources.pss || "–") + (t.pss_complete ? "" : " · incomplete") + " · age " + t.pss_max_age_seconds.toFixed(0) + " s"),
    card("USS", num("job." + id + ".uss", t.uss_bytes), t.sources.uss || "–"),
    card("Swap", num("job." + id + ".swap", t.swap_bytes), "status"),
    card("GPU", num("job." + id + ".gpu", t.gpu_bytes), t.sources.gpu || "no GPU backend"),
  ];
  if (cg) {
    const limit = typeof cg.max === "number" ? cg.max : null;
    cards.push(card("cgroup usage", num("job." + id + ".cgroup_usage", cg.usage_bytes), limit ? ["limit ", num("job." + id + ".cgroup_limit", limit)] : "no limit · " + cg.path));
    if (limit) cards.push(card("cgroup headroom", num("job." + id + ".cgroup_headroom", j.cgroup_headroom_bytes), bar(cg.usage_bytes / limit)));
    if (cg.events && cg.events.oom_kill != null) cards.push(card("OOM kills", num("job." + id + ".oom_kills", cg.events.oom_kill, String), cg.events.source));
  }
  if (run) {
    const rid = "run." + run.id;
    cards.push(card("Allocator allocated", num(rid + ".allocated", run.allocated_bytes), "peak " + fmtBytes(run.peak_allocated_bytes)));
    cards.push(card("Allocator reserved", num(rid + ".reserved", run.reserved_bytes), "peak " + fmtBytes(run.peak_reserved_bytes)));
    cards.push(card("Step", num(rid + ".step", run.step, v => v == null ? "–" : String(v)), "CUDA OOMs " + run.cuda_ooms + (run.alloc_retries != null ? " · retries " + run.alloc_retries : "")));
  }
  const procs = table(["PID", "Role", "#RSS", "#PSS", "#USS", "#Swap", "#GPU", "#PSS age", "Command"], j.processes.map(p => {
    const k = "proc." + p.pid + ".";
    return el("tr", {}, td(p.pid), td(p.role), numTd(k + "rss", p.rss_bytes), numTd(k + "pss", p.pss_bytes), numTd(k + "uss", p.uss_bytes),
      numTd(k + "swap", p.swap_bytes), numTd(k + "gpu", p.gpu_bytes), td(p.pss_age_seconds == null ? "–" : p.pss_age_seconds.toFixed(0) + " s", "num"),
      td((p.cmdline || []).join(" ").slice(0, 160), "cmd hide-narrow"));
  }));
  const head = el("h3", {}, j.command, " ", el("span", {class: "muted"}, "(" + id + ")"), run ? [" · run ", el("a", {href: "/runs/" + encodeURIComponent(run.id)}, run.id)] : null);
  return el("div", {class: "job", "data-job": id}, head, el("div", {class: "cards"}, cards), el("h4", {}, "Processes"), procs);
}

function pushLive(s) {
  const t = new Date(s.time).getTime() / 1000;
  if (live.t.length && t <= live.t[live.t.length - 1]) return;
  live.t.push(t);
  live.avail.push(s.host.meminfo.mem_available_bytes);
  for (const d of s.gpu.devices || []) {
    const a = live.gpus[d.index] || (live.gpus[d.index] = new Array(live.t.length - 1).fill(null));
    a.push(d.used_bytes);
  }
  for (const a of Object.values(live.gpus)) while (a.length < live.t.length) a.push(null);
  if (live.t.length > live.max) { live.t.shift(); live.avail.shift(); for (const a of Object.values(live.gpus)) a.shift(); }
  const idx = Object.keys(live.gpus);
  const data = [live.t, live.avail, ...idx.map(i => live.gpus[i])];
  if (!live.plot || live.plot.series.length !== data.length) {
    const box = document.getElementById("live");
    box.replaceChildren();
    live.plot = new uPlot(chartOpts(box, "", [{label: "host available", stroke: "#2f6fde"}, ...idx.map((i, k) => ({label: "GPU " + i + " used", stroke: PALETTE[(k + 2) % PALETTE.length]}))], 220), data, box);
  } else {
    live.plot.setData(data);
  }
}

async function nodePage() {
  try { renderNode(await getJSON("/api/v1/node")); } catch (e) { showError(e); }
  const es = new EventSource("/api/v1/stream");
  es.addEventListener("node", ev => { try { renderNode(JSON.parse(ev.data)); } catch (e) { showError(e); } });
  es.onerror = () => setStatus("live stream interrupted; retrying…");
}

// ---------- runs page ----------

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

const PALETTE = ["#2f6fde", "#c0392b", "#2e8540", "#8e44ad", "#d35400", "#16a085", "#7f8c8d", "#b7791f", "#34495e", "#e84393"];

function chartOpts(box, title, series, height) {
  return {
    title, width: Math.max(300, box.clientWidth - 12), height: height || 240,
    cursor: {sync: {key: "torchmem"}, drag: {x: true, y: false, setScale: box.dataset.zoom !== "data"}},
    scales: {x: {time: true, range: (u, lo, hi) => lo === hi ? [lo - 60, hi + 1] : [lo, hi]}},
    axes: [{}, {values: (u, vals) => vals.map(v => v == null ? "" : series[0].value === "count" ? String(v) : fmtBytes(v)), size: 80}],
    series: [{}, ...series.map(s => ({label: s.label, stroke: s.stroke, width: 1.5, spanGaps: false,
      value: (u, v) => v == null ? "–" : s.value === "count" ? String(v) : fmtBytes(v)}))],
    plugins: box.events ? [eventMarks(box.events)] : [],
  };
}

// eventMarks draws the run's events as vertical lines on a chart.
function eventMarks(events) {
  return {hooks: {draw: [u => {
    const ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
    ctx.save();
    ctx.lineWidth = 1;
    for (const e of events) {
      const x = u.valToPos(new Date(e.t).getTime() / 1000, "x", true);
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
      ctx.strokeStyle = /oom|kill|exception/.test(e.kind) ? "#c0392b" : "#b7791f";
      ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + h); ctx.stroke();
    }
    ctx.restore();
  }]}};
}

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
      {label: "PSS total", data: col(s => s.pss_total)}, {label: "swap", data: col(s => s.swap_total)},
      {label: "host available", data: col(s => s.host_available)}]),
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
  const q = new URLSearchParams({max_points: String(Math.min(4000, Math.max(500, 2 * window.innerWidth)))});
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

document.addEventListener("DOMContentLoaded", () => {
  const page = document.body.dataset.page;
  const nav = document.getElementById(page === "node" ? "nav-node" : "nav-runs");
  if (nav) nav.classList.add("active");
  ({node: nodePage, runs: runsPage, run: runPage})[page]();
});
