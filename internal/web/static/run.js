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
  setStatus(T("runs.count", body.runs.length));
  if (!body.runs.length) { replace("runs", el("p", {class: "muted"}, T("runs.none"))); return; }
  replace("runs", table(["th.id", "th.start", "#th.duration", "th.status", "#th.exit", "#th.peak_host", "#th.peak_gpu", "th.command"], body.runs.map(r => {
    const end = r.end ? new Date(r.end) : (r.status === "running" ? new Date() : null);
    const hostPeak = runPeak(r.peaks, k => k === "cgroup_usage" || k === "pss_total" || k === "rss_total");
    const gpuPeak = runPeak(r.peaks, k => /^gpu\d+_used$/.test(k));
    return el("tr", {"data-run": r.id}, td(el("a", {href: href("/runs/" + encodeURIComponent(r.id))}, r.id)), td(fmtTime(r.start)),
      td(fmtDur(end ? end - new Date(r.start) : null), "num"), td(el("span", {class: "status-" + r.status.replace(" ", "."), "data-status": r.status}, statusText(r.status))),
      td(r.exit_code != null ? r.exit_code : r.signal != null ? T("run.signal", r.signal) : "–", "num"),
      numTd("run." + r.id + ".peak_host", hostPeak), numTd("run." + r.id + ".peak_gpu", gpuPeak), td((r.command || []).join(" ").slice(0, 200), "cmd"));
  })));
}

// ---------- run page ----------

// statusText: a run status in the page's language.
function statusText(st) { return textOr("status." + st.replace(" ", "_"), st); }

// BREAK_KINDS: events no series is carried across (webassets.Gaps' breaks).
const BREAK_KINDS = ["oom_kill", "cgroup_oom"];

// seriesOf turns API samples into chart families: [{title, series, data,
// limit, note}], keys and fill rule as the HTML report has them.
function seriesOf(samples) {
  const t = samples.map(s => new Date(s.t).getTime() / 1000);
  const col = f => samples.map(s => { const v = f(s); return v === undefined ? null : v; });
  const has = a => a.some(v => v !== null);
  const breaks = runView.events.filter(e => BREAK_KINDS.includes(e.kind)).map(e => new Date(e.t).getTime() / 1000);
  const fam = (title, defs, value, extra) => {
    const keep = defs.filter(d => has(d.data));
    return keep.length ? Object.assign({title, series: keep.map(d => ({key: d.key, value})), data: fillGaps(t, keep.map(d => d.data), keep.map(d => d.key), breaks)}, extra) : null;
  };
  const ngpu = Math.max(0, ...samples.map(s => (s.gpu_used || []).length), ...samples.map(s => (s.gpu_job_used || []).length));
  const gpu = [];
  for (let i = 0; i < ngpu; i++) {
    gpu.push({key: "gpu" + i + "_used", data: col(s => (s.gpu_used || [])[i])});
    gpu.push({key: "gpu" + i + "_job_used", data: col(s => (s.gpu_job_used || [])[i])});
  }
  return [
    fam(T("chart.host"), [
      {key: "cgroup_usage", data: col(s => s.cgroup_usage)}, {key: "pss_total", data: col(s => s.pss_total)},
      {key: "rss_total", data: col(s => s.rss_total)}, {key: "swap_total", data: col(s => s.swap_total)}], undefined,
      {limit: runView.limit, note: runView.pssNote ? T("note.pss_above_cgroup") : ""}),
    // Apart: the host's tens of GiB would flatten the job's lines.
    fam(T("chart.available"), [{key: "host_available", data: col(s => s.host_available)}]),
    fam(T("chart.gpu"), gpu),
    fam(T("chart.allocator"), [{key: "alloc_allocated", data: col(s => s.alloc_allocated)}, {key: "alloc_reserved", data: col(s => s.alloc_reserved)}]),
    fam(T("chart.step"), [{key: "step", data: col(s => s.step)}], "count"),
  ].filter(Boolean);
}

const runView = {id: null, events: [], marks: [], plots: [], zoomed: false, limit: null, pssNote: false};

function drawCharts(samples, res) {
  const fams = seriesOf(samples);
  const box = document.getElementById("charts");
  document.body.dataset.charts = String(fams.length);
  document.body.dataset.points = String(samples.length);
  const r = samples.length ? fmtTime(samples[0].t) + " – " + fmtTime(samples[samples.length - 1].t) : T("run.no_samples");
  document.getElementById("range").textContent = "(" + r + ", " + T("run.points", samples.length) + (res ? ", " + T("run.buckets", res) : "") + ")";
  if (runView.plots.length === fams.length && runView.plots.every((p, i) => p.series.length === fams[i].data.length)) {
    runView.plots.forEach((p, i) => { p.setData(fams[i].data); p.legendBox.replaceWith(p.legendBox = legendOf(fams[i])); });
    return;
  }
  runView.plots.forEach(p => p.destroy());
  box.replaceChildren();
  runView.plots = fams.map(f => {
    const div = el("div", {class: "chart", "data-title": f.title});
    box.append(div);
    div.dataset.zoom = "data";
    div.events = runView.marks;
    div.limit = f.limit;
    const opts = chartOpts(div, f.title, f.series);
    opts.hooks = {setSelect: [u => zoomTo(u)]};
    const p = new uPlot(opts, f.data, div);
    p.legendBox = legendOf(f);
    div.append(p.legendBox);
    if (f.note) div.append(el("p", {class: "note"}, f.note));
    div.addEventListener("dblclick", () => loadSamples());
    return p;
  });
}

function legendOf(f) {
  const t = f.data[0];
  return markLegend(runView.marks, f.limit, t.length ? t[0] : 0, t.length ? t[t.length - 1] : 0);
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
  document.getElementById("title").textContent = T("run.title", r.id, (r.command || []).join(" "));
  document.title = "torchmem · " + T("run.word") + " " + r.id;
  const end = r.end ? new Date(r.end) : null;
  const cards = [
    card(T("card.status"), el("span", {class: "status-" + r.status.replace(" ", "."), "data-k": "run.status", "data-v": r.status}, statusText(r.status)),
      r.exit_code != null ? T("run.exit", r.exit_code) : r.signal != null ? T("run.signal", r.signal) : ""),
    card(T("card.started"), fmtTime(r.start), r.host || ""),
    card(T("card.duration"), fmtDur((end || new Date()) - new Date(r.start)), end ? T("run.ended", fmtTime(r.end)) : statusText("running")),
  ];
  for (const k of Object.keys(r.peaks || {}).sort()) cards.push(card(T("card.peak_of", seriesStyle(k).label), num("run.peak." + k, r.peaks[k])));
  cards.push(card(T("card.report"), el("a", {href: href("/runs/" + encodeURIComponent(r.id) + "/report.html")}, T("card.report_link")), T("card.report_hint")));
  if (r.labels) cards.push(card(T("card.labels"), Object.entries(r.labels).map(([k, v]) => k + "=" + v).join(" ")));
  replace("summary", cards);
  renderPostmortem(r.summary);
}

function renderPostmortem(raw) {
  if (!raw) { replace("postmortem"); return; }
  // A Chinese page reads the Chinese sentences stored with the run
  // (summary.zh); the raw JSON below stays as stored.
  const zh = document.documentElement.lang.startsWith("zh") && raw.zh;
  const sum = zh ? Object.assign({}, raw, {verdict: raw.zh.verdict, recommendations: raw.zh.recommendations || []}) : raw;
  const kids = [el("h2", {}, T("h.postmortem"))];
  if (sum.verdict || sum.cause) kids.push(el("div", {class: "verdict"}, el("b", {}, sum.cause || ""), sum.verdict ? " — " + sum.verdict : ""));
  if (sum.exception) kids.push(el("pre", {}, sum.exception));
  if ((sum.recommendations || []).length) kids.push(el("ul", {}, sum.recommendations.map(x => el("li", {}, x))));
  if ((sum.kernel_lines || []).length) kids.push(el("pre", {}, sum.kernel_lines.join("\n")));
  kids.push(el("details", {}, el("summary", {}, T("pm.raw")), el("pre", {}, JSON.stringify(raw, null, 2))));
  replace("postmortem", kids);
}

function renderEvents(evs) {
  if (!evs.length) { replace("events", el("p", {class: "muted"}, T("events.none"))); return; }
  replace("events", table(["th.time", "th.kind", "th.source", "th.pid", "th.message"], evs.map(e =>
    el("tr", {"data-kind": e.kind}, td(fmtTime(e.t)), td(e.kind), td(e.source), td(e.pid || "–"), td(e.message)))));
}

async function runPage() {
  runView.id = decodeURIComponent(location.pathname.split("/")[2] || "");
  document.getElementById("reset").addEventListener("click", () => loadSamples());
  try {
    const [r, ev] = await Promise.all([getJSON("/api/v1/runs/" + encodeURIComponent(runView.id)), getJSON("/api/v1/runs/" + encodeURIComponent(runView.id) + "/events")]);
    runView.id = r.id;
    runView.events = ev.events;
    // The charts mark what happened to the job, not each process saying
    // hello (the events table lists those), as the HTML report does.
    runView.marks = ev.events.filter(e => e.kind !== "hello" && e.kind !== "ack");
    runView.limit = r.summary && typeof r.summary.cgroup_limit === "number" ? r.summary.cgroup_limit : null;
    // PSS above cgroup usage needs a word (shared pages, charged elsewhere).
    runView.pssNote = r.peaks && r.peaks.pss_total > r.peaks.cgroup_usage;
    renderRun(r);
    renderEvents(ev.events);
    await loadSamples();
    setStatus(T("run.word") + " " + r.id + (r.status === "running" ? " · " + T("run.refresh") : ""));
    // A running run grows: follow it unless the user zoomed in.
    if (r.status === "running") setInterval(() => { if (!runView.zoomed) loadSamples(); }, 10000);
    document.body.dataset.readyMs = String(Math.round(performance.now()));
    document.body.dataset.ready = "1";
  } catch (e) { showError(e); document.body.dataset.ready = "error"; }
}

