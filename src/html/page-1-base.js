/* SPDX-License-Identifier: GPL-2.0-only */
"use strict";
/*
 * kmemtrace report page: the script of report --html (and diff --html),
 * in parts (page-1-base.js ... page-9-main.js) that src/html/html-assets.S
 * puts together in this order: one script, one scope.
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

