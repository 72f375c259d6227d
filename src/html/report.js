"use strict";
/*
 * kmemtrace report page: the script of report --html (and diff --html).
 *
 * The page carries its data as a JSON document in the element #kmt-data;
 * this script reads it and builds everything into #app with plain DOM and
 * SVG: no libraries, no network, nothing beside the page.
 *
 *   1. errors     a visible error list; every section drawn under try/catch
 *   2. format     counts, bytes, times, percentages
 *   3. dom        element builders, the tooltip, redraw on resize
 *   4. colours    what each colour means on the page
 *   5. charts     time series, log2 histograms, size classes
 *   6. tables     sortable tables from the report's column definitions
 *   7. flame      the icicle (flame) graph
 *   8. sections   header, summary, ... (report page)
 *   9. checks     the self-check: series against the summary, and the
 *                 page as laid out (width, cut texts, axes, colours)
 *  10. diff       the page of kmemtrace diff --html
 *  11. main       and #test-interact, which runs the interactive paths
 */
(function () {

/* ===================================================== 1. errors ===== */

const errBox = document.createElement('div');
errBox.id = 'kmt-errors';
errBox.hidden = true;
errBox.setAttribute('role', 'alert');

/* Show an error on the page (and in the console); the page goes on. */
function reportError(where, err) {
  const msg = (where ? where + ': ' : '') + (err && err.message ? err.message : String(err));
  /* text directly in the box, a line each */
  if (errBox.firstChild) errBox.appendChild(document.createElement('br'));
  errBox.appendChild(document.createTextNode(msg));
  errBox.hidden = false;
  if (!errBox.parentNode && document.body) document.body.insertBefore(errBox, document.body.firstChild);
  if (window.console) console.error('kmemtrace page: ' + msg);
}

window.onerror = function (msg, src, line, col, err) {
  reportError('script error', err || msg);
  return true;                      /* reported above */
};
window.addEventListener('unhandledrejection', e => reportError('unhandled rejection', e.reason));

/* Run fn; an exception is reported, not thrown. */
function guard(where, fn) {
  try {
    return fn();
  } catch (e) {
    return reportError(where, e);
  }
}

/* ===================================================== 2. format ===== */

const NF = new Intl.NumberFormat('en-US');
const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
const isNum = v => typeof v === 'number' && isFinite(v);
const sum = a => (a || []).reduce((x, y) => x + (y || 0), 0);

function fmtCount(v) {
  if (!isNum(v)) return v == null ? '' : String(v);
  return NF.format(Number.isInteger(v) ? v : Math.round(v * 10) / 10);
}

/* 512 B, 1.5 KiB, 300.0 MiB */
function fmtBytes(v) {
  if (!isNum(v)) return '';
  let a = Math.abs(v), i = 0;
  while (a >= 1024 && i < BYTE_UNITS.length - 1) {
    a /= 1024;
    i++;
  }
  return (v < 0 ? '-' : '') + (i ? a.toFixed(1) : String(Math.round(a))) + ' ' + BYTE_UNITS[i];
}

/* 512 ns, 12.3 us, 950.0 ms, 1.95 s (as the text report) */
function fmtNs(v) {
  if (!isNum(v)) return '';
  const a = Math.abs(v);
  if (a < 1e3) return Math.round(v) + ' ns';
  if (a < 1e6) return (v / 1e3).toFixed(1) + ' us';
  if (a < 1e9) return (v / 1e6).toFixed(1) + ' ms';
  return (v / 1e9).toFixed(2) + ' s';
}

/* Short labels of log2 buckets: 512ns, 1.0us, 16us, 1.1s */
function fmtNsShort(v) {
  const u = v < 1e3 ? [1, 'ns'] : v < 1e6 ? [1e3, 'us'] : v < 1e9 ? [1e6, 'ms'] : [1e9, 's'];
  const x = v / u[0];
  return (x < 9.95 && u[0] > 1 ? x.toFixed(1) : String(Math.round(x))) + u[1];
}

const fmtPct = v => isNum(v) ? v.toFixed(1) + '%' : '';
const pctOf = (a, b) => b ? fmtPct(100 * a / b) : '–';

/* Short counts (heat map cells): 950, 9,500, 95k, 1.5M */
function fmtCompact(v) {
  const a = Math.abs(v);
  const f = (x, suffix) => String(+x.toFixed(x < 10 ? 2 : 1)) + suffix;
  if (a >= 1e9) return f(v / 1e9, 'G');
  if (a >= 1e6) return f(v / 1e6, 'M');
  if (a >= 1e4) return f(v / 1e3, 'k');
  return NF.format(+v.toFixed(2));
}

/* A report cell: by the column's type and unit. */
function fmtCell(col, v) {
  if (v == null) return '';
  switch (col.type) {
    case 'bool': return v ? 'yes' : 'no';
    case 'pct': return fmtPct(v);
    case 'str': return String(v);
    case 'frames': return Array.isArray(v) ? (v.length ? v.join(' ← ') : '(no callers)') : String(v);
    case 'names': return Array.isArray(v) ? v.join(', ') : String(v);
  }
  if (!isNum(v)) return String(v);
  if (col.unit === 'bytes') return fmtBytes(v);
  if (col.unit === 'ns') return fmtNs(v);
  if (col.unit === 'count') return fmtCount(v);
  return String(v);
}

/* data-value: the JSON value, integers as written. */
const rawValue = v => v == null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/* ===================================================== 3. dom ===== */

const SVGNS = 'http://www.w3.org/2000/svg';

function fill(el, attrs, kids) {
  if (attrs) {
    for (const k of Object.keys(attrs)) {
      const v = attrs[k];
      if (v == null || v === false) continue;
      if (k === 'text') el.textContent = v;
      else if (k.slice(0, 2) === 'on') el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : v);
    }
  }
  const add = c => {
    if (c == null || c === false) return;
    if (Array.isArray(c)) c.forEach(add);
    else el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  };
  kids.forEach(add);
  return el;
}

/* h('div', {class: 'x'}, child, 'text', [more]) */
function h(tag, attrs, ...kids) {
  return fill(document.createElement(tag), attrs, kids);
}

function svgEl(tag, attrs, ...kids) {
  return fill(document.createElementNS(SVGNS, tag), attrs, kids);
}

/* The one tooltip: rows of [colour, label, value]. */
const tip = h('div', {id: 'kmt-tip', role: 'tooltip'});
tip.hidden = true;

function tipContent(head, rows) {
  return h('div', null,
    head ? h('div', {class: 'tip-head'}, head) : null,
    rows && rows.length ? h('table', null, rows.map(r => h('tr', {class: r[3] || null},
      h('td', null, r[0] ? h('span', {class: 'sw', style: 'background:' + r[0]}) : null),
      h('td', null, r[1]), h('td', {class: 'num'}, r[2] == null ? '' : r[2])))) : null);
}

function showTip(ev, content) {
  tip.textContent = '';
  tip.appendChild(content);
  tip.hidden = false;
  const w = tip.offsetWidth, ht = tip.offsetHeight;
  let x = ev.clientX + 16, y = ev.clientY + 14;
  if (x + w > window.innerWidth - 6) x = Math.max(4, ev.clientX - w - 16);
  if (y + ht > window.innerHeight - 6) y = Math.max(4, ev.clientY - ht - 14);
  tip.style.left = x + 'px';
  tip.style.top = y + 'px';
}

function hideTip() {
  tip.hidden = true;
}

/* Charts are drawn to their box's width, and again when the window resizes. */
const redraws = [];
let resizeTimer = 0, boxWidth = 0;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    boxWidth = 0;
    redraws.forEach(f => guard('redraw', f));
  }, 150);
});

/* Every chart is as wide as a section's content: measured once, as each
   measurement lays out the whole page. */
function widthOf(el) {
  if (!boxWidth) boxWidth = Math.floor(el.clientWidth);
  return Math.max(300, boxWidth || 900);
}

/* A row of radio buttons; onChange(value). */
function segmented(name, options, value, onChange) {
  return h('div', {class: 'seg', role: 'radiogroup', 'data-toggle': name}, options.map(o =>
    h('label', null,
      h('input', {type: 'radio', name: 'kmt-' + name, value: o[0], checked: o[0] === value,
        onchange: e => guard(name, () => onChange(e.target.value))}),
      h('span', null, o[1]))));
}

function legend(items) {
  return h('div', {class: 'legend'}, items.map(it => h('span', {class: 'item', title: it.title || null},
    h('span', {class: 'sw ' + (it.kind || 'box'), style: 'background:' + it.colour}), it.label)));
}

function note(text, cls) {
  return h('p', {class: 'note ' + (cls || '')}, text);
}

/* ===================================================== 4. colours ===== */

/* The same meaning, the same colour, all over the page (and in the CSS). */
const C = {
  alloc: '#0072b2',     /* allocations: blue */
  free: '#e69f00',      /* frees: orange */
  live: '#7b52c1',      /* live bytes: purple */
  page: '#10996b',      /* pages: green */
  loss: '#d62728',      /* lost events: red */
  births: '#56606b',    /* process births: slate */
  other: '#c2c7cc',
};

/*
 * Series colours: any two series of a chart, and each of them and the
 * card or the loss line, differ by a CIEDE2000 of DE_MIN or more, in
 * normal vision and as protanopes, deuteranopes and tritanopes see them
 * (simulated as Machado et al. 2009, full severity). The colours are
 * taken from Paul Tol's, Okabe and Ito's and Tableau's qualitative
 * schemes, chosen so; the self-check measures every legend drawn.
 */
const DE_MIN = 10;

/* Top caches and call sites (beside the total's purple, "other" grey and the loss red). */
const PALETTE = ['#004488', '#edc948', '#bb5566', '#77aadd', '#663333', '#ee8866', '#b07aa1', '#99ddff'];
const catMaps = {cache: new Map(), site: new Map()};

/* A cache (or call site) keeps its colour everywhere on the page. */
function catColour(kind, name) {
  if (name === 'other') return C.other;
  const m = catMaps[kind];
  if (!m.has(name)) m.set(name, PALETTE[m.size % PALETTE.length]);
  return m.get(name);
}

/* Page orders 0 to 10, and 11 for "11+". */
const ORDER_COLOURS = ['#0077bb', '#edc948', '#ee6677', '#009e73', '#332288', '#99ddff', '#aa3377', '#bab0ac',
  '#663333', '#56b4e9', '#b07aa1', '#225555'];
function orderColour(order) {
  return ORDER_COLOURS[Math.max(0, Math.min(order, 11))];
}

/* "#rrggbb" or a computed "rgb(r, g, b)" / "rgba(r, g, b, a)": [r, g, b, a], r, g, b in 0..1. */
function parseColour(c) {
  let m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(c);
  if (m) return [m[1], m[2], m[3]].map(x => parseInt(x, 16) / 255).concat(1);
  m = /^rgba?\(\s*([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\s*\)$/.exec(c);
  return m ? [+m[1] / 255, +m[2] / 255, +m[3] / 255, m[4] == null ? 1 : +m[4]] : null;
}

/* How the three kinds of dichromats see linear RGB (Machado, Oliveira, Fernandes 2009). */
const VISIONS = {
  normal: null,
  protanopia: [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
  deuteranopia: [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
  tritanopia: [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
};
const toLinear = c => c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
const toGamma = c => (c = Math.max(0, Math.min(1, c))) <= 0.0031308 ? 12.92 * c : 1.055 * Math.pow(c, 1 / 2.4) - 0.055;

/* sRGB [r, g, b] as seen with @vision, in CIELAB (D65). */
function labOf(rgb, vision) {
  let l = rgb.map(toLinear);
  const M = VISIONS[vision];
  if (M) l = M.map(row => toLinear(toGamma(row[0] * l[0] + row[1] * l[1] + row[2] * l[2])));
  const f = t => t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116;
  const x = f((0.4124564 * l[0] + 0.3575761 * l[1] + 0.1804375 * l[2]) / 0.95047);
  const y = f(0.2126729 * l[0] + 0.7151522 * l[1] + 0.0721750 * l[2]);
  const z = f((0.0193339 * l[0] + 0.1191920 * l[1] + 0.9503041 * l[2]) / 1.08883);
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
}

/* CIEDE2000 colour difference of two CIELAB colours. */
function deltaE2000(p, q) {
  const rad = Math.PI / 180, pow7 = v => Math.pow(v, 7);
  const cb = (Math.hypot(p[1], p[2]) + Math.hypot(q[1], q[2])) / 2;
  const g = 0.5 * (1 - Math.sqrt(pow7(cb) / (pow7(cb) + pow7(25))));
  const ap = [p[1] * (1 + g), q[1] * (1 + g)], cp = [Math.hypot(ap[0], p[2]), Math.hypot(ap[1], q[2])];
  const hp = [Math.atan2(p[2], ap[0]) / rad, Math.atan2(q[2], ap[1]) / rad].map(h => (h + 360) % 360);
  let dh = 0, hb = hp[0] + hp[1];
  if (cp[0] * cp[1]) {
    dh = hp[1] - hp[0];
    dh += dh > 180 ? -360 : dh < -180 ? 360 : 0;
    hb = Math.abs(hp[0] - hp[1]) <= 180 ? hb / 2 : hb < 360 ? (hb + 360) / 2 : (hb - 360) / 2;
  }
  const dL = q[0] - p[0], dC = cp[1] - cp[0], dH = 2 * Math.sqrt(cp[0] * cp[1]) * Math.sin(dh / 2 * rad);
  const lb = (p[0] + q[0]) / 2, cbp = (cp[0] + cp[1]) / 2;
  const t = 1 - 0.17 * Math.cos((hb - 30) * rad) + 0.24 * Math.cos(2 * hb * rad) + 0.32 * Math.cos((3 * hb + 6) * rad) -
    0.20 * Math.cos((4 * hb - 63) * rad);
  const sl = 1 + 0.015 * (lb - 50) * (lb - 50) / Math.sqrt(20 + (lb - 50) * (lb - 50)), sc = 1 + 0.045 * cbp, sh = 1 + 0.015 * cbp * t;
  const rt = -2 * Math.sqrt(pow7(cbp) / (pow7(cbp) + pow7(25))) * Math.sin(60 * Math.exp(-Math.pow((hb - 275) / 25, 2)) * rad);
  return Math.sqrt(Math.pow(dL / sl, 2) + Math.pow(dC / sc, 2) + Math.pow(dH / sh, 2) + rt * (dC / sc) * (dH / sh));
}

/* The least difference of two sRGB colours over the four visions, and the vision. */
function colourDistance(a, b) {
  let best = {de: Infinity, vision: ''};
  for (const v of Object.keys(VISIONS)) {
    const de = deltaE2000(labOf(a, v), labOf(b, v));
    if (de < best.de) best = {de, vision: v};
  }
  return best;
}

function hashStr(str) {
  let x = 2166136261;
  for (let i = 0; i < str.length; i++) x = Math.imul(x ^ str.charCodeAt(i), 16777619);
  return x >>> 0;
}

/* Sequential scale for heat maps (viridis-like, colour-blind safe); t in 0..1. */
const HEAT = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
function heatColour(t) {
  t = Math.max(0, Math.min(1, t)) * (HEAT.length - 1);
  const i = Math.min(HEAT.length - 2, Math.floor(t)), f = t - i;
  const c = HEAT[i].map((v, k) => Math.round(v + (HEAT[i + 1][k] - v) * f));
  return 'rgb(' + c.join(',') + ')';
}

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

/* ===================================================== 6. tables ===== */

const SIMPLE = {u64: 1, i64: 1, pct: 1, str: 1, bool: 1, frames: 1};
const NUMERIC = {u64: 1, i64: 1, pct: 1};

/* The displayable columns of table @name (from data.columns, else guessed). */
function colDefs(name, rows) {
  let defs = COLUMNS[name];
  if (!Array.isArray(defs)) {
    const r0 = rows[0] || {};
    defs = Object.keys(r0).map(k => ({name: k, title: k,
      type: typeof r0[k] === 'number' ? 'u64' : typeof r0[k] === 'boolean' ? 'bool' : typeof r0[k] === 'string' ? 'str' : 'array',
      unit: '', doc: ''}));
  }
  return defs.filter(c => SIMPLE[c.type]);
}

/*
 * A sortable table of report rows: a table element with data-table=NAME,
 * rows with data-key, cells with data-col and data-value (the raw JSON
 * value; the text is formatted). The columns with a title
 * show; the others behind "all columns". opt: key(row); show: [names] to
 * show (in order) instead; titles: {name: title}; swatch(row) -> colour;
 * detail(row) -> element for an expandable row below (or null);
 * cellClass(col, row); none: text when empty; maxHeight.
 */
/* "64 rows", or "100 of 2,345 rows (report -n 0 shows all)" when -n cut the table. */
function rowCount(name, shown) {
  const total = (D.totals || {})[name];
  const unit = n => fmtCount(n) + (n === 1 ? ' row' : ' rows');
  if (typeof total === 'number' && total > shown)
    return fmtCount(shown) + ' of ' + unit(total) + ' (the largest; report --html -n 0 puts all on the page)';
  return unit(shown);
}

function dataTable(name, rows, opt) {
  opt = opt || {};
  if (!Array.isArray(rows) || !rows.length) return note(opt.none || 'none', 'none');
  let defs = colDefs(name, rows);
  const titled = defs.some(c => c.title);
  if (opt.show) {
    const order = opt.show.filter(n => defs.some(c => c.name === n));
    defs = order.map(n => defs.find(c => c.name === n)).concat(defs.filter(c => !order.includes(c.name)));
  }
  const cols = defs.map(c => Object.assign({}, c, {
    shown: opt.show ? opt.show.includes(c.name) : titled ? !!c.title : true,
    label: (opt.titles && opt.titles[c.name]) || c.title || c.name.replace(/_/g, ' '),
  }));
  const hasDetail = !!opt.detail && rows.some(r => opt.detail(r, true));
  const table = h('table', {'data-table': name, class: 'data'});
  const head = h('tr', null, hasDetail ? h('th', {class: 'exp'}) : null);
  const state = {col: null, dir: 0};
  const entries = [];

  cols.forEach(c => {
    const th = h('th', {class: (NUMERIC[c.type] ? 'num' : 'str') + (c.shown ? '' : ' extra'), 'data-sort': c.name,
      title: (c.doc || c.name) + ' (click to sort)', tabindex: 0, 'aria-sort': 'none',
      onclick: () => guard('sorting', () => sortBy(c, th)), onkeydown: e => e.key === 'Enter' && guard('sorting', () => sortBy(c, th))}, c.label);
    head.appendChild(th);
  });
  table.appendChild(h('thead', null, head));
  const body = h('tbody');
  table.appendChild(body);

  rows.forEach((r, idx) => {
    const tr = h('tr', {'data-key': opt.key ? opt.key(r, idx) : String(idx)});
    const entry = {row: r, tr, detail: null, idx};
    if (hasDetail) {
      const td = h('td', {class: 'exp'});
      if (opt.detail(r, true)) {
        td.appendChild(h('button', {type: 'button', class: 'expander', 'aria-expanded': 'false', title: 'show its stacks',
          onclick: e => guard('expanding a row', () => toggle(entry, e.currentTarget))}, '▸'));
      }
      tr.appendChild(td);
    }
    cols.forEach((c, ci) => {
      const v = r[c.name];
      const cls = [NUMERIC[c.type] ? 'num' : 'str', c.shown ? '' : 'extra', c.type === 'frames' ? 'frames' : '',
        opt.cellClass ? opt.cellClass(c, r) : ''];
      const text = opt.fmt ? opt.fmt(c, v) : fmtCell(c, v);
      /* a long text may wrap after | , / and spaces, not inside a name */
      const long = c.type === 'str' && typeof text === 'string' && text.length > 60;
      const td = h('td', {'data-col': c.name, 'data-value': rawValue(v)}, long ? text.split(/(?<=[|,/])/).map((t, i) => [i ? h('wbr') : null, t]) : text);
      const sw = ci === 0 && opt.swatch ? opt.swatch(r) : null;
      if (sw) {
        cls.push('has-sw');
        td.style.setProperty('--sw', sw);
      }
      if (c.type === 'str' && v && String(v).length > 40) td.title = v;
      if (long) cls.push('long');
      td.className = cls.filter(Boolean).join(' ');
      tr.appendChild(td);
    });
    if (opt.rowClass) tr.className = opt.rowClass(r) || '';
    body.appendChild(tr);
    entries.push(entry);
  });

  /* a row's detail: a row below it, made when opened, removed when closed */
  function toggle(entry, btn) {
    if (entry.detail) entry.detail.remove();
    else entry.tr.after(h('tr', {class: 'detail'}, h('td', {colspan: cols.length + 1}, opt.detail(entry.row, false))));
    entry.detail = entry.detail ? null : entry.tr.nextSibling;
    btn.textContent = entry.detail ? '▾' : '▸';
    btn.setAttribute('aria-expanded', String(!!entry.detail));
  }

  /* Numbers by value, strings by text; first click: numbers largest first. */
  function sortBy(c, th) {
    const dir = state.col === c.name ? -state.dir : NUMERIC[c.type] ? -1 : 1;
    state.col = c.name;
    state.dir = dir;
    const get = e => e.row[c.name];
    const sorted = entries.slice().sort((a, b) => {
      const x = get(a), y = get(b);
      let d;
      if (isNum(x) || isNum(y)) d = (isNum(x) ? x : -Infinity) - (isNum(y) ? y : -Infinity);
      else d = String(x == null ? '' : x).localeCompare(String(y == null ? '' : y));
      return d * dir || a.idx - b.idx;
    });
    for (const e of sorted) {
      body.appendChild(e.tr);
      if (e.detail) body.appendChild(e.detail);
    }
    head.querySelectorAll('th').forEach(x => x.setAttribute('aria-sort', 'none'));
    th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
  }

  const nExtra = cols.filter(c => !c.shown).length;
  const wrap = h('div', {class: 'tablewrap'});
  const bar = h('div', {class: 'tablebar'}, h('span', {class: 'muted'},
    rowCount(name, rows.length) +
    ' · click a column to sort'));
  if (nExtra) {
    bar.appendChild(h('label', {class: 'allcols'}, h('input', {type: 'checkbox', 'data-toggle': 'all-columns',
      onchange: e => wrap.classList.toggle('show-all', e.target.checked)}), ' all columns (' + nExtra + ' more)'));
  }
  wrap.appendChild(bar);
  wrap.appendChild(h('div', {class: 'scroll', style: opt.maxHeight ? 'max-height:' + opt.maxHeight : null}, table));
  return wrap;
}

/* ===================================================== 7. flame ===== */

/*
 * An icicle graph of flame.root ({n, v: [bytes, objects, live bytes], c}):
 * root on top, a node's children below it, widths by the chosen metric.
 * Click a node to zoom into it (its ancestors stay above: click one, or
 * Reset, to zoom out); search highlights names that contain the text.
 */
const MONO = 'ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace';  /* as --mono in the CSS */
const METRICS = [
  {key: 'bytes', label: 'bytes allocated', fmt: fmtBytes, hue: 204},
  {key: 'objects', label: 'objects allocated', fmt: v => fmtCount(v) + ' objects', hue: 204},
  {key: 'live', label: 'live bytes at the end', fmt: fmtBytes, hue: 268},
];

function flameGraph(host, flame) {
  const nodes = [];
  (function prep(n, parent, depth) {
    n.i = nodes.length;
    n.p = parent;
    n.d = depth;
    n.n = n.n == null ? '' : String(n.n);
    n.v = [0, 1, 2].map(k => (Array.isArray(n.v) && n.v[k]) || 0);
    nodes.push(n);
    for (const c of n.c || []) prep(c, n, depth + 1);
  })(flame.root, null, 0);
  const root = flame.root;
  const st = {m: 0, zoom: root, q: ''};

  /* every change of state redraws */
  const set = (k, v) => guard('flame graph', () => {
    st[k] = v;
    hideTip();
    draw();
  });
  const info = h('span', {class: 'flame-info muted'});
  host.appendChild(h('div', {class: 'toolbar'},
    segmented('flame-metric', METRICS.map(x => [x.key, x.label]), 'bytes', v => set('m', METRICS.findIndex(x => x.key === v))),
    h('input', {type: 'search', class: 'flame-search', placeholder: 'search names (e.g. do_sys)', 'aria-label': 'search the flame graph',
      oninput: e => set('q', e.target.value.trim().toLowerCase())}),
    h('button', {type: 'button', class: 'btn', onclick: () => set('zoom', root)}, 'Reset zoom'), info));
  const crumbs = h('div', {class: 'crumbs'});
  const box = h('div', {class: 'flame'});
  host.appendChild(crumbs);
  host.appendChild(box);

  /* monospace labels: one width per character */
  let charW = 6.7;
  guard('measuring text', () => {
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = '11px ' + MONO;
    const w = ctx.measureText('abcdefghijklmnopqrstuvwxyz_+0x123').width / 33;
    if (w > 3) charW = w;
  });

  const isGrey = n => /^\((other|no stack)\)$/.test(n.n);
  function colour(n, matched) {
    if (st.q && !matched) return '#e3e6ea';
    if (isGrey(n)) return '#c9ccd1';
    const x = hashStr(n.n);
    return 'hsl(' + (METRICS[st.m].hue + (x % 17) - 8) + ',' + (52 + (x >>> 5) % 20) + '%,' + (58 + (x >>> 10) % 22) + '%)';
  }
  const matches = n => !!st.q && n.n.toLowerCase().includes(st.q);

  function draw() {
    const M = st.m, total = root.v[M];
    box.textContent = '';
    crumbs.textContent = '';
    const path = [];
    for (let n = st.zoom; n; n = n.p) path.unshift(n);
    path.forEach((n, k) => {
      if (k) crumbs.appendChild(document.createTextNode(' › '));
      crumbs.appendChild(h('a', {href: '#flame', onclick: e => {
        e.preventDefault();
        set('zoom', n);
      }}, n.n));
    });

    /* the matched share: matches not below another match */
    let matchedV = 0, nMatched = 0;
    if (st.q) {
      (function walk(n) {
        if (matches(n)) {
          matchedV += n.v[M];
          nMatched++;
          return;
        }
        for (const c of n.c || []) walk(c);
      })(root);
      info.textContent = nMatched ? 'matched: ' + METRICS[M].fmt(matchedV) + ' = ' + pctOf(matchedV, total) + ' of all' :
        'no name contains "' + st.q + '"';
      info.classList.toggle('hit', nMatched > 0);
    } else {
      info.textContent = 'total: ' + METRICS[M].fmt(total);
      info.classList.remove('hit');
    }
    if (!(st.zoom.v[M] > 0)) {
      box.appendChild(note('Nothing to show: ' + METRICS[M].label + ' is 0 here.', 'none'));
      return;
    }

    const W = widthOf(box), rowH = 19;
    const svg = svgEl('svg', {width: W, class: 'flamesvg', role: 'img', 'aria-label': 'flame graph'});
    let maxD = 0;
    const frag = document.createDocumentFragment();
    function put(n, x, w, anc) {
      const y = n.d * rowH;
      maxD = Math.max(maxD, n.d);
      const matched = matches(n);
      const cls = (anc ? 'anc' : '') + (matched ? ' match' : '');
      frag.appendChild(svgEl('rect', {x: x.toFixed(1), y, width: Math.max(0.5, w - 0.6).toFixed(1), height: rowH - 1,
        fill: colour(n, matched), class: cls || null, 'data-i': n.i}));
      const chars = Math.floor((w - 8) / charW);
      if (chars >= 3) {
        const label = n.n.length <= chars ? n.n : n.n.slice(0, chars - 1) + '…';
        frag.appendChild(svgEl('text', {x: (x + 4).toFixed(1), y: y + 13, class: st.q && !matched ? 'dim' : null, 'data-i': n.i}, label));
      }
    }
    /* ancestors of the zoomed node: full width, faded */
    for (let k = 0; k < path.length - 1; k++) put(path[k], 0, W, true);
    (function lay(n, x, w) {
      put(n, x, w, false);
      const v = n.v[M];
      if (!(v > 0)) return;
      let cx = x;
      for (const c of n.c || []) {
        const cw = w * c.v[M] / v;
        if (cw >= 0.8) lay(c, cx, cw);
        cx += cw;
      }
    })(st.zoom, 0, W);
    svg.setAttribute('height', (maxD + 1) * rowH);
    svg.appendChild(frag);
    box.appendChild(svg);
  }

  box.addEventListener('click', e => {
    const t = e.target.closest && e.target.closest('[data-i]');
    if (t) set('zoom', nodes[+t.getAttribute('data-i')]);
  });
  box.addEventListener('mousemove', e => guard('flame tooltip', () => {
    const t = e.target.closest && e.target.closest('[data-i]');
    if (!t) return hideTip();
    const n = nodes[+t.getAttribute('data-i')], M = st.m, f = METRICS[M].fmt;
    const rows = [[null, METRICS[M].label, f(n.v[M])], [null, 'of all', pctOf(n.v[M], root.v[M])]];
    if (n.p) rows.push([null, 'of its parent', pctOf(n.v[M], n.p.v[M])]);
    if (st.zoom !== root && st.zoom !== n) rows.push([null, 'of the zoomed node', pctOf(n.v[M], st.zoom.v[M])]);
    METRICS.forEach((x, k) => k !== M && rows.push([null, x.label, x.fmt(n.v[k])]));
    if (n.merged) rows.push([null, 'merged', n.merged + ' small entries']);
    if (n.c && n.c.length) {
      const self = n.v[M] - sum(n.c.map(c => c.v[M]));
      if (self > 0) rows.push([null, 'not in a child', f(self)]);
    }
    showTip(e, tipContent(n.n, rows));
  }));
  box.addEventListener('mouseleave', hideTip);

  guard('flame graph', draw);
  redraws.push(draw);
  return {root};
}

/* ===================================================== 8. sections ===== */

let D = {}, R = {}, S = {}, T = null, COLUMNS = {};
const MIGRATE = ['Unmovable', 'Movable', 'Reclaimable', 'HighAtomic', 'CMA', 'Isolate', 'type 6', 'type 7', 'unknown'];

/* A section: in the page and the navigation bar, drawn under try/catch. */
function addSection(app, nav, id, title, navLabel, fn) {
  const sec = h('section', {id, class: 'card'}, h('h2', null, title));
  app.appendChild(sec);
  if (nav) nav.appendChild(h('a', {href: '#' + id}, navLabel || title));
  try {
    fn(sec);
  } catch (e) {
    reportError('section "' + title + '"', e);
    sec.appendChild(note('This section could not be drawn: ' + (e && e.message), 'err-note'));
  }
  return sec;
}

function banner(cls, title, text) {
  return h('div', {class: 'banner ' + cls, role: cls === 'loss' ? 'alert' : null}, h('strong', null, title), ' ', text);
}

function headerBlock(app) {
  const meta = [
    ['file', R.file ? R.file + (R.file_version ? ' (trace.dat v' + R.file_version + ')' : '') : null],
    ['kernel', R.kernel],
    ['CPUs', R.cpus != null ? String(R.cpus) : null],
    ['clock', R.clock],
    ['span', isNum(S.span_ns) ? fmtNs(S.span_ns) + ' (' + (S.first_ts_ns / 1e9).toFixed(6) + ' to ' + (S.last_ts_ns / 1e9).toFixed(6) + ' s)' : null],
    ['trace start', isNum(S.start_ts_ns) ? (S.start_ts_ns / 1e9).toFixed(6) + ' s of the ' + (R.clock || 'trace') + ' clock; times count from there' : null],
    ['pointers', R.hashed_pointers ? 'hashed (--hash-pointers)' : null],
  ].filter(x => x[1]);
  app.appendChild(h('header', {class: 'top'},
    h('h1', null, 'kmemtrace report'),
    h('dl', {class: 'meta'}, meta.map(x => [h('dt', null, x[0]), h('dd', null, x[1])])),
    h('div', {class: 'generator muted'}, D.generator || '')));

  const warn = h('div', {class: 'banners'});
  if (S.affected_by_loss) {
    const parts = [];
    if (S.lost_events) parts.push(fmtCount(S.lost_events) + ' events were lost (' + (S.lost_by_cpu || []).map((v, i) => v ? 'CPU ' + i + ': ' + fmtCount(v) : null).filter(Boolean).join(', ') + ')');
    if (S.lost_gaps_unknown && !S.lost_by_ring) parts.push(fmtCount(S.lost_gaps_unknown) + ' of the gaps had no count: more were lost');
    if (S.truncated_cpus) parts.push(fmtCount(S.truncated_cpus) + ' CPU recordings stopped early (disk full): their later events are missing');
    warn.appendChild(banner('loss', 'Results are affected by lost events.', parts.join('; ') + '. ' +
      fmtCount(S.uncertain_objects || 0) + ' objects (' + fmtBytes(S.uncertain_bytes || 0) + ') and ' +
      fmtCount(S.uncertain_misuse || 0) + ' misuse findings are uncertain (a free or an allocation may be in a gap): ' +
      'they are counted apart, never reported as leaks or misuse. Red lines on the time axes mark the gaps. Record with a larger buffer (-b).'));
  }
  if (S.partial_allocs || S.partial_frees) {
    const what = [S.partial_allocs ? 'allocations' : null, S.partial_frees ? 'frees' : null].filter(Boolean).join(' and ');
    warn.appendChild(banner('warn', 'Partial recording.', 'The recording kept only some slab ' + what +
      ' (pid or event filters, watch, or frees not recorded): a free of a freed address is not a double free, and a live object is not a leak.' +
      (S.unseen_allocs ? ' ' + fmtCount(S.unseen_allocs) + ' frees were of addresses already freed (allocated again where the recording did not look).' : '')));
  }
  if (S.filtered) {
    warn.appendChild(banner('warn', 'Filtered.', 'Only the tasks chosen with -p/--comm were analysed: every number concerns their allocations, the frees of their objects, and their frees of objects allocated before.' +
      (S.filter_matched ? '' : ' No task in the window matched.')));
  }
  warn.appendChild(banner('info', 'Not traced by the kernel:', 'its slab bulk paths (kmem_cache_alloc_bulk, kfree_bulk, RCU sheaves) allocate and free without events. ' +
    'An allocation over a live object is a free it did not trace; a "double free" in such traffic is an allocation it did not trace. ' +
    'Those are counted per cache under Misuse, as the kernel\'s design, not misuse.' +
    (S.untraced_evidence ? ' This trace shows ' + fmtCount(S.untraced_evidence) + ' signs of such traffic.' : '')));
  app.appendChild(warn);
}

function kpi(label, value, sub, cls, title) {
  return h('div', {class: 'kpi ' + (cls || ''), title: title || null},
    h('div', {class: 'kpi-label'}, label), h('div', {class: 'kpi-value'}, value), sub ? h('div', {class: 'kpi-sub'}, sub) : null);
}

function summarySection(sec) {
  if (!R.summary) return sec.appendChild(note('No summary in the data.', 'none'));
  const V = R.vmalloc, mis = R.misuse || [];
  const sev = k => sum(mis.filter(x => x.severity === k).map(x => x.count));
  const slab = R.callsites !== null, pages = R.pages !== null;
  const cards = [
    kpi('trace span', fmtNs(S.span_ns), 'from the first to the last event'),
    kpi('events', fmtCount(S.events), S.cpus || R.cpus ? 'on ' + R.cpus + ' CPUs' : null),
  ].concat(!slab ? [] : [
    kpi('slab allocations', fmtCount(S.allocs), fmtCount(S.failures || 0) + ' failed', 'alloc'),
    kpi('slab frees', fmtCount(S.frees), 'of them; ' + fmtCount(S.preexisting_frees || 0) + ' of objects allocated before', 'free'),
    kpi('bytes requested', fmtBytes(S.bytes_req), null, 'alloc'),
    kpi('bytes allocated', fmtBytes(S.bytes_alloc), 'net ' + fmtBytes(S.net_bytes), 'alloc'),
    kpi('bytes freed', fmtBytes(S.bytes_freed), 'of objects allocated in the trace', 'free'),
    kpi('waste', fmtBytes(S.fragmentation_bytes), fmtPct(S.fragmentation_pct) + ' of allocated (internal fragmentation)', 'alloc'),
    kpi('cross-CPU frees', fmtCount(S.cross_cpu_frees), pctOf(S.cross_cpu_frees, S.frees) + ' of frees', 'free'),
    kpi('live at the end', fmtBytes(S.live_bytes), fmtCount(S.live_objects) + ' objects' +
      (S.uncertain_objects ? '; ' + fmtCount(S.uncertain_objects) + ' uncertain (' + fmtBytes(S.uncertain_bytes || 0) + ')' : ''), 'live'),
  ]).concat([
    pages ? kpi('page allocations', fmtCount(S.page_allocs), fmtCount(S.pages_allocated) + ' pages; ' + fmtCount(S.page_frees) + ' frees (' +
      fmtCount(S.pages_freed) + ' pages)' + (S.page_failures ? '; ' + fmtCount(S.page_failures) + ' failed' : ''), 'page') : null,
    V ? kpi('vmalloc areas', fmtCount(V.allocs), fmtBytes(V.bytes) + '; ' + fmtCount(V.frees) + ' frees; ' + fmtCount(V.live) + ' live (' + fmtBytes(V.live_bytes) + ')') : null,
    S.percpu_allocs || S.percpu_frees ? kpi('per-CPU allocations', fmtCount(S.percpu_allocs), fmtCount(S.percpu_frees) + ' frees') : null,
    /* the number alone in large type; what qualifies it below, where it wraps */
    kpi('events lost', fmtCount(S.lost_events || 0) + (S.lost_gaps_unknown && !S.lost_by_ring ? '+' : ''),
      [S.lost_gaps_unknown && !S.lost_by_ring ? 'or more: ' + fmtCount(S.lost_gaps_unknown) + (S.lost_gaps_unknown === 1 ? ' gap' : ' gaps') +
        ' of unknown size' : null].concat((S.lost_by_cpu || []).map((v, i) => v ? 'CPU ' + i + ': ' + fmtCount(v) : null),
        [S.truncated_cpus ? S.truncated_cpus + ' CPUs truncated' : null]).filter(Boolean).join('; ') || 'none',
      S.affected_by_loss ? 'loss bad' : 'ok'),
    slab ? kpi('misuse errors', fmtCount(sev('error')), fmtCount(sev('warning')) + ' warnings, ' + fmtCount(sev('info')) + ' info',
      sev('error') ? 'bad' : '') : null,
  ]);
  sec.appendChild(h('div', {class: 'kpis'}, cards));
  if (S.not_recorded && S.not_recorded.length)
    sec.appendChild(note('Not recorded (the file has no events of these, so the sections they make are left out, never shown as zeros): ' +
      S.not_recorded.join(', ') + '.'));

  /* events by kind and by CPU */
  const kinds = Object.entries(S.events_by_kind || {});
  const cpus = S.events_by_cpu || [];
  sec.appendChild(h('div', {class: 'minis'},
    kinds.length ? h('div', {class: 'mini'}, h('h4', null, 'events by kind'),
      h('table', {class: 'compact'}, kinds.map(k => h('tr', null, h('td', null, k[0]), h('td', {class: 'num'}, fmtCount(k[1])),
        h('td', {class: 'num muted'}, pctOf(k[1], S.events)))))) : null,
    cpus.length ? h('div', {class: 'mini'}, h('h4', null, 'events by CPU'),
      h('table', {class: 'compact'}, h('tr', null, h('th', null, 'CPU'), h('th', {class: 'num'}, 'events'), h('th', {class: 'num'}, 'lost')),
        cpus.map((v, i) => h('tr', null, h('td', null, String(i)), h('td', {class: 'num'}, fmtCount(v)),
          h('td', {class: 'num' + ((S.lost_by_cpu || [])[i] ? ' loss-text' : ' muted')}, fmtCount((S.lost_by_cpu || [])[i] || 0)))))) : null,
    h('div', {class: 'mini'}, h('h4', null, 'other counts'), h('table', {class: 'compact'}, [
      ['kfree(NULL)', S.null_frees], ['large kmallocs traced twice (counted once)', S.kmalloc_large_merged],
      ['uncertain misuse (a loss may explain it)', S.uncertain_misuse], ['signs of untraced slab traffic', S.untraced_evidence],
    ].filter(x => isNum(x[1])).map(x => h('tr', null, h('td', null, x[0]), h('td', {class: 'num'}, fmtCount(x[1]))))))));
}

function timelineSection(sec) {
  if (!T) return sec.appendChild(note('No time series: the window has no events.', 'none'));
  const start = T.start_ns || 0;
  const fine = {start, width: T.width_ns, n: T.n};
  const coarse = T.site_n ? {start, width: T.site_width_ns, n: T.site_n} : null;
  const x0 = start, x1 = start + T.n * T.width_ns;
  const gaps = T.gaps || [];
  const tu = timeUnit(x1);
  const dec = Math.max(decimals(T.width_ns / tu.div), 0) + 1;
  const span = (g, i) => ((g.start + i * g.width) / tu.div).toFixed(dec) + ' to ' + ((g.start + (i + 1) * g.width) / tu.div).toFixed(dec) + ' ' + tu.name;
  const per = 'per ' + fmtNs(T.width_ns);
  const gapItem = (gaps.length ? [{colour: C.loss, label: 'events lost (' + gaps.length + (gaps.length === 1 ? ' gap' : ' gaps') + ')', kind: 'vline'}] : [])
    .concat(gaps.some(g => g.truncated) ? [{colour: 'rgba(214,39,40,0.25)', label: 'a CPU\'s recording stopped (truncated)'}] : []);
  const block = (id, title, control) => sec.appendChild(h('div', {class: 'chart-block', id},
    h('div', {class: 'chart-head'}, h('h3', null, title), control || null)));
  const live = T.live || [];

  sec.appendChild(note('Intervals of ' + fmtNs(T.width_ns) + ' (' + fmtCount(T.n) + ' of them)' +
    (coarse ? '; call sites at ' + fmtNs(T.site_width_ns) + '.' : '.') +
    (gaps.length ? ' Red lines: events lost just before (hover for the CPU and count).' : '') +
    ' Hover a chart for the interval\'s values.'));

  /* 1. allocations and frees */
  let rateBy = 'objects';
  const b1 = block('chart-rate', 'Slab allocations and frees per interval', segmented('rate-unit', [['objects', 'objects'], ['bytes', 'bytes']], rateBy, v => {
    rateBy = v;
    c1.redraw();
  }));
  const c1 = timeChart(b1, () => {
    const bytes = rateBy === 'bytes';
    const a = (bytes ? T.bytes_alloc : T.allocs) || [], f = (bytes ? T.bytes_freed : T.frees) || [];
    const fmt = bytes ? fmtBytes : fmtCount;
    return {yTitle: (bytes ? 'bytes ' : 'objects ') + per, yKind: bytes ? 'bytes' : 'count', x0, x1, gaps, mirror: true, height: 260,
      corners: [['allocations ↑', C.alloc, 'top'], ['frees ↓', C.free, 'bottom']],
      layers: [{type: 'bars', colour: C.alloc, grid: fine, vals: a}, {type: 'bars', colour: C.free, grid: fine, vals: f, neg: true}],
      tip: t => {
        const i = gridIndex(fine, t);
        return {head: span(fine, i), rows: [[C.alloc, bytes ? 'bytes allocated' : 'allocations', fmt(a[i])],
          [C.free, bytes ? 'bytes freed' : 'frees', fmt(f[i])], [C.live, 'live at the end', fmtBytes(live[i])]]};
      }};
  });
  b1.appendChild(legend([{colour: C.alloc, label: 'allocations (up)'}, {colour: C.free, label: 'frees of objects allocated in the trace (down)'}].concat(gapItem)));

  /* 2. live bytes, stacked by cache or call site */
  let liveBy = 'caches';
  const lg2 = h('div');
  const b2 = block('chart-live', 'Live slab bytes (held by the trace\'s allocations)', segmented('live-by', [['caches', 'by cache'], ['sites', 'by call site']], liveBy, v => {
    liveBy = v;
    c2.redraw();
    drawLegend2();
  }));
  const stackOf = () => {
    const bySites = liveBy === 'sites' && coarse;
    const series = (bySites ? T.sites : T.caches) || [];
    const grid = bySites ? coarse : fine, kind = bySites ? 'site' : 'cache';
    return {grid, kind, series, layers: stackUp(series.map(sr => sr.live), grid.n).map((e, k) =>
      ({type: 'area', at: 'end', grid, lo: e.lo, vals: e.hi, colour: catColour(kind, series[k].name)}))};
  };
  const c2 = timeChart(b2, () => {
    const stk = stackOf();
    return {yTitle: 'live bytes', yKind: 'bytes', x0, x1, gaps, height: 260,
      layers: stk.layers.concat([{type: 'line', at: 'end', grid: fine, vals: live, colour: C.live, width: 2}]),
      tip: t => {
        const i = gridIndex(fine, t), j = gridIndex(stk.grid, t);
        const rows = [[C.live, 'total live at the end', fmtBytes(live[i])]];
        if (stk.grid !== fine) rows.push([null, 'by call site: interval', span(stk.grid, j)]);
        for (let k = stk.series.length - 1; k >= 0; k--) rows.push([stk.layers[k].colour, stk.series[k].name, fmtBytes((stk.series[k].live || [])[j])]);
        return {head: span(fine, i), rows};
      }};
  });
  b2.appendChild(lg2);
  function drawLegend2() {
    const stk = stackOf();
    lg2.textContent = '';
    lg2.appendChild(legend([{colour: C.live, label: 'total', kind: 'line'}].concat(stk.series.map(sr =>
      ({colour: catColour(stk.kind, sr.name), label: sr.name === 'other' ? 'other ' + (stk.kind === 'site' ? 'call sites' : 'caches') : sr.name}))).concat(gapItem)));
  }
  drawLegend2();

  /* 3. pages by order */
  const b3 = block('chart-pages', 'Page allocations per interval, by order');
  const pg = (T.pages || []).slice().sort((a, b) => a.order - b.order);
  if (!pg.length || !sum(pg.map(p => sum(p.allocs)))) {
    b3.appendChild(note('No page allocations in the window.', 'none'));
  } else {
    const layers = stackUp(pg.map(p => p.allocs), T.n).map((e, k) => ({type: 'bars', grid: fine, lo: e.lo, vals: e.hi, colour: orderColour(pg[k].order)}));
    const cum = layers[layers.length - 1].vals;
    timeChart(b3, () => ({yTitle: 'allocations ' + per, yKind: 'count', x0, x1, gaps, layers,
      tip: t => {
        const i = gridIndex(fine, t);
        const rows = [[null, 'all orders', fmtCount(cum[i])]];
        for (let k = pg.length - 1; k >= 0; k--) rows.push([orderColour(pg[k].order), 'order ' + pg[k].order, fmtCount(pg[k].allocs[i])]);
        return {head: span(fine, i), rows};
      }}));
    b3.appendChild(legend(pg.map(p => ({colour: orderColour(p.order), label: 'order ' + p.order + ' (' + (1 << p.order) + (p.order ? ' pages)' : ' page)')})).concat(gapItem)));
  }

  /* 4. process births */
  const b4 = block('chart-births', 'Process births per interval' + (T.births_event ? ' (' + T.births_event + ')' : ''));
  const births = T.births || [];
  if (!sum(births)) {
    b4.appendChild(note('No process births in the window' + (T.births_event ? '.' : ' (no fork events recorded).'), 'none'));
  } else {
    timeChart(b4, () => ({yTitle: 'births ' + per, yKind: 'count', x0, x1, gaps, height: 180,
      layers: [{type: 'bars', colour: C.births, grid: fine, vals: births}],
      tip: t => {
        const i = gridIndex(fine, t);
        return {head: span(fine, i), rows: [[C.births, 'process births', fmtCount(births[i])]]};
      }}));
    b4.appendChild(legend([{colour: C.births, label: 'processes born: ' + fmtCount(sum(births)) + ' in all'}].concat(gapItem)));
  }
}

let FLAME = null;
function flameSection(sec) {
  const F = D.flame;
  if (!F || !F.root) return sec.appendChild(note('No flame graph data.', 'none'));
  const sampled = F.kind === 'stacks' && R.summary && R.summary.stack_sample > 1;
  sec.appendChild(note(F.kind === 'stacks'
    ? 'Slab allocations by kernel stack: the root on top, then the outermost caller, down to the call site (function+offset). "(other)" sums small siblings; "(no stack)": allocations recorded without a stack' +
      (sampled ? ' that sampling does not explain.' : '.')
    : 'Slab allocations by call site, then cache, then process name (record with --stack for kernel stacks). "(other)" sums small siblings.'));
  if (sampled)
    sec.appendChild(note('Stacks were sampled (record --stack-sample ' + R.summary.stack_sample + '): about 1 allocation in ' +
      fmtCount(R.summary.stack_sample) + ' has one, and each stack here counts ' + fmtCount(R.summary.stack_sample) +
      ' times, at most its call site\'s own allocations.'));
  sec.appendChild(note('Click a box to zoom into it; click a box above it, a name in the path, or Reset to zoom out.', 'muted'));
  FLAME = flameGraph(sec, F);
}

function callsitesSection(sec) {
  const rows = R.callsites;
  const hasStacks = (rows || []).some(r => r.stacks && r.stacks.length);
  sec.appendChild(note('Allocation sites, largest first; frees: of their objects; unseen: freed where the trace shows no free (the address was allocated again).' +
    (hasStacks ? ' ▸ shows a site\'s stacks: the callers above it.' : '')));
  sec.appendChild(dataTable('callsites', rows, {
    key: r => r.callsite, cut: 100, swatch: r => catMaps.site.has(r.callsite) ? catMaps.site.get(r.callsite) : null,
    rowClass: r => r.allocs ? '' : 'muted-row',
    detail: (r, probe) => {
      if (!r.stacks || !r.stacks.length) return null;
      if (probe) return true;
      return dataTable('callsite_stacks', r.stacks, {
        key: x => (x.frames || []).join(';'),
        show: ['allocs', 'bytes_alloc', 'live_bytes', 'frames'],
        titles: {frames: 'callers, innermost first', bytes_alloc: 'allocated', live_bytes: 'live bytes', allocs: 'allocs'},
      });
    },
  }));
}

function lifetimesSection(sec) {
  const sites = (R.callsites || []).filter(c => Array.isArray(c.lifetime_log2_ns) && sum(c.lifetime_log2_ns) > 0);
  sec.appendChild(note('Time from allocation to free of the objects freed in the window, in log2 buckets (exact within a factor of two).'));
  if (!sites.length) return sec.appendChild(note('No object allocated in the window was freed in it.', 'none'));
  const all = addUp(sites.map(c => c.lifetime_log2_ns));
  const range = bucketRange(all);
  const select = h('select', {class: 'select', 'aria-label': 'call site', 'data-toggle': 'lifetime-site'},
    h('option', {value: -1}, 'all call sites (' + fmtCount(sum(all)) + ' freed)'),
    sites.map((c, i) => h('option', {value: i}, c.callsite + ' (' + fmtCount(sum(c.lifetime_log2_ns)) + ' freed)')));
  const stats = h('span', {class: 'muted'});
  sec.appendChild(h('div', {class: 'toolbar'}, h('label', null, 'call site ', select), stats));
  const box = h('div', {class: 'chart'});
  sec.appendChild(box);
  const draw = () => {
    const i = +select.value;
    const counts = i < 0 ? all : sites[i].lifetime_log2_ns;
    stats.textContent = fmtCount(sum(counts)) + ' objects freed: ' + histStats(counts);
    log2Chart(box, counts, range[0], range[1], {colour: C.free, what: 'objects freed', yTitle: 'objects freed',
      xTitle: 'lifetime: allocation to free (log scale)'});
  };
  select.addEventListener('change', () => guard('lifetimes', draw));
  draw();
  redraws.push(draw);
}

function sizesSection(sec) {
  const sizes = D.sizes || [];
  sec.appendChild(note('Slab allocations by allocated size (the size class): the solid part of a bar was requested, the hatched part is waste (allocated, not requested).' +
    (isNum(S.fragmentation_bytes) ? ' In all: ' + fmtBytes(S.fragmentation_bytes) + ' wasted of ' + fmtBytes(S.bytes_alloc) + ' allocated (' + fmtPct(S.fragmentation_pct) + ').' : '')));
  if (!sizes.length) return sec.appendChild(note('No slab allocations.', 'none'));
  let by = 'bytes';
  const box = h('div', {class: 'chart'});
  sec.appendChild(h('div', {class: 'toolbar'}, segmented('sizes-by', [['bytes', 'largest allocated first'], ['waste', 'largest waste first']], by, v => {
    by = v;
    sizeBars(box, sizes, by);
  })));
  sec.appendChild(box);
  sizeBars(box, sizes, by);
  redraws.push(() => sizeBars(box, sizes, by));
}

function cachesSection(sec) {
  sec.appendChild(note('Slab caches by name, kmalloc by size class. The colour of a cache is its colour in the live bytes chart.'));
  sec.appendChild(dataTable('caches', R.caches, {key: r => r.name, cut: 100,
    swatch: r => catMaps.cache.has(r.name) ? catMaps.cache.get(r.name) : null}));
}

function processesSection(sec) {
  sec.appendChild(h('h3', null, 'By name'));
  sec.appendChild(dataTable('comms', R.comms, {key: r => r.comm}));
  sec.appendChild(h('h3', null, 'By task (a task that execs has a row per name)'));
  sec.appendChild(dataTable('processes', R.processes, {key: r => String(r.pid), cut: 100}));
}

function pagesSection(sec) {
  const P = R.pages;
  if (!P) return sec.appendChild(note('No page data.', 'none'));
  sec.appendChild(note(fmtCount(P.allocs) + ' allocations (' + fmtCount(P.pages_allocated) + ' pages), ' + fmtCount(P.frees) + ' frees (' +
    fmtCount(P.pages_freed) + ' pages), ' + fmtCount(P.failures) + ' failed.'));
  const mx = P.order_migratetype || [];
  const usedCols = MIGRATE.map((x, j) => mx.some(r => r[j] > 0));
  const rows = mx.map((r, o) => ({o, r})).filter(x => x.r.some(v => v > 0));
  sec.appendChild(h('h3', null, 'Allocations by order and migrate type'));
  if (!rows.length) {
    sec.appendChild(note('none', 'none'));
  } else {
    const max = Math.max(...rows.map(x => Math.max(...x.r)));
    sec.appendChild(h('div', {class: 'scroll'}, h('table', {class: 'data matrix', 'data-table': 'order_migratetype'},
      h('thead', null, h('tr', null, h('th', {class: 'str'}, 'order'), MIGRATE.map((m, j) => usedCols[j] ? h('th', {class: 'num'}, m) : null),
        h('th', {class: 'num'}, 'allocations'), h('th', {class: 'num'}, 'pages'))),
      h('tbody', null, rows.map(x => h('tr', {'data-key': String(x.o)},
        h('td', {'data-col': 'order', 'data-value': String(x.o)}, x.o === 11 ? '11+' : String(x.o)),
        MIGRATE.map((m, j) => usedCols[j] ? h('td', {class: 'num', 'data-col': m.toLowerCase().replace(/ /g, '_'), 'data-value': String(x.r[j]),
          style: x.r[j] ? 'background:rgba(16,153,107,' + (0.1 + 0.5 * x.r[j] / max).toFixed(2) + ')' : null}, fmtCount(x.r[j])) : null),
        h('td', {class: 'num', 'data-col': 'allocs', 'data-value': String(sum(x.r))}, fmtCount(sum(x.r))),
        h('td', {class: 'num', 'data-col': 'pages', 'data-value': String(sum(x.r) * Math.pow(2, x.o))}, fmtCount(sum(x.r) * Math.pow(2, x.o)))))))));
  }
  sec.appendChild(h('h3', null, 'By gfp flags'));
  sec.appendChild(dataTable('gfp', P.gfp, {key: r => r.value, show: ['flags', 'value', 'allocs', 'pages'], titles: {value: 'value'}}));
  sec.appendChild(h('h3', null, 'By allocating function'));
  sec.appendChild(dataTable('page_functions', P.functions, {key: r => r.callsite,
    none: 'Page allocations by function need kernel stacks: record with --stack.'}));
}

function vmallocSection(sec) {
  const V = R.vmalloc;
  if (!V) return sec.appendChild(note('No vmalloc data in this report.', 'none'));
  sec.appendChild(note('Areas from alloc_vmap_area; freed lazily by free_vmap_area_noflush, often from a kworker; sizes include the guard page. ' +
    fmtCount(V.allocs) + ' areas (' + fmtBytes(V.bytes) + '), ' + fmtCount(V.frees) + ' frees (' + fmtBytes(V.bytes_freed) + '), ' +
    fmtCount(V.preexisting_frees) + ' of areas allocated before the trace, ' + fmtCount(V.failures) + ' failed; live at the end: ' +
    fmtCount(V.live) + ' areas, ' + fmtBytes(V.live_bytes) + '.'));
  if (!V.allocs && !V.frees) return;
  sec.appendChild(h('h3', null, 'By size'));
  sec.appendChild(dataTable('vmalloc_sizes', V.sizes, {key: r => String(r.size)}));
  sec.appendChild(h('h3', null, 'By allocating function'));
  sec.appendChild(dataTable('vmalloc_functions', V.functions, {key: r => r.function,
    none: 'vmalloc allocations by function need kernel stacks: record with --stack.'}));
  sec.appendChild(h('h3', null, 'Live at the end, largest first'));
  sec.appendChild(dataTable('vmalloc_live', V.live_areas, {key: r => r.address, show: ['size', 'age_ns', 'comm', 'pid', 'function', 'address', 'uncertain'],
    titles: {uncertain: 'uncertain'}, none: 'No area allocated in the window is live at its end.'}));
}

function outstandingSection(sec) {
  const rows = R.outstanding || [];
  sec.appendChild(note('Objects allocated in the window and live at its end, by allocation site: leak candidates.' +
    (S.uncertain_objects ? ' ' + fmtCount(S.uncertain_objects) + ' uncertain objects (events were lost after they were allocated) are not here.' : '') +
    (S.partial_allocs || S.partial_frees ? ' The recording was partial: a live object is not a leak.' : '')));
  const ages = addUp(rows.map(r => r.age_log2_ns));
  const range = bucketRange(ages);
  if (range) {
    sec.appendChild(h('h3', null, 'Live objects by age at the end'));
    sec.appendChild(note(fmtCount(sum(ages)) + ' objects: ' + histStats(ages) + '.', 'muted'));
    const box = h('div', {class: 'chart'});
    sec.appendChild(box);
    const draw = () => log2Chart(box, ages, range[0], range[1], {colour: C.live, what: 'live objects', yTitle: 'live objects',
      xTitle: 'age at the end of the trace (log scale)', height: 200});
    draw();
    redraws.push(draw);
  }
  sec.appendChild(dataTable('outstanding', rows, {key: r => r.callsite, none: 'No object allocated in the window is live at its end.'}));
  if (rows.some(r => r.in_untraced_caches)) sec.appendChild(note('untraced?: objects of caches the kernel also frees without tracing: they may be gone.', 'muted'));
}

const MISUSE_DOC = {
  double_free: 'an object freed twice',
  alloc_over_live: 'an allocation at the address of a live object: a free the kernel did not trace',
  cache_free_of_kmalloc: 'kmem_cache_free of a kmalloc object',
  cache_mismatch: 'freed to another cache than the one it came from',
  kfree_of_cache_object: 'kfree of a cache object (legal on current kernels)',
  untraced_alloc: 'a free of a freed object where the kernel allocates without tracing (bulk paths)',
};

function misuseSection(sec) {
  const rows = R.misuse || [];
  const count = k => sum(rows.filter(r => r.severity === k).map(r => r.count));
  sec.appendChild(h('div', {class: 'badges'}, [['error', 'errors'], ['info', 'info']].map(x =>
      h('span', {class: 'badge sev-' + x[0] + (count(x[0]) ? '' : ' zero')}, fmtCount(count(x[0])) + ' ' + x[1])),
    S.uncertain_misuse ? h('span', {class: 'muted'}, ' and ' + fmtCount(S.uncertain_misuse) + ' uncertain findings (events were lost in between), not counted') : null));
  sec.appendChild(dataTable('misuse', rows, {
    key: r => r.kind + ' ' + r.callsite + ' ' + (r.cache || ''),
    show: ['severity', 'kind', 'count', 'callsite', 'cache', 'alloc_callsite', 'first_ts_ns', 'first_pid', 'detail'],
    titles: {callsite: 'at', alloc_callsite: 'allocated at', first_ts_ns: 'first at', first_pid: 'pid', first_ptr: 'object'},
    cellClass: (c, r) => c.name === 'severity' ? 'sev sev-' + r.severity : null,
    none: 'No misuse found.',
  }));
  const kinds = [...new Set(rows.map(r => r.kind))].filter(k => MISUSE_DOC[k]);
  if (kinds.length) sec.appendChild(h('dl', {class: 'glossary'}, kinds.map(k => [h('dt', null, k), h('dd', null, MISUSE_DOC[k])])));
  const U = R.untraced || [];
  if (U.length) {
    sec.appendChild(h('h3', null, 'Untraced: the kernel\'s design, not misuse'));
    sec.appendChild(note('Caches whose objects the kernel allocates or frees without an event (its slab bulk paths and per-CPU sheaves), ' +
      'so the trace shows an allocation over a live object, a second free, or a free naming another cache. One row per cache.', 'muted'));
    sec.appendChild(dataTable('untraced', U, {
      key: r => r.cache,
      show: ['cache', 'count', 'alloc_over_live', 'untraced_alloc', 'reused', 'why'],
      titles: {count: 'signs', alloc_over_live: 'allocated over live', untraced_alloc: 'freed twice', reused: 'freed as another cache'},
      none: 'None.',
    }));
  }
}

function accessSection(sec) {
  const A = R.access;
  sec.appendChild(note('Watchpoint samples (kmemtrace watch): ' + fmtCount(A.writes) + ' writes and ' + fmtCount(A.reads) + ' reads in ' +
    fmtCount(A.objects) + ' objects; ' + fmtCount(A.dropped) + ' dropped (no live object at that address then); ' + fmtCount(A.lost) +
    ' lost. The instruction is the one after the access (data breakpoints trap after it).'));
  const rows = A.rows;
  const rkey = r => r.alloc_function + '\u0000' + r.cache + '\u0000' + r.offset + '\u0000' + (r.field || '') + '\u0000' + r.len;
  const rowIds = [], cols = [], cell = new Map(), colTotal = new Map();
  for (const r of rows) {
    const k = rkey(r);
    if (!rowIds.some(x => x.k === k)) rowIds.push({k, r});
    if (!colTotal.has(r.instruction)) cols.push({ins: r.instruction, fn: r.function});
    colTotal.set(r.instruction, (colTotal.get(r.instruction) || 0) + r.writes + r.reads);
    const c = cell.get(k + '\u0001' + r.instruction) || {w: 0, r: 0};
    c.w += r.writes;
    c.r += r.reads;
    cell.set(k + '\u0001' + r.instruction, c);
  }
  cols.sort((a, b) => colTotal.get(b.ins) - colTotal.get(a.ins));
  const max = Math.max(1, ...[...cell.values()].map(c => c.w + c.r));
  const table = h('table', {class: 'heat'});
  table.appendChild(h('thead', null, h('tr', null, h('th', {class: 'corner'}, 'object (allocated in, cache)'), h('th', {class: 'corner'}, 'offset: field'),
    cols.map(c => h('th', {class: 'rot', title: c.ins + ' in ' + c.fn}, h('span', null, c.ins))))));
  const body = h('tbody');
  let prev = null;
  for (const x of rowIds) {
    const group = x.r.alloc_function + ' (' + x.r.cache + ')';
    const tr = h('tr', {class: group !== prev ? 'group-start' : null},
      h('th', {class: 'obj'}, group !== prev ? group : ''),
      h('th', {class: 'off', title: '+' + x.r.offset + (x.r.field ? ' ' + x.r.field : '') + ', ' + x.r.len + ' bytes watched'},
        '+' + x.r.offset + (x.r.field ? ' ' + x.r.field : '') + ' (' + x.r.len + ' B)'));
    prev = group;
    for (const c of cols) {
      const v = cell.get(x.k + '\u0001' + c.ins);
      const n = v ? v.w + v.r : 0;
      const t = Math.sqrt(n / max);
      const text = !v ? '' : [v.w ? fmtCompact(v.w) + 'w' : '', v.r ? fmtCompact(v.r) + 'r' : ''].filter(Boolean).join(' ') || '0';
      const td = h('td', {class: 'hc', style: n ? 'background:' + heatColour(t) + ';color:' + (t > 0.62 ? '#111' : '#fff') : null}, text);
      if (v) {
        td.addEventListener('mousemove', ev => showTip(ev, tipContent(group + ' +' + x.r.offset + (x.r.field ? ' ' + x.r.field : ''), [
          [null, 'instruction after the access', c.ins], [null, 'writes', fmtCount(v.w)], [null, 'reads', fmtCount(v.r)]])));
        td.addEventListener('mouseleave', hideTip);
      }
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  table.appendChild(body);
  sec.appendChild(h('h3', null, 'Samples by offset and instruction'));
  sec.appendChild(h('div', {class: 'scroll heatwrap'}, table));
  sec.appendChild(h('div', {class: 'legend'}, h('span', {class: 'muted'}, 'writes + reads: '),
    h('span', {class: 'ramp', style: 'background:linear-gradient(to right,' + [0, 0.25, 0.5, 0.75, 1].map(heatColour).join(',') + ')'}),
    h('span', {class: 'muted'}, ' 1 to ' + fmtCount(max) + ' (square-root scale)')));
  sec.appendChild(h('h3', null, 'All rows'));
  sec.appendChild(dataTable('access_rows', rows, {
    key: r => r.alloc_function + '/' + r.cache + '+' + r.offset + '@' + r.instruction,
    show: ['alloc_function', 'cache', 'offset', 'field', 'len', 'instruction', 'writes', 'reads'],
    titles: {alloc_function: 'allocated in', instruction: 'instruction after the access'},
  }));
}

/* ===================================================== 9. checks ===== */

/* Each series adds up to the summary; each tree node holds its children. */
function checksSection(sec) {
  const list = [];
  const add = (name, what, got, want) => list.push({name, what, got, want});
  const TL = D.timeline;
  if (TL && R.summary) {
    if (Array.isArray(TL.allocs)) add('allocs-series', 'allocations per interval, summed = summary allocs', sum(TL.allocs), S.allocs);
    if (Array.isArray(TL.frees)) add('frees-series', 'frees per interval, summed = summary frees', sum(TL.frees), S.frees);
    if (Array.isArray(TL.bytes_alloc)) add('bytes-series', 'bytes allocated per interval, summed = summary bytes_alloc', sum(TL.bytes_alloc), S.bytes_alloc);
    if (Array.isArray(TL.bytes_freed)) add('freed-series', 'bytes freed per interval, summed = summary bytes_freed', sum(TL.bytes_freed), S.bytes_freed);
    if (Array.isArray(TL.live) && TL.live.length) add('live-end', 'live bytes at the end = live_bytes + uncertain_bytes', TL.live[TL.live.length - 1], (S.live_bytes || 0) + (S.uncertain_bytes || 0));
    if (Array.isArray(TL.caches) && Array.isArray(TL.live) && TL.n) {
      let ok = 0;
      for (let i = 0; i < TL.n; i++) {
        let s = 0;
        for (const c of TL.caches) s += (c.live || [])[i] || 0;
        if (s === TL.live[i]) ok++;
      }
      add('caches-stack', 'intervals whose top caches add up to the live bytes', ok, TL.n);
    }
    if (Array.isArray(TL.pages)) add('pages-series', 'page allocations per interval, summed = page_allocs - page_failures',
      sum(TL.pages.map(p => sum(p.allocs))), (S.page_allocs || 0) - (S.page_failures || 0));
  }
  const F = D.flame && D.flame.root;
  if (F && Array.isArray(F.v) && R.summary) {
    add('flame-bytes', 'flame graph root: bytes = summary bytes_alloc', F.v[0], S.bytes_alloc);
    add('flame-objects', 'flame graph root: objects = summary allocs', F.v[1], S.allocs);
    add('flame-live', 'flame graph root: live bytes = summary live_bytes', F.v[2], S.live_bytes);
  }
  if (F) {
    let n = 0, ok = 0;
    (function walk(x) {
      n++;
      const c = x.c || [];
      if ([0, 1, 2].every(k => (x.v || [])[k] >= sum(c.map(y => (y.v || [])[k])))) ok++;
      c.forEach(walk);
    })(F);
    add('flame-tree', 'flame graph nodes holding at least their children, in all three metrics', ok, n);
  }
  checkTable(sec, list.concat(layoutChecks()));
}

/*
 * One table row per check, class check, with data-check, -got, -want, -ok.
 * A check with measure() is of the page as laid out: measured once the
 * table is in place (twice: its own text moves the layout), and again
 * after the window is resized.
 */
function checkTable(sec, list) {
  if (!list.length) return sec.appendChild(note('Nothing to check: no series in the data.', 'none'));
  const summary = note('');
  const rows = list.map(c => h('tr', {class: 'check', 'data-check': c.name},
    h('td', null, c.name), h('td', {class: 'muted'}, c.what), h('td', {class: 'num'}), h('td', {class: 'num'}), h('td', {class: 'mark'})));
  const show = () => {
    list.forEach((c, i) => {
      if (c.measure) Object.assign(c, c.measure());
      const ok = c.got === c.want, td = rows[i].children;
      rows[i].setAttribute('data-got', String(c.got));
      rows[i].setAttribute('data-want', String(c.want));
      rows[i].setAttribute('data-ok', String(ok));
      td[1].textContent = c.what;
      td[2].textContent = fmtCount(c.got);
      td[3].textContent = fmtCount(c.want);
      td[4].textContent = ok ? '✓' : '✗';
    });
    const bad = list.filter(c => c.got !== c.want).length;
    summary.textContent = bad ? bad + ' of ' + list.length + ' checks failed: the page does not show the report\'s numbers as they are.' :
      'All ' + list.length + ' checks pass: the numbers drawn above add up to the report\'s own, and the page shows them whole.';
    summary.className = 'note ' + (bad ? 'loss-text' : 'ok-text');
  };
  sec.appendChild(summary);
  sec.appendChild(h('table', {class: 'data checks'},
    h('thead', null, h('tr', null, h('th', {class: 'str'}, 'check'), h('th', {class: 'str'}, 'what'), h('th', {class: 'num'}, 'got'),
      h('th', {class: 'num'}, 'want'), h('th', null, ''))),
    h('tbody', null, rows)));
  show();
  if (list.some(c => c.measure)) {
    show();
    redraws.push(show);
  }
}

/* ---- the page as laid out, at the window's width ---- */

/* Texts a box cuts (an ellipsis, hidden overflow, a chart's edge): none should be. */
function cutTexts() {
  const cut = [];
  for (const svg of document.querySelectorAll('#app svg')) {
    const box = svg.getBoundingClientRect();
    if (!box.width) continue;
    for (const t of svg.querySelectorAll('text')) {
      const r = t.getBoundingClientRect();
      if (r.width && (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1))
        cut.push(t);
    }
  }
  for (const el of document.querySelectorAll('#app *')) {
    if (el instanceof SVGElement || !el.offsetParent) continue;
    const st = getComputedStyle(el);
    const hides = /hidden|clip/.test(st.overflowX + st.overflowY) && [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if ((st.textOverflow === 'ellipsis' || hides) && (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1))
      cut.push(el);
  }
  return cut;
}

/* The colours of series that share a chart: each palette whole, and each legend drawn. */
function colourSets() {
  const card = parseColour(getComputedStyle(document.querySelector('section.card') || document.body).backgroundColor) || [1, 1, 1, 1];
  const solid = c => c && (c[3] >= 1 ? c.slice(0, 3) : null);
  const sets = [
    {what: 'page orders', colours: ORDER_COLOURS.concat(C.loss)},
    {what: 'caches and call sites', colours: PALETTE.concat(C.live, C.other, C.loss)},
  ].map(x => ({what: x.what, colours: x.colours.map(c => parseColour(c).slice(0, 3))}));
  document.querySelectorAll('#app .legend').forEach((lg, k) => {
    /* translucent swatches are overlays (a truncated CPU's band), not series */
    const colours = [...lg.querySelectorAll('.sw')].map(sw => solid(parseColour(getComputedStyle(sw).backgroundColor))).filter(Boolean);
    if (colours.length > 1) sets.push({what: 'legend ' + (k + 1), colours});
  });
  sets.forEach(x => x.colours.push(card.slice(0, 3)));
  return sets;
}

/* Pairs of series colours DE_MIN apart or more, of all pairs; the closest pair. */
function colourPairs() {
  const hex = c => '#' + c.map(v => Math.round(v * 255).toString(16).padStart(2, '0')).join('');
  let ok = 0, n = 0, worst = null;
  for (const x of colourSets()) {
    for (let i = 0; i < x.colours.length; i++) {
      for (let j = i + 1; j < x.colours.length; j++) {
        const d = colourDistance(x.colours[i], x.colours[j]);
        n++;
        if (d.de >= DE_MIN) ok++;
        if (!worst || d.de < worst.de) worst = Object.assign(d, {pair: hex(x.colours[i]) + ' and ' + hex(x.colours[j]) + ' (' + x.what + ')'});
      }
    }
  }
  return {ok, n, worst};
}

/* A y axis's labels share one form: one suffix (k, M, KiB) or none, and thousands grouped. */
function oneForm(labels) {
  const forms = new Set(labels.filter(l => l !== '0').map(l => {
    const m = /^-?[\d,]*\.?\d*(.*)$/.exec(l);
    return m[1].trim() + (/^-?\d{4}/.test(l) ? ' ungrouped' : '');
  }));
  return forms.size <= 1;
}

function layoutChecks() {
  const width = () => document.documentElement.clientWidth;
  /* count axes of these tops, and every y axis drawn */
  const tops = [9, 950, 9500, 12000, 15000, 95000, 1.2e6, 1.5e7, 3e9];
  return [
    {name: 'page-width', measure: () => ({what: 'pixels the page is wider than the window (' + width() + ' px): it never scrolls sideways',
      got: Math.max(0, document.documentElement.scrollWidth - width()), want: 0})},
    {name: 'nothing-cut', measure: () => {
      const cut = cutTexts();
      return {what: 'texts cut short by their box' + (cut.length ? ', such as "' + cut[0].textContent.slice(0, 60) + '"' : ''),
        got: cut.length, want: 0};
    }},
    {name: 'axis-labels', measure: () => {
      const axes = [...document.querySelectorAll('#app svg')].map(svg => [...svg.querySelectorAll('text.ytick')].map(t => t.textContent))
        .filter(a => a.length).concat(tops.map(t => yScale(t, 'count', 5)).map(ys => ys.ticks.map(ys.label)));
      return {what: 'value axes whose labels all have one form (e.g. 0, 5k, 10k; not 5,000 beside 10k), of ' + axes.length +
        ' (those drawn, and count axes up to ' + tops.map(fmtCompact).join(', ') + ')', got: axes.filter(oneForm).length, want: axes.length};
    }},
    {name: 'series-colours', measure: () => {
      const p = colourPairs();
      return {what: 'pairs of series colours (and each with the card) at least ' + DE_MIN + ' apart in CIEDE2000, in normal, protan, deutan ' +
        'and tritan vision' + (p.worst ? '; the closest: ' + p.worst.pair + ', ' + p.worst.de.toFixed(1) + ' (' + p.worst.vision + ')' : ''),
        got: p.ok, want: p.n};
    }},
  ];
}

function renderReport(app, data) {
  D = data;
  R = data.report || {};
  S = R.summary || {};
  T = data.timeline && data.timeline.n > 0 ? data.timeline : null;
  /* colours of the top caches and sites, in the live chart's order */
  if (T) {
    (T.caches || []).forEach(c => catColour('cache', c.name));
    (T.sites || []).forEach(c => catColour('site', c.name));
  }
  guard('header', () => headerBlock(app));
  const nav = h('nav', {class: 'nav', 'aria-label': 'sections'});
  app.appendChild(nav);
  addSection(app, nav, 'summary', 'Summary', null, summarySection);
  addSection(app, nav, 'timeline', 'Over time', null, timelineSection);
  /* A section whose events the file lacks is null in the data: left out, the summary says so. */
  const slab = R.callsites !== null;
  if (slab) {
    addSection(app, nav, 'flame', 'Flame graph: where the bytes were allocated', 'Flame graph', flameSection);
    addSection(app, nav, 'callsites', 'Call sites', null, callsitesSection);
    addSection(app, nav, 'lifetimes', 'Lifetimes per call site', 'Lifetimes', lifetimesSection);
    addSection(app, nav, 'sizes', 'Requested vs allocated sizes: where the waste is', 'Sizes & waste', sizesSection);
    addSection(app, nav, 'caches', 'Caches', null, cachesSection);
  }
  if (R.processes !== null) addSection(app, nav, 'processes', 'Processes', null, processesSection);
  if (R.pages !== null) addSection(app, nav, 'pages', 'Pages', null, pagesSection);
  if (R.vmalloc !== null) addSection(app, nav, 'vmalloc', 'vmalloc', null, vmallocSection);
  if (slab) {
    addSection(app, nav, 'outstanding', 'Outstanding: live at the end', 'Outstanding', outstandingSection);
    addSection(app, nav, 'misuse', 'Misuse', null, misuseSection);
  }
  if (R.access && Array.isArray(R.access.rows) && R.access.rows.length) addSection(app, nav, 'access', 'Accesses (watchpoint samples)', 'Accesses', accessSection);
  addSection(app, nav, 'checks', 'Self-check', null, checksSection);
}

/* ===================================================== 10. diff ===== */

const DIFF_TABLES = [['callsites', 'Call sites', 'callsite'], ['caches', 'Caches', 'name'],
  ['processes', 'Processes (by name)', 'comm'], ['pages', 'Pages (by order)', 'order']];
const DIFF_LABELS = {bytes_alloc: 'allocated', allocs: 'allocs', frees: 'frees', bytes_req: 'requested', waste: 'waste',
  live_objects: 'live', live_bytes: 'live bytes', pages: 'pages'};
const DIFF_BYTES = {bytes_alloc: 1, bytes_req: 1, waste: 1, live_bytes: 1};

/* diff --html: each side, then per table the largest changes (old beside
   new) and the rows, columns as in diff --json: old.F, new.F, delta.F, pct.F */
function renderDiff(app, data) {
  const X = data.diff || {};
  const rate = X.per_second ? '/s' : '';
  const fmtF = (f, v) => !isNum(v) ? '' : (DIFF_BYTES[f] ? fmtBytes(v) : fmtCount(v)) + rate;
  const signed = (f, v) => !isNum(v) ? '' : (v > 0 ? '+' : '') + fmtF(f, v);
  const sideText = x => fmtNs(x.span_ns) + ', ' + fmtCount(x.allocs) + ' slab allocations (' + fmtBytes(x.bytes_alloc) + '), ' +
    fmtCount(x.events) + ' events' + (x.kernel ? ' (' + x.kernel + ')' : '');
  app.appendChild(h('header', {class: 'top'}, h('h1', null, 'kmemtrace diff'),
    h('dl', {class: 'meta'}, ['old', 'new'].map(k => [h('dt', null, k), h('dd', null, ((X[k] || {}).file || '?') + ': ' + sideText(X[k] || {}))]),
      h('dt', null, 'call sites'), h('dd', null, 'matched by ' + (X.match || '?') + (X.match_reason ? ': ' + X.match_reason : '')),
      X.per_second ? [h('dt', null, 'numbers'), h('dd', null, 'per second of each trace')] : null),
    h('div', {class: 'generator muted'}, data.generator || '')));
  const banners = h('div', {class: 'banners'});
  for (const k of ['old', 'new']) {
    const x = X[k] || {};
    if (x.lower_bound) banners.appendChild(banner(x.affected_by_loss ? 'loss' : 'warn', 'The ' + k + ' numbers are lower bounds:', x.lower_bound_why || ''));
  }
  app.appendChild(banners);
  const nav = h('nav', {class: 'nav', 'aria-label': 'sections'});
  app.appendChild(nav);

  for (const [name, title, keyField] of DIFF_TABLES) {
    const rows = X[name];
    if (!Array.isArray(rows)) continue;
    addSection(app, nav, 'diff-' + name, title, null, sec => {
      if (!rows.length) return sec.appendChild(note('none', 'none'));
      const fields = Object.keys(rows[0].old || rows[0].new || {});
      const main = fields[0];
      const key = r => keyField === 'order' ? 'order ' + r.order : String(r[keyField]);
      const top = rows.filter(r => r.delta && r.delta[main]).sort((a, b) => Math.abs(b.delta[main]) - Math.abs(a.delta[main])).slice(0, 12);
      if (top.length) {
        sec.appendChild(h('h3', null, 'Largest changes in ' + (DIFF_LABELS[main] || main) + (DIFF_BYTES[main] ? ' bytes' : '')));
        const box = h('div', {class: 'chart'});
        sec.appendChild(box);
        const draw = () => diffBars(box, top, main, key, fmtF, signed);
        draw();
        redraws.push(draw);
        sec.appendChild(legend([{colour: '#9aa4ae', label: 'old'}, {colour: C.alloc, label: 'new'}]));
      }
      const cols = [{name: keyField, title: keyField === 'order' ? 'order' : keyField === 'comm' ? 'comm' : keyField === 'name' ? 'cache' : 'call site',
        type: keyField === 'order' ? 'u64' : 'str', unit: ''}];
      if (name === 'callsites') cols.push({name: 'function', title: '', type: 'str', unit: '', doc: 'the function'});
      cols.push({name: 'only_in', title: 'only in', type: 'str', unit: '', doc: 'null in both files, else old or new'});
      fields.forEach((f, k) => {
        const u = DIFF_BYTES[f] ? 'bytes' : 'count', t = DIFF_LABELS[f] || f;
        cols.push({name: 'old.' + f, title: k < 2 ? t + ' old' : '', type: 'u64', unit: u, doc: f + ' in the old file'},
          {name: 'new.' + f, title: k < 2 ? t + ' new' : '', type: 'u64', unit: u, doc: f + ' in the new file'},
          {name: 'delta.' + f, title: t + ' Δ', type: 'i64', unit: u, doc: 'new - old'},
          {name: 'pct.' + f, title: k < 2 ? t + ' Δ%' : '', type: 'pct', unit: '', doc: '100 * delta / old (empty where old is 0)'});
      });
      COLUMNS['diff-' + name] = cols;
      const flat = rows.map(r => {
        const o = {only_in: r.only_in};
        o[keyField] = r[keyField];
        if (name === 'callsites') o.function = r.function;
        for (const part of ['old', 'new', 'delta', 'pct']) for (const f of fields) o[part + '.' + f] = (r[part] || {})[f];
        return o;
      });
      sec.appendChild(dataTable('diff-' + name, flat, {
        key: r => String(r[keyField]),
        fmt: (c, v) => c.name === 'only_in' ? (v === 'new' ? 'new' : v === 'old' ? 'gone' : '') :
          c.name.slice(0, 6) === 'delta.' ? signed(c.name.slice(6), v) :
          c.name.slice(0, 4) === 'pct.' ? (isNum(v) ? (v > 0 ? '+' : '') + fmtPct(v) : '') :
          /^(old|new)\./.test(c.name) ? fmtF(c.name.slice(4), v) : fmtCell(c, v),
        cellClass: (c, r) => c.name.slice(0, 6) === 'delta.' ? (r[c.name] ? 'delta' : 'delta zero') : null,
      }));
    });
  }
  addSection(app, nav, 'checks', 'Self-check', null, sec => {
    const list = [];
    for (const [name] of DIFF_TABLES) {
      const rows = X[name];
      if (!Array.isArray(rows)) continue;
      /* delta = new - old in every field (per second: to the decimals printed) */
      const ok = rows.filter(r => Object.keys(r.delta || {}).every(f => {
        const d = (r.new || {})[f] - (r.old || {})[f];
        return Math.abs(d - r.delta[f]) <= (X.per_second ? 0.002 + 1e-9 * Math.abs(d) : 0);
      })).length;
      list.push({name: name + '-delta', what: name + ' rows whose every delta is new - old', got: ok, want: rows.length});
    }
    checkTable(sec, list.concat(layoutChecks()));
  });
}

/* old and new side by side, the change at the right */
function diffBars(box, top, f, key, fmtF, signed) {
  box.textContent = '';
  const W = widthOf(box), rowH = 30, lw = Math.min(300, Math.floor(W * 0.3)), rw = Math.min(380, Math.floor(W * 0.34));
  const pw = W - lw - rw - 12;
  const max = Math.max(1, ...top.map(r => Math.max(r.old[f] || 0, r.new[f] || 0)));
  const svg = svgEl('svg', {width: W, height: top.length * rowH + 4, class: 'tchart'});
  const chars = Math.floor((lw - 12) / 6.8);
  top.forEach((r, i) => {
    const y = i * rowH + 2, k = key(r);
    const g = svgEl('g', {class: 'hoverable'});
    g.appendChild(svgEl('rect', {x: 0, y, width: W, height: rowH, class: 'rowbg'}));
    g.appendChild(svgEl('text', {x: lw - 8, y: y + 19, class: 'label mono', 'text-anchor': 'end'}, k.length > chars ? k.slice(0, chars - 1) + '…' : k));
    g.appendChild(svgEl('rect', {x: lw, y: y + 4, height: 10, width: Math.max(1, (r.old[f] || 0) / max * pw).toFixed(1), fill: '#9aa4ae'}));
    g.appendChild(svgEl('rect', {x: lw, y: y + 15, height: 10, width: Math.max(1, (r.new[f] || 0) / max * pw).toFixed(1), fill: C.alloc}));
    /* in a narrow window the change alone (old and new are in the tooltip) */
    g.appendChild(svgEl('text', {x: lw + pw + 10, y: y + 19, class: 'label ' + (r.delta[f] > 0 ? 'up' : 'down')},
      (W < 900 ? '' : fmtF(f, r.old[f]) + ' → ' + fmtF(f, r.new[f]) + ': ') + signed(f, r.delta[f]) +
      (r.only_in ? (r.only_in === 'new' ? ' (new)' : ' (gone)') : r.pct && isNum(r.pct[f]) ? ' (' + (r.pct[f] > 0 ? '+' : '') + fmtPct(r.pct[f]) + ')' : '')));
    g.addEventListener('mousemove', ev => showTip(ev, tipContent(k, [['#9aa4ae', 'old', fmtF(f, r.old[f])], [C.alloc, 'new', fmtF(f, r.new[f])],
      [null, 'change', signed(f, r.delta[f])]])));
    g.addEventListener('mouseleave', hideTip);
    svg.appendChild(g);
  });
  box.appendChild(svg);
}

/* ===================================================== 11. main ===== */

/* #test-interact: go through the interactive paths; errors go to #kmt-errors. */
function testInteract() {
  const done = [];
  const $ = sel => document.querySelector(sel);
  const fire = (el, type, init) => el && el.dispatchEvent(new MouseEvent(type, Object.assign({bubbles: true}, init)));
  const set = (el, prop, value, type) => {
    if (!el) return;
    el[prop] = value;
    el.dispatchEvent(new Event(type || 'change', {bubbles: true}));
  };
  const pick = (group, value) => set($('[data-toggle="' + group + '"] input[value="' + value + '"]'), 'checked', true);
  const hover = el => {
    const r = el.getBoundingClientRect();
    fire(el, 'mousemove', {clientX: r.left + r.width / 2, clientY: r.top + r.height / 2});
    fire(el, 'mouseleave', {bubbles: false});
  };
  const steps = {
    sort: () => {
      const th = $('table[data-table="callsites"] th[data-sort="allocs"]') || $('table[data-table] th[data-sort]');
      fire(th, 'click');
      fire(th, 'click');
      fire($('table[data-table="caches"] th[data-sort="name"]'), 'click');
    },
    'all-columns': () => set($('[data-toggle="all-columns"]'), 'checked', true),
    expand: () => {
      fire($('table[data-table="callsites"] button.expander'), 'click');
      fire($('table[data-table="callsites"] button.expander'), 'click');
    },
    'live-by-sites': () => pick('live-by', 'sites'),
    'rate-bytes': () => pick('rate-unit', 'bytes'),
    'sizes-by-waste': () => pick('sizes-by', 'waste'),
    'lifetime-select': () => set($('[data-toggle="lifetime-site"]'), 'selectedIndex', 1),
    'chart-hover': () => document.querySelectorAll('svg .overlay, svg .hoverable, table.heat td.hc').forEach(hover),
    'flame-objects': () => pick('flame-metric', 'objects'),
    'flame-zoom': () => FLAME && FLAME.root.c && fire($('#flame svg [data-i="' + FLAME.root.c[0].i + '"]'), 'click'),
    'flame-hover': () => document.querySelectorAll('#flame svg rect').forEach(hover),
    'flame-search': () => set($('.flame-search'), 'value', 'do_', 'input'),
    resize: () => redraws.forEach(f => f()),
  };
  for (const name of Object.keys(steps)) {
    try {
      steps[name]();
      done.push(name);
    } catch (e) {
      reportError('test-interact ' + name, e);
    }
  }
  set($('[data-toggle="all-columns"]'), 'checked', false);
  hideTip();
  document.body.dataset.interact = done.join(' ');
}

function main() {
  const t0 = performance.now();
  const app = document.getElementById('app') || document.body.appendChild(h('div', {id: 'app'}));
  app.appendChild(errBox);
  document.body.appendChild(tip);
  let data = null;
  try {
    const el = document.getElementById('kmt-data');
    if (!el) throw new Error('no #kmt-data element');
    data = JSON.parse(el.textContent);
  } catch (e) {
    reportError('reading the page\'s data', e);
    app.appendChild(note('The page\'s data could not be read, so there is nothing to draw. kmemtrace report --json prints the same report.', 'none'));
  }
  if (data && typeof data === 'object') {
    COLUMNS = data.columns && typeof data.columns === 'object' ? data.columns : {};
    if (data.diff) guard('diff page', () => renderDiff(app, data));
    else guard('report page', () => renderReport(app, data));
  }
  document.body.dataset.renderMs = String(Math.round(performance.now() - t0));
  if (location.hash === '#test-interact') testInteract();
  document.body.dataset.rendered = 'ok';
}

main();
})();
