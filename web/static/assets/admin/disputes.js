// The operator's queue of disputed proposals (the challenge window,
// docs/challenge-window.md): GET /api/v1/admin/disputes, each proposal
// with its disputes' reasons and buttons that resolve its market YES, NO
// (not on an exclusive pool) or VOID through
// POST /api/v1/admin/markets/{id}/resolve, each behind a confirmation; on
// an exclusive pool, a button per other answer makes that answer the
// winner instead (its market resolved YES settles the pool).
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
    // An exclusive pool's other answers, read before the cards are drawn
    // so that each card shows every decision at once.
    await Promise.all(proposals.filter((p) => p.exclusive).map(async (p) => {
      const pool = await api('GET', `/api/v1/pools/${p.pool_id}`);
      p.others = pool.markets.filter((m) => m.id !== p.market_id);
    }));
    if (!ctx.alive()) return;
    clear(body, proposals.length === 0 ? h('p', null, ta('disputes.none')) : proposals.map((p) => proposalCard(ctx, p, load)));
  };
  load().catch(ctx.fail);
  return h('section', { 'aria-labelledby': 'adm-disputes' }, h('h2', { id: 'adm-disputes' }, ta('disputes.title')), body);
}

function proposalCard(ctx, p, reload) {
  const sides = p.exclusive ? ['YES', 'VOID'] : ['YES', 'NO', 'VOID'];
  const name = p.market_name;
  const decide = async (question, label, marketID, side, done) => {
    if (!(await confirmDialog(question, label))) return;
    try {
      await api('POST', `/api/v1/admin/markets/${marketID}/resolve`, { won_side: side }, admin);
      ctx.announce(done);
    } catch (err) {
      ctx.fail(err);
    }
    await reload().catch(ctx.fail);
  };
  const winners = (p.others || []).map((m) => h('button', {
    type: 'button', class: 'btn btn-small',
    onclick: () => decide(ta('disputes.confirmWinner', { market: m.name }), ta('disputes.wins', { name: m.name }), m.id, 'YES',
      ta('disputes.doneWinner', { market: m.name })),
  }, ta('disputes.wins', { name: m.name })));
  return h('article', { class: 'card', 'aria-labelledby': `adm-dispute-${p.market_id}` },
    h('h3', { id: `adm-dispute-${p.market_id}` }, ta('disputes.market', { id: p.market_id, name })),
    h('p', null, ta('disputes.proposed', { side: sideName(p.proposed), until: dateTime(p.challenge_until) }), ' ',
      ctx.link(`/admin/markets/${p.event_id}`, ta('disputes.event', { id: p.event_id }))),
    h('ul', { class: 'adm-list' }, p.disputes.map((d) => h('li', null,
      ta('disputes.by', { user: d.user_id, bond: money(d.bond_kopecks) }), ' ', h('q', null, d.reason)))),
    h('div', { class: 'adm-row-actions', role: 'group', 'aria-label': ta('disputes.decide', { name }) }, sides.map((side) => h('button', {
      type: 'button', class: side === 'VOID' ? 'btn btn-small adm-danger' : 'btn btn-small',
      onclick: () => {
        const v = { market: name, side: sideName(side) };
        const q = side === p.proposed ? ta('disputes.confirmKeep', v) : ta('disputes.confirmReturn', v);
        return decide(q, sideName(side), p.market_id, side, ta('disputes.done', v));
      },
    }, sideName(side))).concat(winners)));
}
