// The one way the app talks to the server: api(method, path, body, opts)
// returns the parsed JSON answer (null for 204) or throws an ApiError.
// The bettor's session rides in the HttpOnly predictkit_session cookie,
// which the browser sends by itself; JavaScript never sees it. The
// operator's admin token lives only in this module's memory.
import { t, has } from './i18n.js';

export class ApiError extends Error {
  constructor(status, code, message, detail) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.detail = detail || '';
  }
}

let adminToken = '';

// setAdminToken(token) makes api(..., {admin: true}) send it; '' forgets it.
export function setAdminToken(token) {
  adminToken = token || '';
}

export function hasAdminToken() {
  return adminToken !== '';
}

const unauthorizedHandlers = new Set();
// onUnauthorized(fn) runs fn when a user request (not admin, not the
// session probe) answers 401: the cookie's session has ended.
export function onUnauthorized(fn) {
  unauthorizedHandlers.add(fn);
  return () => unauthorizedHandlers.delete(fn);
}

// query({a: 1, b: ''}) is "?a=1": empty, null and undefined values are left out.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue;
    q.set(k, String(v));
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

// errorMessage picks the text shown to the user: a translated code when
// the app knows it, else the server's detail, else the code.
function errorMessage(status, code, detail) {
  const key = 'error.' + String(code || '').toLowerCase().replace(/\s+/g, '_');
  let msg;
  if (code && has(key)) msg = t(key);
  else if (code) msg = String(code).replace(/_/g, ' ');
  else msg = t('error.http', { status });
  if (detail) msg += ' (' + detail + ')';
  return msg;
}

// api('GET', '/events') or api('GET', '/api/v1/events'): paths without the
// /api/ prefix are under /api/v1. opts: admin (send the admin token),
// bearer (send this token instead of the cookie, once: used right after
// registration), signal (AbortSignal), quiet401 (no session-ended hook).
export async function api(method, path, body, opts = {}) {
  const url = path.startsWith('/api/') ? path : '/api/v1' + (path.startsWith('/') ? path : '/' + path);
  const headers = { Accept: 'application/json' };
  // cache 'no-cache': the public reads say a cache may keep them a second
  // (for a CDN and the viewers it serves), but the app reads right after
  // its own writes; it revalidates every read (a 304 when unchanged).
  const init = { method, headers, credentials: 'same-origin', signal: opts.signal, cache: 'no-cache' };
  if (body !== undefined && body !== null) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  if (opts.admin) headers.Authorization = 'Bearer ' + adminToken;
  else if (opts.bearer) headers.Authorization = 'Bearer ' + opts.bearer;
  let res;
  try {
    res = await fetch(url, init);
  } catch (e) {
    if (e && e.name === 'AbortError') throw e;
    throw new ApiError(0, 'network', t('error.network'));
  }
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    const code = data && typeof data.error === 'string' ? data.error : '';
    const detail = data && typeof data.detail === 'string' ? data.detail : '';
    const err = new ApiError(res.status, code, errorMessage(res.status, code, detail), detail);
    if (res.status === 401 && code.toLowerCase() === 'unauthorized' && !opts.admin && !opts.quiet401) {
      for (const fn of unauthorizedHandlers) fn(err);
    }
    if (res.status === 429) {
      const after = res.headers.get('Retry-After');
      if (after) err.message += ' ' + t('error.retry_after', { s: after });
    }
    throw err;
  }
  return data;
}
