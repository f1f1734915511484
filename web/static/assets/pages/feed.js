// The feed: active events, newest first (GET /api/v1/events), each a link
// to its page, with its markets' current YES probabilities.
import { h, clear } from '../dom.js';
import { t, loc, pct } from '../i18n.js';
import { api, query } from '../api.js';
import { getMe, ready } from '../state.js';
import { pageHeading, loading, empty, showError } from '../ui.js';

const PAGE = 20;

function eventCard(ev) {
  const markets = [];
  for (const p of ev.pools || []) for (const m of p.markets || []) markets.push(m);
  const shown = markets.slice(0, 4);
  return h('li', null,
    h('article', { class: 'card', 'aria-labelledby': `ev-${ev.id}` },
      h('h2', { class: 'event-link', id: `ev-${ev.id}` }, h('a', { href: `/events/${ev.id}` }, loc(ev, 'name'))),
      h('p', { class: 'meta' }, t('feed.pools', { n: (ev.pools || []).length }), ' · ', t('feed.markets', { n: markets.length })),
      h('ul', { class: 'plain-list' }, shown.map((m) => h('li', null,
        loc(m, 'name'), ': ',
        m.resolved ? h('span', { class: 'tag tag-muted' }, m.winning_outcome === 'VOID' ? t('market.voided') : t('market.resolved_as', { side: m.winning_outcome === 'NO' ? t('side.no') : t('side.yes') }))
          : h('strong', { 'data-market': String(m.id) }, pct(m.yes_probability))))),
      markets.length > shown.length ? h('p', { class: 'meta' }, t('feed.more_markets', { n: markets.length - shown.length })) : null));
}

export async function render(main, ctx) {
  main.append(pageHeading(t('feed.title')));
  // Users who may create or propose events get the way to the form.
  const cta = h('div');
  main.append(cta);
  ready().then(() => {
    const me = getMe();
    if (ctx.isCurrent() && me && (me.may_create_events || me.may_propose_events)) {
      cta.append(h('p', null, h('a', { href: '/events/new', class: 'btn' }, me.may_create_events ? t('nav.new_event') : t('nav.propose_event'))));
    }
  });
  const list = h('ul', { class: 'cards' });
  const more = h('div', { class: 'actions' });
  const state = h('div', null, loading());
  main.append(state, list, more);
  let offset = 0;

  async function load() {
    let r;
    try {
      r = await api('GET', '/events' + query({ limit: PAGE, offset }), null, { signal: ctx.signal });
    } catch (e) {
      clear(state);
      showError(e);
      return;
    }
    clear(state);
    const events = r.events || [];
    if (offset === 0 && events.length === 0) await emptyFeed(state, ctx);
    for (const ev of events) list.append(eventCard(ev));
    offset += events.length;
    clear(more);
    if (events.length === PAGE) {
      more.append(h('button', { type: 'button', class: 'btn', onClick: load }, t('action.load_more')));
    }
  }
  await load();
  follow(list, ctx);
}

// emptyFeed says how to start when there are no events: a creator is
// shown where creating one is described, everyone else the operator's ways.
async function emptyFeed(state, ctx) {
  state.append(empty(t('feed.empty')));
  await ready();
  if (!ctx.isCurrent()) return;
  const me = getMe();
  if (me && me.is_creator) {
    state.append(h('p', { class: 'muted' }, t('feed.empty_creator'), ' ',
      h('a', { href: '/docs#/events/createEvent' }, t('feed.create_event'))));
    return;
  }
  const [before, after] = t('feed.empty_operator').split('{command}');
  state.append(h('p', { class: 'muted' }, before, h('code', null, 'predictkit admin create-event -f event.json -creator ID'), after,
    ' ', h('a', { href: '/admin' }, t('feed.console'))));
}

// follow keeps the shown prices live: one stream for the events on the
// page (a stream takes at most 32 topics).
function follow(list, ctx) {
  if (typeof EventSource === 'undefined' || !ctx.isCurrent()) return;
  const ids = [...list.querySelectorAll('article[aria-labelledby]')].map((a) => a.getAttribute('aria-labelledby').slice(3)).slice(0, 32);
  if (!ids.length) return;
  const es = new EventSource('/api/v1/stream?topics=' + ids.map((id) => 'event:' + id).join(','));
  ctx.onCleanup(() => es.close());
  es.addEventListener('price', (e) => {
    let p;
    try {
      p = JSON.parse(e.data);
    } catch {
      return;
    }
    const el = list.querySelector(`[data-market="${Number(p.market_id)}"]`);
    if (el) el.textContent = pct(p.yes_probability);
  });
}
