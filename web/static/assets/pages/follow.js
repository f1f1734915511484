// The Follow / Following toggle of an event page (PUT and DELETE
// /api/v1/events/{id}/follow). A follower is told of the event's
// resolutions, new answers and amendments. Self-contained: event.js
// appends followButton(ev.id, ctx) and nothing else.
import { h, clear } from '../dom.js';
import { t } from '../i18n.js';
import { api } from '../api.js';
import { getMe } from '../state.js';
import { showError, announce } from '../ui.js';

// isFollowing reads the caller's followed events (GET
// /users/me/following, pages of 50) until it finds eventId.
async function isFollowing(eventId, signal) {
  let cursor = null;
  for (let pages = 0; pages < 20; pages += 1) {
    const r = await api('GET', '/users/me/following?limit=50' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''), null, { signal });
    if ((r.events || []).some((e) => String(e.id) === String(eventId))) return true;
    cursor = r.next_cursor;
    if (!cursor) return false;
  }
  return false;
}

// followButton returns a box holding the toggle: for signed-in users a
// button (aria-pressed says whether they follow), for visitors a link to
// log in.
export function followButton(eventId, ctx) {
  const box = h('div', { class: 'follow-box actions' });
  if (!getMe()) {
    clear(box, h('a', { class: 'btn btn-small', href: `/login?next=/events/${eventId}` }, t('follow.login')));
    return box;
  }
  let on = false;
  const btn = h('button', { type: 'button', class: 'btn btn-small', 'aria-pressed': 'false', disabled: true }, t('follow.follow'));
  const paint = () => {
    btn.setAttribute('aria-pressed', on ? 'true' : 'false');
    btn.textContent = on ? t('follow.following') : t('follow.follow');
    btn.title = on ? t('follow.unfollow_hint') : t('follow.follow_hint');
  };
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    try {
      await api(on ? 'DELETE' : 'PUT', `/events/${eventId}/follow`, null, { signal: ctx.signal });
      on = !on;
      paint();
      announce(on ? t('follow.now_following') : t('follow.now_unfollowed'));
    } catch (e) {
      showError(e);
    } finally {
      btn.disabled = false;
    }
  });
  clear(box, btn);
  isFollowing(eventId, ctx.signal).then((v) => {
    on = v;
    paint();
    btn.disabled = false;
  }).catch((e) => {
    btn.disabled = false;
    showError(e);
  });
  paint();
  return box;
}
