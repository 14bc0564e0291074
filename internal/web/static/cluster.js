// torchmem dashboard, cluster page: every agent's node, jobs, GPUs and
// OOMs as the Prometheus that scrapes them has them (/api/v1/cluster,
// the same summary as `torchmem top --prometheus URL --json`).
"use strict";

// CLUSTER_REFRESH_MS: Prometheus's figures move once a scrape; the
// agent reuses an answer for 2 s whatever the number of open pages.
const CLUSTER_REFRESH_MS = 5000;

function clusterPage() {
  const tick = () => getJSON("/api/v1/cluster").then(renderCluster, showError).finally(() => setTimeout(tick, CLUSTER_REFRESH_MS));
  tick();
}

function fmtCount(v) { return v === null || v === undefined ? "–" : String(v); }

// workloadText: who a job belongs to, as `top --prometheus` spells it.
function workloadText(w) {
  w = w || {};
  const join = (sep, ...p) => p.filter(Boolean).join(sep);
  if (w.pod) return join("/", w.namespace, w.pod, w.container);
  if (w.pod_uid) return T("who.pod", w.pod_uid);
  if (w.slurm_job_id) return T("who.slurm", join(".", w.slurm_job_id, w.slurm_step)) + (w.slurm_user ? " (" + w.slurm_user + ")" : "");
  if (w.container_id) return (w.runtime || "container") + " " + w.container_id.slice(0, 12);
  return w.unit || "–";
}

// ooms.Total in Go: a kernel kill is seen by up to three counters.
function oomTotal(o) {
  const sum = m => Object.values(m || {}).reduce((a, b) => a + b, 0);
  return Math.max(o.host_kills || 0, sum(o.job_kills), sum(o.incidents)) + sum(o.cuda);
}

function renderCluster(s) {
  document.getElementById("nodes").dataset.loaded = "1";
  const nodes = s.nodes || [];
  const down = nodes.filter(n => !n.up).length;
  setStatus(T("cluster.status", s.prometheus, fmtClock(s.time)));
  document.getElementById("source").textContent = T("cluster.source", nodes.length, down, s.prometheus);
  document.getElementById("window").textContent = T("cluster.window", fmtDur(s.window_seconds * 1000));
  replace("notices", (s.warnings || []).map(w => el("div", {class: "notice"}, w)));
  if (!nodes.length) {
    replace("nodes", el("p", {class: "muted"}, T("cluster.no_agent", fmtDur(s.window_seconds * 1000))));
    ["gpus", "jobs", "ooms"].forEach(id => replace(id));
    return;
  }
  replace("nodes", table(["th.node", "th.state", "th.instance", "#th.gpu_used", "#th.gpu_total", "#th.host_available", "#th.jobs", "#th.ooms"], nodes.map(n => {
    let used = 0, total = 0;
    for (const g of n.gpus) { used += g.used_bytes || 0; total += g.total_bytes || 0; }
    const state = n.up ? T("cluster.up") : T("cluster.down", n.last_seen ? T("cluster.ago", fmtTime(n.last_seen), fmtDur(new Date(s.time) - new Date(n.last_seen))) : T("cluster.never"));
    const k = "node." + n.name;
    return el("tr", {"data-node": n.name, "data-up": n.up ? "1" : "0", class: n.up ? null : "down"}, td(n.name), td(state, n.up ? null : "bad"), td(n.instance, "muted"),
      n.up && n.gpus.length ? numTd(k + ".gpu_used", used) : td("–", "num"), n.up && n.gpus.length ? numTd(k + ".gpu_total", total) : td("–", "num"),
      n.up ? numTd(k + ".mem_available", n.mem_available_bytes) : td("–", "num"), td(n.up ? String(n.jobs.length) : "–", "num"),
      numTd(k + ".ooms", oomTotal(n.ooms), fmtCount));
  })));
  const gpuRows = nodes.flatMap(n => n.gpus.map(g => el("tr", {}, td(n.name), td(g.index, "num"), td(g.model || "–"), td(g.uuid || "–", "muted"),
    numTd("gpu." + n.name + "." + g.index + ".used", g.used_bytes), numTd("gpu." + n.name + "." + g.index + ".total", g.total_bytes),
    td(bar((g.used_bytes || 0) / (g.total_bytes || 1))))));
  replace("gpus", gpuRows.length ? table(["th.node", "#th.gpu", "th.model", "UUID", "#th.used", "#th.total", "th.use"], gpuRows) : el("p", {class: "muted"}, T("cluster.no_gpu")));
  const jobRows = nodes.flatMap(n => n.jobs.map(j => {
    const k = "job." + n.name + "." + j.job_id;
    return el("tr", {"data-job": n.name + "/" + j.job_id}, td(n.name), td(j.job_id), td(workloadText(j.workload)), numTd(k + ".processes", j.processes, fmtCount),
      numTd(k + ".rss", j.rss_bytes), numTd(k + ".pss", j.pss_bytes), numTd(k + ".gpu", j.gpu_bytes), numTd(k + ".cgroup_usage", j.cgroup_usage_bytes),
      numTd(k + ".cgroup_limit", j.cgroup_limit_bytes), numTd(k + ".ooms", j.oom_kills + j.cuda_ooms, fmtCount), td(j.command || "", "cmd"));
  }));
  replace("jobs", jobRows.length ? table(["th.node", "th.job", "th.workload", "#th.procs", "#RSS", "#PSS", "#GPU", "#th.cgroup", "#th.limit", "#th.ooms", "th.command"], jobRows)
    : el("p", {class: "muted"}, T("cluster.no_job")));
  const oomRows = [];
  for (const n of nodes) {
    const o = n.ooms;
    if (o.host_kills) oomRows.push([n.name, T("oom.host"), "", o.host_kills, "host"]);
    for (const [kind, c] of Object.entries(o.incidents || {})) oomRows.push([n.name, T("oom.kernel_log", kind), "", c, "kernel." + kind]);
    for (const [job, c] of Object.entries(o.job_kills || {})) oomRows.push([n.name, T("oom.job"), job, c, "job"]);
    for (const [job, c] of Object.entries(o.cuda || {})) oomRows.push([n.name, T("oom.cuda"), job, c, "cuda"]);
  }
  replace("ooms", oomRows.length ? table(["th.node", "th.what", "th.job", "#th.count"], oomRows.map(r => el("tr", {}, td(r[0]), td(r[1]), td(r[2] || "–"), numTd("oom." + r[0] + "." + r[4] + "." + r[2], r[3], fmtCount))))
    : el("p", {class: "muted"}, T("cluster.no_oom")));
}
