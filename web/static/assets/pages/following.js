// The events the signed-in user follows (GET /api/v1/users/me/following),
// newest follow first, with their current prices; "Load more" reads the
// next page.
import { h, clear } from '../dom.js';
import { t, loc, pct, dateTime } from '../i18n.js';
import { api, query } from '../api.js';
import { getMe, ready } from '../state.js';
import { pageHeading, loading, empty, showError } from '../ui.js';

function eventCard(ev) {
  const markets = [];
  for (const p of ev.pools || []) {
    for (const m of p.markets || []) markets.push(m);
  }
  const resolved = markets.length > 0 && markets.every((m) => m.resolved);
  return h('li', { class: 'card event-card' },
    h('h2', { class: 'event-link', id: `fol-${ev.id}` }, h('a', { href: `/events/${ev.id}` }, loc(ev, 'name'))),
    h('p', { class: 'meta' }, resolved ? t('following.resolved') : t('event.created', { t: dateTime(ev.created_at) })),
    h('ul', { class: 'plain-list' }, markets.slice(0, 6).map((m) => h('li', null, loc(m, 'name'), ': ',
      m.resolved
        ? (m.winning_outcome === 'VOID' ? t('market.voided') : t('market.resolved_as', { side: m.winning_outcome === 'NO' ? t('side.no') : t('side.yes') }))
        : t('following.yes', { p: pct(m.yes_probability) })))));
}

export async function render(main, ctx) {
  main.append(pageHeading(t('following.title')));
  await ready();
  if (!ctx.isCurrent()) return;
  if (!getMe()) {
    main.append(h('p', null, h('a', { href: '/login?next=/following' }, t('nav.login'))));
    return;
  }
  const list = h('ul', { class: 'plain-list event-list', 'aria-labelledby': 'page-title' });
  const body = h('div', null, loading());
  const more = h('div', { class: 'actions' });
  main.append(h('p', { class: 'meta' }, t('following.intro')), body, more);
  let cursor = null;
  let count = 0;
  async function load() {
    let r;
    try {
      r = await api('GET', '/users/me/following' + query({ limit: 20, cursor }), null, { signal: ctx.signal });
    } catch (e) {
      showError(e);
      return;
    }
    if (!ctx.isCurrent()) return;
    for (const ev of r.events || []) {
      list.append(eventCard(ev));
      count += 1;
    }
    cursor = r.next_cursor;
    clear(body, count ? list : empty(t('following.empty')));
    clear(more, cursor ? h('button', { type: 'button', class: 'btn', onClick: load }, t('action.load_more')) : null);
  }
  await load();
}
