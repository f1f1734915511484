// Statistics (TestStatsInBrowser, webapp_stats_browser_test.go): a
// statistics viewer finds "Statistics" in the header and reads the
// overview's cards, the charts (each series' values per day, and the
// legend's totals) and today's top markets; changes the range, which
// goes into the address and survives a reload; follows a top market to
// its event. A user who is no viewer, and a visitor, see that they have
// no access and no link to it. The operator reads the same dashboard in
// the console and changes its range there, and grants a Russian reader
// access in the console's Users, who then reads it in Russian; on a phone neither page is wider than the screen; axe-core
// checks both pages in both themes.
const { open, until, mark, adminSignIn, adminReady, adminGo } = require('./lib.js');
const { login } = require('./steps.js');
const { PHONE, overflow } = require('./phone.js');

const colourRules = ['color-contrast', 'link-in-text-block'];

async function axeBothThemes(page, name, out) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: process.env.AXE_CORE });
  for (const theme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: theme });
    await page.evaluate((th) => { document.documentElement.dataset.theme = th; }, theme);
    const vs = await page.evaluate(async (only) => {
      const res = await window.axe.run(document, { resultTypes: ['violations'], ...(only ? { runOnly: { type: 'rule', values: only } } : {}) });
      return res.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join(', ')}`);
    }, theme === 'dark' ? colourRules : null);
    for (const v of vs) out.push(`${name}, ${theme}: ${v}`);
  }
}

// drawn waits until the dashboard shows range days, with its charts.
async function drawn(page, days) {
  await page.locator(`[data-range="${days}"]`).waitFor();
  await page.locator('[data-chart="open_interest"] svg').waitFor();
}

// dashboard reads what the dashboard shows: the cards (data-stat →
// {value, text}), each chart's series (data-values, as numbers) and
// legend totals, the range's chips and the top markets' rows.
async function dashboard(page) {
  return page.evaluate(() => {
    const cards = {};
    for (const c of document.querySelectorAll('[data-stat]')) {
      cards[c.dataset.stat] = { value: c.dataset.value, text: c.querySelector('dd').innerText };
    }
    const charts = {};
    for (const sec of document.querySelectorAll('[data-chart]')) {
      const svg = sec.querySelector('svg');
      charts[sec.dataset.chart] = {
        name: svg.getAttribute('role') === 'img' ? svg.querySelector('title').textContent : '',
        desc: svg.querySelector('desc').textContent,
        series: [...sec.querySelectorAll('g.series')].map((g) => ({ key: g.dataset.key, values: g.dataset.values.split(',').map(Number), marks: g.querySelectorAll('rect, circle').length })),
        totals: [...sec.querySelectorAll('.stats-legend li')].map((li) => ({ key: li.dataset.key, total: Number(li.dataset.total), text: li.innerText })),
        y_ticks: [...svg.querySelectorAll(':scope > text')].map((t) => t.textContent),
        ticks: svg.dataset.ticks.split(',').map(Number),
      };
    }
    const top = [...document.querySelectorAll('.stats-top tbody tr')].map((tr) => ({
      href: tr.querySelector('a').getAttribute('href'), text: tr.innerText,
    }));
    const current = [...document.querySelectorAll('.stats-range a[aria-current="true"]')].map((a) => a.innerText);
    return { cards, charts, top, current };
  });
}

function navHasStats(page, name) {
  return page.getByRole('banner').getByRole('navigation').getByRole('link', { name, exact: true }).count();
}

module.exports = async (s, p) => {
  const out = {};

  // The viewer: the header's link, the dashboard, the range.
  const v = await s.page({ name: 'viewer' });
  await login(v, p.viewer);
  await v.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Statistics', exact: true }).click();
  await v.waitForURL((url) => url.pathname === '/stats');
  await v.getByRole('heading', { level: 1, name: 'Statistics' }).waitFor();
  await drawn(v, 30);
  out.viewer = await dashboard(v);
  out.nav_current = await v.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Statistics', exact: true }).getAttribute('aria-current');
  out.charts_named = await v.getByRole('img', { name: 'Volume per day' }).count();
  mark('stats read');

  await v.getByRole('navigation', { name: 'Range' }).getByRole('link', { name: '7 days', exact: true }).click();
  await drawn(v, 7);
  out.week_url = new URL(v.url()).search;
  out.week = await dashboard(v);
  await v.reload();
  await drawn(v, 7);
  out.week_reloaded = (await dashboard(v)).current;
  await v.getByRole('navigation', { name: 'Range' }).getByRole('link', { name: '365 days', exact: true }).click();
  await drawn(v, 365);
  out.year = await dashboard(v);
  await v.goBack();
  await drawn(v, 7);
  out.back_url = new URL(v.url()).search;

  // A top market leads to its event.
  const first = v.locator('.stats-top tbody tr a').first();
  out.top_href = await first.getAttribute('href');
  await first.click();
  await v.waitForURL((url) => url.pathname === out.top_href);
  // The event page's heading is "Event" until the event has loaded.
  out.top_heading = await until('the event page', async () => {
    const text = await v.getByRole('heading', { level: 1 }).innerText();
    return text !== 'Statistics' && text !== 'Event' && text;
  });

  // Someone who is no viewer, and a visitor.
  const o = await s.page({ name: 'other user' });
  await login(o, p.other);
  out.other_nav = await navHasStats(o, 'Statistics');
  await open(o, '/stats');
  await o.locator('[data-no-access]').waitFor();
  out.other_text = await o.getByRole('main').innerText();
  out.other_charts = await o.locator('[data-chart]').count();
  const anon = await s.page({ name: 'visitor' });
  await open(anon, '/stats');
  await anon.locator('[data-no-access]').waitFor();
  out.anon_text = await anon.getByRole('main').innerText();
  out.anon_nav = await navHasStats(anon, 'Statistics');
  out.anon_login = await anon.getByRole('link', { name: 'Log in as a statistics viewer' }).getAttribute('href');
  mark('no access read');

  // The operator's console.
  const op = await s.page({ name: 'operator' });
  await adminSignIn(op, 'users');
  await op.evaluate(() => delete document.documentElement.dataset.adminReady);
  await op.getByRole('navigation', { name: 'Operator sections' }).getByRole('link', { name: 'Statistics', exact: true }).click();
  await adminReady(op, 'stats');
  await op.getByRole('heading', { level: 1, name: 'Statistics' }).waitFor();
  await drawn(op, 30);
  out.console = await dashboard(op);
  await op.evaluate(() => delete document.documentElement.dataset.adminReady);
  await op.getByRole('navigation', { name: 'Range' }).getByRole('link', { name: '90 days', exact: true }).click();
  await adminReady(op, 'stats');
  await drawn(op, 90);
  out.console_quarter = await dashboard(op);
  out.console_url = new URL(op.url()).pathname + new URL(op.url()).search;
  mark('console read');

  // The operator lets the Russian reader see statistics, in Users.
  await adminGo(op, 'Users', 'users');
  await op.getByRole('searchbox', { name: 'Search users' }).fill(p.ru_viewer.email);
  await op.getByRole('button', { name: 'Search', exact: true }).click();
  const row = op.getByRole('row').filter({ hasText: p.ru_viewer.email });
  await row.getByRole('button', { name: 'Grant statistics' }).click();
  await op.getByRole('status').filter({ hasText: 'can now see statistics' }).waitFor();
  out.granted_focus = await op.evaluate(() => document.activeElement && document.activeElement.textContent);

  // Russian.
  const ru = await s.page({ name: 'russian viewer' });
  await login(ru, p.ru_viewer);
  const patched = await ru.evaluate(async () => (await fetch('/api/v1/auth/me', {
    method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ language: 'ru' }),
  })).status);
  if (patched !== 200) throw new Error(`the language change answered ${patched}`);
  await open(ru, '/stats');
  await ru.getByRole('heading', { level: 1, name: 'Статистика' }).waitFor();
  await drawn(ru, 30);
  out.ru_text = await ru.getByRole('main').innerText();
  out.ru_nav = await navHasStats(ru, 'Статистика');
  out.ru_chart = await ru.getByRole('img', { name: 'Объём по дням' }).count();

  // A phone: the page and the console's.
  const phone = await s.page({ name: 'phone', ...PHONE });
  await login(phone, p.viewer, '/stats');
  await drawn(phone, 30);
  await phone.locator('.stats-days summary').click();
  out.phone = await phone.evaluate(overflow);
  const phoneOp = await s.page({ name: 'phone operator', ...PHONE });
  await adminSignIn(phoneOp, 'stats');
  await drawn(phoneOp, 30);
  out.phone_console = await phoneOp.evaluate(overflow);
  mark('phone checked');

  out.axe = null;
  if (process.env.AXE_CORE) {
    out.axe = [];
    const a = await s.page({ name: 'axe', bypassCSP: true });
    await login(a, p.viewer, '/stats');
    await drawn(a, 30);
    await a.locator('.stats-days summary').click();
    await axeBothThemes(a, 'statistics', out.axe);
    await open(a, '/stats?days=365');
    await drawn(a, 365);
    await axeBothThemes(a, 'statistics, 365 days', out.axe);
    const n = await s.page({ name: 'axe no access', bypassCSP: true });
    await login(n, p.other, '/profile');
    await open(n, '/stats');
    await n.locator('[data-no-access]').waitFor();
    await axeBothThemes(n, 'no access', out.axe);
    const c = await s.page({ name: 'axe console', bypassCSP: true });
    await adminSignIn(c, 'stats');
    await drawn(c, 30);
    await c.locator('.stats-days summary').click();
    await axeBothThemes(c, 'console statistics', out.axe);
  }

  return out;
};
