// The Deposit page: the signed-in user's address on each watched chain
// (GET /api/v1/users/me/deposit-addresses) as text with a copy button and
// a QR code, the token, the rate and the confirmations a deposit waits
// for; and the user's deposits (GET /api/v1/users/me/deposits), kept up
// to date by the me stream's deposit events.
import { h, clear } from '../dom.js';
import { t, money, num, dateTime } from '../i18n.js';
import { api, query } from '../api.js';
import { getMe, ready } from '../state.js';
import { pageHeading, loading, empty, showError, announce } from '../ui.js';
import { onMeEvent } from '../app.js';
import { chainName } from '../chains.js';

const PAGE = 20;
// REFRESH_MS is how often the page asks again for the newest deposits
// while one of them is pending: the me stream tells when a deposit is
// seen and when it is credited, not each block's confirmation.
const REFRESH_MS = 4000;

// copyButton copies text, or selects it for the user to copy when the
// clipboard cannot be written (an insecure origin, a refusal).
function copyButton(text, target) {
  return h('button', {
    type: 'button', class: 'btn btn-small', 'data-copy': text,
    onClick: async () => {
      try {
        await navigator.clipboard.writeText(text);
        announce(t('deposit.copied'));
      } catch {
        const range = document.createRange();
        range.selectNodeContents(target);
        const sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
      }
    },
  }, t('deposit.copy'));
}

function addressCard(a) {
  const name = chainName(a.chain);
  const titleId = `dep-${a.chain}`;
  const code = h('code', { class: 'deposit-address', id: `dep-addr-${a.chain}` }, a.address);
  return h('section', { class: 'card deposit-chain', 'aria-labelledby': titleId, 'data-chain': a.chain },
    h('h2', { id: titleId }, name),
    h('div', { class: 'deposit-grid' },
      h('img', { class: 'deposit-qr', src: a.qr_svg, alt: t('deposit.qr', { chain: name }), width: 176, height: 176 }),
      h('dl', { class: 'kv' },
        h('dt', null, t('deposit.address')), h('dd', null, code, ' ', copyButton(a.address, code)),
        h('dt', null, t('deposit.token')), h('dd', null, h('code', null, a.token)),
        h('dt', null, t('deposit.rate')), h('dd', { 'data-rate': '' }, t('deposit.rate_value', { rate: money(a.kopecks_per_token) })),
        h('dt', null, t('deposit.confirmations')), h('dd', null, num(a.confirmations)))),
    h('p', { class: 'notice' }, t('deposit.warning', { chain: name })));
}

function depositItem(d) {
  const state = d.status === 'credited'
    ? t('deposit.credited', { amount: money(d.amount_kopecks) }) + (d.credited_at ? ' · ' + dateTime(d.credited_at) : '')
    : t('deposit.pending', { k: num(Math.min(d.confirmations, d.confirmations_required)), n: num(d.confirmations_required) });
  return h('li', { class: 'card', 'data-deposit': String(d.id), 'data-status': d.status },
    h('p', { class: 'deposit-amount' }, h('strong', null, t('deposit.amount', { amount: d.token_amount, chain: chainName(d.chain) }))),
    h('p', null, state),
    h('p', { class: 'meta' }, dateTime(d.created_at), ' · ', h('code', null, t('deposit.tx', { tx: d.tx_hash }))));
}

export async function render(main, ctx) {
  main.append(pageHeading(t('deposit.title')));
  await ready();
  if (!ctx.isCurrent()) return;
  if (!getMe()) {
    main.append(h('p', null, h('a', { href: '/login?next=/deposit' }, t('deposit.login'))));
    return;
  }
  const body = h('div', null, loading());
  main.append(body);
  let r;
  try {
    r = await api('GET', '/users/me/deposit-addresses', null, { signal: ctx.signal });
  } catch (e) {
    clear(body);
    showError(e);
    return;
  }
  if (!ctx.isCurrent()) return;
  const addresses = r.addresses || [];
  if (!addresses.length) {
    clear(body, h('p', { class: 'notice', 'data-deposits-off': '' }, t('deposit.off')));
    return;
  }

  // ---- the deposits, newest first, with the live ones merged in ----
  const deposits = new Map(); // id → deposit, in the order shown
  const list = h('ul', { class: 'plain-list deposit-list', 'aria-labelledby': 'dep-history' });
  const history = h('div', null, loading());
  const more = h('div', { class: 'actions' });
  let cursor = null;
  const paint = () => {
    clear(list, [...deposits.values()].map(depositItem));
    clear(history, deposits.size ? list : empty(t('deposit.none')));
    clear(more, cursor ? h('button', { type: 'button', class: 'btn', onClick: load }, t('action.load_more')) : null);
    schedule();
  };
  // put records d as it is now: a deposit already shown keeps its place,
  // one not seen yet goes on top (newest first).
  const put = (d) => {
    const old = deposits.get(d.id);
    if (old && old.status === 'credited' && d.status !== 'credited') return; // an answer older than the stream's news
    if (old) {
      deposits.set(d.id, d);
      return;
    }
    const rest = [...deposits.entries()];
    deposits.clear();
    deposits.set(d.id, d);
    for (const [id, v] of rest) deposits.set(id, v);
  };
  let timer = null;
  const schedule = () => {
    if (timer || ![...deposits.values()].some((d) => d.status === 'pending')) return;
    timer = setTimeout(refresh, REFRESH_MS);
  };
  async function refresh() {
    timer = null;
    if (!ctx.isCurrent()) return;
    let page;
    try {
      page = await api('GET', '/users/me/deposits' + query({ limit: PAGE }), null, { signal: ctx.signal });
    } catch {
      if (ctx.isCurrent()) schedule(); // a blip; the next try may answer
      return;
    }
    if (!ctx.isCurrent()) return;
    for (const d of (page.deposits || []).reverse()) put(d);
    paint();
  }
  ctx.onCleanup(() => clearTimeout(timer));
  async function load() {
    let page;
    try {
      page = await api('GET', '/users/me/deposits' + query({ limit: PAGE, cursor }), null, { signal: ctx.signal });
    } catch (e) {
      showError(e);
      return;
    }
    if (!ctx.isCurrent()) return;
    for (const d of page.deposits || []) {
      if (!deposits.has(d.id)) deposits.set(d.id, d);
    }
    cursor = page.next_cursor || null;
    paint();
  }

  clear(body,
    h('p', { class: 'meta' }, t('deposit.intro')),
    addresses.map(addressCard),
    h('section', { 'aria-labelledby': 'dep-history' },
      h('h2', { id: 'dep-history' }, t('deposit.history')), history, more));

  ctx.onCleanup(onMeEvent((type, d) => {
    if (type !== 'deposit' || !d || d.id === undefined) return;
    put(d);
    paint();
    announce(d.status === 'credited' ? t('deposit.credited_now', { amount: money(d.amount_kopecks) }) : t('deposit.seen', { chain: chainName(d.chain) }));
  }));
  await load();
}
