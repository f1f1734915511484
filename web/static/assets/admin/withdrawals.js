// /admin/withdrawals: the queue of users' withdrawals (GET
// /api/v1/admin/withdrawals?status=…; pending by default, oldest first),
// each with its user, network, address (with a Copy button: the operator
// pays it by hand from an outside wallet), amount and age. A pending one
// is approved with the payment's transaction hash (POST .../approve) or
// rejected with a reason the user reads (POST .../reject, which refunds
// it). When another operator, or the user cancelling, decided it first,
// the server answers 409 invalid_state: the console says so and reads
// the list again.

import { api } from '../api.js';
import { money } from '../i18n.js';
import { chainName, isTron } from '../chains.js';
import { h, clear, qs, field, table, timeEl, formDialog, errorText } from './ui.js';
import { ta } from './i18n-admin.js';

const admin = { admin: true };
const STATUSES = ['pending', 'paid', 'rejected', 'cancelled', 'all'];

// The filter outlives a visit to another section.
let shownStatus = 'pending';

// age says how long ago iso was, roughly: the queue's oldest matter most.
export function age(iso, now = Date.now()) {
  const ms = now - Date.parse(iso);
  if (!(ms >= 60_000)) return ta('withdrawals.age.now');
  const min = Math.floor(ms / 60_000);
  if (min < 60) return ta('withdrawals.age.min', { n: min });
  const hours = Math.floor(min / 60);
  if (hours < 48) return ta('withdrawals.age.h', { n: hours });
  return ta('withdrawals.age.d', { n: Math.floor(hours / 24) });
}

export async function withdrawalsPage(root, ctx) {
  const status = field(ta('withdrawals.status'), { tag: 'select', name: 'status' });
  for (const s of STATUSES) status.input.append(h('option', { value: s }, ta('withdrawals.status.' + s)));
  status.input.value = shownStatus;
  const refresh = h('button', { type: 'button', class: 'btn', onclick: () => load(false) }, ta('refresh'));
  const results = h('div', { class: 'adm-results' });
  const more = h('button', { type: 'button', class: 'btn', hidden: true, onclick: () => load(true) }, ta('more'));
  let items = [];
  let cursor = null;
  // Each load takes a number; an answer to an older one is dropped (the
  // operator changed the filter meanwhile).
  let seq = 0;

  const who = (w) => (w.user ? w.user.name || w.user.email || `#${w.user.id}` : `#${w.user_id}`);

  const copy = async (w, code) => {
    try {
      await navigator.clipboard.writeText(w.address);
      ctx.announce(ta('withdrawals.copied', { id: w.id }));
    } catch {
      // No clipboard (an insecure origin, a refused permission): select
      // the address so that the keyboard copies it.
      const range = document.createRange();
      range.selectNodeContents(code);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      ctx.announce(ta('withdrawals.copyFailed'));
    }
  };

  // decided handles a refusal that a dialog cannot fix: the withdrawal
  // was decided meanwhile, or is gone. It closes the dialog, reads the
  // list again and says why.
  const decided = async (err, w) => {
    if (err && err.status === 409 && err.code === 'invalid_state') {
      await load(false);
      ctx.fail(new Error(ta('withdrawals.decidedElsewhere', { id: w.id })));
      return true;
    }
    if (err && err.status === 404) {
      await load(false);
      ctx.fail(new Error(ta('withdrawals.notFound', { id: w.id })));
      return true;
    }
    if (err && err.status === 401) {
      ctx.fail(err);
      return true;
    }
    return false;
  };

  // afterDecision puts the focus on the list's first decision left (or
  // the refresh button) once the dialog has closed: the row that had it
  // is gone or changed.
  const afterDecision = () => setTimeout(() => {
    if (!ctx.alive()) return;
    (results.querySelector('.adm-row-actions button') || refresh).focus();
  }, 0);

  const approve = (w) => {
    const vars = { amount: money(w.amount_kopecks), address: w.address, chain: chainName(w.chain) };
    const tx = field(ta('withdrawals.txHash'), { type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', maxlength: '80', class: 'adm-code' },
      ta(isTron(w.chain) ? 'withdrawals.txHintTron' : 'withdrawals.txHintEvm', vars));
    formDialog(ta('withdrawals.approveHeading', { id: w.id, amount: vars.amount }), [tx], ta('withdrawals.approve'), async () => {
      const hash = tx.input.value.trim();
      if (!hash) {
        tx.input.setAttribute('aria-invalid', 'true');
        tx.input.focus();
        return ta('withdrawals.txMissing');
      }
      try {
        await api('POST', `/api/v1/admin/withdrawals/${w.id}/approve`, { tx_hash: hash }, admin);
      } catch (err) {
        if (await decided(err, w)) return true;
        tx.input.setAttribute('aria-invalid', 'true');
        tx.input.focus();
        return err && err.code === 'invalid_request' ? ta('withdrawals.txInvalid', { chain: vars.chain }) : errorText(err);
      }
      await load(false);
      ctx.announce(ta('withdrawals.approved', { id: w.id, amount: vars.amount, user: who(w) }));
      afterDecision();
      return true;
    });
  };

  const reject = (w) => {
    const amount = money(w.amount_kopecks);
    const reason = field(ta('withdrawals.reasonLabel'), { tag: 'textarea', rows: '3', required: true, maxlength: '500' }, ta('withdrawals.reasonHint'));
    formDialog(ta('withdrawals.rejectHeading', { id: w.id, amount }), [reason], ta('withdrawals.reject'), async () => {
      const text = reason.input.value.trim();
      if (!text) {
        reason.input.setAttribute('aria-invalid', 'true');
        reason.input.focus();
        return ta('withdrawals.reasonMissing');
      }
      try {
        await api('POST', `/api/v1/admin/withdrawals/${w.id}/reject`, { reason: text }, admin);
      } catch (err) {
        if (await decided(err, w)) return true;
        return errorText(err);
      }
      await load(false);
      ctx.announce(ta('withdrawals.rejected', { id: w.id, amount, user: who(w) }));
      afterDecision();
      return true;
    });
  };

  const row = (w) => {
    const code = h('code', { class: 'adm-address' }, w.address);
    const copyBtn = h('button', { type: 'button', class: 'btn btn-small', onclick: () => copy(w, code) },
      ta('withdrawals.copy'), h('span', { class: 'sr-only' }, ' ' + ta('withdrawals.copyWhich', { id: w.id })));
    const state = [h('strong', null, ta('withdrawals.status.' + w.status))];
    if (w.status === 'paid' && w.tx_hash) state.push(h('div', null, ta('withdrawals.tx'), ' ', h('code', { class: 'adm-address' }, w.tx_hash)));
    if (w.status === 'rejected' && w.reason) state.push(h('div', null, ta('withdrawals.reason'), ' ', h('q', null, w.reason)));
    if (w.decided_at) state.push(h('div', { class: 'muted' }, timeEl(w.decided_at)));
    if (w.status === 'pending') {
      state.push(h('div', { class: 'adm-row-actions', role: 'group', 'aria-label': ta('withdrawals.decide', { id: w.id }) },
        h('button', { type: 'button', class: 'btn btn-small btn-primary', onclick: () => approve(w) }, ta('withdrawals.approve')),
        h('button', { type: 'button', class: 'btn btn-small adm-danger', onclick: () => reject(w) }, ta('withdrawals.reject'))));
    }
    return [String(w.id),
      [h('div', null, who(w)), w.user && w.user.email ? h('div', { class: 'muted' }, w.user.email) : null],
      chainName(w.chain),
      h('div', { class: 'adm-address-cell' }, code, copyBtn),
      money(w.amount_kopecks),
      [timeEl(w.created_at), h('div', { class: 'muted' }, age(w.created_at))],
      h('div', { class: 'adm-state-cell' }, state)];
  };

  const draw = () => {
    const cols = [ta('withdrawals.col.id'), ta('withdrawals.col.user'), ta('withdrawals.col.chain'), ta('withdrawals.col.address'), ta('withdrawals.col.amount'),
      ta('withdrawals.col.requested'), ta('withdrawals.col.status')];
    clear(results, items.length === 0 ? h('p', null, ta('withdrawals.empty')) : table(
      ta('withdrawals.caption', { status: ta('withdrawals.status.' + shownStatus) }), cols, items.map(row)));
    // Rows by id, for finding one (and for the browser test); each cell
    // names its column, for a phone, where rows are cards (app.css).
    results.querySelectorAll('tbody tr').forEach((tr, i) => {
      tr.dataset.withdrawal = String(items[i].id);
      [...tr.children].forEach((cell, j) => cell.setAttribute('data-label', cols[j]));
    });
    more.hidden = !cursor;
  };

  async function load(next) {
    const mine = ++seq;
    try {
      const page = await api('GET', '/api/v1/admin/withdrawals' + qs({ status: shownStatus, limit: 50, cursor: next ? cursor : '' }), undefined, admin);
      if (!ctx.alive() || mine !== seq) return;
      items = next ? items.concat(page.withdrawals) : page.withdrawals;
      cursor = page.next_cursor || null;
      draw();
      ctx.announce(ta('withdrawals.shown', { n: items.length }));
    } catch (err) {
      ctx.fail(err);
    }
  }

  status.input.addEventListener('change', () => {
    shownStatus = status.input.value;
    load(false);
  });
  clear(root,
    h('p', { class: 'muted' }, ta('withdrawals.intro')),
    h('div', { class: 'adm-inline-form' }, status.node, refresh),
    results, more);
  await load(false);
}
