/* SPDX-License-Identifier: GPL-2.0-only */
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
        td.appendChild(h('button', {type: 'button', class: 'expander', 'aria-expanded': 'false', title: opt.detailTitle || 'show its stacks',
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

