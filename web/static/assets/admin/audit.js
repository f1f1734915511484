// /admin/audit: the ledger audit's result (GET /api/v1/admin/audit, run on
// demand) and a few key figures read from the Prometheus text of GET
// /metrics (which takes no token: the server leaves it open to its
// monitoring network).

import { api } from '../api.js';
import { money, num } from '../i18n.js';
import { h, clear, table, timeEl } from './ui.js';
import { ta } from './i18n-admin.js';

// parseMetrics reads the Prometheus text exposition format into samples
// {name, labels, value}; comments and malformed lines are skipped.
export function parseMetrics(text) {
  const out = [];
  const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/;
  const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (const raw of text.split('\n')) {
    if (raw === '' || raw.startsWith('#')) continue;
    const m = line.exec(raw);
    if (!m) continue;
    const labels = {};
    if (m[3]) for (const l of m[3].matchAll(label)) labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    const value = Number(m[4] === '+Inf' ? Infinity : m[4] === '-Inf' ? -Infinity : m[4]);
    out.push({ name: m[1], labels, value });
  }
  return out;
}

// sum adds the samples of name whose labels match every given one.
function sum(samples, name, match = {}) {
  let total = 0;
  let found = false;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(match).some(([k, v]) => (typeof v === 'function' ? !v(s.labels[k]) : s.labels[k] !== v))) continue;
    total += s.value;
    found = true;
  }
  return found ? total : null;
}

function bytes(n) {
  return `${num(n / (1024 * 1024))} MiB`;
}

// figures are the rows shown: [label, value] with null for a metric the
// server does not export.
export function figures(samples) {
  const show = (v, f = num) => (v == null ? '—' : f(v));
  // A counter with labels has no sample before its first event: zero.
  const count = (name, match) => num(sum(samples, name, match) ?? 0);
  const auditOk = sum(samples, 'predictkit_audit_ok');
  const build = samples.find((s) => s.name === 'predictkit_build_info');
  const delivered = sum(samples, 'predictkit_webhook_attempts_total', { outcome: 'delivered' }) ?? 0;
  const failed = sum(samples, 'predictkit_webhook_attempts_total', { outcome: 'failed' }) ?? 0;
  return [
    [ta('metrics.trades'), count('predictkit_trades_total')],
    [ta('metrics.volume'), money(sum(samples, 'predictkit_trade_volume_kopecks_total') ?? 0)],
    [ta('metrics.fees'), money(sum(samples, 'predictkit_trade_fees_kopecks_total') ?? 0)],
    [ta('metrics.refusals'), count('predictkit_trade_refusals_total')],
    [ta('metrics.settlements'), count('predictkit_settlements_total', { result: 'ok' })],
    [ta('metrics.streams'), show(sum(samples, 'predictkit_stream_connections'))],
    [ta('metrics.inFlight'), show(sum(samples, 'predictkit_http_requests_in_flight'))],
    [ta('metrics.requests'), show(sum(samples, 'predictkit_http_requests_total'))],
    [ta('metrics.errors5xx'), count('predictkit_http_requests_total', { status: (s) => /^5/.test(s || '') })],
    [ta('metrics.auditOk'), auditOk == null || auditOk < 0 ? ta('metrics.noAudit') : auditOk === 1 ? ta('yes') : ta('no')],
    [ta('metrics.webhooks'), `${num(delivered)} / ${num(failed)}`],
    [ta('metrics.memory'), show(sum(samples, 'process_resident_memory_bytes'), bytes)],
    [ta('metrics.goroutines'), show(sum(samples, 'go_goroutines'))],
    [ta('metrics.version'), build ? [build.labels.version, build.labels.revision].filter(Boolean).join(' ') || '—' : '—'],
  ];
}

export async function auditPage(root, ctx) {
  const result = h('div', { class: 'adm-result', 'aria-live': 'polite' });
  const metrics = h('div', { class: 'adm-results' });
  const run = h('button', { type: 'button', class: 'btn btn-primary' }, ta('audit.run'));

  const audit = async () => {
    run.disabled = true;
    clear(result, ta('loading'));
    try {
      const a = await api('GET', '/api/v1/admin/audit', undefined, { admin: true });
      if (!ctx.alive()) return;
      const problems = [...a.problems, ...a.escrow_problems.map((p) => ta('audit.escrow', { p }))];
      clear(result,
        h('p', { class: a.ok ? 'status' : 'alert' },
          a.ok ? ta('audit.ok', { accounts: num(a.accounts), postings: num(a.postings), sum: a.sum }) : ta('audit.problems', { n: problems.length })),
        problems.length ? h('ul', null, problems.map((p) => h('li', null, p))) : null,
        h('p', { class: 'muted' }, ta('audit.checkedAt'), ' ', timeEl(a.checked_at)));
    } catch (err) {
      clear(result);
      ctx.fail(err);
    } finally {
      run.disabled = false;
    }
  };

  const loadMetrics = async () => {
    const res = await fetch('/metrics', { credentials: 'same-origin', headers: { Accept: 'text/plain' } });
    if (!ctx.alive()) return;
    if (!res.ok) {
      clear(metrics, h('p', null, ta('metrics.unavailable', { status: res.status })));
      return;
    }
    const rows = figures(parseMetrics(await res.text()));
    if (!ctx.alive()) return;
    clear(metrics, table(ta('metrics.caption'), [ta('metrics.name'), ta('metrics.value')], rows));
  };

  run.addEventListener('click', audit);
  clear(root,
    h('section', { class: 'card', 'aria-labelledby': 'adm-audit' },
      h('h2', { id: 'adm-audit' }, ta('audit.heading')),
      h('div', { class: 'actions' }, run), result),
    h('section', { class: 'card', 'aria-labelledby': 'adm-metrics' },
      h('h2', { id: 'adm-metrics' }, ta('metrics.heading')),
      h('div', { class: 'actions' }, h('button', { type: 'button', class: 'btn', onclick: () => loadMetrics().catch(ctx.fail) }, ta('refresh'))),
      metrics));
  await Promise.all([audit(), loadMetrics().catch(ctx.fail)]);
}
