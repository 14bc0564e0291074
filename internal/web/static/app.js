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

// ---------- charts (uPlot) ----------

const PALETTE = ["#2f6fde", "#c0392b", "#2e8540", "#8e44ad", "#d35400", "#16a085", "#7f8c8d", "#b7791f", "#34495e", "#e84393"];

// BYTE_STEPS: byte axes tick at powers of two (16 GiB, 32 GiB, …, 512 MiB).
const BYTE_STEPS = Array.from({length: 51}, (_, i) => 2 ** i);

function chartOpts(box, title, series, height) {
  return {
    title, width: Math.max(300, box.clientWidth - 12), height: height || 240,
    cursor: {sync: {key: "torchmem"}, drag: {x: true, y: false, setScale: box.dataset.zoom !== "data"}},
    scales: {x: {time: true, range: (u, lo, hi) => lo === hi ? [lo - 60, hi + 1] : [lo, hi]}},
    axes: [{}, series[0].value === "count" ? {size: 96} :
      {values: (u, vals) => vals.map(v => v == null ? "" : fmtBytes(v)), size: 96, incrs: BYTE_STEPS}],
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

document.addEventListener("DOMContentLoaded", () => {
  const page = document.body.dataset.page;
  const nav = document.getElementById(page === "node" || page === "cluster" ? "nav-" + page : "nav-runs");
  if (nav) nav.classList.add("active");
  window[page + "Page"](); // nodePage (node.js), runsPage and runPage (run.js), clusterPage (cluster.js)
});
