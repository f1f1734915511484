// /admin/stats: the statistics dashboard (../stats/dashboard.js, the
// app's /stats page's own) read with the admin token. The range is in
// the address (/admin/stats?days=90).

import { api } from '../api.js';
import { statsDashboard, rangeFrom } from '../stats/dashboard.js';

export async function statsPage(root, ctx) {
  await statsDashboard(root, {
    get: (path) => api('GET', '/api/v1' + path, undefined, { admin: true }),
    days: rangeFrom(location.search),
    hrefFor: (n) => `/admin/stats?days=${n}`,
    eventHref: (id) => `/events/${id}`,
    alive: ctx.alive,
  });
}
