// The app's entry: the header, language and theme, the signed-in user's
// live stream (me topic, authenticated by the session cookie), and the
// router, which imports each page's module when it is first shown.
import { h, clear, field, select } from './dom.js';
import { t, setLanguage, browserLanguage, language, money } from './i18n.js';
import { api, onUnauthorized } from './api.js';
import { getMe, setMe, onChange, loadMe, ready, getUnread, setUnread, patchMe, refreshUnread } from './state.js';
import { showError, clearError, announce } from './ui.js';

// ---- language and theme ----------------------------------------------

const LANG_KEY = 'predictkit-language';
const THEME_KEY = 'predictkit-theme';

// applyTheme('light' | 'dark' | 'system'): 'system' follows the browser's
// prefers-color-scheme (the CSS does that when data-theme is absent).
export function applyTheme(theme) {
  const root = document.documentElement;
  if (theme === 'light' || theme === 'dark') root.dataset.theme = theme;
  else delete root.dataset.theme;
}

// Anonymous visitors' choices stay in this browser (they are no secret);
// a signed-in user's come from the profile.
function storedPref(key) {
  try {
    return window.localStorage.getItem(key) || '';
  } catch {
    return '';
  }
}

export function storePrefs(lang, theme) {
  try {
    if (lang) window.localStorage.setItem(LANG_KEY, lang);
    if (theme) window.localStorage.setItem(THEME_KEY, theme);
  } catch {
    // private browsing: the choice lasts for this page only
  }
}

function prefsFor(me) {
  if (me) return { lang: me.language || 'en', theme: me.theme || 'system' };
  return { lang: storedPref(LANG_KEY) || browserLanguage(), theme: storedPref(THEME_KEY) || 'system' };
}

// setPreferences changes language and/or theme now, saving them to the
// profile when signed in (PATCH /auth/me) or to this browser otherwise.
export async function setPreferences({ lang, theme }) {
  const me = getMe();
  if (me) {
    const body = {};
    if (lang) body.language = lang;
    if (theme) body.theme = theme;
    const r = await api('PATCH', '/auth/me', body);
    setMe(r.user);
  } else {
    storePrefs(lang, theme);
  }
  if (applyPrefs()) rerender();
  // A new language redraws the page: let the caller find its controls again.
  await currentRender;
}

let appliedLang = '';
function applyPrefs() {
  const p = prefsFor(getMe());
  setLanguage(p.lang);
  applyTheme(p.theme);
  if (appliedLang && appliedLang !== p.lang) {
    appliedLang = p.lang;
    return true;
  }
  appliedLang = p.lang;
  return false;
}

// ---- header ----------------------------------------------------------

const navItems = [
  ['/', 'nav.events'],
  ['/leaderboard', 'nav.leaderboard'],
  ['/p2p', 'nav.p2p'],
  ['/chat', 'nav.chat'],
];

let headerKey = '';

// renderHeader rebuilds the header when the user, the language or the
// page changed; balances and the unread count are updated in place so
// that keyboard focus in the header survives live updates.
function renderHeader() {
  const header = document.getElementById('site-header');
  const me = getMe();
  const path = location.pathname;
  const key = [me ? me.id : '', language(), path].join('|');
  if (key === headerKey) {
    updateHeaderLive();
    return;
  }
  headerKey = key;
  renderFooter();
  const link = (href, label, extra) => {
    const current = href === '/' ? path === '/' || (path.startsWith('/events') && path !== '/events/new') : path === href || path.startsWith(href + '/');
    return h('li', null, h('a', { href, 'aria-current': current ? 'page' : null }, label, extra));
  };
  const items = navItems.map(([href, key]) => link(href, t(key)));
  if (me && (me.may_create_events || me.may_propose_events)) {
    items.push(link('/events/new', me.may_create_events ? t('nav.new_event') : t('nav.propose_event')));
  }
  // Statistics: only for the users the operator made statistics viewers.
  if (me && me.is_stats_viewer) items.push(link('/stats', t('nav.stats')));
  if (me) {
    items.push(link('/deposit', t('nav.deposit')));
    items.push(link('/withdraw', t('nav.withdraw')));
    items.push(link('/following', t('nav.following')));
    items.push(link('/notifications', t('nav.notifications'), h('span', { 'data-unread': '' })));
    items.push(link('/profile', t('nav.profile')));
  } else {
    items.push(link('/login', t('nav.login')));
    items.push(link('/register', t('nav.register')));
  }
  const skip = h('a', { class: 'skip-link', href: '#main' }, t('nav.skip'));
  skip.addEventListener('click', (e) => {
    e.preventDefault();
    document.getElementById('main').focus();
  });
  clear(
    header,
    skip,
    h('div', { class: 'header-inner' },
      h('a', { class: 'brand', href: '/' }, 'predictkit'),
      h('nav', { 'aria-label': t('nav.label') }, h('ul', { class: 'nav-list' }, items)),
      me ? h('div', { class: 'header-user' },
        h('span', { class: 'header-balance' }, h('span', { class: 'muted' }, t('header.balance') + ' '), h('span', { 'data-balance': '' })),
        h('button', { type: 'button', class: 'btn btn-small', onClick: logout }, t('action.logout'))) : null));
  updateHeaderLive();
}

function updateHeaderLive() {
  const header = document.getElementById('site-header');
  const me = getMe();
  const bal = header.querySelector('[data-balance]');
  if (bal && me) bal.textContent = money(me.total_balance);
  const slot = header.querySelector('[data-unread]');
  if (slot) {
    const n = getUnread();
    if (n > 0) {
      clear(slot, ' ', h('span', { class: 'badge' }, h('span', { 'aria-hidden': 'true' }, n > 99 ? '99+' : String(n)), h('span', { class: 'sr-only' }, t('nav.unread', { n }))));
    } else {
      clear(slot);
    }
  }
}

// renderFooter offers visitors who are not signed in a language and a
// theme other than their browser's (kept in this browser); a signed-in
// user sets them on the profile page.
let footerKey = '';
function renderFooter() {
  const footer = document.getElementById('site-footer');
  if (!footer) return;
  const me = getMe();
  const key = me ? 'user' : 'visitor|' + language();
  if (key === footerKey) return;
  footerKey = key;
  if (me) {
    clear(footer);
    return;
  }
  const prefs = prefsFor(null);
  const lang = select([['en', t('lang.en')], ['ru', t('lang.ru')]], prefs.lang, { id: 'footer-language' });
  const theme = select([['light', t('profile.theme.light')], ['dark', t('profile.theme.dark')], ['system', t('profile.theme.system')]], prefs.theme, { id: 'footer-theme' });
  lang.addEventListener('change', async () => {
    await setPreferences({ lang: lang.value });
    const again = document.getElementById('footer-language');
    if (again) again.focus();
  });
  theme.addEventListener('change', () => setPreferences({ theme: theme.value }));
  clear(footer, h('div', { class: 'footer-inner' }, field(t('profile.language'), lang), field(t('profile.theme'), theme)));
}

export async function logout() {
  try {
    await api('DELETE', '/auth/session');
  } catch (e) {
    showError(e);
    return;
  }
  setMe(null);
  // The server forgot this user's chat sessions: the chat page opens a
  // new one when the visitor next writes.
  try {
    window.localStorage.removeItem('predictkit-chat');
  } catch {
    // nothing remembered
  }
  navigate('/');
}

// ---- the me stream ---------------------------------------------------

let meStream = null;
let unreadTimer = 0;

function scheduleUnread() {
  window.clearTimeout(unreadTimer);
  unreadTimer = window.setTimeout(refreshUnread, 300);
}

const meListeners = new Set();
// onMeEvent(fn) gets every message of the me topic as fn(type, data).
export function onMeEvent(fn) {
  meListeners.add(fn);
  return () => meListeners.delete(fn);
}

function openMeStream() {
  if (meStream || typeof EventSource === 'undefined') return;
  const es = new EventSource('/api/v1/stream?topics=me');
  meStream = es;
  const dispatch = (type, e) => {
    let data;
    try {
      data = JSON.parse(e.data);
    } catch {
      return;
    }
    if (type === 'balance') patchMe({ balance: data.balance, bonus_balance: data.bonus_balance, total_balance: data.total_balance });
    if (type === 'notification') {
      if (data.balances) patchMe(data.balances);
      setUnread(getUnread() + 1);
      scheduleUnread();
      // The stream words notifications in English; the list page shows
      // them in the profile's language.
      announce(language() === 'en' && data.title ? t('notifications.new', { title: data.title }) : t('notifications.new_any'));
    }
    if (type === 'reset') scheduleUnread();
    for (const fn of meListeners) fn(type, data);
  };
  // deposit and withdrawal: the new state of one of this user's deposits
  // or withdrawals (the Deposit and Withdraw pages follow them).
  for (const type of ['balance', 'notification', 'reset', 'deposit', 'withdrawal']) es.addEventListener(type, (e) => dispatch(type, e));
  es.onerror = () => {
    // EventSource retries by itself; when the server refused the
    // stream (signed out), it gives up: stop following.
    if (es.readyState === EventSource.CLOSED && meStream === es) meStream = null;
  };
}

function closeMeStream() {
  if (meStream) meStream.close();
  meStream = null;
}

// ---- router ----------------------------------------------------------

const routes = [
  [/^\/$/, () => import('./pages/feed.js')],
  [/^\/events\/(\d+)$/, () => import('./pages/event.js')],
  [/^\/events\/new$/, () => import('./pages/new_event.js')],
  [/^\/login$/, () => import('./pages/auth.js'), 'login'],
  [/^\/register$/, () => import('./pages/auth.js'), 'register'],
  [/^\/forgot-password$/, () => import('./pages/reset.js'), 'forgot'],
  [/^\/reset-password$/, () => import('./pages/reset.js'), 'reset'],
  [/^\/profile$/, () => import('./pages/profile.js')],
  [/^\/notifications$/, () => import('./pages/notifications.js')],
  [/^\/chat$/, () => import('./pages/chat.js')],
  [/^\/p2p$/, () => import('./pages/p2p.js')],
  [/^\/leaderboard$/, () => import('./pages/leaderboard.js')],
  [/^\/users\/(\d+)$/, () => import('./pages/user.js')],
  [/^\/following$/, () => import('./pages/following.js')],
  [/^\/deposit$/, () => import('./pages/deposit.js')],
  [/^\/withdraw$/, () => import('./pages/withdraw.js')],
  [/^\/stats$/, () => import('./stats/page.js')],
  [/^\/tags\/([a-z0-9-]{1,32})$/, () => import('./pages/feed.js'), 'tag'],
];

let cleanups = [];
let controller = null;
let renderSeq = 0;

function runCleanups() {
  for (const fn of cleanups) {
    try {
      fn();
    } catch {
      // a page's cleanup must not stop the next page
    }
  }
  cleanups = [];
  if (controller) controller.abort();
  controller = null;
}

// navigate(path) shows another page without reloading.
export function navigate(path, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  window.scrollTo(0, 0);
  return render(true);
}

export function rerender() {
  return render(false);
}

// The operator console is its own module, loaded only under /admin. Until
// it exists (or when it cannot load) the route still answers, with its
// heading.
async function renderAdmin(main, path, seq) {
  let mod;
  try {
    mod = await import('./admin/admin.js');
  } catch {
    mod = null;
  }
  if (seq !== renderSeq) return;
  if (!mod || typeof mod.render !== 'function') {
    document.title = t('admin.title') + ' · predictkit';
    clear(main, h('h1', { tabindex: '-1', id: 'page-title' }, t('admin.title')), h('p', { class: 'muted' }, t('admin.unavailable')));
    return;
  }
  try {
    await mod.render(main, path);
  } catch (e) {
    if (seq === renderSeq) showError(e);
  }
}

let currentRender = Promise.resolve();

function render(moveFocus) {
  currentRender = renderPage(moveFocus);
  return currentRender;
}

async function renderPage(moveFocus) {
  renderSeq += 1;
  const seq = renderSeq;
  runCleanups();
  clearError();
  controller = new AbortController();
  const main = document.getElementById('page');
  const path = location.pathname;
  renderHeader();
  if (path === '/admin' || path.startsWith('/admin/')) {
    clear(main);
    await renderAdmin(main, path, seq);
    if (moveFocus) focusHeading(main);
    return;
  }
  let match = null;
  let loader = null;
  let variant = '';
  for (const [re, load, v] of routes) {
    match = path.match(re);
    if (match) {
      loader = load;
      variant = v || '';
      break;
    }
  }
  if (!loader) {
    const mod = await import('./pages/notfound.js');
    if (seq !== renderSeq) return;
    clear(main);
    mod.render(main);
    if (moveFocus) focusHeading(main);
    return;
  }
  let mod;
  try {
    mod = await loader();
  } catch (e) {
    if (seq === renderSeq) showError(e);
    return;
  }
  if (seq !== renderSeq) return;
  clear(main);
  const ctx = {
    params: match.slice(1),
    variant,
    query: new URLSearchParams(location.search),
    signal: controller.signal,
    // A page that is no longer shown cleans up at once.
    onCleanup: (fn) => (seq === renderSeq ? cleanups.push(fn) : fn()),
    isCurrent: () => seq === renderSeq,
  };
  try {
    await mod.render(main, ctx);
  } catch (e) {
    if (seq === renderSeq) showError(e);
  }
  if (moveFocus && seq === renderSeq) focusHeading(main);
}

function focusHeading(main) {
  const h1 = main.querySelector('h1');
  if (h1) {
    if (!h1.hasAttribute('tabindex')) h1.setAttribute('tabindex', '-1');
    h1.focus({ preventScroll: true });
  }
}

// Same-origin links navigate inside the app, except the server's own
// pages (the API reference, the probes) and the API.
function onLinkClick(e) {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest && e.target.closest('a[href]');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin) return;
  if (/^\/(api|docs|healthz|readyz|metrics|assets)(\/|$)/.test(url.pathname)) return;
  if (url.pathname === location.pathname && url.search === location.search && url.hash) return;
  e.preventDefault();
  navigate(url.pathname + url.search + url.hash); // the hash: a comment's anchor (#comment-N)
}

// ---- start -----------------------------------------------------------

async function start() {
  applyPrefs();
  renderHeader();
  document.addEventListener('click', onLinkClick);
  window.addEventListener('popstate', () => render(true));
  onUnauthorized(() => {
    if (getMe()) {
      setMe(null);
      showError(new Error(t('error.session_ended')));
    }
  });
  let wasSignedIn = false;
  onChange(({ me }) => {
    const langChanged = applyPrefs();
    renderHeader();
    if (me && !wasSignedIn) {
      openMeStream();
      refreshUnread();
    }
    if (!me && wasSignedIn) closeMeStream();
    wasSignedIn = Boolean(me);
    if (langChanged) rerender();
  });
  loadMe();
  await render(false);
  await ready();
  // A first page redrawn meanwhile (the profile's language) counts once
  // its last drawing is done.
  for (let r = null; r !== currentRender;) {
    r = currentRender;
    await r;
  }
  // The app has drawn its first page: tests and measurements wait for this.
  document.documentElement.dataset.ready = '1';
}

start();
