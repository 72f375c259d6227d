/* SPDX-License-Identifier: GPL-2.0-only */
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

function cgroupsSection(sec) {
  sec.appendChild(note('Allocations by the cgroup of the task that made them, as it was then. Slab bytes by what they asked of memory accounting: ' +
    'accounted (charged to the memory cgroup), unaccounted (what its limit does not see), unknown (a kernel that cannot tell), ' +
    'and apart, interrupts and kernel threads (never the cgroup\'s). Open a row for its call sites, the most unaccounted bytes first.'));
  if (R.cgroups === null) return sec.appendChild(note('Not recorded: the file has no record of the tasks\' cgroups (recorded by another tool or an older kmemtrace).', 'none'));
  const rows = R.cgroups || [];
  /* The memory cgroup where it is not the v2 path (a hybrid system), the container where a path names one; columns all zero stay under "all columns". */
  const any = k => rows.some(r => r[k]);
  const show = ['cgroup'].concat(rows.some(r => r.memcg && r.memcg !== r.cgroup) ? ['memcg'] : [], any('container') ? ['container'] : [],
    ['allocs', 'bytes_alloc', 'live_bytes', 'accounted_bytes', 'unaccounted_bytes'],
    ['unknown_bytes', 'irq_bytes', 'kthread_bytes'].filter(any));
  const titles = {memcg: 'memory cgroup', bytes_alloc: 'allocated', live_bytes: 'live bytes', accounted_bytes: 'accounted',
    unaccounted_bytes: 'unaccounted', unknown_bytes: 'unknown', irq_bytes: 'irq', kthread_bytes: 'kthreads'};
  sec.appendChild(dataTable('cgroups', rows, {key: r => r.cgroup + '|' + r.memcg, cut: 100, show, titles, detailTitle: 'show its call sites',
    detail: (r, probe) => {
      if (!r.sites || !r.sites.length) return null;
      if (probe) return true;
      return dataTable('cgroup_sites', r.sites, {key: x => x.callsite, titles,
        show: ['callsite', 'allocs', 'bytes_alloc', 'accounted_bytes', 'unaccounted_bytes'].concat(
          ['unknown_bytes', 'irq_bytes', 'kthread_bytes'].filter(k => r.sites.some(x => x[k])))});
    },
  }));
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
  /* What each kind means: the data's, from report-cols-misuse.c. */
  const doc = D.misuse_kinds || {};
  const kinds = [...new Set(rows.map(r => r.kind))].filter(k => doc[k]);
  if (kinds.length) sec.appendChild(h('dl', {class: 'glossary'}, kinds.map(k => [h('dt', null, k), h('dd', null, doc[k])])));
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

