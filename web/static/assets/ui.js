// Page furniture shared by every page: the error region, the polite
// announcer, page headings and titles, loading and empty states.
import { h, clear } from './dom.js';
import { t } from './i18n.js';

// showError(err) puts an API error (or any error) into the page's
// role="alert" region, where screen readers announce it at once.
export function showError(err, region) {
  const box = region || document.getElementById('alerts');
  if (!box) return;
  if (err && err.name === 'AbortError') return;
  const msg = err && err.message ? err.message : String(err);
  clear(box, h('p', { class: 'alert-text' }, msg, ' ', h('button', { type: 'button', class: 'btn btn-small', onClick: () => clear(box) }, t('action.dismiss'))));
}

export function clearError(region) {
  const box = region || document.getElementById('alerts');
  if (box) clear(box);
}

// inlineAlert() is a role="alert" box for a form's own errors.
export function inlineAlert() {
  return h('div', { class: 'alert', role: 'alert' });
}

// announce(text) tells screen readers about a live change, politely.
export function announce(text) {
  const live = document.getElementById('announcer');
  if (!live) return;
  live.textContent = '';
  window.setTimeout(() => {
    live.textContent = text;
  }, 50);
}

// pageHeading sets the document title and returns the page's one h1,
// which the router focuses after a navigation.
export function pageHeading(text, extra) {
  document.title = text + ' · predictkit';
  return h('h1', { tabindex: '-1', id: 'page-title' }, text, extra);
}

export function loading() {
  return h('p', { class: 'muted', role: 'status' }, t('common.loading'));
}

export function empty(text) {
  return h('p', { class: 'muted empty' }, text);
}

// status() is a polite live region for a form's result.
export function statusBox() {
  return h('div', { class: 'status', role: 'status', 'aria-live': 'polite' });
}

// levelBadge(3) is the "Level 3" pill shown beside a user's name (the
// level follows lifetime trading volume; see the server's PREDICTKIT_LEVELS),
// or null for a user without a level (a missing field).
export function levelBadge(level) {
  const n = Number(level);
  if (!Number.isInteger(n) || n <= 0) return null;
  return h('span', { class: 'level-badge', 'data-level': String(n) }, t('level.badge', { n }));
}
