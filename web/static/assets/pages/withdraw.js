// The Withdraw page: what the signed-in user may withdraw now (the
// balance, never the bonus, capped by what is left of the daily limit),
// the rules in plain words, the form (network, address, amount in
// roubles sent as integer kopecks) and the user's withdrawals, newest
// first, each pending one with a Cancel button (GET, POST and DELETE
// /api/v1/users/me/withdrawals). The me stream's withdrawal events
// change a row as the operator pays or rejects it, in every open tab.
import { h, clear, field, select } from '../dom.js';
import { t, money, dateTime } from '../i18n.js';
import { chainName, isTron } from '../chains.js';
import { api, query } from '../api.js';
import { getMe, ready, onChange } from '../state.js';
import { pageHeading, loading, empty, showError, inlineAlert, statusBox, announce } from '../ui.js';
import { onMeEvent } from '../app.js';
import { parseKopecks } from './trade.js';
import { cardTables } from './narrow.js';

const PAGE = 20;

// The statuses a withdrawal goes through, and what each shows.
const statusKey = { pending: 'withdraw.status.pending', paid: 'withdraw.status.paid', rejected: 'withdraw.status.rejected', cancelled: 'withdraw.status.cancelled' };

export async function render(main, ctx) {
  main.append(pageHeading(t('withdraw.title')));
  await ready();
  if (!ctx.isCurrent()) return;
  if (!getMe()) {
    main.append(h('p', null, h('a', { href: '/login?next=/withdraw' }, t('withdraw.login'))));
    return;
  }
  ctx.onCleanup(cardTables(main));

  // What the server said last: the limit, what counts against it, what
  // may be asked now, the chains, and the withdrawals by id.
  let info = null;
  const rows = new Map();
  let cursor = null;
  let firstLoad = true;

  // ---- what may be withdrawn ----
  const summary = h('dl', { class: 'kv wd-summary' });
  const rules = h('ul', { class: 'rules-list' });
  const paintSummary = () => {
    const me = getMe();
    if (!me || !info) return;
    const limit = Number(info.daily_limit_kopecks || 0);
    clear(summary,
      h('dt', null, t('withdraw.balance')), h('dd', { 'data-withdrawable': '' }, money(me.balance)),
      h('dt', null, t('withdraw.bonus')), h('dd', null, money(me.bonus_balance)),
      h('dt', null, t('withdraw.daily_limit')), h('dd', null, limit ? money(limit) : t('withdraw.no_limit')),
      limit ? [h('dt', null, t('withdraw.withdrawn_24h')), h('dd', null, money(info.withdrawn_24h_kopecks))] : null,
      h('dt', null, t('withdraw.available')), h('dd', { 'data-available': '' }, h('strong', null, money(info.available_kopecks))));
    clear(rules,
      h('li', null, t('withdraw.rule_balance')),
      h('li', null, limit
        ? t('withdraw.rule_limit', { limit: money(limit), left: money(Math.max(0, limit - Number(info.withdrawn_24h_kopecks || 0))) })
        : t('withdraw.rule_no_limit')),
      h('li', null, t('withdraw.rule_operator')),
      h('li', null, t('withdraw.rule_hold')),
      h('li', null, t('withdraw.rule_address')));
    amountHint.textContent = t('withdraw.amount_hint', { available: money(info.available_kopecks) });
  };
  // ---- the form ----
  const formAlert = inlineAlert();
  const done = statusBox();
  const chainSel = select([], '', { name: 'chain', required: true });
  const address = h('input', { type: 'text', name: 'address', class: 'mono', required: true, autocomplete: 'off', autocapitalize: 'off', spellcheck: 'false', maxlength: '100' });
  const amount = h('input', { type: 'text', name: 'amount', inputmode: 'decimal', required: true, autocomplete: 'off', maxlength: '20' });
  const addressRow = field(t('withdraw.address'), address, ' ');
  const addressHint = addressRow.querySelector('.hint');
  const amountRow = field(t('withdraw.amount'), amount, ' ');
  const amountHint = amountRow.querySelector('.hint');
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('withdraw.submit'));
  const paintAddressHint = () => {
    addressHint.textContent = isTron(chainSel.value) ? t('withdraw.address_hint_tron') : t('withdraw.address_hint_evm');
  };
  chainSel.addEventListener('change', paintAddressHint);
  ctx.onCleanup(onChange(({ me }) => {
    if (me) paintSummary();
  }));
  const form = h('form', { class: 'form-narrow', novalidate: true, 'aria-labelledby': 'wd-form-title' },
    formAlert,
    field(t('withdraw.chain'), chainSel),
    addressRow,
    amountRow,
    h('div', { class: 'actions' }, submit),
    done);

  const invalid = (input, text) => {
    input.setAttribute('aria-invalid', 'true');
    formAlert.textContent = text;
    input.focus();
  };
  // errorText words a refusal of the server for this page: what went
  // wrong and what would be accepted.
  const errorText = (err, chain) => {
    const me = getMe();
    const limit = info ? Number(info.daily_limit_kopecks || 0) : 0;
    const left = info ? Math.max(0, limit - Number(info.withdrawn_24h_kopecks || 0)) : 0;
    switch (err && err.code) {
      case 'invalid_address': return t('withdraw.error.invalid_address', { chain: chainName(chain) });
      case 'insufficient_funds': return t('withdraw.error.insufficient_funds', { balance: money(me ? me.balance : 0) });
      case 'withdrawal_limit': return t('withdraw.error.withdrawal_limit', { limit: money(limit), left: money(left) });
      case 'invalid_request': return t('withdraw.error.invalid_request');
      case 'invalid_state': return t('withdraw.error.invalid_state');
      case 'withdrawal_not_found': return t('withdraw.error.withdrawal_not_found');
      default: return err && err.message ? err.message : String(err);
    }
  };

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    formAlert.textContent = '';
    done.textContent = '';
    for (const el of [address, amount]) el.removeAttribute('aria-invalid');
    const addr = address.value.trim();
    if (!addr) {
      invalid(address, t('withdraw.address_missing'));
      return;
    }
    const k = parseKopecks(amount.value);
    if (!k) {
      invalid(amount, t('error.amount_invalid'));
      return;
    }
    const chain = chainSel.value;
    submit.disabled = true;
    try {
      const w = await api('POST', '/users/me/withdrawals', { chain, address: addr, amount_kopecks: k });
      if (!ctx.isCurrent()) return;
      amount.value = '';
      upsert(w);
      done.textContent = t('withdraw.requested', { amount: money(w.amount_kopecks) });
      refresh();
    } catch (err) {
      if (!ctx.isCurrent()) return;
      const text = errorText(err, chain);
      if (err && err.code === 'invalid_address') invalid(address, text);
      else if (err && ['insufficient_funds', 'withdrawal_limit', 'invalid_request'].includes(err.code)) invalid(amount, text);
      else formAlert.textContent = text;
    } finally {
      submit.disabled = false;
    }
  });

  // ---- the withdrawals ----
  const historyTitle = h('h2', { id: 'wd-history-title', tabindex: '-1' }, t('withdraw.history'));
  const listBox = h('div', null, loading());
  const more = h('div', { class: 'actions' });

  const cancel = async (w, button) => {
    button.disabled = true;
    done.textContent = '';
    try {
      const r = await api('DELETE', `/users/me/withdrawals/${w.id}`);
      if (!ctx.isCurrent()) return;
      upsert(r);
      announce(t('withdraw.cancelled', { amount: money(r.amount_kopecks) }));
      done.textContent = t('withdraw.cancelled', { amount: money(r.amount_kopecks) });
      refresh();
    } catch (err) {
      if (!ctx.isCurrent()) return;
      showError(new Error(errorText(err, w.chain)));
      // Decided meanwhile: show what it is now.
      if (err && (err.code === 'invalid_state' || err.code === 'withdrawal_not_found')) refresh();
    }
    // The row was drawn anew without its button: keep the focus nearby.
    historyTitle.focus();
  };

  const statusCell = (w) => {
    const decided = w.decided_at ? [' ', h('span', { class: 'meta' }, t('withdraw.decided', { t: dateTime(w.decided_at) }))] : null;
    const label = h('strong', { class: 'wd-status wd-' + w.status }, t(statusKey[w.status] || 'withdraw.status.pending'));
    switch (w.status) {
      case 'pending': {
        const button = h('button', { type: 'button', class: 'btn btn-small' }, t('withdraw.cancel'),
          h('span', { class: 'sr-only' }, ' ' + t('withdraw.cancel_which', { amount: money(w.amount_kopecks) })));
        button.addEventListener('click', () => cancel(w, button));
        return h('div', { class: 'wd-status-cell' }, label, ' ', h('span', { class: 'meta' }, t('withdraw.waiting')), h('div', null, button));
      }
      case 'paid':
        return h('div', { class: 'wd-status-cell' }, label, decided,
          w.tx_hash ? h('div', null, t('withdraw.tx'), ' ', h('code', { class: 'wd-hash', 'data-tx': '' }, w.tx_hash)) : null);
      case 'rejected':
        return h('div', { class: 'wd-status-cell' }, label, decided,
          w.reason ? h('div', null, t('withdraw.reason'), ' ', h('q', { class: 'wd-reason' }, w.reason)) : null);
      default:
        return h('div', { class: 'wd-status-cell' }, label, decided);
    }
  };

  const paintList = () => {
    const list = [...rows.values()].sort((a, b) => b.id - a.id);
    if (!list.length) {
      clear(listBox, empty(t('withdraw.none')));
      return;
    }
    const cols = [t('withdraw.col.requested'), t('withdraw.col.chain'), t('withdraw.col.address'), t('withdraw.col.amount'), t('withdraw.col.status')];
    clear(listBox, h('div', { class: 'table-wrap', tabindex: '0' },
      h('table', { class: 'wd-table' },
        h('caption', { class: 'sr-only' }, t('withdraw.history')),
        h('thead', null, h('tr', null, cols.map((c, i) => h('th', { scope: 'col', class: i === 3 ? 'num' : null }, c)))),
        h('tbody', null, list.map((w) => h('tr', { 'data-withdrawal': String(w.id), 'data-status': w.status },
          h('td', null, h('time', { datetime: w.created_at }, dateTime(w.created_at))),
          h('td', null, chainName(w.chain)),
          h('td', null, h('code', { class: 'wd-address' }, w.address)),
          h('td', { class: 'num' }, money(w.amount_kopecks)),
          h('td', null, statusCell(w))))))));
  };

  function upsert(w) {
    if (!w || typeof w.id !== 'number') return;
    rows.set(w.id, w);
    paintList();
  }

  const fillChains = (chains) => {
    const keep = chainSel.value;
    clear(chainSel, chains.map((c) => h('option', { value: c }, chainName(c))));
    if (chains.includes(keep)) chainSel.value = keep;
    paintAddressHint();
  };

  // refresh reads the limit's figures and the newest withdrawals again;
  // pages read with Load more stay.
  async function refresh() {
    let r;
    try {
      r = await api('GET', '/users/me/withdrawals' + query({ limit: PAGE }), null, { signal: ctx.signal });
    } catch (e) {
      if (ctx.isCurrent()) showError(e);
      return;
    }
    if (!ctx.isCurrent()) return;
    info = r;
    if (firstLoad) {
      firstLoad = false;
      cursor = r.next_cursor || null;
      fillChains(r.chains || []);
    }
    for (const w of r.withdrawals || []) rows.set(w.id, w);
    paintSummary();
    paintList();
    clear(more, cursor ? h('button', { type: 'button', class: 'btn', onClick: loadMore }, t('action.load_more')) : null);
  }

  async function loadMore() {
    let r;
    try {
      r = await api('GET', '/users/me/withdrawals' + query({ limit: PAGE, cursor }), null, { signal: ctx.signal });
    } catch (e) {
      showError(e);
      return;
    }
    if (!ctx.isCurrent()) return;
    for (const w of r.withdrawals || []) rows.set(w.id, w);
    cursor = r.next_cursor || null;
    paintList();
    clear(more, cursor ? h('button', { type: 'button', class: 'btn', onClick: loadMore }, t('action.load_more')) : null);
  }

  // Live: a withdrawal's new state at once, and the figures after it (a
  // paid or refunded one changes what is left; so does any change of
  // the balance).
  let timer = 0;
  const later = () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(refresh, 300);
  };
  ctx.onCleanup(() => window.clearTimeout(timer));
  ctx.onCleanup(onMeEvent((type, data) => {
    if (type === 'withdrawal') {
      upsert(data);
      later();
    } else if (type === 'balance' || type === 'reset') {
      later();
    }
  }));

  main.append(
    h('section', { 'aria-labelledby': 'wd-summary-title', class: 'card' },
      h('h2', { id: 'wd-summary-title' }, t('withdraw.summary')),
      summary,
      h('p', { class: 'meta' }, h('a', { href: '/deposit' }, t('nav.deposit')))),
    h('section', { 'aria-labelledby': 'wd-rules-title' },
      h('h2', { id: 'wd-rules-title' }, t('withdraw.rules')),
      rules),
    h('section', { 'aria-labelledby': 'wd-form-title', class: 'card' },
      h('h2', { id: 'wd-form-title' }, t('withdraw.form')),
      form),
    h('section', { 'aria-labelledby': 'wd-history-title' }, historyTitle, listBox, more));
  await refresh();
}
