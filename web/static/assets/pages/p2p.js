// The P2P board (GET /api/v1/p2p/ads) with its filters. The filters live
// in the page's address (?type=sell&fiat_currency=RUB...), so a filtered
// board can be bookmarked and the back button undoes a filter.
import { h, clear, field, select } from '../dom.js';
import { t, money, num, dateTime } from '../i18n.js';
import { api, query } from '../api.js';
import { pageHeading, empty, showError, loading } from '../ui.js';
import { parseKopecks } from './trade.js';
import { navigate } from '../app.js';

const PAGE = 20;
const FILTERS = ['type', 'fiat_currency', 'amount', 'payment_method', 'max_payment_duration', 'author_nickname', 'is_active', 'sort_by'];

// kopecksText(150000) is "1500": the amount filter shown in RUB.
function kopecksText(k) {
  const n = Number(k);
  if (!Number.isFinite(n)) return '';
  return n % 100 === 0 ? String(n / 100) : (n / 100).toFixed(2);
}

function adCard(ad) {
  const titleId = `ad-${ad.id}`;
  const who = ad.user || {};
  return h('li', null,
    h('article', { class: 'card ad', 'aria-labelledby': titleId },
      h('h2', { id: titleId, class: 'event-link' },
        t(ad.type === 'buy' ? 'p2p.type.buy' : 'p2p.type.sell'), ' · ', ad.fiat_currency),
      h('p', null, h('strong', null, t('p2p.rate', { rate: money(ad.exchange_rate), cur: ad.fiat_currency }))),
      h('p', { class: 'meta' }, t('p2p.owner', { name: who.name || t('comments.anonymous'), r: num(ad.user_avg_rating), n: num(who.completed_orders || 0) })),
      h('p', null, t('p2p.limits', { min: money(ad.min_amount), max: money(ad.max_amount) }), ' · ', t('p2p.remaining', { v: money(ad.remaining_amount) })),
      h('p', null, t('p2p.methods', { m: (ad.payment_methods || []).join(', ') }), ' · ', t('p2p.duration_v', { n: num(ad.payment_duration) })),
      ad.instructions ? h('p', { class: 'ad-instructions' }, ad.instructions) : null,
      h('p', { class: 'meta' }, ad.is_platform_ad ? [h('span', { class: 'tag tag-muted' }, t('p2p.platform')), ' '] : null,
        ad.is_active ? null : [h('span', { class: 'tag tag-muted' }, t('p2p.inactive')), ' '],
        h('time', { datetime: ad.created_at }, dateTime(ad.created_at)))));
}

export async function render(main, ctx) {
  main.append(pageHeading(t('p2p.title')), h('p', { class: 'muted' }, t('p2p.intro')));
  const q = ctx.query;
  const v = (k) => q.get(k) || '';

  const type = select([['', t('common.any')], ['sell', t('p2p.type.sell')], ['buy', t('p2p.type.buy')]], v('type'));
  const currency = h('input', { type: 'text', maxlength: '3', autocomplete: 'off', value: v('fiat_currency'), class: 'input-short' });
  const amount = h('input', { type: 'text', inputmode: 'decimal', autocomplete: 'off', value: v('amount') ? kopecksText(v('amount')) : '' });
  const method = h('input', { type: 'text', autocomplete: 'off', value: v('payment_method') });
  const duration = h('input', { type: 'number', min: '1', step: '1', inputmode: 'numeric', value: v('max_payment_duration') });
  const author = h('input', { type: 'text', autocomplete: 'off', value: v('author_nickname') });
  const status = select([['true', t('p2p.status.active')], ['false', t('p2p.status.inactive')]], v('is_active') === 'false' ? 'false' : 'true');
  const sort = select([['', t('p2p.sort.newest')], ['best_price', t('p2p.sort.best_price')], ['rating', t('p2p.sort.rating')], ['orders_count', t('p2p.sort.orders_count')]], v('sort_by'));
  const formAlert = h('div', { class: 'alert', role: 'alert' });

  const form = h('form', { 'aria-labelledby': 'p2p-filters', novalidate: true },
    h('h2', { id: 'p2p-filters' }, t('p2p.filters')),
    formAlert,
    h('div', { class: 'filters' },
      field(t('p2p.type'), type),
      field(t('p2p.currency'), currency, t('p2p.currency_hint')),
      field(t('p2p.amount'), amount),
      field(t('p2p.method'), method),
      field(t('p2p.duration'), duration),
      field(t('p2p.author'), author),
      field(t('p2p.status'), status),
      field(t('p2p.sort'), sort)),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'btn btn-primary' }, t('action.apply_filters')),
      h('a', { class: 'btn', href: '/p2p' }, t('action.reset_filters'))));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    formAlert.textContent = '';
    let kop = '';
    if (amount.value.trim()) {
      const k = parseKopecks(amount.value);
      if (k === null) {
        formAlert.textContent = t('error.amount_invalid');
        amount.focus();
        return;
      }
      kop = k;
    }
    const params = {
      type: type.value,
      fiat_currency: currency.value.trim().toUpperCase(),
      amount: kop,
      payment_method: method.value.trim(),
      max_payment_duration: duration.value.trim(),
      author_nickname: author.value.trim(),
      is_active: status.value === 'false' ? 'false' : '',
      sort_by: sort.value,
    };
    navigate('/p2p' + query(params));
  });

  const list = h('ul', { class: 'cards', 'aria-label': t('p2p.title') });
  const more = h('div', { class: 'actions' });
  const state = h('div', null, loading());
  main.append(form, state, list, more);

  const params = {};
  for (const k of FILTERS) if (v(k)) params[k] = v(k);
  let offset = 0;
  async function load() {
    let r;
    try {
      r = await api('GET', '/p2p/ads' + query({ ...params, limit: PAGE, offset }), null, { signal: ctx.signal });
    } catch (e) {
      clear(state);
      showError(e);
      return;
    }
    clear(state);
    const ads = r.ads || [];
    if (offset === 0 && !ads.length) state.append(empty(t('p2p.empty')));
    for (const ad of ads) list.append(adCard(ad));
    offset += ads.length;
    clear(more, ads.length === PAGE ? h('button', { type: 'button', class: 'btn', onClick: load }, t('action.load_more')) : null);
  }
  await load();
}
