// The statistics dashboard, drawn the same in the app (/stats, a
// statistics viewer's session) and in the operator console
// (/admin/stats, the admin token): the overview's cards (today and all
// time, GET /api/v1/stats/overview), a range of 7, 30, 90 or 365 days
// (a link each: the range lives in the address), a chart per statistic
// over that range (GET /api/v1/stats/daily), today's top markets linking
// to their events, and the range's days as a table.
import { h, clear } from '../dom.js';
import { t, money, num, dateTime } from '../i18n.js';
import { dayChart, dayDate, dayLabel } from './charts.js';
import './strings.js';

// RANGES are the ranges offered, in days; DEFAULT_RANGE is the API's own
// default.
export const RANGES = [7, 30, 90, 365];
export const DEFAULT_RANGE = 30;

// rangeFrom reads the range from an address's query (?days=90), the
// default when it is missing or not one of RANGES.
export function rangeFrom(search) {
  const n = Number(new URLSearchParams(search).get('days'));
  return RANGES.includes(n) ? n : DEFAULT_RANGE;
}

// dayBefore is the "YYYY-MM-DD" UTC day n days before day.
export function dayBefore(day, n) {
  return new Date(dayDate(day).getTime() - n * 86400e3).toISOString().slice(0, 10);
}

// The cards: [field of the overview, label, money?]. Today's are a day
// object's fields, the totals' the totals object's.
const TODAY = [
  ['volume_kopecks', 'stats.volume', true],
  ['fees_kopecks', 'stats.fees', true],
  ['trades', 'stats.trades', false],
  ['active_traders', 'stats.active_traders', false],
  ['new_users', 'stats.new_users', false],
  ['deposits_kopecks', 'stats.deposits', true],
  ['withdrawals_kopecks', 'stats.withdrawals', true],
  ['open_interest_kopecks', 'stats.open_interest', true],
];
const TOTALS = [
  ['volume_kopecks', 'stats.volume', true],
  ['fees_kopecks', 'stats.fees', true],
  ['trades', 'stats.trades', false],
  ['traders', 'stats.traders', false],
  ['users', 'stats.users', false],
  ['deposits_kopecks', 'stats.deposits', true],
  ['withdrawals_kopecks', 'stats.withdrawals', true],
  ['open_interest_kopecks', 'stats.open_interest', true],
];

function cards(group, heading, fields, values) {
  const id = `stats-${group}`;
  return h('section', { class: 'stats-group', 'aria-labelledby': id },
    h('h2', { id }, heading),
    h('dl', { class: 'stats-cards' }, fields.map(([key, label, isMoney]) => {
      const v = values ? values[key] : null;
      return h('div', { class: 'stats-card', 'data-stat': `${group}.${key}`, 'data-value': v == null ? '' : String(v) },
        h('dt', null, t(label)),
        h('dd', null, v == null ? '—' : isMoney ? money(v) : num(v)));
    })));
}

function rangePicker(days, hrefFor) {
  return h('nav', { class: 'stats-range', 'aria-label': t('stats.range') },
    h('span', { class: 'stats-range-label', 'aria-hidden': 'true' }, t('stats.range')),
    h('ul', null, RANGES.map((n) => h('li', null,
      h('a', { href: hrefFor(n), class: 'chip', 'aria-current': n === days ? 'true' : null }, t('stats.range_days', { n }))))));
}

// table is a table of rows (arrays of cells, the first the row's header)
// whose cells carry their column's name (data-label), so that app.css
// can lay each row out as a card on a phone.
function table(caption, heads, numeric, rows) {
  return h('div', { class: 'table-wrap', tabindex: '0' },
    h('table', null,
      h('caption', { class: 'sr-only' }, caption),
      h('thead', null, h('tr', null, heads.map((x, i) => h('th', { scope: 'col', class: numeric.includes(i) ? 'num' : null }, x)))),
      h('tbody', null, rows.map((r) => h('tr', null, r.map((x, i) => (i === 0
        ? h('th', { scope: 'row', 'data-label': heads[i] }, x)
        : h('td', { class: numeric.includes(i) ? 'num' : null, 'data-label': heads[i] }, x))))))));
}

function topMarkets(list, eventHref) {
  const heads = [t('stats.event'), t('stats.market'), t('stats.volume'), t('stats.trades')];
  return h('section', { class: 'stats-top', 'aria-labelledby': 'stats-top' },
    h('h2', { id: 'stats-top' }, t('stats.top')),
    list.length === 0
      ? h('p', { class: 'muted empty' }, t('stats.top_empty'))
      : table(t('stats.top_caption'), heads, [2, 3], list.map((m) => [
        h('a', { href: eventHref(m.event_id) }, m.event_name),
        m.market_name, money(m.volume_kopecks), num(m.trades)])));
}

function charts(days) {
  const L = (k) => t('stats.' + k);
  return h('div', { class: 'stats-charts' },
    dayChart(days, [{ key: 'volume_kopecks', label: L('volume') }], { id: 'volume', title: t('stats.chart.volume'), kind: 'bars', money: true }),
    dayChart(days, [{ key: 'fees_kopecks', label: L('fees') }], { id: 'fees', title: t('stats.chart.fees'), kind: 'bars', money: true }),
    dayChart(days, [{ key: 'trades', label: L('trades') }], { id: 'trades', title: t('stats.chart.trades'), kind: 'bars' }),
    dayChart(days, [{ key: 'active_traders', label: L('active_traders'), most: true }, { key: 'new_users', label: L('new_users') }], { id: 'people', title: t('stats.chart.people'), kind: 'lines' }),
    dayChart(days, [{ key: 'deposits_kopecks', label: L('deposits') }, { key: 'withdrawals_kopecks', label: L('withdrawals') }], { id: 'money', title: t('stats.chart.money'), kind: 'bars', money: true }),
    dayChart(days, [{ key: 'open_interest_kopecks', label: L('open_interest') }], { id: 'open_interest', title: t('stats.chart.open_interest'), kind: 'lines', money: true, level: true, area: true }));
}

function dayTable(days) {
  const heads = [t('stats.date'), t('stats.volume'), t('stats.fees'), t('stats.trades'), t('stats.active_traders'), t('stats.new_users'), t('stats.deposits'), t('stats.withdrawals'), t('stats.open_interest')];
  const rows = days.slice().reverse().map((d) => [
    h('time', { datetime: d.date }, dayLabel(d.date)),
    money(d.volume_kopecks), money(d.fees_kopecks), num(d.trades), num(d.active_traders), num(d.new_users),
    money(d.deposits_kopecks), money(d.withdrawals_kopecks), money(d.open_interest_kopecks)]);
  return h('details', { class: 'stats-days' },
    h('summary', null, t('stats.table')),
    table(t('stats.table_caption'), heads, [1, 2, 3, 4, 5, 6, 7, 8], rows));
}

// statsDashboard draws the dashboard into root. opts:
//   get(path): the API's answer for a path under /api/v1 (the app asks
//     with the session, the console with the admin token); it throws the
//     API's errors, which the caller shows (a 403 is "no access").
//   days: the range, one of RANGES.
//   hrefFor(n): the address of the same page with a range of n days.
//   eventHref(id): an event's address.
//   alive(): the page is still shown (a late answer draws nothing).
// It resolves once drawn, to {overview, daily}: what the API said.
export async function statsDashboard(root, opts) {
  const { get, days, hrefFor, eventHref, alive = () => true } = opts;
  const wait = h('p', { class: 'muted', role: 'status' }, t('stats.loading'));
  clear(root, wait);
  const overview = await get('/stats/overview');
  // The range ends on the server's today, whatever this device's clock
  // or time zone says.
  const to = overview.today.date;
  const from = dayBefore(to, days - 1);
  const daily = await get(`/stats/daily?from=${from}&to=${to}`);
  if (!alive()) return null;
  const list = daily.days || [];
  clear(root,
    h('p', { class: 'muted stats-as-of' }, t('stats.as_of', { at: dateTime(overview.as_of) })),
    h('div', { class: 'stats-overview' },
      cards('today', t('stats.today'), TODAY, overview.today),
      cards('totals', t('stats.totals'), TOTALS, overview.totals)),
    h('section', { class: 'stats-range-section', 'aria-labelledby': 'stats-charts' },
      h('h2', { id: 'stats-charts' }, t('stats.charts')),
      rangePicker(days, hrefFor),
      h('p', { class: 'muted', 'data-range': String(days) }, t('stats.range_shown', { n: days, from: dayLabel(from), to: dayLabel(to) })),
      list.length ? charts(list) : null,
      list.length ? dayTable(list) : null),
    topMarkets(overview.top_markets || [], eventHref));
  return { overview, daily };
}
