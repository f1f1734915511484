// The buy and sell forms of a market: amount → quote (GET
// /api/v1/markets/{id}/quote) → Confirm, which sends the quote's numbers
// as the slippage guard (min_shares for a buy, min_payout_kopecks for a
// sale): if the price moved further than the tolerance, the server
// refuses with price_moved and nothing changes.
import { h, clear, field, select } from '../dom.js';
import { t, has, language, loc, money, pct, bps, num, side as sideName } from '../i18n.js';
import { api, query } from '../api.js';
import { inlineAlert } from '../ui.js';

// parseKopecks('12.5') is 1250: decimal text to integer kopecks, by
// string, so no floating point touches money. null when not valid.
export function parseKopecks(text) {
  const m = String(text).trim().replace(/\s/g, '').match(/^(\d{1,12})(?:[.,](\d{1,2}))?$/);
  if (!m) return null;
  const k = Number(m[1]) * 100 + Number((m[2] || '').padEnd(2, '0'));
  return k > 0 ? k : null;
}

function parseShares(text) {
  const m = String(text).trim().match(/^\d{1,12}$/);
  if (!m) return null;
  const n = Number(m[0]);
  return n > 0 ? n : null;
}

// sideLabel('Wins') is a side's own name as the creator gave it, in
// Russian when the app knows the words (strings.js's side_name.* keys:
// "Wins" → "Выиграет"); markets carry no Russian side names, and a
// Russian page must not read "ДА: Wins".
export function sideLabel(name) {
  const key = 'side_name.' + String(name || '').trim().toLowerCase();
  return language() === 'ru' && has(key) ? t(key) : name;
}

// zeroBalanceNotice(me) tells a signed-in user with no money at all how to
// get some, or is null when they have any: the Deposit page when the
// server gave them deposit addresses, else the support chat (the operator
// credits deposits by hand).
export function zeroBalanceNotice(me) {
  if (!me || Number(me.balance || 0) + Number(me.bonus_balance || 0) > 0) return null;
  if (me.ethereum_address || me.tron_address) {
    return h('p', { class: 'notice notice-money', 'data-zero-balance': '' }, t('money.zero_balance_deposit'), ' ',
      h('a', { href: '/deposit' }, t('money.go_deposit')));
  }
  return h('p', { class: 'notice notice-money', 'data-zero-balance': '' }, t('money.zero_balance'), ' ',
    h('a', { href: '/chat' }, t('money.ask_support')));
}

const TOLERANCES = [['50', '0.5%'], ['100', '1%'], ['200', '2%'], ['500', '5%']];

// tradeForm builds the form. opts: market, action ('buy' | 'sell'), side
// ('YES' | 'NO'), positions (the user's positions in this market), me,
// onDone(result, text), onCancel().
export function tradeForm(opts) {
  const { market, action } = opts;
  let sideNow = opts.side;
  const selling = action === 'sell';
  const alert = inlineAlert();
  const titleId = `trade-title-${market.id}`;
  const title = h('h4', { id: titleId });
  const setTitle = () => {
    title.textContent = t(selling ? 'trade.sell_title' : 'trade.buy_title', { side: sideName(sideNow), market: loc(market, 'name') });
  };
  setTitle();

  const held = (s) => {
    const p = (opts.positions || []).find((x) => x.token_type === s);
    return p ? p.amount : 0;
  };

  const amount = h('input', { type: 'text', inputmode: selling ? 'numeric' : 'decimal', autocomplete: 'off', required: true });
  if (selling) amount.value = String(held(sideNow) || '');
  const tolerance = select(TOLERANCES, '100');
  const sides = (opts.positions || []).map((p) => p.token_type);
  let sideSelect = null;
  if (selling && sides.length > 1) {
    sideSelect = select(sides.map((s) => [s, sideName(s)]), sideNow);
    sideSelect.addEventListener('change', () => {
      sideNow = sideSelect.value;
      amount.value = String(held(sideNow) || '');
      setTitle();
      invalidate();
      scheduleQuote();
    });
  }
  const useBonus = !selling && opts.me && opts.me.bonus_balance > 0 ? h('input', { type: 'checkbox' }) : null;
  if (useBonus) useBonus.addEventListener('change', () => { invalidate(); scheduleQuote(); });

  const quoteBox = h('div', { class: 'quote', role: 'status', hidden: true });
  const quoteBtn = h('button', { type: 'submit', class: 'btn' }, t('trade.get_quote'));
  const confirmBtn = h('button', { type: 'button', class: 'btn btn-primary', disabled: true }, t('action.confirm'));
  const cancelBtn = h('button', { type: 'button', class: 'btn', onClick: () => opts.onCancel() }, t('action.cancel'));

  let quote = null;
  let quoteFor = '';
  let timer = 0;
  let seq = 0;

  function invalidate() {
    quote = null;
    confirmBtn.disabled = true;
  }

  function request() {
    if (selling) {
      const n = parseShares(amount.value);
      return n ? { shares: n } : null;
    }
    const k = parseKopecks(amount.value);
    return k ? { amount_kopecks: k } : null;
  }

  async function getQuote() {
    window.clearTimeout(timer);
    alert.textContent = '';
    const req = request();
    if (!req) {
      alert.textContent = t(selling ? 'error.shares_invalid' : 'error.amount_invalid');
      quoteBox.hidden = true;
      invalidate();
      return;
    }
    seq += 1;
    const mine = seq;
    const key = JSON.stringify([sideNow, req]);
    try {
      const q = await api('GET', `/markets/${market.id}/quote` + query({ side: sideNow, ...req }));
      if (mine !== seq) return;
      quote = q;
      quoteFor = key;
      showQuote(q);
      confirmBtn.disabled = false;
    } catch (e) {
      if (mine !== seq) return;
      invalidate();
      quoteBox.hidden = true;
      alert.textContent = e.message;
    }
  }

  function guardValue(q) {
    const tol = Number(tolerance.value);
    if (selling) return Math.floor((q.payout_kopecks * (10000 - tol)) / 10000);
    return Math.floor((q.shares * (10000 - tol)) / 10000);
  }

  function showQuote(q) {
    const rows = [
      [t('trade.q_shares'), num(q.shares)],
      selling ? [t('trade.q_payout'), money(q.payout_kopecks)] : [t('trade.q_cost'), money(q.cost_kopecks)],
      [t('trade.q_fee'), money(q.fee_kopecks)],
      [t('trade.q_avg'), bps(q.avg_price_bps)],
      [t('trade.q_price'), `${pct(q.price_before)} → ${pct(q.price_after)}`],
    ];
    const guard = guardValue(q);
    clear(quoteBox,
      h('h5', { class: 'sr-only' }, t('trade.quote')),
      h('dl', null, rows.map(([k, v]) => [h('dt', null, k), h('dd', null, v)])),
      h('p', { class: 'meta' }, selling ? t('trade.q_guard_sell', { v: money(guard) }) : t('trade.q_guard_buy', { n: num(guard) })));
    quoteBox.hidden = false;
  }

  function scheduleQuote() {
    window.clearTimeout(timer);
    if (!request()) return;
    timer = window.setTimeout(getQuote, 500);
  }

  amount.addEventListener('input', () => {
    invalidate();
    if (!quoteBox.hidden) {
      clear(quoteBox, h('p', { class: 'meta' }, t('trade.quote_stale')));
    }
    scheduleQuote();
  });
  tolerance.addEventListener('change', () => {
    if (quote) showQuote(quote);
  });

  confirmBtn.addEventListener('click', async () => {
    const req = request();
    if (!quote || !req || JSON.stringify([sideNow, req]) !== quoteFor) {
      invalidate();
      alert.textContent = t('trade.quote_stale');
      return;
    }
    alert.textContent = '';
    confirmBtn.disabled = true;
    const guard = guardValue(quote);
    const body = selling
      ? { side: sideNow, shares: req.shares, min_payout_kopecks: guard }
      : { side: sideNow, amount_kopecks: req.amount_kopecks, min_shares: guard };
    if (useBonus && useBonus.checked) body.use_bonus = true;
    try {
      const r = await api('POST', `/markets/${market.id}/${selling ? 'sell' : 'buy'}`, body);
      const text = selling
        ? t('trade.sold', { shares: num(r.shares), side: sideName(r.side), payout: money(r.payout_kopecks), fee: money(r.fee_kopecks), balance: money(r.total_balance) })
        : t('trade.bought', { shares: num(r.shares), side: sideName(r.side), cost: money(r.cost_kopecks), fee: money(r.fee_kopecks), balance: money(r.total_balance) });
      opts.onDone(r, text);
    } catch (e) {
      alert.textContent = e.message;
      if (e.code === 'price_moved') {
        invalidate();
        getQuote();
      } else {
        confirmBtn.disabled = false;
      }
    }
  });

  const form = h('form', { class: 'trade-form', 'aria-labelledby': titleId, novalidate: true },
    title,
    selling ? null : zeroBalanceNotice(opts.me),
    alert,
    sideSelect ? field(t('trade.side'), sideSelect) : null,
    selling
      ? field(t('trade.shares'), amount, t('trade.shares_hint', { n: num(held(sideNow)) }))
      : field(t('trade.amount'), amount, t('trade.amount_hint')),
    field(t('trade.slippage'), tolerance, t('trade.slippage_hint')),
    useBonus ? h('div', { class: 'field field-check' }, useBonus, h('label', { for: useBonus.id || (useBonus.id = `bonus-${market.id}`) }, t('trade.use_bonus'))) : null,
    h('div', { class: 'actions' }, quoteBtn, cancelBtn),
    quoteBox,
    h('div', { class: 'actions' }, confirmBtn));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    getQuote();
  });
  form.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      opts.onCancel();
    }
  });
  form.focusFirst = () => amount.focus();
  if (selling && amount.value) scheduleQuote();
  return form;
}
