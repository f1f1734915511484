// A user's public profile (GET /api/v1/users/{id}): avatar, name and
// nickname, level, registration date, figures, open positions and recent
// trades, each linking to its event. A hidden or unknown profile is the
// same "not found" (the server answers both alike).
import { h, clear } from '../dom.js';
import { t, money, num, pct, dateTime, side as sideName } from '../i18n.js';
import { api } from '../api.js';
import { pageHeading, loading, empty, showError, levelBadge } from '../ui.js';

function table(caption, head, rows, numeric) {
  return h('div', { class: 'table-wrap', tabindex: '0' },
    h('table', null,
      h('caption', { class: 'sr-only' }, caption),
      h('thead', null, h('tr', null, head.map((x, i) => h('th', { scope: 'col', class: numeric.includes(i) ? 'num' : null }, x)))),
      h('tbody', null, rows.map((r) => h('tr', null, r.map((x, i) => h('td', { class: numeric.includes(i) ? 'num' : null }, x)))))));
}

// avatar is the user's picture, or their initial when they have none or
// it does not load. Decorative: the name is beside it.
function avatar(u) {
  const initial = h('span', { class: 'avatar avatar-initial', 'aria-hidden': 'true' }, (u.name || '?').trim().charAt(0).toUpperCase() || '?');
  if (!u.avatar_url || !/^https?:\/\//i.test(u.avatar_url)) return initial;
  const img = h('img', { class: 'avatar', src: u.avatar_url, alt: '', width: '64', height: '64', referrerpolicy: 'no-referrer', loading: 'lazy' });
  img.addEventListener('error', () => img.replaceWith(initial));
  return img;
}

export async function render(main, ctx) {
  const id = ctx.params[0];
  const heading = pageHeading(t('user.title'));
  const state = h('div', null, loading());
  main.append(heading, state);
  let u;
  try {
    u = await api('GET', `/users/${id}`, null, { signal: ctx.signal });
  } catch (e) {
    if (!ctx.isCurrent()) return;
    clear(state);
    if (e && (e.status === 404 || e.status === 400)) {
      heading.textContent = t('user.not_found');
      document.title = t('user.not_found') + ' · predictkit';
      main.append(h('p', null, t('user.not_found_text'), ' ', h('a', { href: '/leaderboard' }, t('user.to_leaderboard'))));
      return;
    }
    showError(e);
    return;
  }
  if (!ctx.isCurrent()) return;
  clear(state);
  heading.textContent = u.name;
  document.title = u.name + ' · predictkit';

  main.append(
    h('div', { class: 'user-card card' },
      avatar(u),
      h('div', null,
        u.nickname ? h('p', { class: 'meta' }, '@' + u.nickname) : null,
        h('p', { class: 'meta name-with-level' }, levelBadge(u.level), t('user.registered', { date: u.registered_date })))),
    h('section', { 'aria-labelledby': 'user-stats-title', class: 'card' },
      h('h2', { id: 'user-stats-title' }, t('user.stats')),
      h('dl', { class: 'kv' },
        h('dt', null, t('user.predictions')), h('dd', null, num(u.total_predictions)),
        h('dt', null, t('user.biggest_win')), h('dd', null, money(u.biggest_win)),
        h('dt', null, t('user.volume')), h('dd', null, money(u.volume_kopecks)))));

  const positions = u.positions || [];
  main.append(h('section', { 'aria-labelledby': 'user-pos-title' },
    h('h2', { id: 'user-pos-title' }, t('user.positions')),
    positions.length
      ? table(t('user.positions'),
        [t('profile.col.event'), t('profile.col.market'), t('profile.col.side'), t('profile.col.shares'), t('profile.col.value')],
        positions.map((p) => [h('a', { href: `/events/${p.event_id}` }, p.event_name), p.market_name, sideName(p.side), num(p.shares), money(p.value_kopecks)]),
        [3, 4])
      : empty(t('user.no_positions'))));

  const trades = u.recent_trades || [];
  main.append(h('section', { 'aria-labelledby': 'user-trades-title' },
    h('h2', { id: 'user-trades-title' }, t('user.trades')),
    trades.length
      ? table(t('user.trades'),
        [t('profile.col.time'), t('profile.col.event'), t('profile.col.market'), t('profile.col.action'), t('profile.col.side'), t('profile.col.shares'), t('profile.col.amount'), t('profile.col.price')],
        trades.map((x) => [dateTime(x.created_at), h('a', { href: `/events/${x.event_id}` }, x.event_name), x.market_name,
          t(x.action === 'sell' ? 'profile.action.sell' : 'profile.action.buy'), sideName(x.side), num(x.shares), money(x.amount_kopecks), pct(x.yes_probability)]),
        [5, 6, 7])
      : empty(t('user.no_trades'))));
}
