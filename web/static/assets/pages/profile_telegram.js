// The Telegram section of the profile page (profile.js appends it): link
// the account to a chat with the bot, turn the notifications there on or
// off, unlink. "Link Telegram" opens the bot's deep link
// (POST /api/v1/auth/telegram/link, asked again at the click: a link
// replaces the account's older ones) in a new tab; the section then waits,
// asking GET /auth/me every few seconds, until the bot has linked the
// chat, and then shows "Linked". A server without a bot answers the link
// 503 telegram_not_configured: the section stays hidden then (unless the
// account is linked already, to let it unlink).
import { h, clear } from '../dom.js';
import { t } from '../i18n.js';
import { api } from '../api.js';
import { getMe, setMe, loadMe } from '../state.js';
import { inlineAlert, statusBox, announce } from '../ui.js';

// pollEvery is how often the waiting section asks whether the chat is linked.
const pollEvery = 3000;

// telegramSection returns the section, hidden until it knows what to show.
export function telegramSection(ctx) {
  const alert = inlineAlert();
  const status = statusBox();
  const body = h('div');
  const section = h('section', { 'aria-labelledby': 'telegram-title', class: 'card', id: 'telegram', hidden: true },
    h('h2', { id: 'telegram-title' }, t('telegram.title')), alert, body, status);
  let link = null; // {url, expires_at}
  let timer = 0;
  let gone = false;
  ctx.onCleanup(() => {
    gone = true;
    window.clearTimeout(timer);
  });

  async function fetchLink() {
    const l = await api('POST', '/auth/telegram/link', null, { signal: ctx.signal });
    link = { url: l.url, expires: Date.parse(l.expires_at) };
    return link;
  }

  function paintUnlinked() {
    const a = h('a', { class: 'btn btn-primary', href: link.url, target: '_blank', rel: 'noopener noreferrer', id: 'telegram-link' }, t('telegram.link'));
    a.addEventListener('click', async (e) => {
      // A new link on every click: another tab of the profile may have
      // asked for one since, which replaced this one. The tab opens at
      // once (a tab opened after waiting for the server is a pop-up
      // browsers block) and goes to the link when it comes.
      e.preventDefault();
      alert.textContent = '';
      const tab = window.open('about:blank', '_blank');
      try {
        await fetchLink();
      } catch (err) {
        if (tab) tab.close();
        alert.textContent = err.message;
        return;
      }
      a.href = link.url;
      if (tab) {
        tab.opener = null;
        tab.location.href = link.url;
      } else {
        window.location.href = link.url;
      }
      wait();
    });
    clear(body, h('p', null, t('telegram.about')), h('div', { class: 'actions' }, a));
  }

  // wait asks the server, every pollEvery, whether the chat is linked,
  // until it is or the link expires.
  function wait() {
    window.clearTimeout(timer);
    status.textContent = t('telegram.waiting');
    const until = link.expires;
    const tick = async () => {
      if (gone) return;
      const me = await loadMe();
      if (gone) return;
      if (me && me.telegram_verified) {
        status.textContent = '';
        announce(t('telegram.linked_now'));
        paintLinked(me);
        return;
      }
      if (Date.now() > until) {
        status.textContent = t('telegram.expired');
        try {
          await fetchLink();
          paintUnlinked();
        } catch (err) {
          alert.textContent = err.message;
        }
        return;
      }
      timer = window.setTimeout(tick, pollEvery);
    };
    timer = window.setTimeout(tick, pollEvery);
  }

  function paintLinked(me) {
    const toggle = h('input', { type: 'checkbox', id: 'telegram-notifications', checked: Boolean(me.telegram_notifications) });
    toggle.addEventListener('change', async () => {
      alert.textContent = '';
      const on = toggle.checked;
      try {
        const r = await api('PATCH', '/auth/me', { telegram_notifications: on });
        setMe({ ...getMe(), ...r.user });
        status.textContent = on ? t('telegram.notifications_on') : t('telegram.notifications_off');
      } catch (err) {
        toggle.checked = !on;
        alert.textContent = err.message;
      }
    });
    const unlink = h('button', { type: 'button', class: 'btn' }, t('telegram.unlink'));
    unlink.addEventListener('click', async () => {
      alert.textContent = '';
      try {
        await api('DELETE', '/auth/telegram');
      } catch (err) {
        alert.textContent = err.message;
        return;
      }
      await loadMe();
      status.textContent = t('telegram.unlinked');
      if (gone) return;
      try {
        await fetchLink();
        paintUnlinked();
        section.querySelector('#telegram-link').focus();
      } catch {
        // No bot any more: nothing left to do here.
        section.hidden = true;
      }
    });
    clear(body,
      h('p', null, h('strong', { class: 'badge' }, t('telegram.linked')), ' ', t('telegram.linked_about')),
      h('div', { class: 'field-check' }, toggle, h('label', { for: toggle.id }, t('telegram.notifications'))),
      h('div', { class: 'actions' }, unlink));
  }

  (async () => {
    const me = getMe();
    if (me && me.telegram_verified) {
      section.hidden = false;
      paintLinked(me);
      return;
    }
    try {
      await fetchLink();
    } catch (err) {
      if (err && err.name === 'AbortError') return;
      // telegram_not_configured: no bot, no section. Any other failure
      // is said where the section would be.
      if (err && err.code === 'telegram_not_configured') return;
      section.hidden = false;
      alert.textContent = err.message;
      return;
    }
    if (gone) return;
    section.hidden = false;
    paintUnlinked();
  })();
  return section;
}
