// The operator console at /admin: the app's router imports this module
// lazily and calls render(main, path) for every path under /admin. The
// operator types the admin token into a password field; it lives only in
// api.js's memory (setAdminToken), so a reload asks for it again, and is
// sent as Authorization: Bearer on the /api/v1/admin routes.

import { api, setAdminToken } from '../api.js';
import { h, clear, errorText } from './ui.js';
import { ta } from './i18n-admin.js';
import { usersPage } from './users.js';
import { partnersPage } from './partners.js';
import { chatPage } from './chat.js';
import { marketsPage } from './markets.js';
import { auditPage } from './audit.js';
import { proposalsPage } from './proposals.js';
import { withdrawalsPage } from './withdrawals.js';
import { statsPage } from './stats.js';

const sections = [
  ['users', usersPage],
  ['partners', partnersPage],
  ['chat', chatPage],
  ['markets', marketsPage],
  ['proposals', proposalsPage],
  ['withdrawals', withdrawalsPage],
  ['stats', statsPage],
  ['audit', auditPage],
];

// signedIn: the token in api.js was accepted by the server. The token
// itself is never kept here.
let signedIn = false;
// generation counts renders: a page's timers and late answers check that
// theirs is still the current one (alive()) before touching the DOM.
let generation = 0;
// focusHeading: the next render moves the focus to its heading or field
// (after a sign-in or sign-out, whose form is gone; the app's router
// moves it after a navigation).
let focusHeading = false;
// notice is a message for the next render's status ({text, alert}): what
// happened to the sign-in.
let notice = null;

function ensureStyles() {
  if (document.querySelector('link[data-admin-css]')) return;
  document.head.append(h('link', { rel: 'stylesheet', href: '/assets/admin/admin.css', 'data-admin-css': true }));
}

// The console has its own layout, not the bettor app's chrome: while a
// console page is in the document, admin.css (html:has(.adm)) hides the
// app's header and footer, and the console draws its own bar and
// sidebar. Nothing to undo on leaving: the app's router replaces it.

// bar is the console's own top bar: its name, the way back to the app,
// and (signed in) the sign-out button.
function bar(signOut) {
  return h('div', { class: 'adm-bar' },
    h('span', { class: 'adm-brand' }, ta('layout.brand')),
    h('a', { href: '/', class: 'adm-back' }, ta('layout.back')),
    signOut);
}

// go navigates to path through the app's History-API router, which
// renders on popstate (links need nothing: the router follows clicks on
// same-origin links itself).
function go(path) {
  history.pushState(null, '', path);
  window.dispatchEvent(new PopStateEvent('popstate', { state: null }));
}

// render draws the console page for path (/admin, /admin/users,
// /admin/partners/7, …) into main.
export async function render(main, path) {
  const my = ++generation;
  ensureStyles();
  const parts = String(path || '/admin').split('?')[0].split('/').filter(Boolean).slice(1);
  const [name = 'users', ...rest] = parts;
  const section = sections.find(([n]) => n === name) || sections[0];

  const heading = h('h1', { tabindex: '-1', id: 'page-title' });
  const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const alert = h('div', { class: 'alert', role: 'alert' });
  const page = h('div', { class: 'adm-page' });
  const root = h('div', { class: 'adm' });
  const ctx = {
    // alive: this render is still the one shown (the operator has not
    // gone to another page, of the console or of the app).
    alive: () => my === generation && root.isConnected,
    announce: (msg) => { if (ctx.alive()) { clear(alert); clear(status, msg); } },
    fail: (err) => {
      if (!ctx.alive()) return;
      if (err && err.status === 401) {
        signedIn = false;
        setAdminToken('');
        notice = { text: ta('error.unauthorized'), alert: true };
        render(main, path);
        return;
      }
      clear(status);
      clear(alert, errorText(err));
    },
    heading: (text) => { clear(heading, text); document.title = `${text} · predictkit`; },
    go,
    link: (p, label) => h('a', { href: p }, label),
    // every runs fn every ms milliseconds while this page is shown.
    every: (ms, fn) => {
      const timer = setInterval(() => { if (ctx.alive()) fn(); else clearInterval(timer); }, ms);
    },
  };

  const shown = notice;
  notice = null;
  if (shown) clear(shown.alert ? alert : status, shown.text);
  if (!signedIn) {
    renderLogin(main, root, path, ctx, heading, status, alert);
    return;
  }

  root.classList.add('adm-console');
  clear(main, clear(root,
    bar(h('button', {
      type: 'button', class: 'btn',
      onclick: () => {
        signedIn = false;
        setAdminToken('');
        focusHeading = true;
        notice = { text: ta('signedOut') };
        render(main, path);
      },
    }, ta('signOut'))),
    h('div', { class: 'adm-body' },
      h('nav', { class: 'adm-nav adm-side', 'aria-label': ta('nav.label') },
        h('ul', null, sections.map(([n]) => h('li', null, h('a', { href: '/admin/' + n, 'aria-current': n === section[0] ? 'page' : null }, ta('nav.' + n)))))),
      h('div', { class: 'adm-content' }, heading, status, alert, page))));
  ctx.heading(ta('nav.' + section[0]));
  if (focusHeading) { focusHeading = false; heading.focus(); }
  try {
    await section[1](page, ctx, rest);
  } catch (err) {
    ctx.fail(err);
  }
  if (ctx.alive()) document.documentElement.dataset.adminReady = section[0];
}

function renderLogin(main, root, path, ctx, heading, status, alert) {
  const input = h('input', { id: 'admin-token', type: 'password', name: 'admin-token', autocomplete: 'off', required: true, spellcheck: 'false' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, ta('login.submit'));
  const form = h('form', {
    class: 'adm-login',
    onsubmit: async (e) => {
      e.preventDefault();
      const token = input.value.trim();
      if (!token) { input.focus(); return; }
      submit.disabled = true;
      clear(alert);
      clear(status, ta('login.checking'));
      setAdminToken(token);
      input.value = '';
      try {
        // The cheapest operator route tells a good token from a bad one.
        await api('GET', '/api/v1/admin/users?limit=1', undefined, { admin: true });
        signedIn = true;
        focusHeading = true;
        notice = { text: ta('login.signedIn') };
        await render(main, path);
      } catch (err) {
        setAdminToken('');
        submit.disabled = false;
        clear(status);
        if (err && err.status === 401) clear(alert, ta('login.wrong'));
        else if (err && err.status === 404) clear(alert, ta('login.disabled'));
        else clear(alert, errorText(err));
        input.focus();
      }
    },
  },
  h('p', { class: 'muted', id: 'admin-token-hint' }, ta('login.intro')),
  h('div', { class: 'field' }, h('label', { for: 'admin-token' }, ta('login.token')), input),
  h('div', { class: 'actions' }, submit),
  status, alert);
  input.setAttribute('aria-describedby', 'admin-token-hint');
  root.classList.add('adm-login-page');
  clear(main, clear(root, bar(null), h('div', { class: 'adm-content' }, heading, form)));
  ctx.heading(ta('login.heading'));
  if (focusHeading) { focusHeading = false; input.focus(); }
  document.documentElement.dataset.adminReady = 'login';
}
