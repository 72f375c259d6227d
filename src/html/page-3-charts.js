/* SPDX-License-Identifier: GPL-2.0-only */
/* ===================================================== 5. charts ===== */

function niceStep(raw, integer) {
  if (!(raw > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const f = raw / p;
  const st = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  return integer && st < 1 ? 1 : st;
}

/* A value axis from 0: about n ticks; bytes in one binary unit. */
function yScale(max, kind, n) {
  let base = 1, unit = 0;
  if (!(max > 0)) max = 1;
  if (kind === 'bytes') {
    while (max / base >= 1024 && unit < BYTE_UNITS.length - 1) {
      base *= 1024;
      unit++;
    }
  }
  const m = max / base;
  const step = niceStep(m / n, base === 1);
  const top = Math.max(step, Math.ceil(m / step - 1e-9) * step);
  const ticks = [];
  for (let v = 0; v <= top + step / 2; v += step) ticks.push(+v.toPrecision(10) * base);
  const label = kind === 'bytes' ? v => v ? NF.format(+(v / base).toPrecision(6)) + ' ' + BYTE_UNITS[unit] : '0' : countLabels(top * base);
  return {max: top * base, ticks, label};
}

/*
 * The labels of a count axis whose top tick is @top, all in one form:
 * plain below 10,000 (500, 1,000, 9,500), else one suffix for every tick
 * (0, 5k, 10k, 15k; 0, 0.5M, 1M, 1.5M).
 */
function countLabels(top) {
  const a = Math.abs(top);
  const [div, suffix] = a >= 1e9 ? [1e9, 'G'] : a >= 1e6 ? [1e6, 'M'] : a >= 1e4 ? [1e3, 'k'] : [1, ''];
  return v => v ? NF.format(+(v / div).toPrecision(6)) + suffix : '0';
}

/* The time axis's unit, from its length in ns. */
function timeUnit(spanNs) {
  if (spanNs >= 2e9) return {div: 1e9, name: 's'};
  if (spanNs >= 2e6) return {div: 1e6, name: 'ms'};
  if (spanNs >= 2e3) return {div: 1e3, name: 'us'};
  return {div: 1, name: 'ns'};
}

/* Decimals that tell steps of @step apart. */
function decimals(step) {
  return Math.max(0, Math.min(9, -Math.floor(Math.log10(step) + 1e-9)));
}

/* The interval of a grid that holds time t. */
function gridIndex(grid, t) {
  return Math.max(0, Math.min(grid.n - 1, Math.floor((t - grid.start) / grid.width)));
}

let clipSeq = 0;
const f1 = v => v.toFixed(1);

/*
 * A chart's frame in box: an <svg> of the box's width and height H, the
 * value axis from 0 to o.max (mirror: also down to -max, for layers that
 * grow down) with grid lines, labels and o.yTitle, and o.xTitle below.
 * Returns {svg, m (margins), pw, ph (plot size), Y (value to y)}.
 */
function chartFrame(box, H, o) {
  const W = widthOf(box), m = {l: 74, r: 20, t: 12, b: 46};
  const pw = W - m.l - m.r, ph = H - m.t - m.b;
  const nt = Math.max(2, Math.floor(ph / 40));
  const ys = yScale(o.max, o.kind, o.mirror ? Math.max(1, Math.floor(nt / 2)) : nt);
  const bot = o.mirror ? -ys.max : 0;
  const Y = v => m.t + (ys.max - v) / (ys.max - bot) * ph;
  const svg = svgEl('svg', {width: W, height: H, class: 'tchart', role: 'img', 'aria-label': o.yTitle});
  for (const v of o.mirror ? ys.ticks.slice(1).reverse().map(x => -x).concat(ys.ticks) : ys.ticks) {
    const y = f1(Y(v));
    svg.appendChild(svgEl('line', {x1: m.l, x2: m.l + pw, y1: y, y2: y, class: v ? 'grid' : 'axis'}));
    svg.appendChild(svgEl('text', {x: m.l - 7, y: +y + 4, class: 'tick ytick', 'text-anchor': 'end'}, ys.label(Math.abs(v))));
  }
  svg.appendChild(svgEl('text', {class: 'atitle', 'text-anchor': 'middle',
    transform: 'translate(15,' + (m.t + ph / 2) + ') rotate(-90)'}, o.yTitle));
  svg.appendChild(svgEl('text', {x: m.l + pw / 2, y: H - 6, class: 'atitle', 'text-anchor': 'middle'}, o.xTitle));
  box.textContent = '';
  box.appendChild(svg);
  return {svg, m, pw, ph, Y};
}

/* An x axis tick and its label. */
function xTick(f, x, label) {
  f.svg.appendChild(svgEl('line', {x1: x, x2: x, y1: f.m.t + f.ph, y2: f.m.t + f.ph + 5, class: 'axis'}));
  f.svg.appendChild(svgEl('text', {x, y: f.m.t + f.ph + 18, class: 'tick', 'text-anchor': 'middle'}, label));
}

/* Hovering the plot: move(ev, x in the svg), then leave(). */
function hoverPlot(f, move, leave) {
  const overlay = svgEl('rect', {x: f.m.l, y: f.m.t, width: f.pw, height: f.ph, class: 'overlay'});
  f.svg.appendChild(overlay);
  overlay.addEventListener('mousemove', ev => guard('tooltip', () => move(ev, ev.clientX - f.svg.getBoundingClientRect().left)));
  overlay.addEventListener('mouseleave', () => {
    if (leave) leave();
    hideTip();
  });
}

/*
 * A time series chart, drawn from opts() now, on resize and on redraw():
 * {yTitle, yKind: 'count'|'bytes', x0, x1 (ns), height, mirror, corners,
 *  layers: [{type: 'line'|'area'|'bars', colour, grid: {start, width, n},
 *            at: 'mid'|'end' (point of an interval), vals, lo (stacked),
 *            neg (mirror: grows down)}],
 *  gaps: timeline gaps, tip: t => {head, rows}}
 * One path per layer; x: time from the trace's start.
 */
function timeChart(host, opts) {
  const box = h('div', {class: 'chart'});
  host.appendChild(box);

  function draw() {
    const o = opts();
    let max = 0;
    for (const L of o.layers) for (const v of L.vals) if (v > max) max = v;
    const tu = timeUnit(o.x1);
    const f = chartFrame(box, o.height || 230, {max, kind: o.yKind, mirror: o.mirror, yTitle: o.yTitle,
      xTitle: 'time from the trace start (' + tu.name + ')'});
    const {svg, m, pw, ph, Y} = f;
    const span = Math.max(1, o.x1 - o.x0);
    const X = t => m.l + (Math.min(t, o.x1) - o.x0) / span * pw;
    for (const c of o.corners || []) {
      svg.appendChild(svgEl('text', {x: m.l + 8, y: c[2] === 'top' ? m.t + 14 : m.t + ph - 7, class: 'corner', fill: c[1]}, c[0]));
    }

    /* time axis: nice steps, about one label per 90 px */
    const lo = o.x0 / tu.div, hi = o.x1 / tu.div;
    const step = niceStep((hi - lo) / Math.max(2, Math.floor(pw / 90)));
    for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-6; v += step) xTick(f, f1(X(v * tu.div)), v.toFixed(decimals(step)));

    /* the series, clipped to the plot */
    const clip = 'kmt-clip' + (++clipSeq);
    svg.appendChild(svgEl('clipPath', {id: clip}, svgEl('rect', {x: m.l, y: m.t - 1, width: pw, height: ph + 2})));
    const plot = svgEl('g', {'clip-path': 'url(#' + clip + ')'});
    svg.appendChild(plot);
    for (const L of o.layers) {
      const g = L.grid, n = Math.min(g.n, L.vals.length), parts = [];
      const xAt = i => f1(X(g.start + (L.at === 'end' ? i + 1 : i + 0.5) * g.width));
      if (L.type === 'bars') {
        /* a bar per interval, from lo (or 0) to the value; down if neg */
        const bw = f1(Math.max(1.2, g.width / span * pw)), sg = L.neg ? -1 : 1;
        for (let i = 0; i < n; i++) {
          const b = L.lo ? L.lo[i] : 0;
          if (L.vals[i] > b) parts.push('M' + f1(X(g.start + i * g.width)) + ' ' + f1(Y(sg * b)) + 'V' + f1(Y(sg * L.vals[i])) + 'h' + bw + 'V' + f1(Y(sg * b)) + 'Z');
        }
        plot.appendChild(svgEl('path', {d: parts.join(''), fill: L.colour}));
        continue;
      }
      if (L.at === 'end') parts.push(f1(X(g.start)) + ' ' + f1(Y(0)));
      for (let i = 0; i < n; i++) parts.push(xAt(i) + ' ' + f1(Y(L.vals[i])));
      if (L.type === 'line') {
        plot.appendChild(svgEl('path', {d: 'M' + parts.join('L'), fill: 'none', stroke: L.colour, 'stroke-width': L.width || 1.25, 'stroke-linejoin': 'round'}));
      } else {
        for (let i = n - 1; i >= 0; i--) parts.push(xAt(i) + ' ' + f1(Y(L.lo ? L.lo[i] : 0)));
        if (L.at === 'end') parts.push(f1(X(g.start)) + ' ' + f1(Y(0)));
        plot.appendChild(svgEl('path', {d: 'M' + parts.join('L') + 'Z', fill: L.colour, stroke: L.colour, 'stroke-width': 0.5}));
      }
    }

    /* lost events: a red line where they were lost; a truncated CPU: a band to the end */
    const gapPath = [];
    for (const gp of o.gaps || []) {
      if (gp.ts_ns < o.x0 || gp.ts_ns > o.x1) continue;
      const x = f1(X(gp.ts_ns));
      gapPath.push('M' + x + ' ' + m.t + 'V' + (m.t + ph));
      if (gp.truncated) svg.appendChild(svgEl('rect', {x, y: m.t, width: f1(m.l + pw - x), height: ph, class: 'trunc'}));
    }
    if (gapPath.length) svg.appendChild(svgEl('path', {d: gapPath.join(''), class: 'gap'}));

    /* hover: a cursor, the interval's values and the losses near it */
    const cursor = svgEl('line', {y1: m.t, y2: m.t + ph, class: 'cursor', visibility: 'hidden'});
    svg.appendChild(cursor);
    hoverPlot(f, (ev, px) => {
      cursor.setAttribute('x1', f1(px));
      cursor.setAttribute('x2', f1(px));
      cursor.setAttribute('visibility', 'visible');
      const c = o.tip(o.x0 + (px - m.l) / pw * span);
      for (const gp of o.gaps || []) if (Math.abs(X(gp.ts_ns) - px) <= 5) c.rows.push([C.loss, gapText(gp), null, 'loss']);
      showTip(ev, tipContent(c.head, c.rows));
    }, () => cursor.setAttribute('visibility', 'hidden'));
  }
  guard('chart', draw);
  redraws.push(draw);
  return {redraw: () => guard('chart', draw)};
}

function gapText(gp) {
  const at = ' (' + fmtNs(gp.ts_ns) + ')';
  if (gp.truncated) return 'CPU ' + gp.cpu + ': recording stopped here; its events are missing from then on' + at;
  return 'CPU ' + gp.cpu + ': ' + (gp.lost < 0 ? 'an unknown number of' : fmtCount(gp.lost)) + ' events lost just before' + at;
}

/*
 * A histogram of log2 ns buckets (entry i: [2^(i-1), 2^i) ns, entry 0: 0 ns),
 * buckets lo..hi, bars of o.colour. Ticks on bucket edges: 1ns, 1.0us, 1.0ms, 1.1s.
 */
function log2Chart(box, counts, lo, hi, o) {
  const nb = hi - lo + 1, total = sum(counts);
  const f = chartFrame(box, o.height || 220, {max: Math.max(0, ...counts.slice(lo, hi + 1).map(v => v || 0)), kind: 'count', yTitle: o.yTitle, xTitle: o.xTitle});
  const {m, Y} = f, bw = f.pw / nb, pad = Math.min(1, bw * 0.1);
  /* label every k-th bucket edge: k of 1, 2, 5, 10 (10: 1ns, 1us, 1ms, 1s) */
  const k = [1, 2, 5, 10, 20].find(x => x * bw >= 46) || 20;
  for (let i = Math.max(lo, 1); i <= hi + 1; i++) if (!((i - 1) % k)) xTick(f, f1(m.l + (i - lo) * bw), fmtNsShort(Math.pow(2, i - 1)));
  const d = [];
  for (let i = lo; i <= hi; i++) {
    if (counts[i] > 0) d.push('M' + f1(m.l + (i - lo) * bw + pad) + ' ' + f1(Y(0)) + 'V' + f1(Math.min(Y(counts[i]), Y(0) - 2)) + 'h' + f1(Math.max(1, bw - 2 * pad)) + 'V' + f1(Y(0)) + 'Z');
  }
  f.svg.appendChild(svgEl('path', {d: d.join(''), fill: o.colour}));
  hoverPlot(f, (ev, px) => {
    const i = lo + Math.max(0, Math.min(nb - 1, Math.floor((px - m.l) / bw)));
    const v = counts[i] || 0, below = sum(counts.slice(0, i + 1));
    const range = i === 0 ? '0 ns' : fmtNs(Math.pow(2, i - 1)) + ' to ' + fmtNs(Math.pow(2, i));
    showTip(ev, tipContent(range, [[o.colour, o.what, fmtCount(v) + ' (' + pctOf(v, total) + ')'], [null, 'this bucket or below', pctOf(below, total)]]));
  });
}

/* Element-wise sums of arrays (histograms). */
function addUp(arrays) {
  const acc = [];
  for (const a of arrays) (a || []).forEach((v, i) => acc[i] = (acc[i] || 0) + (v || 0));
  for (let i = 0; i < acc.length; i++) acc[i] = acc[i] || 0;
  return acc;
}

/* Stacked series: each one's lower (lo) and upper (hi) edge, in order. */
function stackUp(arrays, n) {
  const cum = new Array(n).fill(0);
  return arrays.map(a => {
    const lo = cum.slice();
    for (let i = 0; i < n; i++) cum[i] += (a || [])[i] || 0;
    return {lo, hi: cum.slice()};
  });
}

/* The range of buckets with counts in hist (at least 9 wide), or null. */
function bucketRange(hist) {
  const used = hist.map((v, i) => v > 0 ? i : -1).filter(i => i >= 0);
  if (!used.length) return null;
  let lo = used[0], hi = used[used.length - 1];
  while (hi - lo < 8) {
    if (lo > 0) lo--;
    hi++;
  }
  return [lo, hi];
}

/* The median and 90th percentile buckets of a log2 histogram, as text. */
function histStats(counts) {
  const total = sum(counts);
  if (!total) return '';
  const at = q => {
    let c = 0;
    for (let i = 0; i < counts.length; i++) {
      c += counts[i] || 0;
      if (c >= q * total) return i;
    }
    return counts.length - 1;
  };
  const range = i => i === 0 ? '0 ns' : 'in ' + fmtNs(Math.pow(2, i - 1)) + ' to ' + fmtNs(Math.pow(2, i));
  return 'median ' + range(at(0.5)) + '; 90th percentile ' + range(at(0.9));
}

/*
 * Where the waste is: per allocated size, bytes allocated as a bar whose
 * solid part was requested and hatched part wasted. sizes: [req, alloc, count]
 * (req < 0: -requested bytes in total, for the rest of that size).
 */
function sizeBars(box, sizes, by) {
  const per = new Map();
  for (const e of sizes) {
    const [req, alloc, count] = e;
    const r = per.get(alloc) || {alloc, count: 0, req: 0, pairs: 0};
    r.count += count;
    r.req += req < 0 ? -req : req * count;
    r.pairs++;
    per.set(alloc, r);
  }
  let rows = [...per.values()];
  for (const r of rows) {
    r.bytes = r.alloc * r.count;
    r.waste = r.bytes - r.req;
  }
  rows.sort((a, b) => (by === 'waste' ? b.waste - a.waste : b.bytes - a.bytes) || a.alloc - b.alloc);
  const TOP = 16;
  if (rows.length > TOP) {
    const rest = rows.slice(TOP - 1);
    rows = rows.slice(0, TOP - 1);
    rows.push({label: rest.length + ' other sizes', count: sum(rest.map(r => r.count)), req: sum(rest.map(r => r.req)),
      bytes: sum(rest.map(r => r.bytes)), waste: sum(rest.map(r => r.waste)), pairs: sum(rest.map(r => r.pairs))});
  }
  const caches = R.caches || [];
  box.textContent = '';
  const W = widthOf(box), rowH = 24;
  const narrow = W < 760;
  const m = {l: 112, r: narrow ? 150 : 270, t: 24, b: 8};
  const pw = W - m.l - m.r, H = m.t + m.b + rows.length * rowH;
  const max = Math.max(1, ...rows.map(r => r.bytes));
  const svg = svgEl('svg', {width: W, height: H, class: 'tchart', role: 'img', 'aria-label': 'bytes by allocated size'});
  svg.appendChild(svgEl('defs', null, svgEl('pattern', {id: 'kmt-hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse',
    patternTransform: 'rotate(45)'}, svgEl('rect', {width: 6, height: 6, fill: '#b9d3ea'}),
    svgEl('line', {x1: 0, y1: 0, x2: 0, y2: 6, stroke: C.alloc, 'stroke-width': 2.2}))));
  svg.appendChild(svgEl('text', {x: m.l - 8, y: 14, class: 'atitle', 'text-anchor': 'end'}, 'allocated size'));
  svg.appendChild(svgEl('text', {x: m.l, y: 14, class: 'atitle'}, 'bytes allocated (solid: requested, hatched: waste)'));
  rows.forEach((r, i) => {
    const y = m.t + i * rowH;
    const wAll = r.bytes / max * pw, wReq = r.req / max * pw;
    const g = svgEl('g', {class: 'hoverable'});
    g.appendChild(svgEl('rect', {x: 0, y, width: W, height: rowH, class: 'rowbg'}));
    g.appendChild(svgEl('text', {x: m.l - 8, y: y + 16, class: 'label', 'text-anchor': 'end'}, r.label || fmtCount(r.alloc) + ' B'));
    g.appendChild(svgEl('rect', {x: m.l, y: y + 4, width: Math.max(wReq, r.req ? 1 : 0).toFixed(1), height: rowH - 8, fill: C.alloc}));
    if (r.waste > 0) {
      g.appendChild(svgEl('rect', {x: (m.l + wReq).toFixed(1), y: y + 4, width: Math.max(1, wAll - wReq).toFixed(1),
        height: rowH - 8, fill: 'url(#kmt-hatch)', stroke: C.alloc, 'stroke-width': 0.6}));
    }
    const txt = narrow ? fmtBytes(r.bytes) + ', ' + pctOf(r.waste, r.bytes) + ' waste'
      : fmtBytes(r.bytes) + ' · waste ' + fmtBytes(r.waste) + ' (' + pctOf(r.waste, r.bytes) + ')';
    g.appendChild(svgEl('text', {x: m.l + wAll + 6, y: y + 16, class: 'label'}, txt));
    g.addEventListener('mousemove', ev => {
      const names = r.alloc ? caches.filter(c => c.object_size === r.alloc).map(c => c.name) : [];
      showTip(ev, tipContent(r.label || fmtCount(r.alloc) + '-byte objects', [
        [null, 'allocations', fmtCount(r.count)],
        [C.alloc, 'bytes requested', fmtBytes(r.req)],
        [null, 'bytes allocated', fmtBytes(r.bytes)],
        [null, 'waste', fmtBytes(r.waste) + ' (' + pctOf(r.waste, r.bytes) + ')'],
        [null, 'requested sizes', r.pairs > 1 ? 'several' : r.label ? '' : fmtBytes(r.count ? r.req / r.count : 0)],
        names.length ? [null, 'caches of this size', names.slice(0, 6).join(', ') + (names.length > 6 ? ', …' : '')] : null,
      ].filter(Boolean)));
    });
    g.addEventListener('mouseleave', hideTip);
    svg.appendChild(g);
  });
  box.appendChild(svg);
}

