/* SPDX-License-Identifier: GPL-2.0-only */
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

