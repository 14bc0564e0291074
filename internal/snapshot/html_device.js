// One device's per-allocation views: the controller that links the active
// memory and segment timelines (shared range, selected entry, pinned
// details, range filter), the allocator state at the selected entry, and
// the table of what is live at the peak.
"use strict";

class DeviceView {
  constructor(a, host) {
    this.a = a; this.device = a.device; this.first = a.first; this.entries = a.entries; this.total = a.total;
    this.v0 = 0; this.v1 = a.entries; this.selected = -1;
    if (a.dt) {
      this.times = new Float64Array(a.entries);
      let t = 0;
      for (let i = 0; i < a.entries; i++) { t += a.dt[i]; this.times[i] = t / 1e6; }
    }
    this.allocs = decodeBands(a.allocs, a.entries);
    this.segs = decodeBands(a.segments, a.entries);
    this.base = BigInt(a.base);
    host.innerHTML = `<h3>device ${a.device}</h3>` + (a.first || a.entries < a.total ?
      `<p class="note">The trace has ${a.total} entries; entries ${a.first}-${a.first + a.entries - 1}, around the peak, are drawn one band per allocation.</p>` : "") +
      `<div class="bandbar">range <input class="from" size="12"> to <input class="to" size="12"> ${a.dt ? "seconds" : "entries"}
       <button class="apply">apply</button> <button class="reset">whole trace</button> <button class="peak">go to the peak</button>
       colour by <select class="colorby"><option value="allocation">allocation</option><option value="category">category</option></select>
       <span class="range note"></span></div>
       <div class="active"></div><h4>Segments over time (reserved memory, one band per segment)</h4><div class="segs"></div>
       <pre class="pinned note">Click a band to pin its details here and show the allocator state at that entry.</pre>
       <h4 class="statehead">Allocator state at the snapshot</h4><div class="statewrap segwrap"><canvas class="statemap"></canvas></div>`;
    this.host = host;
    this.active = new BandView(host.querySelector(".active"), this.allocs, "allocation", this, 360);
    this.segView = new BandView(host.querySelector(".segs"), this.segs, "segment", this, 200);
    const q = s => host.querySelector(s);
    q(".apply").onclick = () => this.applyFilter(q(".from").value, q(".to").value);
    q(".reset").onclick = () => this.setRange(0, this.entries);
    q(".peak").onclick = () => this.goPeak();
    this.stateMap = new SegmentMap(q(".statemap"), q(".statewrap"), this);
    this.colorBy = "allocation";
    q(".colorby").onchange = e => { this.colorBy = e.target.value; this.select(this.selected, ""); };
  }

  label(e) {
    if (this.times) return (this.times[Math.max(0, Math.min(e, this.entries - 1))] ?? 0).toFixed(this.digits ?? 3) + " s";
    return "entry " + (this.first + e);
  }

  address(rel) { return "0x" + (this.base + BigInt(rel)).toString(16); }

  render() {
    if (this.times) { // enough decimals to tell the axis' ticks apart
      const span = this.times[this.v1 - 1] - this.times[this.v0];
      this.digits = span > 0 ? Math.min(6, Math.max(3, Math.ceil(-Math.log10(span / 6)) + 1)) : 6;
    }
    this.active.render(); this.segView.render();
    const q = s => this.host.querySelector(s);
    const val = e => this.times ? this.times[Math.min(e, this.entries - 1)].toFixed(6) : String(this.first + e);
    q(".from").value = val(this.v0); q(".to").value = val(this.v1 - 1);
    q(".range").textContent = `${this.v1 - this.v0} of ${this.entries} entries shown`;
  }

  setRange(a, b) {
    a = Math.max(0, Math.min(a, this.entries - 1)); b = Math.max(a + 1, Math.min(b, this.entries));
    this.v0 = a; this.v1 = b;
    this.render();
  }

  // applyFilter sets the range from the filter's fields: seconds since
  // the trace's first entry, or trace entries without times.
  applyFilter(from, to) {
    const f = parseFloat(from), t = parseFloat(to);
    if (!isFinite(f) || !isFinite(t) || t < f) return;
    if (!this.times) { this.setRange(f - this.first, t - this.first + 1); return; }
    const lb = x => { let lo = 0, hi = this.entries; while (lo < hi) { const m = (lo + hi) >> 1; if (this.times[m] < x) lo = m + 1; else hi = m; } return lo; };
    this.setRange(lb(f), Math.max(lb(f) + 1, lb(t + 1e-7)));
  }

  goPeak() {
    const p = Math.max(this.a.peak, 0), half = Math.max(50, Math.floor(this.entries / 40));
    this.setRange(p - half, p + half);
    this.select(p, "");
  }

  tip(text, x, y) {
    const tip = document.getElementById("tip");
    if (!text) { tip.style.display = "none"; return; }
    tip.textContent = text; tip.style.display = "block";
    placeTip(tip, x, y);
  }

  // select shows the allocator state after entry e and pins text.
  select(e, text) {
    this.selected = e;
    if (text) this.host.querySelector(".pinned").textContent = text;
    this.render();
    this.host.querySelector(".statehead").textContent = `Allocator state after entry ${this.first + e}` +
      (this.times ? ` (${this.label(e)})` : "") + ": segments and the allocations in them";
    this.stateMap.draw(this.stateAt(e));
  }

  // stateAt rebuilds the segments alive after entry e and places each
  // live allocation in the segment holding its address; each segment's
  // bands name the allocations its blocks are.
  stateAt(e) {
    const S = this.segs, A = this.allocs, segs = [];
    for (let i = 0; i < S.n && S.start[i] <= e; i++)
      if (S.end[i] > e) segs.push({addr: S.addr[i], size: S.size[i], live: []});
    segs.sort((x, y) => x.addr - y.addr);
    for (let i = 0; i < A.n && A.start[i] <= e; i++) {
      if (A.end[i] <= e) continue;
      let lo = 0, hi = segs.length;
      while (lo < hi) { const m = (lo + hi) >> 1; if (segs[m].addr <= A.addr[i]) lo = m + 1; else hi = m; }
      const s = segs[lo - 1];
      if (s && A.addr[i] < s.addr + s.size) s.live.push(i);
    }
    return segs.map(s => {
      s.live.sort((x, y) => A.addr[x] - A.addr[y]);
      return {device: this.device, addr: this.address(s.addr), size: s.size, pool: "", stream: "", bands: s.live,
        blocks: s.live.flatMap(i => [A.addr[i] - s.addr, A.size[i], A.size[i], 0, A.stack[i]])};
    });
  }

  // segmentUse counts the allocations alive after entry e inside
  // [addr, addr+size) and their bytes.
  segmentUse(addr, size, e) {
    const A = this.allocs;
    let n = 0, used = 0;
    for (let i = 0; i < A.n && A.start[i] <= e; i++)
      if (A.end[i] > e && A.addr[i] >= addr && A.addr[i] < addr + size) { n++; used += A.size[i]; }
    return [n, used];
  }

  // bandColor is the colour of allocation i in the allocator state: the
  // pinned one dark, else by category or by site as the bands are.
  bandColor(i) {
    if (i === this.active.pinned) return "#202020";
    if (this.colorBy === "category" && this.allocs.cat) return CAT_CSS[this.allocs.cat[i]];
    return siteColor(this.allocs.stack[i]);
  }

  // liveAtPeak groups what is alive at the peak entry by stack and
  // category, and sums it by category.
  liveAtPeak() {
    const A = this.allocs, p = this.a.peak, groups = new Map(), cats = D.categories.map(name => ({name, bytes: 0, count: 0}));
    let total = 0;
    for (let i = 0; i < A.n && A.start[i] <= p; i++) {
      if (A.end[i] <= p) continue;
      const c = A.cat ? A.cat[i] : -1, key = A.stack[i] + "/" + c;
      const g = groups.get(key) || {stack: A.stack[i], cat: c, bytes: 0, count: 0};
      g.bytes += A.size[i]; g.count++; total += A.size[i];
      groups.set(key, g);
      if (c >= 0) { cats[c].bytes += A.size[i]; cats[c].count++; }
    }
    return {total, groups: [...groups.values()].sort((x, y) => y.bytes - x.bytes), cats: cats.filter(c => c.count)};
  }
}

// placeTip puts the tooltip beside the pointer, on the side it fits.
function placeTip(tip, x, y) {
  const w = tip.offsetWidth, h = tip.offsetHeight;
  tip.style.left = (x + 14 + w <= window.innerWidth ? x + 14 : Math.max(0, x - 14 - w)) + "px";
  tip.style.top = Math.max(0, Math.min(y + 14, window.innerHeight - h - 4)) + "px";
}

function peakTable(v) {
  const {total, groups, cats} = v.liveAtPeak(), el = document.createElement("div");
  const at = v.a.peak < 0 ? "before the first entry" : `after entry ${v.first + v.a.peak}` + (v.times ? ` (${v.label(v.a.peak)})` : "");
  let h = `<h3>device ${v.device}: ${fmtBytes(total)} live at the peak, ${at}</h3>` +
    (cats.length ? `<table class="cats"><tr><th>category</th><th>bytes</th><th>share</th><th>count</th></tr>` + cats.map(c =>
      `<tr><td><span class="swatch" style="background:${CAT_CSS[D.categories.indexOf(c.name)]}"></span>${esc(c.name)}</td><td class="num">${fmtBytes(c.bytes)}</td>` +
      `<td class="num">${(100 * c.bytes / Math.max(total, 1)).toFixed(1)}%</td><td class="num">${c.count}</td></tr>`).join("") + "</table><p></p>" : "") +
    `<table class="peak"><tr><th>bytes</th><th>share</th><th>count</th><th>category</th><th>site and stack</th></tr>`;
  for (const g of groups.slice(0, 300)) {
    const site = g.stack < 0 ? "<no stack recorded>" : D.sites[D.stacks[g.stack][0]];
    h += `<tr><td class="num">${fmtBytes(g.bytes)}</td><td class="num">${(100 * g.bytes / Math.max(total, 1)).toFixed(1)}%</td>` +
      `<td class="num">${g.count}</td><td>${g.cat >= 0 ? esc(D.categories[g.cat]) : ""}</td><td><details><summary>${esc(site)}</summary><pre>${esc(stackText(g.stack))}</pre></details></td></tr>`;
  }
  el.innerHTML = h + "</table>" + (groups.length > 300 ? `<p class="note">${groups.length - 300} more stacks not listed.</p>` : "");
  return el;
}

// SegmentMap draws segments as rows of blocks coloured by site, with a
// block's stack on hover: the snapshot's segments, or the state rebuilt
// at an entry.
class SegmentMap {
  // view, when given, colours and describes the blocks of segments that
  // carry bands (allocation indexes) as its allocations.
  constructor(cv, wrap, view) {
    this.cv = cv; this.wrap = wrap; this.segs = []; this.view = view;
    const tip = document.getElementById("tip");
    cv.addEventListener("mousemove", e => {
      const text = this.describe(e);
      if (!text) { tip.style.display = "none"; return; }
      tip.textContent = text; tip.style.display = "block";
      placeTip(tip, e.clientX, e.clientY);
    });
    cv.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  }

  draw(segs) {
    const rowH = 14, label = 150, rows = Math.min(segs.length, 20000), cv = this.cv;
    this.segs = segs; this.rows = rows;
    const W = Math.max(this.wrap.clientWidth - 20, 600);
    this.maxSize = Math.max(1, ...segs.slice(0, rows).map(s => s.size));
    cv.width = W; cv.height = Math.max(rows * rowH, 20);
    const ctx = cv.getContext("2d"), k = (W - label - 4) / this.maxSize;
    ctx.font = "11px monospace";
    if (!rows) { ctx.fillText("no segments", 2, 14); return; }
    for (let r = 0; r < rows; r++) {
      const s = segs[r], y = r * rowH, b = s.blocks;
      ctx.fillStyle = "#333"; ctx.fillText(fmtBytes(s.size), 2, y + 11);
      ctx.fillStyle = "#eee"; ctx.fillRect(label, y + 1, Math.max(s.size * k, 2), rowH - 2);
      for (let i = 0; i < b.length; i += 5) {
        const st = b[i + 3];
        if (st === 2) continue;
        ctx.fillStyle = s.bands ? this.view.bandColor(s.bands[i / 5]) : st === 1 ? "#ff9f40" : siteColor(b[i + 4]);
        ctx.fillRect(label + b[i] * k, y + 1, Math.max(b[i + 1] * k, 1), rowH - 2);
      }
    }
  }

  describe(e) {
    const rect = this.cv.getBoundingClientRect(), r = Math.floor((e.clientY - rect.top) / 14), s = this.segs[r];
    if (!s || r >= this.rows) return "";
    const off = (e.clientX - rect.left - 150) * this.maxSize / (this.cv.width - 154), b = s.blocks;
    let text = `segment ${s.addr} on device ${s.device}, ${fmtBytes(s.size)}` + (s.pool ? `, ${s.pool} pool, stream ${s.stream}` : "");
    for (let i = 0; i < b.length; i += 5) {
      if (off < b[i] || off >= b[i] + b[i + 1]) continue;
      text += `\nblock +${b[i]}: ${fmtBytes(b[i + 1])} (requested ${fmtBytes(b[i + 2])}), ${["active", "pending free", "free"][b[i + 3]]}`;
      const A = s.bands && this.view.allocs;
      if (A && A.verdict) { const v = D.verdicts[A.verdict[s.bands[i / 5]]]; text += `\ncategory: ${v[0]} (${v[1]} confidence, rule ${v[2]})`; }
      if (b[i + 4] >= 0) text += "\n" + stackText(b[i + 4], true);
      break;
    }
    return text;
  }
}

function siteColor(i) {
  if (i < 0) return "#7f7f7f";
  const s = D.sites[D.stacks[i][0]]; let h = 0;
  for (let k = 0; k < s.length; k++) h = (h * 31 + s.charCodeAt(k)) | 0;
  return `hsl(${((h % 360) + 360) % 360},55%,52%)`;
}
