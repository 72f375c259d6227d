/* SPDX-License-Identifier: GPL-2.0-only */
/* ===================================================== 10. diff ===== */

/* diff --html: each side, then per table the largest changes (old beside
   new) and the rows, columns as in diff --json: old.F, new.F, delta.F, pct.F.
   The tables, their columns, titles and units are diff's own (data.diff_tables,
   from src/diff/diff-cols.c): its key columns, then its compared ones, each
   whole (old, new, delta, change) or as its delta. */
function renderDiff(app, data) {
  const X = data.diff || {};
  const tables = Array.isArray(data.diff_tables) ? data.diff_tables : [];
  const bytes = {};
  for (const t of tables) for (const c of t.compared) if (c.unit === 'bytes') bytes[c.name] = 1;
  const rate = X.per_second ? '/s' : '';
  const fmtF = (f, v) => !isNum(v) ? '' : (bytes[f] ? fmtBytes(v) : fmtCount(v)) + rate;
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

  for (const t of tables) {
    const name = t.name, rows = X[name];
    if (!Array.isArray(rows)) continue;
    /* the text's heading in sentence case: "PROCESSES (by name)" -> "Processes (by name)" */
    const title = t.title.charAt(0) + t.title.slice(1).toLowerCase();
    addSection(app, nav, 'diff-' + name, title, null, sec => {
      if (!rows.length) return sec.appendChild(note('none', 'none'));
      const fields = t.compared.map(c => c.name);
      const main = t.compared[0];
      const kc = t.columns.find(c => c.name === t.key);
      /* a number names a row with its title: "order 3" */
      const key = r => kc.type === 'u64' ? kc.title + ' ' + r[kc.name] : String(r[kc.name]);
      const top = rows.filter(r => r.delta && r.delta[main.name]).sort((a, b) => Math.abs(b.delta[main.name]) - Math.abs(a.delta[main.name])).slice(0, 12);
      if (top.length) {
        sec.appendChild(h('h3', null, 'Largest changes in ' + main.title + (main.unit === 'bytes' ? ' bytes' : '')));
        const box = h('div', {class: 'chart'});
        sec.appendChild(box);
        const draw = () => diffBars(box, top, main.name, key, fmtF, signed);
        draw();
        redraws.push(draw);
        sec.appendChild(legend([{colour: '#9aa4ae', label: 'old'}, {colour: C.alloc, label: 'new'}]));
      }
      const cols = t.columns.slice();
      t.compared.forEach(c => {
        const f = c.name, u = c.unit, l = c.title;
        cols.push({name: 'old.' + f, title: c.full ? l + ' old' : '', type: 'u64', unit: u, doc: f + ' in the old file'},
          {name: 'new.' + f, title: c.full ? l + ' new' : '', type: 'u64', unit: u, doc: f + ' in the new file'},
          {name: 'delta.' + f, title: l + ' Δ', type: 'i64', unit: u, doc: 'new - old'},
          {name: 'pct.' + f, title: c.full ? l + ' Δ%' : '', type: 'pct', unit: '', doc: '100 * delta / old (empty where old is 0)'});
      });
      COLUMNS['diff-' + name] = cols;
      const flat = rows.map(r => {
        const o = {};
        for (const c of t.columns) o[c.name] = r[c.name];
        for (const part of ['old', 'new', 'delta', 'pct']) for (const f of fields) o[part + '.' + f] = (r[part] || {})[f];
        return o;
      });
      sec.appendChild(dataTable('diff-' + name, flat, {
        key: r => String(r[t.key]),
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
    for (const {name} of tables) {
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

