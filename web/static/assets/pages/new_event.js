// /events/new: a creator builds an event (pools, binary or exclusive,
// markets with opening probabilities, names and rules in English and
// Russian, trading window, liquidity b, tags), sees the subsidy it costs
// as the server computes it (POST /api/v1/events/preview, debounced),
// previews it, creates it (POST /api/v1/events) and publishes it (POST
// /api/v1/events/{id}/active). A user who is not a creator, when the
// server takes proposals (auth/me's may_propose_events), proposes it
// instead: the page shows the ante and then says the event awaits the
// operator's approval (docs/proposals.md).
import { h, clear, field, id as uid } from '../dom.js';
import { t, loc, money, pct } from '../i18n.js';
import { api } from '../api.js';
import { getMe, ready, loadMe } from '../state.js';
import { pageHeading, inlineAlert, statusBox, announce } from '../ui.js';

const DEBOUNCE_MS = 400;

// kopecks reads roubles typed by the user ("1000", "99.5", "1 000,25") as
// integer kopecks by string arithmetic, or null.
function kopecks(text) {
  const s = String(text).replace(/[\s\u00a0]/g, '').replace(',', '.');
  const m = /^(\d{1,13})(?:\.(\d{1,2}))?$/.exec(s);
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] || '').padEnd(2, '0'));
}

// fraction reads a percentage ("30", "12.5") as a number 0..1, or NaN.
function fraction(text) {
  const s = String(text).trim().replace(',', '.');
  if (!/^\d+(\.\d+)?$/.test(s)) return NaN;
  return Number(s) / 100;
}

// iso turns a datetime-local value into RFC 3339 (the browser's zone),
// or undefined when empty.
function iso(v) {
  if (!v) return undefined;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? v : d.toISOString();
}

function input(attrs) {
  return h('input', { type: 'text', autocomplete: 'off', ...attrs });
}

// marketRow is one market of a pool: its names, opening probability and,
// in an exclusive pool, the "Other" checkbox (answers added later take
// their probability out of that market; at most one per pool, so checking
// one unchecks the others; hidden and off in a binary pool). read() gives
// its part of the request body, with "other": true on the checked one.
function marketRow(pool, onChange, init = {}) {
  const name = input({ value: init.name || '', maxlength: '200', required: true, 'data-field': 'market-name' });
  const nameRu = input({ value: init.name_ru || '', maxlength: '200', lang: 'ru', 'data-field': 'market-name-ru' });
  const prob = input({ value: init.percent || '50', inputmode: 'decimal', required: true, size: '5', 'data-field': 'market-probability' });
  const other = h('input', { type: 'checkbox', id: uid('other'), 'data-field': 'market-other' });
  const otherHint = uid('hint');
  other.setAttribute('aria-describedby', otherHint);
  const otherRow = h('div', { class: 'field field-check', 'data-other-field': '' }, other,
    h('label', { for: other.id }, t('new.other')), h('p', { class: 'hint', id: otherHint }, t('new.other_hint')));
  const subsidy = h('span', { class: 'meta', 'data-subsidy': '' });
  const row = h('li', { class: 'new-market' });
  const remove = h('button', { type: 'button', class: 'btn btn-small', onClick: () => { pool.removeMarket(m); } });
  const m = {
    node: row,
    read: () => {
      const body = { name: name.value, name_ru: nameRu.value, probability: fraction(prob.value) };
      if (m.isOther()) body.other = true;
      return body;
    },
    isOther: () => !other.disabled && other.checked,
    setOther: (on) => { other.checked = on; },
    // setExclusive shows the Other checkbox in an exclusive pool, and
    // hides, disables and clears it in a binary one.
    setExclusive: (on) => {
      otherRow.hidden = !on;
      other.disabled = !on;
      if (!on) other.checked = false;
    },
    setSubsidy: (k) => { subsidy.textContent = k == null ? '' : t('new.market_subsidy', { v: money(k) }); },
    number: (n) => {
      clear(row,
        h('fieldset', { class: 'new-market-fields' },
          h('legend', null, t('new.market_n', { n })),
          field(t('new.name_en'), name),
          field(t('new.name_ru'), nameRu),
          field(t('new.probability'), prob, t('new.probability_hint')),
          otherRow,
          h('div', { class: 'actions' }, subsidy, remove)));
      remove.textContent = t('new.remove_market', { n });
    },
    focus: () => name.focus(),
  };
  for (const el of [name, nameRu, prob]) el.addEventListener('input', onChange);
  other.addEventListener('change', () => {
    if (other.checked) pool.otherChosen(m);
    onChange();
  });
  m.setExclusive(pool.isExclusive());
  return m;
}

// poolBlock is one pool: names, rules, kind, margin, liquidity, window
// and its markets.
function poolBlock(form, onChange, n) {
  const kind = uid('kind');
  const name = input({ maxlength: '200', required: true, 'data-field': 'pool-name' });
  const nameRu = input({ maxlength: '200', lang: 'ru', 'data-field': 'pool-name-ru' });
  const rules = h('textarea', { rows: '3', maxlength: '10000', 'data-field': 'pool-rules' });
  const rulesRu = h('textarea', { rows: '3', maxlength: '10000', lang: 'ru', 'data-field': 'pool-rules-ru' });
  const binary = h('input', { type: 'radio', name: kind, value: 'binary', checked: true, id: uid('binary') });
  const exclusive = h('input', { type: 'radio', name: kind, value: 'exclusive', id: uid('exclusive') });
  const margin = input({ value: '2', inputmode: 'decimal', size: '5', 'data-field': 'pool-margin' });
  const b = input({ value: '1000', inputmode: 'decimal', required: true, size: '10', 'data-field': 'pool-b' });
  const liveAt = h('input', { type: 'datetime-local', 'data-field': 'pool-live-at' });
  const finishAt = h('input', { type: 'datetime-local', 'data-field': 'pool-finish-at' });
  const list = h('ol', { class: 'plain-list new-markets' });
  const subsidy = h('p', { class: 'meta', 'data-pool-subsidy': '' });
  const legend = h('legend');
  const addMarket = h('button', { type: 'button', class: 'btn btn-small' });
  const removePool = h('button', { type: 'button', class: 'btn btn-small', onClick: () => form.removePool(pool) });
  const markets = [];
  const pool = {
    markets,
    node: h('fieldset', { class: 'card new-pool' }, legend,
      field(t('new.pool_name_en'), name, t('new.pool_name_hint')),
      field(t('new.name_ru'), nameRu),
      field(t('new.rules_en'), rules, t('new.rules_hint')),
      field(t('new.rules_ru'), rulesRu),
      h('fieldset', { class: 'new-kind' }, h('legend', null, t('new.kind')),
        h('div', { class: 'field field-check' }, binary, h('label', { for: binary.id }, t('new.kind_binary'))),
        h('div', { class: 'field field-check' }, exclusive, h('label', { for: exclusive.id }, t('new.kind_exclusive'))),
        h('p', { class: 'hint' }, t('new.kind_hint'))),
      field(t('new.margin'), margin, t('new.margin_hint')),
      field(t('new.b'), b, t('new.b_hint')),
      field(t('new.live_at'), liveAt, t('new.window_hint')),
      field(t('new.finish_at'), finishAt),
      h('h2', { class: 'new-markets-title' }, t('new.markets')), list,
      h('div', { class: 'actions' }, addMarket, removePool),
      subsidy),
    number: (k) => {
      legend.textContent = t('new.pool_n', { n: k });
      addMarket.textContent = t('new.add_market', { n: k });
      removePool.textContent = t('new.remove_pool', { n: k });
      markets.forEach((m, i) => m.number(i + 1));
    },
    addMarket: (init) => {
      const m = marketRow(pool, onChange, init);
      markets.push(m);
      list.append(m.node);
      pool.number(n);
      onChange();
      return m;
    },
    removeMarket: (m) => {
      if (markets.length <= 1) return;
      markets.splice(markets.indexOf(m), 1);
      m.node.remove();
      pool.number(n);
      markets[0].focus();
      onChange();
    },
    setNumber: (k) => { n = k; pool.number(k); },
    isExclusive: () => exclusive.checked,
    // otherChosen keeps one Other per pool: the others are unchecked.
    otherChosen: (chosen) => markets.forEach((x) => { if (x !== chosen) x.setOther(false); }),
    read: () => {
      const body = {
        name: name.value, name_ru: nameRu.value, rules: rules.value, rules_ru: rulesRu.value,
        margin: fraction(margin.value), lmsr_b_kopecks: kopecks(b.value), exclusive: exclusive.checked,
        markets: markets.map((m) => m.read()),
      };
      const live = iso(liveAt.value);
      const finish = iso(finishAt.value);
      if (live) body.live_at = live;
      if (finish) body.finish_at = finish;
      return body;
    },
    setSubsidy: (p) => {
      subsidy.textContent = p ? t('new.pool_subsidy', { v: money(p.subsidy_kopecks) }) : '';
      markets.forEach((m, i) => m.setSubsidy(p && p.markets[i] ? p.markets[i].subsidy_kopecks : null));
    },
    focus: () => name.focus(),
  };
  addMarket.addEventListener('click', () => {
    // A new market of an exclusive pool starts at what the others leave.
    const left = exclusive.checked ? Math.max(1, Math.round(100 - markets.reduce((s, m) => s + (m.read().probability || 0) * 100, 0))) : 50;
    pool.addMarket({ percent: String(left) }).focus();
  });
  for (const el of [binary, exclusive]) el.addEventListener('change', () => markets.forEach((m) => m.setExclusive(exclusive.checked)));
  for (const el of [name, nameRu, rules, rulesRu, margin, b, liveAt, finishAt, binary, exclusive]) {
    el.addEventListener('input', onChange);
    el.addEventListener('change', onChange);
  }
  pool.addMarket();
  return pool;
}

export async function render(main, ctx) {
  main.append(pageHeading(t('new.title')));
  await ready();
  if (!ctx.isCurrent()) return;
  const me = getMe();
  if (!me) {
    main.append(h('p', null, t('new.login'), ' ', h('a', { href: '/login' }, t('nav.login'))));
    return;
  }
  const creates = Boolean(me.may_create_events);
  if (!creates && !me.may_propose_events) {
    main.append(h('p', null, t('new.not_allowed')));
    return;
  }
  const ante = me.proposal_ante_kopecks || 0;
  main.append(h('p', { class: 'muted' }, creates ? t('new.intro_creator') : t('new.intro_proposer', { ante: money(ante) })));

  let tags = [];
  try {
    tags = (await api('GET', '/tags', null, { signal: ctx.signal })).tags || [];
  } catch {
    tags = [];
  }
  if (!ctx.isCurrent()) return;

  const alert = inlineAlert();
  const cost = statusBox();
  cost.setAttribute('data-cost', '');
  const name = input({ maxlength: '200', required: true, 'data-field': 'event-name' });
  const nameRu = input({ maxlength: '200', lang: 'ru', 'data-field': 'event-name-ru' });
  const tagBoxes = tags.map((tg) => {
    const box = h('input', { type: 'checkbox', value: tg.slug, id: uid('tag') });
    box.addEventListener('change', () => schedule());
    return { box, node: h('div', { class: 'field field-check' }, box, h('label', { for: box.id }, loc(tg, 'name'))) };
  });
  const poolsNode = h('div', { class: 'new-pools' });
  const pools = [];
  const previewNode = h('section', { class: 'card new-preview', 'aria-labelledby': 'new-preview-title', hidden: true });
  const result = h('div', { class: 'new-result' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, creates ? t('new.create') : t('new.propose'));
  const previewBtn = h('button', { type: 'button', class: 'btn' }, t('new.preview'));

  const body = () => {
    const b = { name: name.value, name_ru: nameRu.value, pools: pools.map((p) => p.read()) };
    const chosen = tagBoxes.filter((x) => x.box.checked).map((x) => x.box.value);
    if (chosen.length) b.tags = chosen;
    return b;
  };

  // The subsidy, as the server counts it: the preview answers it for
  // the body as it stands, or the creation's own refusal.
  let timer = 0;
  let asked = 0;
  let last = null;
  async function check() {
    const my = ++asked;
    let p = null;
    let err = null;
    try {
      p = await api('POST', '/events/preview', body(), { signal: ctx.signal });
    } catch (e) {
      if (e && e.name === 'AbortError') return;
      err = e;
    }
    if (my !== asked || !ctx.isCurrent()) return;
    last = p;
    pools.forEach((pl, i) => pl.setSubsidy(p ? p.pools[i] : null));
    if (p) {
      clear(cost, h('strong', null, t('new.subsidy', { v: money(p.subsidy_kopecks) })),
        p.status === 'proposed' ? h('span', null, ' ', t('new.ante', { v: money(p.ante_kopecks) })) : null);
    } else {
      clear(cost, t('new.not_yet', { why: err.detail || err.message }));
    }
  }
  function schedule() {
    window.clearTimeout(timer);
    timer = window.setTimeout(check, DEBOUNCE_MS);
  }
  ctx.onCleanup(() => window.clearTimeout(timer));

  const form = {
    removePool: (pl) => {
      if (pools.length <= 1) return;
      pools.splice(pools.indexOf(pl), 1);
      pl.node.remove();
      pools.forEach((x, i) => x.setNumber(i + 1));
      pools[0].focus();
      schedule();
    },
  };
  const addPool = () => {
    const pl = poolBlock(form, schedule, pools.length + 1);
    pools.push(pl);
    poolsNode.append(pl.node);
    return pl;
  };
  addPool();
  const addPoolBtn = h('button', { type: 'button', class: 'btn', onClick: () => { addPool().focus(); schedule(); } }, t('new.add_pool'));
  name.addEventListener('input', schedule);
  nameRu.addEventListener('input', schedule);

  previewBtn.addEventListener('click', async () => {
    await check();
    const b = body();
    previewNode.hidden = false;
    clear(previewNode,
      h('h2', { id: 'new-preview-title', tabindex: '-1' }, t('new.preview_title')),
      h('h3', null, b.name || '—', b.name_ru ? h('span', { class: 'muted', lang: 'ru' }, ' · ', b.name_ru) : null),
      b.tags ? h('p', { class: 'meta' }, t('new.preview_tags', { tags: b.tags.join(', ') })) : null,
      b.pools.map((p, i) => h('div', null,
        h('h4', null, p.name || '—', ' · ', p.exclusive ? t('new.kind_exclusive') : t('new.kind_binary')),
        p.rules ? h('p', { class: 'rules' }, p.rules) : null,
        h('ul', { class: 'plain-list' }, p.markets.map((m, j) => h('li', null, m.name || '—', ': ',
          h('strong', null, last && last.pools[i] ? pct(last.pools[i].markets[j].yes_probability) : pct(m.probability)),
          m.other ? h('span', null, ' ', h('span', { class: 'tag tag-muted', 'data-other': '' }, t('new.other_tag'))) : null))))),
      h('p', null, last ? t('new.subsidy', { v: money(last.subsidy_kopecks) }) : cost.textContent));
    previewNode.querySelector('h2').focus();
  });

  const formNode = h('form', { class: 'new-event', novalidate: true },
    alert,
    field(t('new.event_name_en'), name, t('new.event_name_hint')),
    field(t('new.name_ru'), nameRu),
    tagBoxes.length ? h('fieldset', { class: 'new-tags' }, h('legend', null, t('new.tags')), tagBoxes.map((x) => x.node)) : null,
    poolsNode,
    h('div', { class: 'actions' }, addPoolBtn),
    cost,
    h('div', { class: 'actions' }, previewBtn, submit));
  formNode.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(alert);
    submit.disabled = true;
    let ev;
    try {
      ev = await api('POST', '/events', body());
    } catch (err) {
      submit.disabled = false;
      clear(alert, err.message);
      return;
    }
    loadMe();
    created(ev);
  });

  // created replaces the form with what happened: a creator publishes
  // the event; a proposal waits for the operator.
  function created(ev) {
    const link = h('a', { href: `/events/${ev.id}` }, t('new.open', { name: loc(ev, 'name') }));
    if (ev.status === 'proposed') {
      clear(result, h('h2', { tabindex: '-1' }, t('new.proposed_title')), h('p', null, t('new.proposed', { name: loc(ev, 'name'), ante: money(ev.proposal ? ev.proposal.ante_kopecks : ante) })), h('p', null, link));
    } else {
      const status = statusBox();
      const publish = h('button', { type: 'button', class: 'btn btn-primary' }, t('new.publish'));
      publish.addEventListener('click', async () => {
        publish.disabled = true;
        try {
          await api('POST', `/events/${ev.id}/active`, { is_active: true });
          clear(status, t('new.published'));
          announce(t('new.published'));
        } catch (err) {
          publish.disabled = false;
          clear(status, err.message);
        }
      });
      clear(result, h('h2', { tabindex: '-1' }, t('new.created_title')), h('p', null, t('new.created', { name: loc(ev, 'name') })),
        h('div', { class: 'actions' }, publish), status, h('p', null, link));
    }
    formNode.remove();
    previewNode.remove();
    result.querySelector('h2').focus();
  }

  main.append(formNode, previewNode, result);
  schedule();
}
