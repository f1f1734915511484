// The feed (GET /api/v1/events): search, sort, the open/resolved filter,
// tag chips and "Load more" with the server's cursor; each card has the
// event's tags, volume, closing time and every market's price with an
// SVG sparkline of its last 24 hours. The same page is a tag's page
// (/tags/{slug}, variant 'tag'). The search, sort and status live in the
// URL (?q=&sort=&status=), so a reload or a shared link shows the same.
import { h, s, clear, id, select } from '../dom.js';
import { t, loc, pct, money, dateTime } from '../i18n.js';
import { api, query } from '../api.js';
import { getMe, ready } from '../state.js';
import { pageHeading, loading, empty, showError, announce } from '../ui.js';

const PAGE = 20;
const SORTS = ['trending', 'new', 'closing', 'volume'];
const STATUSES = ['open', 'resolved', 'all'];
// How long the search waits after the last key before it asks.
const DEBOUNCE_MS = 300;

// sparkline draws points (YES probabilities, oldest first) as an inline
// SVG whose accessible name says where the price went.
function sparkline(points) {
  if (!points || points.length === 0) return null;
  const w = 96;
  const ht = 24;
  const step = points.length > 1 ? w / (points.length - 1) : 0;
  const xy = points.map((p, i) => `${(points.length > 1 ? i * step : w / 2).toFixed(1)},${(ht - 1 - Math.max(0, Math.min(1, p)) * (ht - 2)).toFixed(1)}`);
  if (points.length === 1) xy.unshift(`0,${xy[0].split(',')[1]}`);
  const first = points[0];
  const last = points[points.length - 1];
  const trend = last > first ? 'up' : last < first ? 'down' : 'flat';
  return s('svg', {
    class: `sparkline sparkline-${trend}`, viewBox: `0 0 ${w} ${ht}`, width: w, height: ht, role: 'img', focusable: 'false',
    'aria-label': t('feed.sparkline', { from: pct(first), to: pct(last) }),
  }, s('polyline', { points: xy.join(' '), fill: 'none', stroke: 'currentColor', 'stroke-width': '1.5', 'stroke-linejoin': 'round' }));
}

// marketRow shows one market: live price and sparkline, or, once
// resolved, the outcome and 100%/0% (voided: refunded).
function marketRow(m) {
  const name = h('span', { class: 'feed-market-name' }, loc(m, 'name'));
  if (m.resolved) {
    const out = m.winning_outcome;
    const label = out === 'VOID' ? t('feed.voided') : out === 'NO' ? t('feed.resolved_no') : t('feed.resolved_yes');
    const final = out === 'VOID' ? null : h('strong', { class: out === 'NO' ? 'price-no' : 'price-yes' }, out === 'NO' ? '0%' : '100%');
    return h('li', { class: 'feed-market feed-market-resolved' }, name, ' ',
      final, ' ', h('span', { class: ['tag', out === 'VOID' ? 'tag-muted' : out === 'NO' ? 'tag-no' : 'tag-yes'] }, label));
  }
  return h('li', { class: 'feed-market' }, name, ' ',
    h('strong', { 'data-market': String(m.id) }, pct(m.yes_probability)), ' ', sparkline(m.sparkline));
}

// closing says when trading ends (or ended) for an open event.
function closing(ev, resolved) {
  if (resolved || !ev.closes_at) return null;
  const past = new Date(ev.closes_at).getTime() <= Date.now();
  return t(past ? 'feed.closed' : 'feed.closes', { at: dateTime(ev.closes_at) });
}

function eventCard(ev, tagNames) {
  const markets = [];
  for (const p of ev.pools || []) for (const m of p.markets || []) markets.push(m);
  const shown = markets.slice(0, 4);
  const resolved = markets.length > 0 && markets.every((m) => m.resolved);
  const meta = [t('feed.volume', { v: money(ev.volume_kopecks || 0) }), t('feed.volume_24h', { v: money(ev.volume_24h_kopecks || 0) })];
  const closes = closing(ev, resolved);
  if (closes) meta.push(closes);
  if (resolved) meta.push(t('feed.event_resolved'));
  return h('li', null,
    h('article', { class: ['card', resolved && 'card-resolved'], 'aria-labelledby': `ev-${ev.id}` },
      h('h2', { class: 'event-link', id: `ev-${ev.id}` }, h('a', { href: `/events/${ev.id}` }, loc(ev, 'name'))),
      (ev.tags || []).length ? h('ul', { class: 'chips', 'aria-label': t('feed.tags') },
        ev.tags.map((slug) => h('li', null, h('a', { class: 'chip', href: `/tags/${slug}` }, tagNames(slug))))) : null,
      h('p', { class: 'meta' }, meta.join(' · ')),
      h('ul', { class: 'plain-list feed-markets' }, shown.map(marketRow)),
      markets.length > shown.length ? h('p', { class: 'meta' }, t('feed.more_markets', { n: markets.length - shown.length })) : null));
}

export async function render(main, ctx) {
  const tagSlug = ctx.variant === 'tag' ? ctx.params[0] : '';
  const params = ctx.query;
  const state = {
    q: params.get('q') || '',
    sort: SORTS.includes(params.get('sort')) ? params.get('sort') : 'trending',
    status: STATUSES.includes(params.get('status')) ? params.get('status') : 'open',
  };
  const heading = pageHeading(t('feed.title'));
  main.append(heading);

  // The tags, for the chips and the names on cards; a failure leaves
  // slugs shown as they are.
  let tags = [];
  try {
    tags = (await api('GET', '/tags', null, { signal: ctx.signal })).tags || [];
  } catch {
    tags = [];
  }
  if (!ctx.isCurrent()) return;
  const tagNames = (slug) => {
    const tg = tags.find((x) => x.slug === slug);
    return tg ? loc(tg, 'name') : slug;
  };
  if (tagSlug) {
    const name = tagNames(tagSlug);
    clear(heading.querySelector('h1') || heading, t('feed.tag_title', { name }));
    document.title = `${name} · predictkit`;
  }

  if (!tagSlug) {
    // Users who may create or propose events get the way to the form.
    const cta = h('div');
    main.append(cta);
    ready().then(() => {
      const me = getMe();
      if (ctx.isCurrent() && me && (me.may_create_events || me.may_propose_events)) {
        cta.append(h('p', null, h('a', { href: '/events/new', class: 'btn' }, me.may_create_events ? t('nav.new_event') : t('nav.propose_event'))));
      }
    });
  }

  // ---- controls ----
  const searchID = id('q');
  const search = h('input', { type: 'search', id: searchID, name: 'q', value: state.q, autocomplete: 'off', maxlength: '200' });
  const sortSel = select(SORTS.map((v) => [v, t('feed.sort_' + v)]), state.sort, { id: id('sort'), name: 'sort' });
  const statusName = id('status');
  const statusBox = h('fieldset', { class: 'feed-status' }, h('legend', null, t('feed.status')),
    h('div', { class: 'segmented' }, STATUSES.map((v) => {
      const input = h('input', { type: 'radio', name: statusName, value: v, id: `${statusName}-${v}`, checked: v === state.status });
      return h('label', { for: input.id, class: 'segment' }, input, ' ', t('feed.status_' + v));
    })));
  const form = h('form', { role: 'search', class: 'filters feed-controls', 'aria-label': t('feed.search_label') },
    h('div', { class: 'field' }, h('label', { for: searchID }, t('feed.search_label')), search),
    h('div', { class: 'field' }, h('label', { for: sortSel.id }, t('feed.sort')), sortSel),
    statusBox);
  main.append(form);

  const chips = h('nav', { class: 'tag-nav', 'aria-label': t('feed.tags') },
    h('ul', { class: 'chips' },
      h('li', null, h('a', { class: 'chip', href: '/', 'aria-current': tagSlug ? null : 'page' }, t('feed.all_tags'))),
      tags.map((tg) => h('li', null, h('a', { class: 'chip', href: `/tags/${tg.slug}`, 'aria-current': tg.slug === tagSlug ? 'page' : null }, loc(tg, 'name'))))));
  if (tags.length) main.append(chips);

  const status = h('div', null, loading());
  const list = h('ul', { class: 'cards' });
  const more = h('div', { class: 'actions' });
  main.append(status, list, more);

  let cursor = null;
  let loadSeq = 0;
  let stream = null;

  // keepURL writes the filters into the address without a new history
  // entry: a reload or a copied link shows the same feed.
  function keepURL() {
    const u = new URL(location.href);
    for (const [k, v, def] of [['q', state.q, ''], ['sort', state.sort, 'trending'], ['status', state.status, 'open']]) {
      if (v && v !== def) u.searchParams.set(k, v);
      else u.searchParams.delete(k);
    }
    history.replaceState(history.state, '', u.pathname + u.search);
  }

  async function load(reset) {
    const seq = ++loadSeq;
    if (reset) {
      cursor = null;
      clear(status, loading());
    }
    let r;
    try {
      r = await api('GET', '/events' + query({ q: state.q, tag: tagSlug, sort: state.sort, status: state.status, limit: PAGE, cursor }), null, { signal: ctx.signal });
    } catch (e) {
      if (seq !== loadSeq || !ctx.isCurrent()) return;
      clear(status);
      showError(e);
      return;
    }
    if (seq !== loadSeq || !ctx.isCurrent()) return;
    clear(status);
    if (reset) clear(list);
    const events = r.events || [];
    const filtered = state.q || tagSlug || state.status !== 'open';
    if (reset && events.length === 0) {
      if (filtered) status.append(empty(t('feed.no_match')));
      else await emptyFeed(status, ctx);
    }
    for (const ev of events) list.append(eventCard(ev, tagNames));
    if (reset && filtered) announce(t('feed.found', { n: events.length + (r.next_cursor ? '+' : '') }));
    cursor = r.next_cursor || null;
    clear(more);
    if (cursor) more.append(h('button', { type: 'button', class: 'btn', onClick: () => load(false) }, t('action.load_more')));
    if (stream) stream.close();
    stream = follow(list, ctx);
  }

  let timer = 0;
  const refresh = () => {
    keepURL();
    load(true);
  };
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      state.q = search.value.trim();
      refresh();
    }, DEBOUNCE_MS);
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(timer);
    state.q = search.value.trim();
    refresh();
  });
  sortSel.addEventListener('change', () => {
    state.sort = sortSel.value;
    refresh();
  });
  statusBox.addEventListener('change', (e) => {
    if (e.target && e.target.name === statusName) {
      state.status = e.target.value;
      refresh();
    }
  });
  ctx.onCleanup(() => {
    clearTimeout(timer);
    if (stream) stream.close();
  });
  await load(true);
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
// page (a stream takes at most 32 topics). It returns the stream, or null.
function follow(list, ctx) {
  if (typeof EventSource === 'undefined' || !ctx.isCurrent()) return null;
  const ids = [...list.querySelectorAll('article[aria-labelledby]')].map((a) => a.getAttribute('aria-labelledby').slice(3)).slice(0, 32);
  if (!ids.length) return null;
  const es = new EventSource('/api/v1/stream?topics=' + ids.map((i) => 'event:' + i).join(','));
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
  return es;
}
