// torchmem dashboard: helpers shared by the node page (node.js) and the runs
// and run pages (run.js), all over the JSON API.
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
// Times are 24-hour ISO in the viewer's time zone (docs/style.md):
// "2026-12-01 17:57:05", never the locale's 12-hour clock.
const pad2 = n => String(n).padStart(2, "0");
function hms(d) { return pad2(d.getHours()) + ":" + pad2(d.getMinutes()) + ":" + pad2(d.getSeconds()); }
function ymd(d) { return d.getFullYear() + "-" + pad2(d.getMonth() + 1) + "-" + pad2(d.getDate()); }
function fmtTime(s) { if (!s) return "–"; const d = new Date(s); return ymd(d) + " " + hms(d); }
function fmtClock(s) { return s ? hms(new Date(s)) : "–"; }

// I18N: this page's texts in its language (internal/web/messages_*.go,
// the "js." ids); T("id", a, b) fills {1}, {2}.
const I18N = JSON.parse(document.getElementById("i18n").textContent);
function T(id, ...args) {
  const s = I18N[id];
  return s === undefined ? id : s.replace(/\{(\d+)\}/g, (m, n) => String(args[n - 1]));
}
// href keeps the page's ?lang= on a link to another dashboard page.
function href(path) {
  const lang = new URLSearchParams(location.search).get("lang");
  return lang ? path + (path.includes("?") ? "&" : "?") + "lang=" + encodeURIComponent(lang) : path;
}
// textOr: T(id), or fallback when the catalog has no id (a value the
// server added after this page was written).
function textOr(id, fallback) { return I18N[id] === undefined ? fallback : T(id); }
// PAL: one colour and label per series key and event kind, the same as
// the HTML report's and the TUI's (internal/webassets).
const PAL = JSON.parse(document.getElementById("palette").textContent);
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
// table: head cells are catalog ids ("#" first: a number column).
function table(head, rows) {
  return el("table", {}, el("thead", {}, el("tr", {}, head.map(h => el("th", {class: h.startsWith("#") ? "num" : null}, T(h.replace(/^#/, "")))))),
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

// ---------- charts (uPlot) ----------

// BYTE_STEPS: byte axes tick at powers of two (16 GiB, 32 GiB, …, 512 MiB).
const BYTE_STEPS = Array.from({length: 51}, (_, i) => 2 ** i);
// TIME_STEPS: time ticks on whole seconds (no "…:25.500").
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];
function timeTicks(u, vals) { return vals.map((v, i) => { const d = new Date(v * 1000); return i === 0 ? hms(d) + "\n" + ymd(d) : hms(d); }); }

// oneMinuteForOnePoint: the x range of one point (the live chart's first
// paint) is the minute before it; uPlot widens it by 86400 "ms", which
// with x in seconds is 1000 days.
function oneMinuteForOnePoint(u, lo, hi) {
  const xs = u.data && u.data[0];
  if (xs && xs.length === 1) return [xs[0] - 60, xs[0] + 1];
  return lo === hi ? [lo - 60, hi + 1] : [lo, hi];
}

function seriesStyle(key) { return PAL.series[key] || {label: key, color: "#999999"}; }

// chartOpts: series are {key, value} (value "count" for a plain number);
// label, colour and stepping come from PAL. box.events and box.limit
// add the event lines and the memory.max line.
function chartOpts(box, title, series, height) {
  const plugins = [];
  if (box.events) plugins.push(eventMarks(box.events));
  if (box.limit != null) plugins.push(limitMark(box.limit));
  const y = series[0].value === "count" ? {size: 96} : {values: (u, vals) => vals.map(v => v == null ? "" : fmtBytes(v)), size: 96, incrs: BYTE_STEPS};
  return {
    title, width: Math.max(300, box.clientWidth - 12), height: height || 240,
    cursor: {sync: {key: "torchmem"}, drag: {x: true, y: false, setScale: box.dataset.zoom !== "data"}},
    scales: {x: {time: true, range: oneMinuteForOnePoint},
      y: box.limit != null ? {range: (u, lo, hi) => [0, Math.max(hi || 0, box.limit) * 1.05]} : {}},
    axes: [{values: timeTicks, incrs: TIME_STEPS, space: 90}, y],
    series: [{label: T("chart.time"), value: (u, v) => v == null ? "–" : fmtTime(v * 1000)}, ...series.map(s => {
      const st = seriesStyle(s.key);
      return {label: st.label, stroke: st.color, width: 1.5, spanGaps: false, paths: st.step ? uPlot.paths.stepped({align: 1}) : undefined,
        value: (u, v) => v == null ? "–" : s.value === "count" ? String(v) : fmtBytes(v)};
    })],
    plugins,
  };
}

function markColor(kind) { return (PAL.markers[kind] || {}).color || "#999999"; }

// eventMarks draws the run's events as dashed vertical lines coloured by kind.
function eventMarks(events) {
  return {hooks: {draw: [u => {
    const ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
    ctx.save();
    ctx.lineWidth = 1.5;
    ctx.setLineDash([4, 3]);
    for (const e of events) {
      const x = u.valToPos(new Date(e.t).getTime() / 1000, "x", true);
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
      ctx.strokeStyle = markColor(e.kind);
      ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + h); ctx.stroke();
    }
    ctx.restore();
  }]}};
}

// limitMark draws the cgroup limit (memory.max) as a dashed horizontal line.
function limitMark(limit) {
  return {hooks: {draw: [u => {
    const y = Math.round(u.valToPos(limit, "y", true)), ctx = u.ctx;
    ctx.save(); ctx.strokeStyle = markColor("limit"); ctx.setLineDash([8, 4]); ctx.lineWidth = 1.5;
    ctx.beginPath(); ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left + u.bbox.width, y); ctx.stroke(); ctx.restore();
  }]}};
}

// markLegend: under a chart, the markers it draws (the limit, and each
// kind of event inside [lo, hi] seconds), nothing when there are none.
function markLegend(events, limit, lo, hi) {
  const kinds = [];
  for (const e of events || []) {
    const t = new Date(e.t).getTime() / 1000;
    if (t >= lo - 1 && t <= hi + 1 && !kinds.includes(e.kind)) kinds.push(e.kind);
  }
  const items = (limit != null ? ["limit"] : []).concat(kinds);
  const div = el("div", {class: "marks", "data-kinds": items.join(",")});
  if (items.length) div.append(T("chart.markers") + " ");
  for (const k of items) {
    const i = el("i", {class: k === "limit" ? null : "v", style: "border-color:" + markColor(k)});
    div.append(el("span", {}, i, (PAL.markers[k] || {}).label || k));
  }
  return div;
}

// fillGaps applies the report's fill rule (internal/webassets.Gaps): a
// null row in each sampling gap (> gap_factor median intervals) and at
// each break (OOM kill), and each slow series carried at most carry_s
// past its last read, never across such a row.
function fillGaps(t, cols, keys, breaks) {
  const d = [];
  for (let i = 1; i < t.length; i++) d.push(t[i] - t[i - 1]);
  d.sort((a, b) => a - b);
  const gap = d.length ? PAL.gap_factor * d[Math.floor(d.length / 2)] : 0;
  const br = (breaks || []).slice().sort((a, b) => a - b);
  const nt = [], hole = [], rowOf = [];
  let b = 0;
  for (let i = 0; i < t.length; i++) {
    for (; b < br.length && br[b] <= t[i]; b++) if (i > 0 && br[b] > t[i - 1]) { nt.push(br[b]); hole.push(true); }
    if (i > 0 && gap > 0 && t[i] - t[i - 1] > gap && !hole[hole.length - 1]) { nt.push((t[i] + t[i - 1]) / 2); hole.push(true); }
    rowOf.push(nt.length); nt.push(t[i]); hole.push(false);
  }
  const out = cols.map((col, c) => {
    const nc = new Array(nt.length).fill(null);
    rowOf.forEach((r, i) => { nc[r] = col[i]; });
    const limit = seriesStyle(keys[c]).carry_s;
    if (limit) {
      let last = null, lastT = 0;
      for (let i = 0; i < nc.length; i++) {
        if (hole[i]) last = null;
        else if (nc[i] !== null) { last = nc[i]; lastT = nt[i]; }
        else if (last !== null && nt[i] - lastT <= limit) nc[i] = last;
      }
    }
    return nc;
  });
  return [nt, ...out];
}

document.addEventListener("DOMContentLoaded", () => {
  const page = document.body.dataset.page;
  // ?lang= chose this page's language: its links keep it.
  const lang = new URLSearchParams(location.search).get("lang");
  if (lang) document.querySelectorAll("header a").forEach(a => { a.href = a.getAttribute("href") + "?lang=" + encodeURIComponent(lang); });
  const nav = document.getElementById(page === "node" || page === "cluster" ? "nav-" + page : "nav-runs");
  if (nav) nav.classList.add("active");
  window[page + "Page"](); // nodePage (node.js), runsPage and runPage (run.js), clusterPage (cluster.js)
});
