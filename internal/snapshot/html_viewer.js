// The band viewer of torchmem's snapshot page: one band per allocation
// (or per segment) stacked in the order they were made, drawn into a
// canvas column by column. For each pixel column the state at the entry
// with the most memory in that column is drawn, so no peak is lost; the
// state is swept with a Fenwick tree over the bands, so a column costs
// O(rows * log bands) and a whole view a few tens of milliseconds for
// hundreds of thousands of trace entries. Bands thinner than a pixel are
// summed into one grey band at the bottom, as memory_viz summarises small
// allocations. Uses fmtBytes, esc and D from the page.
"use strict";

const BV = {left: 78, right: 10, top: 8, bottom: 34};

function decodeBands(b, entries) {
  const n = b.size.length, start = new Int32Array(n), end = new Int32Array(n);
  let s = 0;
  for (let i = 0; i < n; i++) { s += b.start[i]; start[i] = s; end[i] = s + b.len[i]; }
  // Bands by end entry (a counting sort: ends lie in [0, entries]).
  const count = new Int32Array(entries + 2);
  for (let i = 0; i < n; i++) count[end[i] + 1]++;
  for (let k = 1; k < count.length; k++) count[k] += count[k - 1];
  const byEnd = new Int32Array(n);
  for (let i = 0; i < n; i++) byEnd[count[end[i]]++] = i;
  // Level after each entry: the bands alive there, summed.
  const diff = new Float64Array(entries + 1);
  for (let i = 0; i < n; i++) { diff[Math.max(start[i], 0)] += b.size[i]; diff[end[i]] -= b.size[i]; }
  const level = new Float64Array(entries);
  let acc = 0;
  for (let k = 0; k < entries; k++) { acc += diff[k]; level[k] = acc; }
  const cat = b.verdict ? Int8Array.from(b.verdict, v => D.categories.indexOf(D.verdicts[v][0])) : null;
  return {n, start, end, byEnd, level, size: b.size, addr: b.addr, stack: b.stack, verdict: b.verdict, cat};
}

const PALETTE = (() => {
  const out = new Uint32Array(61), f = (h, s, l) => {
    const a = s * Math.min(l, 1 - l), c = n => { const k = (n + h / 30) % 12; return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1)))); };
    return (255 << 24) | (c(4) << 16) | (c(8) << 8) | c(0); // ABGR in memory
  };
  for (let i = 0; i < out.length; i++) out[i] = f((i * 137.508) % 360, 0.62, 0.5 + 0.12 * (i % 3 - 1));
  return out;
})();
const GREY = 0xffbdbdbd, PINNED = 0xff202020;
// Category colours (CSS and ABGR), in D.categories' order.
const CAT_CSS = ["#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#d62728", "#8c564b", "#7f7f7f"];
const CAT_PX = CAT_CSS.map(c => (255 << 24) | (parseInt(c.slice(5, 7), 16) << 16) | (parseInt(c.slice(3, 5), 16) << 8) | parseInt(c.slice(1, 3), 16));

class BandView {
  // kind: "allocation" or "segment"; ctl: the device's controller, which
  // owns the visible range, the selected entry and the tooltip.
  constructor(host, bands, kind, ctl, height) {
    this.bands = bands; this.kind = kind; this.ctl = ctl; this.pinned = -1;
    this.cv = document.createElement("canvas");
    this.cv.className = "bands";
    host.appendChild(this.cv);
    this.cv.width = Math.max(host.clientWidth, 700); this.cv.height = height;
    this.W = this.cv.width - BV.left - BV.right; this.H = height - BV.top - BV.bottom;
    this.ctx = this.cv.getContext("2d");
    this.bind();
  }

  // small is the size under which bands are summed into the grey one: an
  // eighth of a pixel. Bands between that and a pixel are drawn where they
  // cover a row's lower edge, so runs of them keep their texture.
  small() { return this.bpp / 8; }

  // columns picks, for each pixel column, the entry with the most memory.
  columns(v0, v1) {
    const col = new Int32Array(this.W), lv = this.bands.level, span = v1 - v0;
    let top = 0;
    for (let c = 0; c < this.W; c++) {
      const a = v0 + Math.floor(c * span / this.W), b = Math.max(a + 1, v0 + Math.floor((c + 1) * span / this.W));
      let best = a;
      for (let k = a + 1; k < b; k++) if (lv[k] > lv[best]) best = k;
      col[c] = best; top = Math.max(top, lv[best]);
    }
    return {col, top};
  }

  render() {
    const B = this.bands, {v0, v1} = this.ctl, W = this.W, H = this.H;
    const ctx = this.ctx;
    ctx.clearRect(0, 0, this.cv.width, this.cv.height);
    if (!B.n || v1 <= v0) { ctx.fillText(`no ${this.kind}s in the trace`, BV.left, BV.top + 14); return; }
    const {col, top} = this.columns(v0, v1);
    this.col = col; this.yMax = Math.max(top * 1.06, 1); this.bpp = this.yMax / H;
    const N = B.n + 1, tree = new Float64Array(N + 1), val = new Float64Array(N), slot = new Int32Array(B.n);
    for (let i = 0; i < B.n; i++) slot[i] = B.size[i] < this.small() ? 0 : i + 1;
    const add = (s, d) => { val[s] += d; for (let k = s + 1; k <= N; k += k & -k) tree[k] += d; };
    const byCat = this.ctl.colorBy === "category" && B.cat;
    let hb = 1; while (hb * 2 <= N) hb *= 2;
    const img = ctx.createImageData(W, H), px = new Uint32Array(img.data.buffer);
    let ps = 0, pe = 0;
    for (let c = 0; c < W; c++) {
      const t = col[c];
      while (ps < B.n && B.start[ps] <= t) { add(slot[ps], B.size[ps]); ps++; }
      while (pe < B.n && B.end[B.byEnd[pe]] <= t) { const i = B.byEnd[pe++]; add(slot[i], -B.size[i]); }
      let b = 0, row = 0;
      while (row < H) {
        // Fenwick descent: the slot holding byte b and the bytes below it.
        let pos = 0, rem = b;
        for (let step = hb; step; step >>= 1) if (pos + step <= N && tree[pos + step] <= rem) { pos += step; rem -= tree[pos]; }
        if (pos >= N) break;
        const lo = b - rem, hi = lo + val[pos];
        const r1 = Math.min(H, Math.max(Math.ceil(hi / this.bpp), row + 1));
        const color = pos === 0 ? GREY : pos - 1 === this.pinned ? PINNED : byCat ? CAT_PX[B.cat[pos - 1]] : PALETTE[(pos - 1) % PALETTE.length];
        for (let r = row; r < r1; r++) px[(H - 1 - r) * W + c] = color;
        row = r1; b = Math.max(hi, row * this.bpp);
      }
    }
    ctx.putImageData(img, BV.left, BV.top);
    this.axes();
  }

  axes() {
    const ctx = this.ctx, {v0, v1} = this.ctl, H = this.H, W = this.W;
    ctx.fillStyle = "#333"; ctx.strokeStyle = "#999"; ctx.font = "11px system-ui, sans-serif";
    ctx.strokeRect(BV.left - 0.5, BV.top - 0.5, W + 1, H + 1);
    let step = 1; while (this.yMax / step > 6) step *= 2;
    for (let y = 0; y <= this.yMax; y += step) {
      const py = BV.top + H - y / this.bpp;
      ctx.fillText(fmtBytes(y), 4, py + 4); ctx.fillRect(BV.left - 4, py, 4, 1);
    }
    for (let k = 0; k <= 6; k++) {
      const c = Math.min(Math.round(k * (W - 1) / 6), W - 1), e = this.col[c], x = BV.left + c;
      ctx.fillRect(x, BV.top + H, 1, 4);
      const label = this.ctl.label(e);
      ctx.fillText(label, Math.min(Math.max(x - ctx.measureText(label).width / 2, 0), this.cv.width - ctx.measureText(label).width), BV.top + H + 16);
    }
    ctx.fillStyle = "#d62728";
    for (const e of this.ctl.a.ooms) if (e >= v0 && e < v1) {
      const x = BV.left + this.columnOf(e);
      ctx.fillRect(x - 1, BV.top, 3, H); ctx.fillText("OOM", x + 4, BV.top + 12);
    }
    const sel = this.ctl.selected;
    if (sel >= v0 && sel < v1) {
      const c = this.columnOf(sel);
      ctx.fillStyle = "#d62728"; ctx.fillRect(BV.left + c, BV.top, 1, H);
    }
  }

  columnOf(entry) {
    const {v0, v1} = this.ctl;
    return Math.min(this.W - 1, Math.max(0, Math.floor((entry - v0) * this.W / (v1 - v0))));
  }

  // at returns the band under canvas point (x, y): {entry, band (-1: the
  // small ones), count and bytes of the small ones}, or null.
  at(x, y) {
    const c = Math.floor(x - BV.left), r = Math.floor(BV.top + this.H - y);
    if (!this.col || c < 0 || c >= this.W || r < 0 || r >= this.H) return null;
    const t = this.col[c], B = this.bands, target = r * this.bpp;
    let small = 0, nSmall = 0;
    for (let i = 0; i < B.n && B.start[i] <= t; i++)
      if (B.end[i] > t && B.size[i] < this.small()) { small += B.size[i]; nSmall++; }
    if (target < small) return {entry: t, band: -1, nSmall, small};
    let off = small;
    for (let i = 0; i < B.n && B.start[i] <= t; i++) {
      if (B.end[i] <= t || B.size[i] < this.small()) continue;
      if (target < off + B.size[i]) return {entry: t, band: i, offset: off};
      off += B.size[i];
    }
    return {entry: t, band: null};
  }

  // locate returns the client coordinates of the middle of band i at the
  // first column from c0 where it is drawn, or null (used by the tests).
  locate(i, c0 = 0) {
    const B = this.bands;
    for (let c = c0; c < this.W; c++) {
      const t = this.col[c];
      if (t < B.start[i] || t >= B.end[i]) continue;
      let off = 0;
      for (let k = 0; k < B.n && B.start[k] <= t; k++) if (B.end[k] > t && (B.size[k] < this.small() || k < i)) off += B.size[k];
      const r = this.cv.getBoundingClientRect();
      return [r.left + BV.left + c + 0.5, r.top + BV.top + this.H - (off + B.size[i] / 2) / this.bpp];
    }
    return null;
  }

  describe(h, short) {
    const B = this.bands, ctl = this.ctl;
    let text = `entry ${ctl.first + h.entry}${ctl.times ? ", " + ctl.label(h.entry) : ""}\n`;
    if (h.band === -1) return text + `${h.nSmall} ${this.kind}s too small to draw at this zoom: ${fmtBytes(h.small)} together`;
    if (h.band === null) return text + "no " + this.kind + " here";
    const i = h.band, made = B.start[i] < 0 ? "before the " + (ctl.first ? "window" : "trace") : "at entry " + (ctl.first + B.start[i]) +
      (ctl.times ? " (" + ctl.label(B.start[i]) + ")" : "");
    const gone = B.end[i] >= ctl.entries ? (ctl.first + ctl.entries < ctl.total ? "alive after the window" : "still there at the snapshot") :
      (this.kind === "segment" ? "released" : "freed") + " at entry " + (ctl.first + B.end[i]) + (ctl.times ? " (" + ctl.label(B.end[i]) + ")" : "");
    text += `${this.kind} ${fmtBytes(B.size[i])} (${B.size[i]} bytes) at ${ctl.address(B.addr[i])}\nmade ${made}, ${gone}\n`;
    if (this.kind === "segment") { const [n, used] = ctl.segmentUse(B.addr[i], B.size[i], h.entry); text += `${n} allocations alive in it here, ${fmtBytes(used)} (${(100 * used / B.size[i]).toFixed(1)}%)\n`; }
    if (B.verdict) { const v = D.verdicts[B.verdict[i]]; text += `category: ${v[0]} (${v[1]} confidence, rule ${v[2]}, phase ${v[3]})\n`; }
    return text + stackText(B.stack[i], short);
  }

  bind() {
    const cv = this.cv, ctl = this.ctl;
    let down = null;
    const pos = e => { const r = cv.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
    cv.addEventListener("mousemove", e => {
      const [x, y] = pos(e), h = this.at(x, y);
      if (!h) { ctl.tip(null); return; }
      ctl.tip(this.describe(h, true), e.clientX, e.clientY);
    });
    cv.addEventListener("mouseleave", () => { ctl.tip(null); down = null; });
    cv.addEventListener("mousedown", e => { down = pos(e)[0]; });
    cv.addEventListener("mouseup", e => {
      const [x, y] = pos(e);
      if (down !== null && Math.abs(x - down) > 5) {
        const a = this.col[Math.max(0, Math.min(down, x) - BV.left | 0)] ?? ctl.v0;
        const b = this.col[Math.min(this.W - 1, Math.max(down, x) - BV.left | 0)] ?? ctl.v1;
        ctl.setRange(a, b + 1);
      } else {
        const h = this.at(x, y);
        if (h) this.pin(h);
      }
      down = null;
    });
    cv.addEventListener("dblclick", () => ctl.setRange(0, ctl.entries));
    cv.addEventListener("wheel", e => {
      e.preventDefault();
      const c = Math.max(0, Math.min(this.W - 1, pos(e)[0] - BV.left)), f = e.deltaY > 0 ? 1.25 : 0.8;
      const at = ctl.v0 + (ctl.v1 - ctl.v0) * c / this.W, span = Math.max((ctl.v1 - ctl.v0) * f, 8);
      ctl.setRange(Math.round(at - span * c / this.W), Math.round(at - span * c / this.W + span));
    }, {passive: false});
  }

  pin(h) {
    this.pinned = h.band >= 0 && h.band !== null && h.band !== this.pinned ? h.band : -1;
    this.ctl.select(h.entry, this.pinned >= 0 ? this.describe(h) : "");
  }
}

// stackText is a stack, innermost frame first; short drops C++ argument
// and template lists (the pinned panel keeps them).
function stackText(si, short) {
  if (si < 0) return "no stack recorded";
  const s = D.stacks[si], cut = f => /\.py:\d+ /.test(f) ? f : f.replaceAll("(anonymous namespace)", "{anon}").replace(/[<(].*$/s, m => m[0] === "(" ? "(…)" : "<…>");
  return "site: " + (short ? cut(D.sites[s[0]]) : D.sites[s[0]]) + "\n  " + s.slice(1).map(f => short ? cut(D.frames[f]) : D.frames[f]).join("\n  ");
}
