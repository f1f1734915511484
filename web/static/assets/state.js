// The signed-in user (GET /api/v1/auth/me's user, or null) and the unread
// notification count, with change listeners. The session itself is the
// HttpOnly cookie: this only mirrors what the server said about it.
import { api } from './api.js';

let me = null;
let unread = 0;
let known = false;
const listeners = new Set();

function emit() {
  for (const fn of listeners) fn({ me, unread });
}

// onChange(fn) calls fn({me, unread}) after every change; returns the unsubscribe.
export function onChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function getMe() {
  return me;
}

export function isKnown() {
  return known;
}

// HINT remembers, in this browser, that a session cookie was set, so
// that a visitor who never signed in is not asked GET /auth/me (an
// answer 401 on every page). It is no secret: the cookie, which scripts
// cannot read, stays the only credential.
const HINT = 'predictkit-signed-in';

function hint(on) {
  try {
    if (on) window.localStorage.setItem(HINT, '1');
    else window.localStorage.removeItem(HINT);
  } catch {
    // no storage: every page asks the server
  }
}

function hinted() {
  try {
    return window.localStorage.getItem(HINT) !== null;
  } catch {
    return true;
  }
}

export function setMe(user) {
  me = user || null;
  known = true;
  if (!me) unread = 0;
  hint(Boolean(me));
  emit();
}

// patchMe merges fields (balances from the stream) into the user.
export function patchMe(fields) {
  if (!me) return;
  me = { ...me, ...fields };
  emit();
}

export function getUnread() {
  return unread;
}

export function setUnread(n) {
  unread = Math.max(0, n);
  emit();
}

let loading = null;
// loadMe asks the server who the cookie belongs to (null when nobody).
export function loadMe() {
  if (!me && !hinted()) {
    setMe(null);
    loading = Promise.resolve(null);
    return loading;
  }
  loading = api('GET', '/auth/me', null, { quiet401: true })
    .then((r) => {
      setMe(r.user);
      return me;
    })
    .catch((e) => {
      if (e && e.status === 401) setMe(null);
      else known = true;
      return me;
    });
  return loading;
}

// ready() resolves once the first loadMe has answered.
export function ready() {
  return loading || loadMe();
}

export async function refreshUnread() {
  if (!me) return;
  try {
    const list = await api('GET', '/notifications/unread');
    setUnread(Array.isArray(list) ? list.length : 0);
  } catch {
    // the count is a convenience; the notifications page shows errors
  }
}
