// The operator's queue of disputed proposals (the challenge window,
// docs/challenge-window.md): GET /api/v1/admin/disputes, each proposal
// with its disputes' reasons and buttons that resolve its market YES, NO
// (not on an exclusive pool) or VOID through
// POST /api/v1/admin/markets/{id}/resolve, each behind a confirmation.
// The operator's outcome is final; the bonds come back when it differs
// from the proposal and go to the platform otherwise.

import { api } from '../api.js';
import { dateTime, money } from '../i18n.js';
import { h, clear, confirmDialog } from './ui.js';
import { ta } from './i18n-admin.js';

const admin = { admin: true };

const sideName = (s) => (s === 'YES' ? ta('markets.yes') : s === 'NO' ? ta('markets.no') : ta('markets.void'));

// disputesSection returns the queue's section, filled once loaded, and
// refilled after each decision.
export function disputesSection(ctx) {
  const body = h('div', { class: 'adm-results' });
  const load = async () => {
    const { proposals } = await api('GET', '/api/v1/admin/disputes', undefined, admin);
    if (!ctx.alive()) return;
    clear(body, proposals.length === 0 ? h('p', null, ta('disputes.none')) : proposals.map((p) => proposalCard(ctx, p, load)));
  };
  load().catch(ctx.fail);
  return h('section', { 'aria-labelledby': 'adm-disputes' }, h('h2', { id: 'adm-disputes' }, ta('disputes.title')), body);
}

function proposalCard(ctx, p, reload) {
  const sides = p.exclusive ? ['YES', 'VOID'] : ['YES', 'NO', 'VOID'];
  const name = p.market_name;
  return h('article', { class: 'card', 'aria-labelledby': `adm-dispute-${p.market_id}` },
    h('h3', { id: `adm-dispute-${p.market_id}` }, ta('disputes.market', { id: p.market_id, name })),
    h('p', null, ta('disputes.proposed', { side: sideName(p.proposed), until: dateTime(p.challenge_until) }), ' ',
      ctx.link(`/admin/markets/${p.event_id}`, ta('disputes.event', { id: p.event_id }))),
    h('ul', { class: 'adm-list' }, p.disputes.map((d) => h('li', null,
      ta('disputes.by', { user: d.user_id, bond: money(d.bond_kopecks) }), ' ', h('q', null, d.reason)))),
    h('div', { class: 'adm-row-actions', role: 'group', 'aria-label': ta('disputes.decide', { name }) }, sides.map((side) => h('button', {
      type: 'button', class: side === 'VOID' ? 'btn btn-small adm-danger' : 'btn btn-small',
      onclick: async () => {
        const v = { market: name, side: sideName(side) };
        const q = side === p.proposed ? ta('disputes.confirmKeep', v) : ta('disputes.confirmReturn', v);
        if (!(await confirmDialog(q, sideName(side)))) return;
        try {
          await api('POST', `/api/v1/admin/markets/${p.market_id}/resolve`, { won_side: side }, admin);
          ctx.announce(ta('disputes.done', { market: name, side: sideName(side) }));
        } catch (err) {
          ctx.fail(err);
        }
        await reload().catch(ctx.fail);
      },
    }, sideName(side)))));
}
