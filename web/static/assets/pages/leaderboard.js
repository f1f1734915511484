// The leaderboard (GET /api/v1/leaderboard): period all / 30d / 7d, ranked
// by realized profit or by volume, each trader with their level. The
// choice lives in the address.
import { h, clear, field, select } from '../dom.js';
import { t, money, num } from '../i18n.js';
import { api, query } from '../api.js';
import { pageHeading, empty, showError, loading, levelBadge } from '../ui.js';
import { cardTables } from './narrow.js';

export async function render(main, ctx) {
  main.append(pageHeading(t('lb.title')));
  const initialPeriod = ['all', '30d', '7d'].includes(ctx.query.get('period')) ? ctx.query.get('period') : 'all';
  const initialBy = ctx.query.get('by') === 'volume' ? 'volume' : 'pnl';
  const periodSel = select(['all', '30d', '7d'].map((p) => [p, t('lb.period.' + p)]), initialPeriod);
  const bySel = select(['pnl', 'volume'].map((b) => [b, t('lb.by.' + b)]), initialBy);
  const body = h('div', { 'aria-live': 'polite' }, loading());
  main.append(h('div', { class: 'filters' }, field(t('lb.period'), periodSel), field(t('lb.by'), bySel)), body);
  // On a phone each row is a card whose lines say their column (narrow.js).
  ctx.onCleanup(cardTables(main));

  let seq = 0;
  async function load() {
    const period = periodSel.value;
    const by = bySel.value;
    seq += 1;
    const mine = seq;
    let r;
    try {
      r = await api('GET', '/leaderboard' + query({ period, by, limit: 100 }), null, { signal: ctx.signal });
    } catch (e) {
      if (mine === seq) {
        clear(body);
        showError(e);
      }
      return;
    }
    if (mine !== seq) return;
    const entries = r.entries || [];
    if (!entries.length) {
      clear(body, empty(t('lb.empty')));
      return;
    }
    const cls = (k) => (k > 0 ? 'num pos' : k < 0 ? 'num neg' : 'num');
    clear(body, h('div', { class: 'table-wrap', tabindex: '0' },
      h('table', null,
        h('caption', null, t(by === 'volume' ? 'lb.caption.volume' : 'lb.caption.pnl', { period: t('lb.period.' + period) })),
        h('thead', null, h('tr', null,
          h('th', { scope: 'col', class: 'num' }, t('lb.rank')),
          h('th', { scope: 'col' }, t('lb.name')),
          h('th', { scope: 'col', class: 'num' }, t('lb.pnl')),
          h('th', { scope: 'col', class: 'num' }, t('lb.volume')),
          h('th', { scope: 'col', class: 'num' }, t('lb.trades')))),
        h('tbody', null, entries.map((e) => h('tr', null,
          h('td', { class: 'num' }, num(e.rank)),
          h('th', { scope: 'row' }, h('span', { class: 'name-with-level' }, e.user_id ? h('a', { href: `/users/${e.user_id}` }, e.name) : e.name, levelBadge(e.level))),
          h('td', { class: cls(e.pnl) }, money(e.pnl)),
          h('td', { class: 'num' }, money(e.volume)),
          h('td', { class: 'num' }, num(e.trades))))))));
  }

  // The choice goes into the address (replaced, not pushed: a select's
  // arrow keys change it at every step) and the table reloads in place.
  const changed = () => {
    history.replaceState(null, '', '/leaderboard' + query({ period: periodSel.value === 'all' ? '' : periodSel.value, by: bySel.value === 'pnl' ? '' : bySel.value }));
    load();
  };
  periodSel.addEventListener('change', changed);
  bySel.addEventListener('change', changed);
  await load();
}
