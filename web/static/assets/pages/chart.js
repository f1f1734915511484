// SVG charts, drawn by hand: the price candles of a market (GET
// /api/v1/markets/{id}/candles) and a line chart (the PnL chart). Each
// chart is role="img" with a text summary, so it is not only visual.
import { h, s, clear, field, select, id as uid } from '../dom.js';
import { t, loc, pct, dateTime, time } from '../i18n.js';
import { api, query } from '../api.js';
import { empty, showError } from '../ui.js';

// The charts' drawing box (viewBox units; the SVG scales to its width)
// and the margins the axes' labels take. The statistics charts
// (stats/charts.js) draw in the same box with the same axes.
export const W = 640;
export const H = 240;
export const PAD = { l: 48, r: 12, t: 12, b: 28 };
const WIDTH = { '1m': 60e3, '5m': 300e3, '1h': 3600e3, '1d': 86400e3 };

function niceRange(lo, hi, unit, floorZero) {
  if (lo === hi) {
    lo -= unit;
    hi += unit;
  }
  const pad = (hi - lo) * 0.08;
  lo -= pad;
  hi += pad;
  if (floorZero) {
    lo = Math.max(0, lo);
    hi = Math.min(1, hi);
  }
  return [lo, hi];
}

// frame is an empty chart: role="img" named by its title and described by
// descText (a text summary, so the chart is not only visual).
export function frame(titleText, descText) {
  const tid = uid('chart-title');
  const did = uid('chart-desc');
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${tid} ${did}`, preserveAspectRatio: 'xMidYMid meet' },
    s('title', { id: tid }, titleText),
    s('desc', { id: did }, descText));
  return svg;
}

// yAxis draws a grid line and a label fmt(v) at each tick (by default
// five even steps from lo to hi).
export function yAxis(svg, lo, hi, fmt, ticks) {
  const steps = 4;
  const at = ticks || Array.from({ length: steps + 1 }, (_, i) => lo + ((hi - lo) * i) / steps);
  for (const v of at) {
    const y = H - PAD.b - ((H - PAD.t - PAD.b) * (v - lo)) / Math.max(1e-9, hi - lo);
    svg.append(s('line', { class: 'grid', x1: PAD.l, x2: W - PAD.r, y1: y, y2: y }));
    svg.append(s('text', { x: PAD.l - 6, y: y + 4, 'text-anchor': 'end' }, fmt(v)));
  }
}

// niceStep is the smallest 1, 2 or 5 × 10^n (n ≥ 0) at least raw: a tick
// step in whole kopecks.
export function niceStep(raw) {
  if (!(raw > 1)) return 1;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

// moneyTicks(lo, hi) are the PnL chart's axis ticks for amounts lo..hi in
// roubles: round steps of 1, 2 or 5 × 10^n kopecks (₽0.01, ₽0.50, ₽2,
// ₽1,000…), at most about five of them, on multiples of the step that
// cover lo..hi. The arithmetic is in integer kopecks, so ticks never
// read ₽0.30000000000000004. Returns {lo, hi, ticks} in roubles.
export function moneyTicks(lo, hi) {
  const r = roundTicks(Math.floor(Math.min(lo, hi) * 100), Math.ceil(Math.max(lo, hi) * 100));
  return { lo: r.lo / 100, hi: r.hi / 100, ticks: r.ticks.map((k) => k / 100) };
}

// roundTicks(a, b) are axis ticks for whole units (kopecks, trades,
// people) a..b: multiples of a round step (1, 2 or 5 × 10^n) that cover
// a..b in about four steps. Returns {lo, hi, ticks}, integers.
export function roundTicks(a, b) {
  if (a === b) {
    a -= 1;
    b += 1;
  }
  const step = niceStep((b - a) / 4);
  const first = Math.floor(a / step) * step;
  const last = Math.ceil(b / step) * step;
  const ticks = [];
  for (let k = first; k <= last; k += step) ticks.push(k);
  return { lo: first, hi: last, ticks };
}

function xLabels(svg, t0, t1, fmt) {
  svg.append(s('text', { x: PAD.l, y: H - 8, 'text-anchor': 'start' }, fmt(t0)));
  svg.append(s('text', { x: W - PAD.r, y: H - 8, 'text-anchor': 'end' }, fmt(t1)));
}

// drawCandles draws candles (oldest first) up to now: a wick from low to
// high, a body from open to close, and a step line of the closes that
// carries the last price on to now (no candle means no change).
export function drawCandles(candles, interval, name) {
  const width = WIDTH[interval];
  const t0 = Date.parse(candles[0].t);
  const t1 = Math.max(Date.now(), Date.parse(candles[candles.length - 1].t) + width);
  let lo = Infinity;
  let hi = -Infinity;
  for (const c of candles) {
    lo = Math.min(lo, c.low);
    hi = Math.max(hi, c.high);
  }
  const first = candles[0];
  const last = candles[candles.length - 1];
  const desc = t('event.chart_desc', { name, from: dateTime(first.t), to: dateTime(t1), open: pct(first.open), close: pct(last.close), low: pct(lo), high: pct(hi) });
  const svg = frame(t('event.chart') + ': ' + name, desc);
  const [ylo, yhi] = niceRange(lo, hi, 0.02, true);
  const x = (ms) => PAD.l + ((W - PAD.l - PAD.r) * (ms - t0)) / Math.max(1, t1 - t0);
  const y = (v) => H - PAD.b - ((H - PAD.t - PAD.b) * (v - ylo)) / Math.max(1e-9, yhi - ylo);
  yAxis(svg, ylo, yhi, (v) => pct(v));
  const span = t1 - t0;
  xLabels(svg, t0, t1, (ms) => (span < 86400e3 ? time(ms) : dateTime(ms)));
  // The price steps from a candle's open to its close at the candle.
  let d = `M${x(t0)},${y(first.open)} `;
  for (const c of candles) {
    const cx = x(Date.parse(c.t) + width / 2);
    d += `H${cx} V${y(c.open)} V${y(c.close)} `;
  }
  d += `H${x(t1)}`;
  const bodyW = Math.max(2, Math.min(14, ((W - PAD.l - PAD.r) * width) / Math.max(1, span) * 0.7));
  for (const c of candles) {
    const cx = x(Date.parse(c.t) + width / 2);
    svg.append(s('line', { class: 'wick', x1: cx, x2: cx, y1: y(c.high), y2: y(c.low) }));
    const top = y(Math.max(c.open, c.close));
    const bottom = y(Math.min(c.open, c.close));
    svg.append(s('rect', { class: c.close >= c.open ? 'up' : 'down', x: cx - bodyW / 2, y: top, width: bodyW, height: Math.max(1, bottom - top) }));
  }
  svg.append(s('path', { class: 'line', d }));
  return svg;
}

// lineChart draws points [{x: ms, y: number}] with an area under them.
export function lineChart(points, title, desc, fmtY) {
  const svg = frame(title, desc);
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  const t0 = Math.min(...xs);
  const t1 = Math.max(Math.max(...xs), t0 + 1);
  // The y axis (roubles) ticks on round amounts, 0 among them.
  const { lo: ylo, hi: yhi, ticks } = moneyTicks(Math.min(0, ...ys), Math.max(0, ...ys));
  const x = (ms) => PAD.l + ((W - PAD.l - PAD.r) * (ms - t0)) / Math.max(1, t1 - t0);
  const y = (v) => H - PAD.b - ((H - PAD.t - PAD.b) * (v - ylo)) / Math.max(1e-9, yhi - ylo);
  yAxis(svg, ylo, yhi, fmtY, ticks);
  xLabels(svg, t0, t1, (ms) => dateTime(ms));
  let d = '';
  points.forEach((p, i) => {
    d += (i === 0 ? `M${x(p.x)},${y(p.y)} ` : `H${x(p.x)} V${y(p.y)} `);
  });
  const area = `${d} V${y(Math.max(ylo, 0))} H${x(points[0].x)} Z`;
  svg.append(s('path', { class: 'area', d: area }), s('path', { class: 'line', d }));
  return svg;
}

// candleChart is the event page's chart: a market and an interval to
// choose, redrawn (at most every two seconds) when the market's price moves.
// intervalFor picks the candles' width for an event created at createdAt:
// a young market's trades all fall into one hour.
function intervalFor(createdAt) {
  const age = Date.now() - Date.parse(createdAt);
  if (!(age >= 0)) return '1h';
  if (age < 3 * 3600e3) return '1m';
  if (age < 2 * 86400e3) return '5m';
  if (age < 30 * 86400e3) return '1h';
  return '1d';
}

export function candleChart(box, markets, signal, createdAt) {
  let list = markets;
  let marketId = list.length ? list[0].id : null;
  let interval = intervalFor(createdAt);
  const marketSel = select([], null);
  const intervalSel = select(['1m', '5m', '1h', '1d'].map((i) => [i, t('event.interval.' + i)]), interval);
  const area = h('div');
  const fill = () => {
    clear(marketSel, list.map((m) => h('option', { value: m.id }, loc(m, 'name'))));
    if (marketId !== null) marketSel.value = String(marketId);
  };
  fill();
  marketSel.addEventListener('change', () => {
    marketId = Number(marketSel.value);
    load();
  });
  intervalSel.addEventListener('change', () => {
    interval = intervalSel.value;
    load();
  });
  clear(box, h('div', { class: 'chart-controls' }, field(t('event.chart_market'), marketSel), field(t('event.chart_interval'), intervalSel)), area);

  let seq = 0;
  async function load() {
    if (marketId === null) return;
    seq += 1;
    const mine = seq;
    let r;
    try {
      r = await api('GET', `/markets/${marketId}/candles` + query({ interval }), null, { signal });
    } catch (e) {
      if (mine === seq) showError(e);
      return;
    }
    if (mine !== seq) return;
    const m = list.find((x) => x.id === marketId);
    const candles = r.candles || [];
    clear(area, candles.length ? drawCandles(candles, interval, m ? loc(m, 'name') : '') : empty(t('event.chart_empty')));
  }
  load();

  let timer = 0;
  return {
    setMarkets(next) {
      list = next;
      fill();
    },
    priceMoved(id) {
      if (id !== marketId || timer) return;
      timer = window.setTimeout(() => {
        timer = 0;
        load();
      }, 2000);
    },
  };
}
