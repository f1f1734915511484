// /admin/users: find users (GET /api/v1/admin/users), credit them (POST
// /api/v1/admin/users/{id}/credit) and grant or revoke the creator role
// and access to statistics (PATCH /api/v1/admin/users/{id}).

import { api } from '../api.js';
import { money } from '../i18n.js';
import { h, clear, qs, field, table, timeEl, confirmDialog, formDialog, parseKopecks, errorText } from './ui.js';
import { ta } from './i18n-admin.js';

const admin = { admin: true };

export async function usersPage(root, ctx) {
  const q = field(ta('users.search'), { type: 'search', name: 'query', maxlength: '200', autocomplete: 'off' }, ta('users.searchHint'));
  const results = h('div', { class: 'adm-results' });
  const more = h('button', { type: 'button', class: 'btn', hidden: true }, ta('more'));
  let users = [];
  let cursor = null;
  let current = '';
  // A list asked for before a role change may come back after it, with
  // the old role: every load and change takes the next number, and a
  // list keeps the changes numbered after its load began.
  let seq = 0;
  const changed = new Map(); // user id → { is_creator, is_stats_viewer, seq }

  const label = (u) => u.nickname || u.name || u.email || `#${u.id}`;

  const row = (u) => {
    const credit = h('button', { type: 'button', class: 'btn btn-small', onclick: () => creditDialog(u) }, ta('users.credit'));
    const role = h('button', {
      type: 'button', class: 'btn btn-small', 'data-role': 'is_creator',
      onclick: () => setCreator(u, !u.is_creator),
    }, u.is_creator ? ta('users.revoke') : ta('users.grant'));
    const stats = h('button', {
      type: 'button', class: 'btn btn-small', 'data-role': 'is_stats_viewer',
      onclick: () => setRole(u, 'is_stats_viewer', !u.is_stats_viewer),
    }, u.is_stats_viewer ? ta('users.revokeStats') : ta('users.grantStats'));
    return [String(u.id), u.email || (u.partner_id != null ? ta('users.partner', { id: u.partner_id }) : '—'),
      u.nickname ? `${u.name} (${u.nickname})` : u.name, u.is_creator ? ta('yes') : ta('no'),
      u.is_stats_viewer ? ta('yes') : ta('no'), timeEl(u.created_at),
      h('div', { class: 'adm-row-actions' }, credit, role, stats)];
  };

  const draw = () => {
    clear(results, users.length === 0 ? h('p', null, ta('none')) : table(ta('users.caption'),
      [ta('users.col.id'), ta('users.col.email'), ta('users.col.name'), ta('users.col.creator'), ta('users.col.stats'), ta('users.col.created'), ta('users.col.actions')],
      users.map(row)));
    more.hidden = !cursor;
  };

  const load = async (next) => {
    try {
      const began = ++seq;
      const page = await api('GET', '/api/v1/admin/users' + qs({ query: current, limit: 50, cursor: next ? cursor : '' }), undefined, admin);
      if (!ctx.alive()) return;
      for (const u of page.users) {
        const c = changed.get(u.id);
        if (c && c.seq > began) Object.assign(u, { is_creator: c.is_creator, is_stats_viewer: c.is_stats_viewer });
      }
      users = next ? users.concat(page.users) : page.users;
      cursor = page.next_cursor;
      draw();
      ctx.announce(ta('users.found', { n: users.length }));
    } catch (err) {
      ctx.fail(err);
    }
  };

  const creditDialog = (u) => {
    const amount = field(ta('amount'), { type: 'text', inputmode: 'decimal', required: true, autocomplete: 'off' });
    const bonus = field(ta('users.bonus'), { type: 'checkbox' });
    formDialog(ta('users.creditHeading', { name: label(u) }), [amount, bonus], ta('users.credit'), async () => {
      const kopecks = parseKopecks(amount.input.value);
      if (kopecks == null) {
        amount.input.setAttribute('aria-invalid', 'true');
        amount.input.focus();
        return ta('amount.invalid');
      }
      try {
        const b = await api('POST', `/api/v1/admin/users/${u.id}/credit`, { amount_kopecks: kopecks, bonus: bonus.input.checked }, admin);
        ctx.announce(ta('users.credited', { amount: money(kopecks), name: label(u), balance: money(b.balance), bonus: money(b.bonus_balance) }));
        return true;
      } catch (err) {
        if (err && err.status === 401) { ctx.fail(err); return true; }
        return errorText(err);
      }
    });
  };

  const setCreator = async (u, on) => {
    if (!on && !(await confirmDialog(ta('users.revokeConfirm', { name: label(u) }), ta('users.revoke')))) return;
    await setRole(u, 'is_creator', on);
  };

  // setRole grants (on) or revokes a role, is_creator or is_stats_viewer.
  const setRole = async (u, field, on) => {
    const said = field === 'is_creator' ? (on ? 'users.granted' : 'users.revoked') : (on ? 'users.grantedStats' : 'users.revokedStats');
    try {
      const r = await api('PATCH', `/api/v1/admin/users/${u.id}`, { [field]: on }, admin);
      const roles = { is_creator: r.user.is_creator, is_stats_viewer: r.user.is_stats_viewer };
      Object.assign(u, roles);
      changed.set(u.id, { ...roles, seq: ++seq });
      for (const x of users) if (x.id === u.id) Object.assign(x, roles);
      if (!ctx.alive()) return;
      draw();
      ctx.announce(ta(said, { name: label(u) }));
      // The row was drawn anew: put the focus back on the button pressed.
      const tr = [...results.querySelectorAll('tbody tr')].find((row) => row.firstChild.textContent === String(u.id));
      if (tr) tr.querySelector(`.adm-row-actions button[data-role="${field}"]`).focus();
    } catch (err) {
      ctx.fail(err);
    }
  };

  more.addEventListener('click', () => load(true));
  clear(root,
    h('form', {
      class: 'adm-inline-form', role: 'search',
      onsubmit: (e) => { e.preventDefault(); current = q.input.value.trim(); load(false); },
    }, q.node, h('button', { type: 'submit', class: 'btn btn-primary' }, ta('users.searchButton'))),
    results, more);
  await load(false);
}
