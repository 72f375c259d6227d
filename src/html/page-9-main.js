/* SPDX-License-Identifier: GPL-2.0-only */
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
