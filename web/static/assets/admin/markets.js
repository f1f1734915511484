// /admin/markets: the active events, or any event by its id, and a form
// that creates one for a creator (POST /api/v1/admin/users/{id}/events);
// /admin/markets/{event_id}: each market of the event with buttons to
// resolve it YES or NO or void it (POST /api/v1/admin/markets/{id}/resolve),
// each behind a confirmation, and a hidden event's button to show it.

import { api } from '../api.js';
import { loc, pct, dateTime } from '../i18n.js';
import { h, clear, qs, field, table, confirmDialog } from './ui.js';
import { ta } from './i18n-admin.js';
import { disputesSection } from './disputes.js';

const admin = { admin: true };

export async function marketsPage(root, ctx, rest) {
  if (rest.length > 0) return eventPage(root, ctx, rest[0]);

  const id = field(ta('markets.byId'), { type: 'text', inputmode: 'numeric', pattern: '[0-9]+', required: true, autocomplete: 'off' });
  const list = h('div', { class: 'adm-results' });
  clear(root,
    h('form', {
      class: 'adm-inline-form',
      onsubmit: (e) => {
        e.preventDefault();
        const v = id.input.value.trim();
        if (/^\d+$/.test(v)) ctx.go(`/admin/markets/${v}`);
        else id.input.focus();
      },
    }, id.node, h('button', { type: 'submit', class: 'btn btn-primary' }, ta('markets.load'))),
    disputesSection(ctx),
    h('h2', null, ta('markets.active')), list,
    createForm(ctx));
  const { events } = await api('GET', '/api/v1/events' + qs({ limit: 100 }));
  if (!ctx.alive()) return;
  clear(list, events.length === 0 ? h('p', null, ta('none')) : h('ul', { class: 'adm-list' },
    events.map((e) => h('li', null, ctx.link(`/admin/markets/${e.id}`, `#${e.id} ${loc(e, 'name')}`)))));
}

// createForm takes the JSON of POST /api/v1/events and the owner's id;
// the server checks the event, and its refusal is shown as it is.
function createForm(ctx) {
  const creator = field(ta('markets.create.creator'), { type: 'text', inputmode: 'numeric', pattern: '[0-9]+', required: true, autocomplete: 'off' }, ta('markets.create.creatorHint'));
  const body = field(ta('markets.create.json'), { tag: 'textarea', rows: '12', required: true, spellcheck: 'false', class: 'adm-code' }, ta('markets.create.jsonHint'));
  const result = h('div');
  return h('section', { 'aria-labelledby': 'adm-create-event' },
    h('h2', { id: 'adm-create-event' }, ta('markets.create.title')),
    h('form', {
      onsubmit: async (e) => {
        e.preventDefault();
        const id = creator.input.value.trim();
        if (!/^\d+$/.test(id)) { creator.input.focus(); return; }
        let ev;
        try {
          ev = JSON.parse(body.input.value);
        } catch {
          ctx.fail(new Error(ta('markets.create.notJSON')));
          body.input.focus();
          return;
        }
        try {
          const created = await api('POST', `/api/v1/admin/users/${id}/events`, ev, admin);
          const markets = created.pools.reduce((n, p) => n + p.markets.length, 0);
          ctx.announce(ta('markets.create.done', { id: created.id, name: loc(created, 'name'), markets }));
          clear(result, h('p', null, ctx.link(`/admin/markets/${created.id}`, ta('markets.create.open', { id: created.id }))));
        } catch (err) {
          ctx.fail(err);
        }
      },
    }, creator.node, body.node, h('button', { type: 'submit', class: 'btn btn-primary' }, ta('markets.create.submit'))), result);
}

const sideName = (s) => (s === 'YES' ? ta('markets.yes') : s === 'NO' ? ta('markets.no') : ta('markets.void'));

async function eventPage(root, ctx, eventID) {
  if (!/^\d+$/.test(eventID)) { ctx.go('/admin/markets'); return; }

  const draw = (ev, focusMarket) => {
    ctx.heading(ta('markets.eventHeading', { id: ev.id, name: loc(ev, 'name') }));
    clear(root,
      h('p', null, ctx.link('/admin/markets', ta('markets.back'))),
      ev.is_active ? null : h('p', { class: 'muted' }, ta('markets.inactive'), ' ', h('button', {
        type: 'button', class: 'btn btn-small',
        onclick: async () => {
          try {
            await api('POST', `/api/v1/admin/events/${ev.id}/active`, { is_active: true }, admin);
            ctx.announce(ta('markets.shown'));
          } catch (err) {
            ctx.fail(err);
          }
          const again = await api('GET', `/api/v1/events/${ev.id}`).catch(ctx.fail);
          if (again && ctx.alive()) draw(again);
        },
      }, ta('markets.show'))),
      ev.pools.map((pool) => h('section', { class: 'card', 'aria-labelledby': `adm-pool-${pool.id}` },
        h('h2', { id: `adm-pool-${pool.id}` }, ta('markets.pool', { name: loc(pool, 'name') })),
        pool.exclusive ? h('p', { class: 'muted' }, ta('markets.exclusive')) : null,
        table(loc(pool, 'name'),
          [ta('markets.col.market'), ta('markets.col.price'), ta('markets.col.state'), ta('markets.col.actions')],
          pool.markets.map((m) => [h('span', { tabindex: '-1', 'data-market': String(m.id) }, loc(m, 'name')), pct(m.yes_probability), stateText(m), actions(ev, pool, m)])))));
    if (focusMarket != null) {
      // The focus was on a button that is gone: put it on the market's row.
      const cell = root.querySelector(`[data-market="${focusMarket}"]`);
      if (cell) cell.focus();
    }
  };

  const stateText = (m) => {
    const r = m.resolution;
    if (r) return r.disputed ? ta('markets.proposedDisputed', { side: sideName(r.proposed) }) : ta('markets.proposed', { side: sideName(r.proposed), until: dateTime(r.challenge_until) });
    if (!m.resolved) return ta('markets.open');
    const by = m.resolved_by === 'operator' ? ta('markets.by.operator') : m.resolved_by === 'creator' ? ta('markets.by.creator') : '—';
    return m.winning_outcome === 'VOID' ? ta('markets.voided', { by }) : ta('markets.resolvedAs', { side: sideName(m.winning_outcome), by });
  };

  const actions = (ev, pool, m) => {
    if (m.resolved) return '—';
    const name = loc(m, 'name');
    const sides = pool.exclusive ? ['YES', 'VOID'] : ['YES', 'NO', 'VOID'];
    return h('div', { class: 'adm-row-actions', role: 'group', 'aria-label': name }, sides.map((side) => h('button', {
      type: 'button', class: side === 'VOID' ? 'btn btn-small adm-danger' : 'btn btn-small',
      onclick: async () => {
        const q = side === 'VOID' ? ta('markets.voidConfirm', { market: name }) : ta('markets.resolveConfirm', { market: name, side: sideName(side) });
        if (!(await confirmDialog(q, sideName(side)))) return;
        try {
          await api('POST', `/api/v1/admin/markets/${m.id}/resolve`, { won_side: side }, admin);
          ctx.announce(side === 'VOID' ? ta('markets.voidedNow', { market: name }) : ta('markets.resolved', { market: name, side: sideName(side) }));
        } catch (err) {
          ctx.fail(err);
        }
        const again = await api('GET', `/api/v1/events/${ev.id}`).catch(ctx.fail);
        if (again && ctx.alive()) draw(again, m.id);
      },
    }, sideName(side))));
  };

  const ev = await api('GET', `/api/v1/events/${eventID}`);
  if (!ctx.alive()) return;
  draw(ev);
}
