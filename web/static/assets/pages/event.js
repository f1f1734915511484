// An event: its pools and markets with live prices (stream topic
// event:{id}), buy and sell with a quote first, a price chart from the
// candles, the live trades, the comments, and for the event's creator
// the resolution of its markets.
import { h, clear, field } from '../dom.js';
import { t, loc, money, pct, num, dateTime, time, side as sideName } from '../i18n.js';
import { api } from '../api.js';
import { getMe, ready, onChange, loadMe } from '../state.js';
import { pageHeading, loading, showError, announce, statusBox, empty, inlineAlert } from '../ui.js';
import { tradeForm, sideLabel } from './trade.js';
import { candleChart } from './chart.js';
import { comments } from './comments.js';
import { amendmentsSection } from './amendments.js';
import { followButton } from './follow.js';

function statusTag(m) {
  if (m.resolution) return h('span', { class: 'tag tag-muted' }, t('market.proposed', { side: sideName(m.resolution.proposed) }));
  if (m.resolved) {
    if (m.winning_outcome === 'VOID') return h('span', { class: 'tag tag-muted' }, t('market.voided'));
    const yes = m.winning_outcome !== 'NO';
    return h('span', { class: `tag ${yes ? 'tag-yes' : 'tag-no'}` }, t('market.resolved_as', { side: sideName(m.winning_outcome) }));
  }
  if (m.paused) return h('span', { class: 'tag tag-muted' }, t('market.paused'));
  if (!m.trading_open) return h('span', { class: 'tag tag-muted' }, t('market.closed'));
  return h('span', { class: 'tag tag-yes' }, t('market.open'));
}

export async function render(main, ctx) {
  const eventId = ctx.params[0];
  const heading = pageHeading(t('event.title'));
  const state = h('div', null, loading());
  main.append(heading, state);
  let ev;
  try {
    [ev] = await Promise.all([api('GET', `/events/${eventId}`, null, { signal: ctx.signal }), ready()]);
  } catch (e) {
    clear(state);
    showError(e);
    return;
  }
  if (!ctx.isCurrent()) return;
  clear(state);
  heading.textContent = loc(ev, 'name');
  document.title = loc(ev, 'name') + ' · predictkit';
  state.append(followButton(ev.id, ctx)); // pages/follow.js

  const markets = new Map(); // id → {m, pool, view}
  // The confirmation of an answer this page added, kept across repaints:
  // the stream's answer_added repaints the pool too, and may come after
  // the form wrote its confirmation into the card it replaced.
  const added = new Map(); // market id → text
  const poolsBox = h('div');
  const tradesList = h('ul', { class: 'trades', 'aria-live': 'polite', 'aria-relevant': 'additions', 'aria-labelledby': 'trades-title', tabindex: '0' });
  const chartBox = h('div');
  let openForm = null; // the market id whose trade form is open

  if (!ev.is_active) main.append(h('p', { class: 'notice' }, t('event.hidden')));
  const amendBox = h('div');
  main.append(
    h('p', { class: 'meta' }, t('event.created', { t: dateTime(ev.created_at) })),
    amendBox,
    h('div', { class: 'two-col' },
      h('div', null,
        poolsBox,
        h('section', { 'aria-labelledby': 'chart-title' }, h('h2', { id: 'chart-title' }, t('event.chart')), chartBox)),
      h('section', { 'aria-labelledby': 'trades-title' }, h('h2', { id: 'trades-title' }, t('event.trades')), tradesList)));

  const isCreator = () => {
    const me = getMe();
    return Boolean(me && me.id === ev.creator_id);
  };
  const positionsOf = (marketId) => {
    const me = getMe();
    return me && me.positions ? me.positions.filter((p) => p.market_id === marketId && p.amount > 0) : [];
  };

  // ---- markets ----

  function marketView(m, pool) {
    const nameId = `market-${m.id}-name`;
    const price = h('span', { class: 'price price-yes' });
    const noPrice = h('span', { class: 'muted' });
    const bar = h('span');
    const priceLine = h('p', { class: 'market-prices', 'aria-live': 'polite', 'aria-atomic': 'true' }, price, ' ', noPrice);
    const hold = h('div');
    const actions = h('div', { class: 'actions' });
    const slot = h('div');
    const result = statusBox();
    const tools = h('div');
    const proposal = h('div');
    const payout = h('div');
    const article = h('article', { class: 'market', 'aria-labelledby': nameId },
      h('div', { class: 'market-head' },
        h('h3', { class: 'market-name', id: nameId, tabindex: '-1' }, loc(m, 'name')),
        m.other ? h('span', { class: 'tag tag-muted', 'data-other': '' }, t('market.other_tag')) : null,
        h('span', { 'data-status': '' })),
      priceLine,
      h('div', { class: 'prob-bar', 'aria-hidden': 'true' }, bar),
      h('p', { class: 'meta', 'data-volume': '' }),
      hold, payout, proposal, actions, slot, result, tools);
    const view = { article, price, noPrice, bar, hold, payout, proposal, actions, slot, result, tools };
    markets.set(m.id, { m, pool, view });
    if (added.has(m.id)) result.textContent = added.get(m.id);
    paintMarket(m.id);
    return article;
  }

  // paintPrice updates the numbers only: a live price must not rebuild
  // the buttons under the user's keyboard focus.
  function paintPrice(id) {
    const { m, pool, view } = markets.get(id);
    if (m.resolved) {
      // A resolved market has no live price: it pays 100 or 0.
      paintFinal(m, pool, view);
      return;
    }
    if (pool.exclusive) {
      // An answer of one question: its chance to be the one that wins.
      view.price.textContent = t('pool.chance', { p: pct(m.yes_probability) });
      view.noPrice.textContent = '';
    } else {
      view.price.textContent = `${t('side.yes')} ${pct(m.yes_probability)}`;
      view.noPrice.textContent = `${t('side.no')} ${pct(1 - m.yes_probability)}`;
    }
    view.bar.style.width = `${Math.round(m.yes_probability * 1000) / 10}%`;
  }

  // paintFinal shows a resolved market's final prices: the winning side
  // at 100%, the other at 0%; a voided market says so instead.
  function paintFinal(m, pool, view) {
    view.article.classList.add('market-resolved');
    if (m.winning_outcome === 'VOID') {
      view.price.textContent = t('market.void_final');
      view.noPrice.textContent = '';
      view.bar.style.width = '0%';
      return;
    }
    const yes = m.winning_outcome === 'YES' ? 1 : 0;
    if (pool.exclusive) {
      view.price.textContent = t('pool.chance', { p: pct(yes) });
      view.noPrice.textContent = '';
    } else {
      view.price.textContent = `${t('side.yes')} ${pct(yes)}`;
      view.noPrice.textContent = `${t('side.no')} ${pct(1 - yes)}`;
    }
    view.bar.style.width = `${yes * 100}%`;
  }

  // The signed-in user's closed positions (payouts and refunds of
  // resolved markets), read once when the event has a resolved market.
  let closed = null;
  async function loadClosed() {
    if (!getMe() || !allMarkets().some((m) => m.resolved)) return;
    try {
      const r = await api('GET', '/users/me/positions/closed?limit=100', null, { signal: ctx.signal });
      closed = r.positions || [];
    } catch {
      closed = null;
      return;
    }
    for (const key of markets.keys()) paintPayout(key);
  }

  // paintPayout tells the user what a resolved market paid them: the
  // payout of a settled market, the refund of a voided one.
  function paintPayout(id) {
    const { m, view } = markets.get(id);
    clear(view.payout);
    if (!m.resolved) return;
    const mine = (closed || []).filter((p) => p.market_id === id && p.won_side !== -1);
    const back = mine.reduce((sum, p) => sum + p.returned_kopecks, 0);
    if (m.winning_outcome === 'VOID') {
      view.payout.append(h('p', { class: 'notice', 'data-payout': '' }, mine.length ? t('market.void_refunded', { v: money(back) }) : t('market.void_note')));
      return;
    }
    if (mine.length) view.payout.append(h('p', { class: 'notice', 'data-payout': '' }, t('market.your_payout', { v: money(back) })));
  }

  function paintMarket(id) {
    const entry = markets.get(id);
    if (!entry) return;
    const { m, pool, view } = entry;
    paintPrice(id);
    clear(view.article.querySelector('[data-status]'), statusTag(m));
    // The sides' own names ("Wins" / "Does not win"), when the creator gave some.
    const named = (m.yes_name && m.yes_name !== 'Yes') || (m.no_name && m.no_name !== 'No');
    const names = named ? ` · ${t('side.yes')}: ${sideLabel(m.yes_name)} · ${t('side.no')}: ${sideLabel(m.no_name)}` : '';
    view.article.querySelector('[data-volume]').textContent = t('market.volume', { v: money(m.volume) }) + names
      + (m.resolved && m.resolved_by ? ` · ${t('market.resolved_by', { who: t(m.resolved_by === 'operator' ? 'market.by_operator' : 'market.by_creator') })}` : '');
    paintHoldings(id);
    paintPayout(id);
    paintProposal(id, pool);
    paintActions(id);
    paintTools(id, pool);
  }

  // ---- the challenge window: a proposed outcome, and holders' disputes ----

  function paintProposal(id, pool) {
    const { m, view } = markets.get(id);
    clear(view.proposal);
    const r = m.resolution;
    if (!r) return;
    const s = sideName(r.proposed);
    view.proposal.append(h('p', { class: 'notice' }, r.disputed ? t('proposal.disputed', { side: s }) : t('proposal.pending', { side: s, t: dateTime(r.challenge_until) })));
    // Holders of the market (of any answer of an exclusive question) may
    // dispute before the deadline; the server has the last word.
    const ids = pool.exclusive ? (pool.markets || []).map((x) => x.id) : [id];
    if (r.disputed || Date.parse(r.challenge_until) <= Date.now() || !ids.some((x) => positionsOf(x).length)) return;
    const box = h('div');
    const open = h('button', { type: 'button', class: 'btn', onClick: () => {
      const reasonId = `dispute-${id}-reason`;
      const reason = h('textarea', { id: reasonId, rows: '3', required: true, maxlength: '2000' });
      clear(box, h('form', { class: 'dispute-form', onSubmit: async (e) => {
        e.preventDefault();
        if (!reason.value.trim()) { reason.focus(); return; }
        try {
          await api('POST', `/markets/${id}/disputes`, { reason: reason.value });
        } catch (err) {
          showError(err);
          return;
        }
        announce(t('proposal.disputed_done'));
        await loadMe();
        await reloadEvent();
        const entry = markets.get(id);
        if (entry) {
          entry.view.result.textContent = t('proposal.disputed_done');
          entry.view.article.querySelector('h3').focus();
        }
      } },
      h('label', { for: reasonId }, t('proposal.reason')), reason,
      h('p', { class: 'meta' }, t('proposal.bond_note')),
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'btn btn-primary' }, t('proposal.send')),
        h('button', { type: 'button', class: 'btn', onClick: () => { clear(box); open.focus(); } }, t('action.cancel')))));
      reason.focus();
    } }, t('proposal.dispute'));
    view.proposal.append(h('div', { class: 'actions' }, open), box);
  }

  function paintHoldings(id) {
    const { view } = markets.get(id);
    clear(view.hold, positionsOf(id).map((p) => h('p', { class: 'meta' },
      t('market.you_hold', { shares: num(p.amount), side: sideName(p.token_type), value: money(p.value_kopecks) }))));
  }

  function paintActions(id) {
    const { m, view } = markets.get(id);
    clear(view.actions);
    if (m.resolved || !m.trading_open) {
      if (openForm === id) closeForm();
      return;
    }
    if (!getMe()) {
      view.actions.append(h('a', { class: 'btn', href: `/login?next=${encodeURIComponent(location.pathname)}` }, t('market.login_to_trade')));
      return;
    }
    view.actions.append(
      h('button', { type: 'button', class: 'btn btn-yes', onClick: () => openTrade(id, 'buy', 'YES') }, t('market.buy_yes')),
      h('button', { type: 'button', class: 'btn btn-no', onClick: () => openTrade(id, 'buy', 'NO') }, t('market.buy_no')));
    const held = positionsOf(id);
    if (held.length) {
      view.actions.append(h('button', { type: 'button', class: 'btn', onClick: () => openTrade(id, 'sell', held[0].token_type) }, t('market.sell')));
    }
  }

  function closeForm() {
    if (openForm === null) return;
    const entry = markets.get(openForm);
    openForm = null;
    if (entry) clear(entry.view.slot);
  }

  function openTrade(id, action, sideWanted) {
    closeForm();
    const { m, view } = markets.get(id);
    clear(view.result);
    added.delete(id);
    const form = tradeForm({
      market: m,
      action,
      side: sideWanted,
      positions: positionsOf(id),
      me: getMe(),
      onCancel: () => {
        closeForm();
        const first = view.actions.querySelector('button, a');
        if (first) first.focus();
      },
      onDone: async (r, text) => {
        closeForm();
        view.result.textContent = text;
        if (r.market) {
          const entry = markets.get(id);
          entry.m = { ...entry.m, ...r.market };
        }
        await loadMe();
        for (const key of markets.keys()) paintMarket(key);
        const first = view.actions.querySelector('button, a');
        if (first) first.focus();
      },
    });
    openForm = id;
    view.slot.append(form);
    form.focusFirst();
  }

  // ---- creator tools ----

  function paintTools(id, pool) {
    const { m, view } = markets.get(id);
    clear(view.tools);
    if (!isCreator() || m.resolved || m.resolution) return;
    const confirmBox = h('div');
    const ask = (won) => {
      let key = 'resolve.confirm_' + won.toLowerCase();
      if (pool.exclusive && won !== 'NO') key += '_exclusive';
      clear(confirmBox,
        h('p', { class: 'notice' }, t(key, { market: loc(m, 'name') })),
        h('div', { class: 'actions' },
          h('button', { type: 'button', class: 'btn btn-primary', onClick: () => resolve(id, pool, won) }, t('action.confirm')),
          h('button', { type: 'button', class: 'btn', onClick: () => clear(confirmBox) }, t('action.cancel'))));
      confirmBox.querySelector('button').focus();
    };
    view.tools.append(h('div', { class: 'creator-tools', role: 'group', 'aria-label': t('resolve.title') + ': ' + loc(m, 'name') },
      h('h4', null, t('resolve.title')),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'btn', onClick: () => ask('YES') }, t('resolve.yes')),
        pool.exclusive ? null : h('button', { type: 'button', class: 'btn', onClick: () => ask('NO') }, t('resolve.no')),
        h('button', { type: 'button', class: 'btn', onClick: () => ask('VOID') }, t('resolve.void'))),
      confirmBox));
  }

  async function resolve(id, pool, won) {
    try {
      await api('POST', `/events/${ev.id}/pools/${pool.id}/markets/${id}/close`, { won_side: won });
    } catch (e) {
      showError(e);
      return;
    }
    await reloadEvent();
    const entry = markets.get(id);
    // With the challenge window the close only proposes the outcome.
    const done = entry && entry.m.resolution ? t('proposal.made') : t('resolve.done');
    announce(done);
    if (entry) {
      entry.view.result.textContent = done;
      entry.view.article.querySelector('h3').focus();
    }
  }

  // ---- answers added later ----

  // answerForm is the creator's "Add answer" form under an exclusive pool
  // with an Other answer: the new answer takes its probability out of
  // Other's (POST /pools/{id}/answers).
  function answerForm(pool) {
    const other = (pool.markets || []).find((m) => m.other);
    if (!isCreator() || !pool.exclusive || !other || (pool.markets || []).some((m) => m.resolved)) return null;
    const titleId = `answer-${pool.id}-title`;
    const name = h('input', { type: 'text', autocomplete: 'off', required: true, maxlength: 200 });
    const nameRu = h('input', { type: 'text', autocomplete: 'off', maxlength: 200, lang: 'ru' });
    const prob = h('input', { type: 'text', inputmode: 'decimal', autocomplete: 'off', required: true });
    const alert = inlineAlert();
    const done = statusBox();
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('answer.add'));
    const form = h('form', { class: 'answer-form creator-tools', 'aria-labelledby': titleId, novalidate: true },
      h('h3', { id: titleId }, t('answer.title')),
      h('p', { class: 'meta' }, t('answer.explain', { other: loc(other, 'name'), p: pct(other.yes_probability) })),
      alert,
      field(t('answer.name'), name),
      field(t('answer.name_ru'), nameRu),
      field(t('answer.probability'), prob, t('answer.probability_hint', { p: pct(other.yes_probability) })),
      h('div', { class: 'actions' }, submit),
      done);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      clear(alert);
      const percent = Number(prob.value.trim().replace(',', '.').replace(/%$/, ''));
      if (!name.value.trim()) {
        alert.textContent = t('answer.name_required');
        name.focus();
        return;
      }
      if (!prob.value.trim() || !Number.isFinite(percent) || percent <= 0 || percent >= 100) {
        alert.textContent = t('answer.probability_invalid');
        prob.focus();
        return;
      }
      submit.disabled = true;
      let m;
      try {
        m = await api('POST', `/pools/${pool.id}/answers`, { name: name.value.trim(), name_ru: nameRu.value.trim(), probability: percent / 100 });
      } catch (err) {
        submit.disabled = false;
        alert.textContent = err && err.message ? err.message : String(err);
        prob.focus();
        return;
      }
      const text = t('answer.added', { name: loc(m, 'name'), p: pct(m.yes_probability) });
      added.set(m.id, text);
      announce(text);
      await loadMe();
      await reloadEvent();
      const entry = markets.get(m.id);
      if (entry) {
        entry.view.result.textContent = text;
        entry.view.article.querySelector('h3').focus();
      }
    });
    return form;
  }

  // ---- pools ----

  function paintPools() {
    markets.clear();
    openForm = null;
    clear(poolsBox, (ev.pools || []).map((pool) => {
      const poolTitle = `pool-${pool.id}-title`;
      const now = Date.now();
      const live = Date.parse(pool.live_at);
      const windowText = live > now ? t('pool.trading_from', { t: dateTime(pool.live_at) }) : t('pool.trading_until', { t: dateTime(pool.finish_at) });
      const rules = loc(pool, 'rules');
      return h('section', { class: 'pool card', 'aria-labelledby': poolTitle },
        h('div', { class: 'pool-head' },
          h('h2', { id: poolTitle }, loc(pool, 'name')),
          h('p', { class: 'meta' }, windowText, ' · ', t('pool.fee', { p: pct(pool.margin) }))),
        pool.exclusive ? h('p', { class: 'notice' }, t('pool.exclusive')) : null,
        rules ? h('details', null, h('summary', null, t('pool.rules')), h('p', { class: 'rules' }, rules)) : null,
        h(pool.exclusive ? 'ol' : 'div', pool.exclusive ? { class: 'markets plain-list answers', 'aria-label': t('pool.answers') } : { class: 'markets plain-list' },
          (pool.markets || []).map((m) => (pool.exclusive ? h('li', null, marketView(m, pool)) : marketView(m, pool)))),
        answerForm(pool));
    }));
  }

  async function reloadEvent() {
    try {
      ev = await api('GET', `/events/${eventId}`, null, { signal: ctx.signal });
    } catch (e) {
      showError(e);
      return;
    }
    heading.textContent = loc(ev, 'name');
    paintPools();
    paintAmendments();
    chart.setMarkets(allMarkets());
    loadClosed();
  }

  // ---- amendments (pages/amendments.js) ----

  function paintAmendments() {
    clear(amendBox, amendmentsSection(ev, {
      isCreator: isCreator(),
      onChanged: async (focusId) => {
        await reloadEvent();
        const el = document.getElementById(focusId);
        if (el) el.focus();
      },
    }));
  }

  const allMarkets = () => (ev.pools || []).flatMap((p) => p.markets || []);

  paintPools();
  paintAmendments();
  loadClosed();

  // ---- chart ----

  const chart = candleChart(chartBox, allMarkets(), ctx.signal, ev.created_at);

  // ---- trades ----

  const marketName = (id) => {
    const e = markets.get(id);
    return e ? loc(e.m, 'name') : t('profile.market_n', { id });
  };
  function tradeItem(at, action, sideValue, market, amount) {
    return h('li', null, h('span', { class: 'muted' }, time(at)), ' ',
      t('event.trade_line', { action: t(action === 'sell' ? 'profile.action.sell' : 'profile.action.buy'), side: sideName(sideValue), market, amount: money(amount) }));
  }
  const tradesEmpty = empty(t('event.trades_empty'));
  async function loadTrades() {
    try {
      const list = await api('GET', '/market/trades/latest', null, { signal: ctx.signal });
      const names = new Set([ev.name]);
      const mine = (list || []).filter((x) => names.has(x.event));
      // The feed of trades names markets in English: show the event's
      // own (Russian) name of each.
      const shown = new Map(allMarkets().map((m) => [m.name, loc(m, 'name')]));
      clear(tradesList, mine.map((x) => tradeItem(x.created_at, x.action, x.token, shown.get(x.market) || x.market, x.amount)));
      if (!mine.length) tradesList.append(tradesEmpty);
    } catch (e) {
      showError(e);
    }
  }
  loadTrades();

  // ---- live ----

  if (typeof EventSource !== 'undefined') {
    const es = new EventSource(`/api/v1/stream?topics=event:${ev.id}`);
    ctx.onCleanup(() => es.close());
    const on = (type, fn) => es.addEventListener(type, (e) => {
      let data;
      try {
        data = JSON.parse(e.data);
      } catch {
        return;
      }
      fn(data);
    });
    on('price', (p) => {
      const entry = markets.get(p.market_id);
      if (!entry) return;
      entry.m = { ...entry.m, yes_probability: p.yes_probability, q_yes: p.q_yes, q_no: p.q_no };
      paintPrice(p.market_id);
      chart.priceMoved(p.market_id);
    });
    on('trade', (tr) => {
      if (tradesEmpty.parentNode) tradesEmpty.remove();
      tradesList.prepend(tradeItem(tr.created_at, tr.action, tr.side, marketName(tr.market_id), tr.amount_kopecks));
      while (tradesList.children.length > 50) tradesList.lastChild.remove();
    });
    on('market_resolved', () => {
      reloadEvent();
      loadMe();
    });
    // An answer added to a pool: a new market, and holdings rewritten.
    // The holdings are read first, so that the repainted pools show them.
    on('answer_added', async () => {
      await loadMe();
      await reloadEvent();
    });
    on('reset', () => {
      reloadEvent();
      loadTrades();
      commentsView.reload();
    });
    on('comment', (c) => commentsView.live(c));
  }

  // ---- comments ----

  const commentsBox = h('section', { 'aria-labelledby': 'comments-title' });
  main.append(commentsBox);
  const commentsView = comments(commentsBox, ev, ctx.signal);

  // Signing in or out elsewhere (another tab's logout answers 401 here)
  // changes the buttons.
  let lastMe = getMe() ? getMe().id : null;
  ctx.onCleanup(onChange(({ me }) => {
    const id = me ? me.id : null;
    if (id !== lastMe) {
      lastMe = id;
      closed = null;
      paintPools();
      paintAmendments();
      loadClosed();
      commentsView.reload();
    }
  }));
}
