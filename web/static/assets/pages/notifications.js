// Notifications, newest first (GET /api/v1/notifications), marked read
// one by one or all at once; new ones arrive on the me stream and are
// added at the top (re-read from the API, which words them in the
// profile's language).
import { h, clear } from '../dom.js';
import { t, dateTime } from '../i18n.js';
import { api, query } from '../api.js';
import { getMe, ready, refreshUnread, setUnread } from '../state.js';
import { pageHeading, empty, showError, statusBox } from '../ui.js';
import { onMeEvent } from '../app.js';

const PAGE = 50;

export async function render(main, ctx) {
  main.append(pageHeading(t('notifications.title')));
  await ready();
  if (!ctx.isCurrent()) return;
  if (!getMe()) {
    main.append(h('p', null, h('a', { href: '/login?next=/notifications' }, t('notifications.login'))));
    return;
  }
  const done = statusBox();
  const list = h('ul', { class: 'plain-list', 'aria-live': 'polite', 'aria-relevant': 'additions', 'aria-label': t('notifications.title') });
  const more = h('div', { class: 'actions' });
  const allBtn = h('button', { type: 'button', class: 'btn' }, t('notifications.mark_all'));
  main.append(h('div', { class: 'actions' }, allBtn), done, list, more);
  const shown = new Map();
  let offset = 0;

  function item(n) {
    const titleId = `notif-${n.id}`;
    const li = h('li', { class: n.read ? 'notification' : 'notification unread' });
    const paint = () => {
      // n.link is the server's page for it: a reply's is the event page
      // at the comment (#comment-N).
      // A referral reward is told on the Invite friends page, a new
      // level on the profile.
      const own = n.type === 'referral_reward' ? '/invite' : n.type === 'level_up' ? '/profile' : '';
      const href = n.link || own || (n.related_type === 'event' ? `/events/${n.related_id}` : n.related_type === 'chat' ? '/chat' : '');
      const label = n.related_type === 'chat' ? 'notifications.open_chat' : n.related_type === 'comment' ? 'notifications.open_comment'
        : n.related_type === 'withdrawal' ? 'notifications.open_withdrawals' : href === '/invite' ? 'notifications.open_invite'
          : href === '/profile' ? 'notifications.open_profile' : 'notifications.open_event';
      const link = href ? h('a', { href }, t(label)) : null;
      clear(li,
        h('article', { 'aria-labelledby': titleId },
          h('h2', { id: titleId }, n.read ? null : h('span', { class: 'sr-only' }, t('notifications.unread') + ': '), n.title),
          h('p', null, n.message),
          h('p', { class: 'meta' }, h('time', { datetime: n.created_at }, dateTime(n.created_at))),
          h('div', { class: 'actions' }, link,
            n.read ? null : h('button', { type: 'button', class: 'btn btn-small', onClick: markOne }, t('notifications.mark_read')))));
      li.className = n.read ? 'notification' : 'notification unread';
    };
    async function markOne() {
      try {
        await api('POST', `/notifications/${n.id}/read`);
        n.read = true;
        paint();
        li.querySelector('h2').setAttribute('tabindex', '-1');
        li.querySelector('h2').focus();
        refreshUnread();
      } catch (e) {
        showError(e);
      }
    }
    n.repaint = paint;
    paint();
    shown.set(n.id, n);
    return li;
  }

  async function load() {
    let r;
    try {
      r = await api('GET', '/notifications' + query({ limit: PAGE, offset }), null, { signal: ctx.signal });
    } catch (e) {
      showError(e);
      return;
    }
    const page = r.notifications || [];
    if (offset === 0 && !page.length) list.append(h('li', { class: 'empty-item' }, empty(t('notifications.empty'))));
    for (const n of page) if (!shown.has(n.id)) list.append(item(n));
    offset += page.length;
    clear(more, page.length === PAGE ? h('button', { type: 'button', class: 'btn', onClick: load }, t('action.load_more')) : null);
  }

  allBtn.addEventListener('click', async () => {
    try {
      const r = await api('POST', '/notifications/read-all');
      for (const n of shown.values()) {
        if (!n.read) {
          n.read = true;
          n.repaint();
        }
      }
      setUnread(0);
      done.textContent = t('notifications.marked', { n: r.marked });
    } catch (e) {
      showError(e);
    }
  });

  // New ones: read the newest from the API, in the profile's language.
  async function fresh() {
    try {
      const r = await api('GET', '/notifications' + query({ limit: 20, offset: 0 }), null, { signal: ctx.signal });
      const add = (r.notifications || []).filter((n) => !shown.has(n.id));
      if (!add.length) return;
      const none = list.querySelector('.empty-item');
      if (none) none.remove();
      for (const n of add.reverse()) {
        list.prepend(item(n));
        offset += 1;
      }
    } catch (e) {
      showError(e);
    }
  }
  ctx.onCleanup(onMeEvent((type) => {
    if (type === 'notification' || type === 'reset') fresh();
  }));

  await load();
}
