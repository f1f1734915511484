// The app's /stats page: the statistics dashboard (dashboard.js) for a
// user whose profile says is_stats_viewer. Anyone else, visitors
// included, reads that they have no access (and so does a viewer whose
// access the server no longer grants: the API's 403).
import { h, clear } from '../dom.js';
import { t } from '../i18n.js';
import { api } from '../api.js';
import { getMe, ready } from '../state.js';
import { pageHeading, showError } from '../ui.js';
import { statsDashboard, rangeFrom } from './dashboard.js';
import './strings.js';

function noAccess(box, signedIn) {
  clear(box, h('div', { class: 'notice stats-no-access', 'data-no-access': '' },
    h('p', null, h('strong', null, t('stats.no_access'))),
    h('p', null, t('stats.no_access_why')),
    signedIn ? null : h('p', null, h('a', { href: '/login?next=/stats' }, t('stats.log_in')))));
}

export async function render(main, ctx) {
  main.append(pageHeading(t('stats.title')));
  const box = h('div', { class: 'stats' });
  main.append(box);
  await ready();
  if (!ctx.isCurrent()) return;
  const me = getMe();
  if (!me || !me.is_stats_viewer) {
    noAccess(box, Boolean(me));
    return;
  }
  try {
    await statsDashboard(box, {
      get: (path) => api('GET', path, null, { signal: ctx.signal }),
      days: rangeFrom(location.search),
      hrefFor: (n) => `/stats?days=${n}`,
      eventHref: (id) => `/events/${id}`,
      alive: ctx.isCurrent,
    });
  } catch (e) {
    if (!ctx.isCurrent()) return;
    if (e && e.status === 403) noAccess(box, true);
    else {
      clear(box);
      showError(e);
    }
  }
}
