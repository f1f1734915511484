// /admin/partners: the partners (list, create; a new key is shown once)
// and /admin/partners/{id}: one partner's float, status, webhook, key
// rotation and webhook deliveries (server/module_partner.go,
// server/module_webhook.go).

import { api } from '../api.js';
import { money, dateTime } from '../i18n.js';
import { h, clear, qs, field, table, timeEl, confirmDialog, secretPanel, parseKopecks } from './ui.js';
import { ta } from './i18n-admin.js';

const admin = { admin: true };

export async function partnersPage(root, ctx, rest) {
  if (rest.length > 0) return partnerPage(root, ctx, rest[0]);

  const once = h('div');
  const list = h('div', { class: 'adm-results' });
  const name = field(ta('partners.name'), { type: 'text', name: 'name', required: true, maxlength: '100', autocomplete: 'off' });

  const load = async () => {
    const { partners } = await api('GET', '/api/v1/admin/partners', undefined, admin);
    if (!ctx.alive()) return;
    clear(list, partners.length === 0 ? h('p', null, ta('none')) : table(ta('partners.caption'),
      [ta('partners.col.id'), ta('partners.col.name'), ta('partners.col.status'), ta('partners.col.created'), ta('partners.col.actions')],
      partners.map((p) => [String(p.id), p.name, p.disabled ? ta('partners.disabled') : ta('partners.active'), timeEl(p.created_at),
        ctx.link(`/admin/partners/${p.id}`, ta('partners.manage'))])));
  };

  const create = async (e) => {
    e.preventDefault();
    const n = name.input.value.trim();
    if (!n) { name.input.focus(); return; }
    try {
      const p = await api('POST', '/api/v1/admin/partners', { name: n }, admin);
      name.input.value = '';
      ctx.announce(ta('partners.created', { name: p.name }));
      clear(once, secretPanel(ta('partners.newKey', { name: p.name }), p.key, ctx.announce));
      await load();
    } catch (err) {
      ctx.fail(err);
    }
  };

  clear(root,
    h('section', { class: 'card', 'aria-labelledby': 'adm-new-partner' },
      h('h2', { id: 'adm-new-partner' }, ta('partners.new')),
      h('form', { class: 'adm-inline-form', onsubmit: create }, name.node, h('button', { type: 'submit', class: 'btn btn-primary' }, ta('partners.create')))),
    once, list);
  await load();
}

async function partnerPage(root, ctx, id) {
  if (!/^\d+$/.test(id)) { ctx.go('/admin/partners'); return; }
  const base = `/api/v1/admin/partners/${id}`;
  let p = await api('GET', base, undefined, admin);
  if (!ctx.alive()) return;
  ctx.heading(`${ta('nav.partners')}: ${p.name}`);

  const once = h('div');
  const info = h('div');
  const webhook = h('div');
  const deliveries = h('div', { class: 'adm-results' });
  const moreDeliveries = h('button', { type: 'button', class: 'btn', hidden: true }, ta('more'));
  let cursor = null;
  let rows = [];

  const drawInfo = () => {
    const toggle = h('button', {
      type: 'button', class: p.disabled ? 'btn adm-toggle' : 'btn adm-danger adm-toggle',
      onclick: async () => {
        const disable = !p.disabled;
        if (disable && !(await confirmDialog(ta('partners.disableConfirm', { name: p.name }), ta('partners.disable')))) return;
        try {
          p = await api('PATCH', base, { disabled: disable }, admin);
          ctx.announce(ta(disable ? 'partners.disabledNow' : 'partners.enabledNow', { name: p.name }));
          drawInfo();
          info.querySelector('.adm-toggle').focus();
        } catch (err) { ctx.fail(err); }
      },
    }, p.disabled ? ta('partners.enable') : ta('partners.disable'));
    const amount = field(ta('amount'), { type: 'text', inputmode: 'decimal', required: true, autocomplete: 'off' });
    clear(info,
      h('p', null, ta('partners.status', { status: p.disabled ? ta('partners.disabled') : ta('partners.active') })),
      h('div', { class: 'actions' }, toggle),
      h('section', { class: 'card', 'aria-labelledby': 'adm-float' },
        h('h2', { id: 'adm-float' }, ta('partners.float')),
        h('p', null, ta('partners.floatBalance', { amount: money(p.float_kopecks) })),
        h('form', {
          class: 'adm-inline-form',
          onsubmit: async (e) => {
            e.preventDefault();
            const k = parseKopecks(amount.input.value);
            if (k == null) { amount.input.setAttribute('aria-invalid', 'true'); amount.input.focus(); ctx.fail(new Error(ta('amount.invalid'))); return; }
            try {
              const r = await api('POST', `${base}/float`, { amount_kopecks: k }, admin);
              p.float_kopecks = r.float_kopecks;
              ctx.announce(ta('partners.funded', { name: p.name, amount: money(r.float_kopecks) }));
              drawInfo();
              info.querySelector('form input').focus();
            } catch (err) { ctx.fail(err); }
          },
        }, amount.node, h('button', { type: 'submit', class: 'btn btn-primary' }, ta('partners.fund')))));
  };

  const loadWebhook = async () => {
    let hook = null;
    try {
      hook = await api('GET', `${base}/webhook`, undefined, admin);
    } catch (err) {
      if (err.status !== 404) throw err;
    }
    if (!ctx.alive()) return;
    const url = field(ta('partners.webhookUrl'), { type: 'url', required: true, maxlength: '2048', autocomplete: 'off', value: hook ? hook.url : '' });
    clear(webhook,
      h('p', null, hook ? ta('partners.webhookCurrent', { url: hook.url, when: dateTime(hook.created_at) }) : ta('partners.webhookNone')),
      h('form', {
        class: 'adm-inline-form',
        onsubmit: async (e) => {
          e.preventDefault();
          try {
            const r = await api('PUT', `${base}/webhook`, { url: url.input.value.trim() }, admin);
            ctx.announce(ta('partners.webhookSaved'));
            clear(once, secretPanel(ta('partners.webhookSecret'), r.secret, ctx.announce));
            await loadWebhook();
          } catch (err) { ctx.fail(err); }
        },
      }, url.node, h('button', { type: 'submit', class: 'btn btn-primary' }, ta('partners.webhookSave'))),
      hook ? h('div', { class: 'actions' }, h('button', {
        type: 'button', class: 'btn adm-danger',
        onclick: async () => {
          if (!(await confirmDialog(ta('partners.webhookDeleteConfirm', { name: p.name }), ta('partners.webhookDelete')))) return;
          try {
            await api('DELETE', `${base}/webhook`, undefined, admin);
            ctx.announce(ta('partners.webhookDeleted'));
            await loadWebhook();
          } catch (err) { ctx.fail(err); }
        },
      }, ta('partners.webhookDelete'))) : null);
  };

  const drawDeliveries = () => {
    clear(deliveries, rows.length === 0 ? h('p', null, ta('none')) : table(ta('partners.deliveries'),
      [ta('partners.del.id'), ta('partners.del.type'), ta('partners.del.status'), ta('partners.del.attempts'), ta('partners.del.last'), ta('partners.del.created'), ta('partners.del.actions')],
      rows.map((d) => [String(d.id), d.type, d.status, String(d.attempts),
        d.last_status_code != null ? String(d.last_status_code) : (d.last_error || '—'), timeEl(d.created_at),
        h('button', {
          type: 'button', class: 'btn btn-small',
          onclick: async () => {
            try {
              await api('POST', `${base}/deliveries/${d.id}/redeliver`, undefined, admin);
              ctx.announce(ta('partners.redelivered', { id: d.id }));
            } catch (err) { ctx.fail(err); }
          },
        }, ta('partners.redeliver'))])));
    moreDeliveries.hidden = !cursor;
  };

  const loadDeliveries = async (next) => {
    const r = await api('GET', `${base}/deliveries` + qs({ limit: 20, cursor: next ? cursor : '' }), undefined, admin);
    if (!ctx.alive()) return;
    rows = next ? rows.concat(r.deliveries) : r.deliveries;
    cursor = r.next_cursor;
    drawDeliveries();
  };
  moreDeliveries.addEventListener('click', () => loadDeliveries(true).catch(ctx.fail));

  const grace = field(ta('partners.grace'), { type: 'number', min: '0', max: '2592000', step: '1', value: '86400', required: true });
  const rotate = async (e) => {
    e.preventDefault();
    if (!(await confirmDialog(ta('partners.rotateConfirm', { name: p.name }), ta('partners.rotate')))) return;
    try {
      const r = await api('POST', `${base}/rotate-key`, { grace_seconds: Number(grace.input.value) }, admin);
      ctx.announce(ta('partners.rotated'));
      clear(once, secretPanel(ta('partners.rotatedKey', { name: p.name }), r.key, ctx.announce));
    } catch (err) { ctx.fail(err); }
  };

  clear(root,
    h('p', null, ctx.link('/admin/partners', ta('partners.back'))),
    once, info,
    h('section', { class: 'card', 'aria-labelledby': 'adm-key' },
      h('h2', { id: 'adm-key' }, ta('partners.key')),
      h('form', { class: 'adm-inline-form', onsubmit: rotate }, grace.node, h('button', { type: 'submit', class: 'btn btn-primary' }, ta('partners.rotate')))),
    h('section', { class: 'card', 'aria-labelledby': 'adm-webhook' },
      h('h2', { id: 'adm-webhook' }, ta('partners.webhook')), webhook),
    h('section', { class: 'card', 'aria-labelledby': 'adm-deliveries' },
      h('h2', { id: 'adm-deliveries' }, ta('partners.deliveries')), deliveries, moreDeliveries));
  drawInfo();
  await Promise.all([loadWebhook(), loadDeliveries(false)]);
}
