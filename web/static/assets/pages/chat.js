// The support chat. The session is named by the chat_session_id cookie
// (HttpOnly, set by POST /api/v1/chat/session). The live stream does not
// carry chat messages, so while this page is open it reads the history
// every few seconds (and at once when a support_reply notification comes).
import { h, field } from '../dom.js';
import { t, language, time } from '../i18n.js';
import { api } from '../api.js';
import { ready, getMe } from '../state.js';
import { pageHeading, inlineAlert, statusBox, showError } from '../ui.js';
import { onMeEvent } from '../app.js';

const POLL_MS = 4000;
const CHAT_HINT = 'predictkit-chat';

export async function render(main, ctx) {
  main.append(pageHeading(t('chat.title')), h('p', { class: 'muted' }, t('chat.intro')));
  await ready();
  if (!ctx.isCurrent()) return;
  const alert = inlineAlert();
  const info = statusBox();
  const log = h('div', { class: 'chat-log', role: 'log', 'aria-live': 'polite', 'aria-label': t('chat.log'), tabindex: '0' });
  const input = h('textarea', { maxlength: '4000', required: true, rows: '3' });
  const sendBtn = h('button', { type: 'submit', class: 'btn btn-primary' }, t('chat.send'));
  const callBtn = h('button', { type: 'button', class: 'btn' }, t('chat.call_operator'));
  const form = h('form', { novalidate: true }, alert, field(t('chat.message'), input), h('div', { class: 'actions' }, sendBtn, callBtn));
  main.append(log, info, form);

  let session = null;
  const seen = new Set();

  function message(m) {
    const mine = m.sender === 'user';
    return h('div', { class: mine ? 'chat-msg mine' : 'chat-msg' },
      h('p', { class: 'meta' }, mine ? t('chat.you') : t('chat.support'), ' · ', time(m.created_at)),
      h('div', null, m.text));
  }

  function addMessages(msgs) {
    let added = false;
    for (const m of msgs) {
      if (!m || seen.has(m.id)) continue;
      seen.add(m.id);
      const none = log.querySelector('.empty-item');
      if (none) none.remove();
      log.append(message(m));
      added = true;
    }
    if (added) log.scrollTop = log.scrollHeight;
  }

  function paintSession() {
    if (!session) return;
    if (session.closed) info.textContent = t('chat.closed');
    else if (session.escalated) info.textContent = t('chat.escalated');
    callBtn.disabled = Boolean(session.escalated || session.closed);
  }

  // A session is opened when the visitor first writes, not when the page
  // is shown, so that looking at the page leaves no empty session in the
  // operators' queue; CHAT_HINT remembers in this browser that one was
  // opened (the cookie that names it is HttpOnly).
  async function open() {
    session = await api('POST', '/chat/session', { language: language() }, { quiet401: true });
    try {
      window.localStorage.setItem(CHAT_HINT, '1');
    } catch {
      // no storage: the page opens the session when the visitor writes
    }
    paintSession();
  }

  async function history() {
    const r = await api('GET', '/chat/history', null, { quiet401: true, signal: ctx.signal });
    const msgs = r.messages || [];
    if (!msgs.length && !seen.size && !log.querySelector('.empty-item')) {
      log.append(h('p', { class: 'empty-item muted' }, t('chat.empty')));
    }
    addMessages(msgs);
  }

  let hinted = false;
  try {
    hinted = window.localStorage.getItem(CHAT_HINT) !== null;
  } catch {
    hinted = false;
  }
  // A signed-in user's chat belongs to their account, so another browser
  // of theirs has it too: read its history first, and resume it (POST
  // /chat/session answers the account's chat) only when there is one.
  const signedIn = Boolean(getMe());
  if (hinted || signedIn) {
    try {
      if (signedIn && !hinted) {
        await history();
        await open();
      } else {
        await open();
        await history();
      }
    } catch (e) {
      if (e.status !== 401) showError(e);
      else if (!log.querySelector('.empty-item')) log.append(h('p', { class: 'empty-item muted' }, t('chat.empty')));
    }
  } else {
    log.append(h('p', { class: 'empty-item muted' }, t('chat.empty')));
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    alert.textContent = '';
    const text = input.value;
    if (!text.trim()) return;
    sendBtn.disabled = true;
    try {
      if (!session || session.closed) await open();
      let r;
      try {
        r = await api('POST', '/chat/messages', { text }, { quiet401: true });
      } catch (err) {
        // The session ended meanwhile (closed by support, or signed out):
        // open a new one and send again, once.
        if (err.status !== 404) throw err;
        await open();
        r = await api('POST', '/chat/messages', { text }, { quiet401: true });
      }
      input.value = '';
      addMessages([{ id: r.id, sender: r.sender, text: r.text, created_at: r.created_at }, r.reply]);
      if (r.offer_operator && !(session && session.escalated)) info.textContent = t('chat.offer');
    } catch (err) {
      alert.textContent = err.message;
    } finally {
      sendBtn.disabled = false;
      input.focus();
    }
  });

  callBtn.addEventListener('click', async () => {
    alert.textContent = '';
    try {
      if (!session || session.closed) await open();
      const r = await api('POST', '/chat/session/call-operator', null, { quiet401: true });
      session = { ...session, escalated: true };
      paintSession();
      info.textContent = r.message || t('chat.escalated');
    } catch (err) {
      alert.textContent = err.message;
    }
  });

  const poll = async () => {
    if (!session) return;
    try {
      await history();
    } catch {
      // a missed poll is retried on the next tick
    }
  };
  const timer = window.setInterval(poll, POLL_MS);
  ctx.onCleanup(() => window.clearInterval(timer));
  ctx.onCleanup(onMeEvent((type, data) => {
    if (type === 'notification' && data.type === 'support_reply') poll();
  }));
}
