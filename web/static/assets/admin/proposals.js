// /admin/proposals: the queue of event proposals (GET
// /api/v1/admin/events?status=proposed), oldest first, each with its
// proposer, ante and markets; Approve (POST .../approve) behind a
// confirmation, Reject (POST .../reject) in a form with the reason and
// whether the ante comes back. docs/proposals.md says what each does.

import { api } from '../api.js';
import { loc, money, pct } from '../i18n.js';
import { h, clear, field, table, timeEl, confirmDialog, formDialog, errorText } from './ui.js';
import { ta } from './i18n-admin.js';

const admin = { admin: true };

export async function proposalsPage(root, ctx) {
  const list = h('div', { class: 'adm-results' });
  const refresh = h('button', { type: 'button', class: 'btn', onclick: () => load() }, ta('refresh'));
  clear(root, h('p', { class: 'muted' }, ta('proposals.intro')), h('div', { class: 'actions' }, refresh), list);

  const who = (p) => p.nickname || p.name || p.email;

  // focusNext puts the focus somewhere sensible after a decision removed
  // the row that had it: the next proposal's heading, or the refresh
  // button.
  const focusNext = (index) => {
    const heads = list.querySelectorAll('h2[tabindex]');
    const next = heads[Math.min(index, heads.length - 1)];
    (next || refresh).focus();
  };

  const approve = async (ev, index) => {
    const name = loc(ev, 'name');
    if (!(await confirmDialog(ta('proposals.approveConfirm', { name, ante: money(ev.ante_kopecks) }), ta('proposals.approve')))) return;
    try {
      await api('POST', `/api/v1/admin/events/${ev.id}/approve`, undefined, admin);
      ctx.announce(ta('proposals.approved', { name }));
    } catch (err) {
      ctx.fail(err);
    }
    await load();
    focusNext(index);
  };

  const reject = (ev, index) => {
    const name = loc(ev, 'name');
    const reason = field(ta('proposals.reason'), { tag: 'textarea', rows: '3', required: true, maxlength: '1000' }, ta('proposals.reasonHint'));
    const refund = field(ta('proposals.refund', { ante: money(ev.ante_kopecks) }), { type: 'checkbox', checked: true });
    formDialog(ta('proposals.rejectHeading', { name }), [reason, refund], ta('proposals.reject'), async () => {
      const text = reason.input.value.trim();
      if (!text) {
        reason.input.setAttribute('aria-invalid', 'true');
        reason.input.focus();
        return ta('proposals.reasonMissing');
      }
      try {
        await api('POST', `/api/v1/admin/events/${ev.id}/reject`, { reason: text, refund: refund.input.checked }, admin);
      } catch (err) {
        if (err && err.status === 401) { ctx.fail(err); return true; }
        return errorText(err);
      }
      ctx.announce(ta(refund.input.checked ? 'proposals.rejectedRefunded' : 'proposals.rejectedKept', { name }));
      load().then(() => focusNext(index));
      return true;
    });
  };

  const card = (ev, index) => {
    const headID = `adm-proposal-${ev.id}`;
    const name = loc(ev, 'name');
    return h('section', { class: 'card', 'aria-labelledby': headID, 'data-proposal': String(ev.id) },
      h('h2', { id: headID, tabindex: '-1' }, ta('proposals.heading', { id: ev.id, name })),
      h('p', null, ta('proposals.by', { who: who(ev.proposer), email: ev.proposer.email, ante: money(ev.ante_kopecks) }), ' ', timeEl(ev.created_at)),
      ev.tags.length ? h('p', { class: 'muted' }, ta('proposals.tags', { tags: ev.tags.join(', ') })) : null,
      ev.pools.map((pool) => h('div', null,
        h('h3', null, loc(pool, 'name')),
        loc(pool, 'rules') ? h('p', { class: 'muted adm-rules' }, loc(pool, 'rules')) : null,
        table(loc(pool, 'name'), [ta('markets.col.market'), ta('markets.col.price')],
          pool.markets.map((m) => [loc(m, 'name'), pct(m.yes_probability)])))),
      h('div', { class: 'adm-row-actions', role: 'group', 'aria-label': name },
        h('button', { type: 'button', class: 'btn btn-primary', onclick: () => approve(ev, index) }, ta('proposals.approve')),
        h('button', { type: 'button', class: 'btn adm-danger', onclick: () => reject(ev, index) }, ta('proposals.reject'))));
  };

  async function load() {
    try {
      const { events } = await api('GET', '/api/v1/admin/events?status=proposed&limit=100', undefined, admin);
      if (!ctx.alive()) return;
      clear(list, events.length === 0 ? h('p', null, ta('proposals.empty')) : events.map(card));
    } catch (err) {
      ctx.fail(err);
    }
  }
  await load();
}
