// /admin/chat: the support chat's queue (escalated open sessions first),
// refreshed every few seconds; /admin/chat/{session_id}: a transcript that
// follows new messages, the reply form and closing (server/module_chat.go).

import { api } from '../api.js';
import { h, clear, qs, field, table, timeEl, confirmDialog } from './ui.js';
import { ta } from './i18n-admin.js';

const admin = { admin: true };
const queueEvery = 4000;
const transcriptEvery = 3000;

const state = (s) => (s.closed ? ta('chat.closed') : s.escalated ? ta('chat.waiting') : ta('chat.open'));

export async function chatPage(root, ctx, rest) {
  if (rest.length > 0) return sessionPage(root, ctx, decodeURIComponent(rest[0]));

  const list = h('div', { class: 'adm-results' });
  let last = '';
  const load = async () => {
    const { sessions } = await api('GET', '/api/v1/admin/chat/sessions' + qs({ limit: 100 }), undefined, admin);
    if (!ctx.alive()) return;
    const sig = JSON.stringify(sessions);
    if (sig === last) return;
    last = sig;
    // Redrawing keeps the focus on the same session's link.
    const focused = list.contains(document.activeElement) ? document.activeElement.getAttribute('href') : null;
    clear(list, sessions.length === 0 ? h('p', null, ta('none')) : table(ta('chat.queue'),
      [ta('chat.col.session'), ta('chat.col.user'), ta('chat.col.lang'), ta('chat.col.status'), ta('chat.col.last'), ta('chat.col.count'), ta('chat.col.actions')],
      sessions.map((s) => [s.session_id, s.user_id == null ? ta('chat.anonymous') : ta('chat.user', { id: s.user_id }), s.language,
        h('span', { class: s.closed ? 'tag tag-muted' : s.escalated ? 'tag tag-no' : 'tag' }, state(s)),
        timeEl(s.last_message_at), String(s.message_count),
        ctx.link(`/admin/chat/${encodeURIComponent(s.session_id)}`, ta('chat.openSession'))])));
    if (focused) {
      const again = list.querySelector(`a[href="${CSS.escape(focused)}"]`);
      if (again) again.focus();
    }
  };
  clear(root,
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'btn', onclick: () => load().catch(ctx.fail) }, ta('refresh')),
      h('p', { class: 'muted' }, ta('chat.autoRefresh'))),
    list);
  await load();
  ctx.every(queueEvery, () => load().catch(ctx.fail));
}

async function sessionPage(root, ctx, sid) {
  const path = `/api/v1/admin/chat/sessions/${encodeURIComponent(sid)}`;
  const info = h('p');
  const log = h('div', { class: 'adm-transcript', role: 'log', tabindex: '0', 'aria-live': 'polite', 'aria-label': ta('chat.transcript', { id: sid }) });
  const seen = new Set();
  let session = null;
  const reply = field(ta('chat.reply'), { tag: 'textarea', name: 'reply', rows: '3', maxlength: '4000', required: true });
  const send = h('button', { type: 'submit', class: 'btn btn-primary' }, ta('chat.send'));
  const close = h('button', {
    type: 'button', class: 'btn adm-danger',
    onclick: async () => {
      if (!(await confirmDialog(ta('chat.closeConfirm'), ta('chat.close')))) return;
      try {
        session = await api('POST', `${path}/close`, undefined, admin);
        ctx.announce(ta('chat.closedNow'));
        drawInfo();
        reply.input.focus();
      } catch (err) { ctx.fail(err); }
    },
  }, ta('chat.close'));

  const drawInfo = () => {
    clear(info, `${session.user_id == null ? ta('chat.anonymous') : ta('chat.user', { id: session.user_id })} · ${session.language} · ${state(session)}`);
    close.hidden = session.closed;
  };
  const add = (m) => {
    if (seen.has(m.id)) return;
    seen.add(m.id);
    log.append(h('div', { class: m.sender === 'support' ? 'adm-msg adm-msg-support' : 'adm-msg adm-msg-user' },
      h('p', { class: 'adm-msg-meta' }, h('strong', null, m.sender === 'support' ? ta('chat.fromSupport') : ta('chat.fromUser')), ' · ', timeEl(m.created_at)),
      h('p', { class: 'adm-msg-text' }, m.text)));
    log.scrollTop = log.scrollHeight;
  };
  const load = async () => {
    const r = await api('GET', `${path}/messages`, undefined, admin);
    if (!ctx.alive()) return;
    session = r.session;
    drawInfo();
    r.messages.forEach(add);
  };

  await load();
  ctx.heading(ta('chat.transcript', { id: sid }));
  clear(root,
    h('p', null, ctx.link('/admin/chat', ta('chat.back'))),
    info, log,
    h('form', {
      class: 'adm-reply',
      onsubmit: async (e) => {
        e.preventDefault();
        const text = reply.input.value.trim();
        if (!text) { reply.input.focus(); return; }
        send.disabled = true;
        try {
          add(await api('POST', `${path}/messages`, { text }, admin));
          reply.input.value = '';
          ctx.announce(ta('chat.sent'));
        } catch (err) {
          ctx.fail(err);
        } finally {
          send.disabled = false;
        }
      },
    }, reply.node, h('div', { class: 'actions' }, send, close)));
  ctx.every(transcriptEvery, () => load().catch(ctx.fail));
}
