// The signed-in user's profile: balances (live from the me stream), open
// positions with what they are worth now, closed positions, the PnL
// chart, their own trades, language and theme, and the password; the
// level badge (it follows a level_up on the stream) and a link to Invite
// friends.
import { h, clear, field, select } from '../dom.js';
import { t, loc, money, rub, num, pct, dateTime, side as sideName } from '../i18n.js';
import { api, query } from '../api.js';
import { getMe, ready, onChange, loadMe } from '../state.js';
import { pageHeading, empty, showError, inlineAlert, statusBox, levelBadge } from '../ui.js';
import { setPreferences, logout } from '../app.js';
import { lineChart } from './chart.js';
import { profileEditor, apiKeysSection } from './profile_people.js';
import { telegramSection } from './profile_telegram.js';
import { zeroBalanceNotice } from './trade.js';
import { cardTables } from './narrow.js';

function signed(k) {
  return h('span', { class: k > 0 ? 'pos' : k < 0 ? 'neg' : null }, money(k));
}

function table(caption, head, rows, numeric) {
  return h('div', { class: 'table-wrap', tabindex: '0' },
    h('table', null,
      h('caption', { class: 'sr-only' }, caption),
      h('thead', null, h('tr', null, head.map((x, i) => h('th', { scope: 'col', class: numeric.includes(i) ? 'num' : null }, x)))),
      h('tbody', null, rows.map((r) => h('tr', null, r.map((x, i) => h('td', { class: numeric.includes(i) ? 'num' : null }, x)))))));
}

function outcome(p) {
  if (p.won_side === 2) return t('profile.outcome.void');
  if (p.won_side === -1) return t('profile.outcome.sold');
  const won = (p.won_side === 1 && p.token_type === 'YES') || (p.won_side === 0 && p.token_type === 'NO');
  return won ? t('profile.outcome.won') : t('profile.outcome.lost');
}

export async function render(main, ctx) {
  const heading = pageHeading(t('profile.title'));
  main.append(heading);
  await ready();
  if (!ctx.isCurrent()) return;
  if (!getMe()) {
    main.append(h('p', null, h('a', { href: '/login?next=/profile' }, t('nav.login'))));
    return;
  }
  // Fresh positions and their values.
  await loadMe();
  if (!ctx.isCurrent()) return;
  const me = getMe();
  if (!me) return;

  // ---- balances ----
  const balances = h('dl', { class: 'kv' });
  const paintBalances = (u) => clear(balances,
    h('dt', null, t('profile.balance')), h('dd', null, money(u.balance)),
    h('dt', null, t('profile.bonus')), h('dd', null, money(u.bonus_balance)),
    h('dt', null, t('profile.total')), h('dd', null, h('strong', null, money(u.total_balance))));
  paintBalances(me);
  const level = h('span', { 'data-my-level': '' }, levelBadge(me.level));
  let shownLevel = me.level;
  // No money at all: where to get some (appfix; see trade.js), and the
  // tables as cards on a phone (narrow.js).
  const broke = zeroBalanceNotice(me);
  if (broke) main.append(broke);
  ctx.onCleanup(cardTables(main));
  ctx.onCleanup(onChange(({ me: u }) => {
    if (u) paintBalances(u);
    if (u && u.level !== shownLevel) {
      shownLevel = u.level;
      clear(level, levelBadge(u.level));
    }
  }));

  main.append(
    h('p', { class: 'meta' }, me.name, me.nickname ? ` (@${me.nickname})` : '', ' · ', me.email),
    h('p', { class: 'meta name-with-level' }, level, t('level.hint')),
    h('section', { 'aria-labelledby': 'bal-title', class: 'card' },
      h('h2', { id: 'bal-title' }, t('profile.balances')),
      balances,
      h('p', { class: 'meta' }, t('profile.stats', { n: num(me.total_predictions), win: money(me.biggest_win), date: me.registered_date })),
      h('p', { class: 'actions money-links' }, h('a', { href: '/deposit' }, t('nav.deposit')), h('a', { href: '/withdraw' }, t('nav.withdraw')), h('a', { href: '/invite' }, t('invite.title')))));

  // ---- open positions ----
  const positions = me.positions || [];
  main.append(h('section', { 'aria-labelledby': 'open-title' },
    h('h2', { id: 'open-title' }, t('profile.open_positions')),
    positions.length
      ? table(t('profile.open_positions'),
        [t('profile.col.event'), t('profile.col.market'), t('profile.col.side'), t('profile.col.shares'), t('profile.col.cost'), t('profile.col.value'), t('profile.col.pnl')],
        positions.map((p) => [h('a', { href: `/events/${p.event_id}` }, p.event_name), p.market_name, sideName(p.side), num(p.amount), money(p.cost_kopecks), money(p.value_kopecks), signed(p.unrealized_pnl)]),
        [3, 4, 5, 6])
      : empty(t('profile.no_positions'))));

  // ---- PnL chart ----
  const pnlBox = h('div');
  main.append(h('section', { 'aria-labelledby': 'pnl-title' }, h('h2', { id: 'pnl-title' }, t('profile.pnl')), pnlBox));
  api('GET', `/users/${me.id}/pnl/chart`, null, { signal: ctx.signal }).then((r) => {
    const pts = (r.points || []).map((p) => ({ x: Date.parse(p.timestamp), y: p.pnl }));
    if (pts.length < 2) {
      clear(pnlBox, empty(t('profile.pnl_empty')));
      return;
    }
    const ys = pts.map((p) => p.y);
    const desc = t('profile.pnl_desc', { last: rub(ys[ys.length - 1]), min: rub(Math.min(...ys)), max: rub(Math.max(...ys)) });
    clear(pnlBox, lineChart(pts, t('profile.pnl'), desc, (v) => rub(v)), h('p', { class: 'meta' }, desc));
  }).catch(showError);

  // ---- closed positions ----
  const closedBody = h('div');
  const closedMore = h('div', { class: 'actions' });
  main.append(h('section', { 'aria-labelledby': 'closed-title' }, h('h2', { id: 'closed-title' }, t('profile.closed_positions')), closedBody, closedMore));
  let closedOffset = 0;
  const closedRows = [];
  async function loadClosed() {
    let r;
    try {
      r = await api('GET', '/users/me/positions/closed' + query({ limit: 20, offset: closedOffset }), null, { signal: ctx.signal });
    } catch (e) {
      showError(e);
      return;
    }
    const page = r.positions || [];
    closedOffset += page.length;
    for (const p of page) {
      closedRows.push([h('a', { href: `/events/${p.event_id}` }, p.event_name), p.market_name, sideName(p.side), num(p.amount), money(p.spent_kopecks), outcome(p), signed(p.pnl), dateTime(p.closed_at)]);
    }
    clear(closedBody, closedRows.length
      ? table(t('profile.closed_positions'),
        [t('profile.col.event'), t('profile.col.market'), t('profile.col.side'), t('profile.col.shares'), t('profile.col.cost'), t('profile.col.outcome'), t('profile.col.pnl'), t('profile.col.closed')],
        closedRows, [3, 4, 6])
      : empty(t('profile.no_closed')));
    clear(closedMore, r.has_more ? h('button', { type: 'button', class: 'btn', onClick: loadClosed }, t('action.load_more')) : null);
  }
  loadClosed();

  // ---- own trades ----
  const tradesBody = h('div');
  const tradesMore = h('div', { class: 'actions' });
  main.append(h('section', { 'aria-labelledby': 'mytrades-title' }, h('h2', { id: 'mytrades-title' }, t('profile.trades')), tradesBody, tradesMore));
  const names = new Map(); // market id → Promise of {name, event_id}
  const marketInfo = (id) => {
    if (!names.has(id)) names.set(id, api('GET', `/markets/${id}`, null, { signal: ctx.signal }).catch(() => null));
    return names.get(id);
  };
  const tradeRows = [];
  let cursor = null;
  async function loadTrades() {
    let r;
    try {
      r = await api('GET', '/users/me/trades' + query({ limit: 20, cursor }), null, { signal: ctx.signal });
    } catch (e) {
      showError(e);
      return;
    }
    const page = r.trades || [];
    const infos = await Promise.all(page.map((x) => marketInfo(x.market_id)));
    page.forEach((x, i) => {
      const m = infos[i];
      const name = m ? loc(m, 'name') : t('profile.market_n', { id: x.market_id });
      tradeRows.push([dateTime(x.created_at), m ? h('a', { href: `/events/${m.event_id}` }, name) : name,
        t(x.action === 'sell' ? 'profile.action.sell' : 'profile.action.buy'), sideName(x.side), num(x.shares), money(x.amount_kopecks), money(x.fee_kopecks), pct(x.yes_probability)]);
    });
    cursor = r.next_cursor;
    clear(tradesBody, tradeRows.length
      ? table(t('profile.trades'),
        [t('profile.col.time'), t('profile.col.market'), t('profile.col.action'), t('profile.col.side'), t('profile.col.shares'), t('profile.col.amount'), t('profile.col.fee'), t('profile.col.price')],
        tradeRows, [4, 5, 6, 7])
      : empty(t('profile.no_trades')));
    clear(tradesMore, cursor ? h('button', { type: 'button', class: 'btn', onClick: loadTrades }, t('action.load_more')) : null);
  }
  loadTrades();

  // ---- settings ----
  const saved = statusBox();
  saved.id = 'settings-status';
  const langSel = select([['en', t('lang.en')], ['ru', t('lang.ru')]], me.language);
  const themeSel = select([['light', t('profile.theme.light')], ['dark', t('profile.theme.dark')], ['system', t('profile.theme.system')]], ['light', 'dark'].includes(me.theme) ? me.theme : 'system');
  const save = async (prefs, control) => {
    try {
      await setPreferences(prefs);
      // A new language redraws the page: put the focus back on the control.
      const again = document.getElementById(control.id);
      const box = document.getElementById('settings-status');
      if (box) box.textContent = t('profile.saved');
      if (again) again.focus();
    } catch (e) {
      showError(e);
    }
  };
  langSel.id = 'profile-language';
  themeSel.id = 'profile-theme';
  langSel.addEventListener('change', () => save({ lang: langSel.value }, langSel));
  themeSel.addEventListener('change', () => save({ theme: themeSel.value }, themeSel));
  main.append(h('section', { 'aria-labelledby': 'settings-title', class: 'card' },
    h('h2', { id: 'settings-title' }, t('profile.settings')),
    h('div', { class: 'filters' }, field(t('profile.language'), langSel), field(t('profile.theme'), themeSel)),
    saved));

  // ---- public profile, Telegram and API keys (pages/profile_people.js,
  // pages/profile_telegram.js) ----
  main.append(profileEditor(me), telegramSection(ctx), apiKeysSection(ctx));

  // ---- password ----
  const pwAlert = inlineAlert();
  const pwDone = statusBox();
  const current = h('input', { type: 'password', autocomplete: 'current-password', required: true });
  const next = h('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: '8', maxlength: '72' });
  const pwForm = h('form', { class: 'form-narrow', novalidate: true }, pwAlert,
    field(t('profile.current_password'), current),
    field(t('profile.new_password'), next, t('auth.password_hint')),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn btn-primary' }, t('profile.password'))), pwDone);
  pwForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    pwAlert.textContent = '';
    pwDone.textContent = '';
    try {
      await api('POST', '/auth/password', { current_password: current.value, new_password: next.value });
      current.value = '';
      next.value = '';
      pwDone.textContent = t('profile.password_changed');
    } catch (err) {
      pwAlert.textContent = err.message;
    }
  });
  main.append(h('section', { 'aria-labelledby': 'pw-title', class: 'card' }, h('h2', { id: 'pw-title' }, t('profile.password')), pwForm));

  main.append(h('div', { class: 'actions' }, h('button', { type: 'button', class: 'btn', onClick: logout }, t('action.logout'))));
}
