/* SPDX-License-Identifier: GPL-2.0-only */
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
  if (R.cgroups !== undefined) addSection(app, nav, 'cgroups', 'Cgroups: whose memory, and what escapes accounting', 'Cgroups', cgroupsSection);
  if (R.pages !== null) addSection(app, nav, 'pages', 'Pages', null, pagesSection);
  if (R.vmalloc !== null) addSection(app, nav, 'vmalloc', 'vmalloc', null, vmallocSection);
  if (slab) {
    addSection(app, nav, 'outstanding', 'Outstanding: live at the end', 'Outstanding', outstandingSection);
    addSection(app, nav, 'misuse', 'Misuse', null, misuseSection);
  }
  if (R.access && Array.isArray(R.access.rows) && R.access.rows.length) addSection(app, nav, 'access', 'Accesses (watchpoint samples)', 'Accesses', accessSection);
  addSection(app, nav, 'checks', 'Self-check', null, checksSection);
}

