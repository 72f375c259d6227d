/* SPDX-License-Identifier: GPL-2.0-only */
/* ===================================================== 7. flame ===== */

/*
 * An icicle graph of flame.root ({n, v: [bytes, objects, live bytes, page
 * bytes, pages], c}): slab allocations and, under "page allocations", the
 * page allocator's;
 * root on top, a node's children below it, widths by the chosen metric.
 * Click a node to zoom into it (its ancestors stay above: click one, or
 * Reset, to zoom out); search highlights names that contain the text.
 */
const MONO = 'ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace';  /* as --mono in the CSS */
const METRICS = [
  {key: 'bytes', label: 'bytes allocated', fmt: fmtBytes, hue: 204},
  {key: 'objects', label: 'objects allocated', fmt: v => fmtCount(v) + ' objects', hue: 204},
  {key: 'live', label: 'live bytes at the end', fmt: fmtBytes, hue: 268},
  {key: 'page-bytes', label: 'page bytes allocated', fmt: fmtBytes, hue: 28},
  {key: 'pages', label: 'pages allocated', fmt: v => fmtCount(v) + ' pages', hue: 28},
];

function flameGraph(host, flame) {
  const nodes = [];
  (function prep(n, parent, depth) {
    n.i = nodes.length;
    n.p = parent;
    n.d = depth;
    n.n = n.n == null ? '' : String(n.n);
    n.v = METRICS.map((x, k) => (Array.isArray(n.v) && n.v[k]) || 0);
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

