// The statistics charts: one figure per statistic, a value per UTC day
// (GET /api/v1/stats/daily), as bars or lines. They draw in the same box
// with the same frame and y axis as the price and PnL charts
// (pages/chart.js), ticking on round numbers of whole units (kopecks,
// trades, people), and say in words what they show: the chart is an
// image named by its title and described by a summary, each bar or
// point carries its day and value as a tooltip, and a legend under it
// gives each series' total over the range. Used by the app's /stats page
// and the console's Statistics section alike (dashboard.js).
import { h, s } from '../dom.js';
import { t, language, money, num } from '../i18n.js';
import { W, H, PAD, frame, yAxis, roundTicks } from '../pages/chart.js';
import './strings.js';

const fmtCache = {};
function fmt(key, opts) {
  const k = language() + key;
  if (!fmtCache[k]) fmtCache[k] = new Intl.NumberFormat(language() === 'ru' ? 'ru-RU' : 'en-US', opts);
  return fmtCache[k];
}

// axisMoney labels a tick of kopecks short: ₽250, ₽1.5K, ₽2M (the
// ticks are round, so the short form is exact enough).
export function axisMoney(kopecks) {
  return fmt('axis-money', { style: 'currency', currency: 'RUB', currencyDisplay: 'narrowSymbol', notation: 'compact', maximumFractionDigits: 2 }).format(kopecks / 100);
}

// axisCount labels a tick of a count short: 40, 1.2K.
export function axisCount(n) {
  return fmt('axis-count', { notation: 'compact', maximumFractionDigits: 1 }).format(n);
}

// dayDate is the Date of a "YYYY-MM-DD" UTC day.
export function dayDate(day) {
  return new Date(day + 'T00:00:00Z');
}

function locale() {
  return language() === 'ru' ? 'ru-RU' : 'en-GB';
}

// dayLabel is a day as "2 Dec" (short: the axis) or "2 Dec 2026".
export function dayLabel(day, short) {
  const opts = short ? { day: 'numeric', month: 'short', timeZone: 'UTC' } : { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' };
  return dayDate(day).toLocaleDateString(locale(), opts);
}

// monthLabel names a month on a year's axis: "Sep", and January by
// its year ("2027"), short enough for the phone.
function monthLabel(day) {
  const d = dayDate(day);
  if (d.getUTCMonth() === 0) return String(d.getUTCFullYear());
  return d.toLocaleDateString(locale(), { month: 'short', timeZone: 'UTC' });
}

// dayTicks picks the days of a range that get a label on the x axis, on
// round days: every day of a week, the Mondays of a month, the 1st and
// the 15th over a quarter, the first of each month over a year.
// Returns [{i, label}] (i: the day's index in days).
export function dayTicks(days) {
  const n = days.length;
  const out = [];
  days.forEach((day, i) => {
    const d = dayDate(day);
    const date = d.getUTCDate();
    if (n <= 8) out.push({ i, label: dayLabel(day, true) });
    else if (n <= 31) {
      if (d.getUTCDay() === 1) out.push({ i, label: dayLabel(day, true) });
    } else if (n <= 120) {
      if (date === 1 || date === 15) out.push({ i, label: dayLabel(day, true) });
    } else if (date === 1) out.push({ i, label: monthLabel(day) });
  });
  return out;
}

function xAxis(svg, days, slot) {
  const y0 = H - PAD.b;
  for (const { i, label } of dayTicks(days)) {
    const x = PAD.l + slot * (i + 0.5);
    svg.append(s('line', { class: 'grid', x1: x, x2: x, y1: y0, y2: y0 + 4 }));
    // A label near an end of the axis keeps inside the box.
    const anchor = x < PAD.l + 24 ? 'start' : x > W - PAD.r - 24 ? 'end' : 'middle';
    svg.append(s('text', { x, y: H - 8, 'text-anchor': anchor }, label));
  }
  svg.append(s('line', { class: 'axis', x1: PAD.l, x2: W - PAD.r, y1: y0, y2: y0 }));
}

// summary is what the chart says in words: each series' total over the
// range (for a level such as open interest its last value, for a series
// marked most its busiest day's) and the busiest (highest) day of the
// first series.
function summary(days, series, opts, show) {
  const range = { days: days.length, from: dayLabel(days[0]), to: dayLabel(days[days.length - 1]) };
  const values = (se) => days.map((d) => Number(d[se.key]) || 0);
  const totals = series.map((se) => {
    const v = values(se);
    if (opts.level) return { se, value: v[v.length - 1], text: t('stats.chart.last', { name: se.label, value: show(v[v.length - 1]) }) };
    // People counted per day add up to no one in particular: their
    // figure is the busiest day's.
    if (se.most) {
      const value = Math.max(...v);
      return { se, value, text: t('stats.chart.most', { name: se.label, value: show(value) }) };
    }
    const value = v.reduce((a, b) => a + b, 0);
    return { se, value, text: t('stats.chart.sum', { name: se.label, value: show(value) }) };
  });
  const first = values(series[0]);
  let peakAt = 0;
  first.forEach((v, i) => {
    if (v > first[peakAt]) peakAt = i;
  });
  const any = series.some((se) => values(se).some((v) => v !== 0));
  const desc = any
    ? t(opts.level ? 'stats.chart.desc_last' : 'stats.chart.desc_sum', { ...range, totals: totals.map((x) => x.text).join('; '), peak_day: dayLabel(days[peakAt]), peak: show(first[peakAt]) })
    : t('stats.chart.quiet', range);
  return { totals, desc };
}

// dayChart draws series ([{key, label, most}], keys of the day objects) over
// days (the API's day objects, oldest first) and returns the figure: a
// section with its heading, the SVG and the legend. opts: title, kind
// ('bars' or 'lines'), money (the values are kopecks), level (the value
// is a level at the end of each day, not a sum over it), id (the
// section's data-chart, for tests and styles).
export function dayChart(days, series, opts) {
  const show = opts.money ? money : num;
  const list = days.map((d) => d.date);
  const n = list.length;
  const { totals, desc } = summary(days, series, opts, show);
  const svg = frame(opts.title, desc);
  svg.classList.add('stats-chart');
  const plotW = W - PAD.l - PAD.r;
  const plotH = H - PAD.t - PAD.b;
  const slot = plotW / Math.max(1, n);
  let max = 0;
  for (const se of series) for (const d of days) max = Math.max(max, Number(d[se.key]) || 0);
  // The y axis starts at zero and ends on a round number at or above the
  // highest value (₽1 or 1 when there is nothing yet).
  const { hi, ticks } = roundTicks(0, Math.max(opts.money ? 100 : 1, max));
  const y = (v) => H - PAD.b - (plotH * v) / hi;
  yAxis(svg, 0, hi, opts.money ? axisMoney : axisCount, ticks);
  svg.dataset.ticks = ticks.join(',');
  if (n > 0) xAxis(svg, list, slot);
  series.forEach((se, k) => {
    const values = days.map((d) => Number(d[se.key]) || 0);
    const g = s('g', { class: `series series-${k}`, 'data-key': se.key, 'data-values': values.join(',') });
    const tip = (i) => `${dayLabel(list[i])}: ${se.label} ${show(values[i])}`;
    if (opts.kind === 'bars') {
      // Side by side within a day's slot, a tenth of the slot free on
      // either side; a bar is at least a pixel high when not zero.
      const bw = (slot * 0.8) / series.length;
      values.forEach((v, i) => {
        if (v <= 0) return;
        const top = Math.min(y(v), H - PAD.b - 1);
        g.append(s('rect', { x: PAD.l + slot * (i + 0.1) + bw * k, y: top, width: Math.max(0.5, bw), height: H - PAD.b - top }, s('title', null, tip(i))));
      });
    } else {
      let d = '';
      values.forEach((v, i) => {
        d += `${i === 0 ? 'M' : 'L'}${(PAD.l + slot * (i + 0.5)).toFixed(2)},${y(v).toFixed(2)} `;
      });
      if (opts.area && k === 0) g.append(s('path', { class: 'area', d: `${d}L${(PAD.l + slot * (n - 0.5)).toFixed(2)},${y(0)} L${(PAD.l + slot * 0.5).toFixed(2)},${y(0)} Z` }));
      g.append(s('path', { class: 'line', d }));
      // Points a pointer can find, while they are few enough to tell apart.
      if (n <= 31) values.forEach((v, i) => g.append(s('circle', { cx: PAD.l + slot * (i + 0.5), cy: y(v), r: 3 }, s('title', null, tip(i)))));
    }
    svg.append(g);
  });
  const headingID = `stats-chart-${opts.id}`;
  return h('section', { class: 'stats-figure', 'data-chart': opts.id, 'aria-labelledby': headingID },
    h('h3', { id: headingID }, opts.title, ' ', h('span', { class: 'muted stats-unit' }, '(' + t(opts.money ? 'stats.chart.unit_money' : 'stats.chart.unit_count') + ')')),
    svg,
    h('ul', { class: 'stats-legend' }, totals.map(({ se, value, text }, k) => h('li', { 'data-key': se.key, 'data-total': String(value) },
      h('span', { class: `stats-swatch series-${k}`, 'aria-hidden': 'true' }), text))));
}
