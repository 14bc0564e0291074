// torchmem dashboard, node page (helpers in app.js).
"use strict";

const live = {t: [], avail: [], gpus: {}, plot: null, max: 3600};

function renderNode(n) {
  const s = n.sample;
  document.getElementById("title").textContent = T("node.title", n.host);
  setStatus((s ? T("node.sampled", fmtClock(s.time)) : T("node.no_sample")) + " · " + T("node.every", n.interval_seconds) + " · " + n.version);
  const notes = [];
  if (n.sample_error) notes.push(el("div", {class: "notice error"}, T("node.sample_failed", n.sample_error)));
  if (n.history_error) notes.push(el("div", {class: "notice error"}, T("node.history_error", n.history_error)));
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
    card(T("card.host_available"), num("host.available", m.mem_available_bytes), T("card.of", fmtBytes(m.mem_total_bytes)) + " · /proc/meminfo"),
    card(T("card.host_total"), num("host.total", m.mem_total_bytes), "/proc/meminfo"),
    card(T("card.swap_used"), num("host.swap_used", swapUsed), T("card.of", fmtBytes(m.swap_total_bytes))),
    card(T("card.shmem"), num("host.shmem", m.shmem_bytes), "Shmem"),
  ];
  if (h.psi && h.psi.some) {
    const pct = v => v.toFixed(2) + " %";
    cards.push(card(T("card.psi_some"), num("host.psi_some_avg10", h.psi.some.avg10, pct), T("card.psi_60", pct(h.psi.some.avg60))));
    if (h.psi.full) cards.push(card(T("card.psi_full"), num("host.psi_full_avg10", h.psi.full.avg10, pct), T("card.psi_60", pct(h.psi.full.avg60))));
  }
  cards.push(card(T("card.cgroups"), h.cgroup_mode || "–"));
  replace("host", cards);
}

function renderGPUs(g) {
  const devs = g.devices || [];
  if (!devs.length) {
    replace("gpus", el("p", {class: "muted"}, g.error ? T("gpu.error", g.error) : T("gpu.none", (g.info && g.info.backend) || "none")));
    return;
  }
  const procs = {};
  for (const p of g.processes || []) (procs[p.gpu_index] = procs[p.gpu_index] || []).push(p.pid || p.host_pid);
  replace("gpus", table(["th.gpu", "th.name", "#th.used", "#th.reserved", "#th.total", "th.use", "th.processes"], devs.map(d =>
    el("tr", {}, td(d.index), td(d.name), numTd("gpu." + d.index + ".used", d.used_bytes), numTd("gpu." + d.index + ".reserved", d.reserved_bytes),
      numTd("gpu." + d.index + ".total", d.total_bytes), td(bar(d.used_bytes / d.total_bytes)), td((procs[d.index] || []).join(", ") || "–"))
  )), el("p", {class: "muted small"}, T("gpu.backend", g.info.backend) + (g.info.driver_version ? T("gpu.driver", g.info.driver_version) : "")));
}

function renderJobs(s, runs) {
  const jobs = s.jobs || [];
  if (!jobs.length && !runs.length) { replace("jobs", el("p", {class: "muted"}, T("jobs.none"))); return; }
  const runOf = {};
  for (const r of runs) if (r.job) runOf[r.job] = r;
  // Runs whose job is not among the sampled processes (another PID
  // namespace, or just ended) still show their allocator figures.
  const loose = runs.filter(r => !r.job).map(r => el("div", {class: "job", "data-run": r.id},
    el("h3", {}, (r.command || []).join(" "), " · " + T("run.word") + " ", el("a", {href: href("/runs/" + encodeURIComponent(r.id))}, r.id)),
    el("div", {class: "cards"}, runCards(r))));
  replace("jobs", jobs.map(j => renderJob(j, runOf[j.id])), loose);
}

function renderJob(j, run) {
  const t = j.totals, id = j.id, cg = j.cgroup;
  const cards = [
    card(T("card.processes"), num("job." + id + ".processes", t.processes, String), T("card.workers", t.workers)),
    card("RSS", num("job." + id + ".rss", t.rss_bytes), "status"),
    card("PSS", num("job." + id + ".pss", t.pss_bytes), (t.sources.pss || "–") + (t.pss_complete ? "" : " · " + T("card.incomplete")) + " · " + T("card.age", t.pss_max_age_seconds.toFixed(0))),
    card("USS", num("job." + id + ".uss", t.uss_bytes), t.sources.uss || "–"),
    card(T("card.swap"), num("job." + id + ".swap", t.swap_bytes), "status"),
    card("GPU", num("job." + id + ".gpu", t.gpu_bytes), t.sources.gpu || T("card.no_gpu_backend")),
  ];
  if (cg) {
    const limit = typeof cg.max === "number" ? cg.max : null;
    cards.push(card(T("card.cgroup_usage"), num("job." + id + ".cgroup_usage", cg.usage_bytes), limit ? [T("card.limit") + " ", num("job." + id + ".cgroup_limit", limit)] : T("card.no_limit") + " · " + cg.path));
    if (limit) cards.push(card(T("card.cgroup_headroom"), num("job." + id + ".cgroup_headroom", j.cgroup_headroom_bytes), bar(cg.usage_bytes / limit)));
    if (cg.events && cg.events.oom_kill != null) cards.push(card(T("card.oom_kills"), num("job." + id + ".oom_kills", cg.events.oom_kill, String), cg.events.source));
  }
  if (run) cards.push(...runCards(run));
  const procs = table(["th.pid", "th.role", "#RSS", "#PSS", "#USS", "#th.swap", "#GPU", "#th.pss_age", "th.command"], j.processes.map(p => {
    const k = "proc." + p.pid + ".";
    return el("tr", {}, td(p.pid), td(el("span", {"data-role": p.role}, textOr("role." + p.role, p.role))), numTd(k + "rss", p.rss_bytes), numTd(k + "pss", p.pss_bytes), numTd(k + "uss", p.uss_bytes),
      numTd(k + "swap", p.swap_bytes), numTd(k + "gpu", p.gpu_bytes), td(p.pss_age_seconds == null ? "–" : p.pss_age_seconds.toFixed(0) + " s", "num"),
      td((p.cmdline || []).join(" ").slice(0, 160), "cmd hide-narrow"));
  }));
  const head = el("h3", {}, j.command, " ", el("span", {class: "muted"}, "(" + id + ")"), run ? [" · " + T("run.word") + " ", el("a", {href: href("/runs/" + encodeURIComponent(run.id))}, run.id)] : null);
  const w = who(j.identity);
  const whoLine = w ? el("p", {class: "who", "data-who": id}, w, " ", el("span", {class: "muted"}, j.key)) : null;
  return el("div", {class: "job", "data-job": id}, head, whoLine, el("div", {class: "cards"}, cards), el("h4", {}, T("card.processes")), procs);
}

// who: whose job it is (docs/serve.md, "Workload identity"): the pod,
// Slurm job step, container or systemd unit; "" when nothing names it.
function who(id) {
  if (!id) return "";
  const k = id.kubernetes, s = id.slurm, c = id.container;
  if (k) {
    const name = k.pod ? [k.namespace, k.pod, k.container].filter(Boolean).join("/") : T("who.pod", k.pod_uid);
    const gpus = (k.gpus || []).length ? " · " + T("who.gpus", k.gpus.join(", ")) : "";
    return "Kubernetes " + name + (k.qos ? " · " + k.qos : "") + gpus;
  }
  if (s) {
    const extra = [s.user, s.partition].filter(Boolean).join(", ");
    return T("who.slurm", s.job_id + (s.step ? "." + s.step : "")) + (extra ? " (" + extra + ")" : "");
  }
  if (c) return T("who.container", c.runtime, c.id.slice(0, 12));
  return id.unit ? "systemd " + id.unit : "";
}

// runCards: a running run's allocator figures (from the in-process hook).
function runCards(run) {
  const rid = "run." + run.id;
  return [
    card(T("card.alloc_allocated"), num(rid + ".allocated", run.allocated_bytes), T("card.peak", fmtBytes(run.peak_allocated_bytes))),
    card(T("card.alloc_reserved"), num(rid + ".reserved", run.reserved_bytes), T("card.peak", fmtBytes(run.peak_reserved_bytes))),
    card(T("card.step"), num(rid + ".step", run.step, v => v == null ? "–" : String(v)), T("card.cuda_ooms", run.cuda_ooms) + (run.alloc_retries != null ? " · " + T("card.retries", run.alloc_retries) : "")),
  ];
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
    live.plot = new uPlot(chartOpts(box, "", [{key: "host_available"}, ...idx.map(i => ({key: "gpu" + i + "_used"}))], 220), data, box);
  } else {
    live.plot.setData(data);
  }
}

async function nodePage() {
  try { renderNode(await getJSON("/api/v1/node")); } catch (e) { showError(e); }
  const es = new EventSource("/api/v1/stream");
  es.addEventListener("node", ev => { try { renderNode(JSON.parse(ev.data)); } catch (e) { showError(e); } });
  es.onerror = () => setStatus(T("node.stream_retry"));
}

