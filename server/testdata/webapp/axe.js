// axe-core on every main page of the app and of the operator console, in
// the light theme and then the dark one (the same page, switched: the
// browser's colour scheme and the app's data-theme). axe-core's script
// is injected inline, which the app's Content-Security-Policy refuses, so
// these contexts, and only these, bypass the policy.
const { open, adminGo, adminReady, until, mark, ADMIN_TOKEN } = require('./lib.js');
const { signedIn } = require('./steps.js');

// The dark theme changes colours only, so its run checks the colour
// rules; the light run checks every rule.
const colourRules = ['color-contrast', 'link-in-text-block'];

// settle waits until the page shows no loading placeholder.
async function settle(page) {
  await until('the page to load', async () => !(await page.evaluate(() => (document.querySelector('main') || document.body).innerText.includes('Loading…'))));
}

// go shows path through the app's router (no reload: axe-core, injected
// once, stays) and waits for the new page's title.
async function go(page, path) {
  const before = await page.title();
  await page.evaluate((p) => {
    history.pushState(null, '', p);
    window.dispatchEvent(new PopStateEvent('popstate', { state: null }));
  }, path);
  await page.waitForFunction((t) => document.title !== t && document.querySelector('#page h1'), before);
}

async function check(page, name, out) {
  const start = Date.now();
  await settle(page);
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: process.env.AXE_CORE });
  for (const theme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: theme });
    await page.evaluate((th) => { document.documentElement.dataset.theme = th; }, theme);
    const r = await page.evaluate(async (only) => {
      const res = await window.axe.run(document, { resultTypes: ['violations'], ...(only ? { runOnly: { type: 'rule', values: only } } : {}) });
      return {
        background: getComputedStyle(document.body).backgroundColor,
        violations: res.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) })),
      };
    }, theme === 'dark' ? colourRules : null);
    const [rr, gg, bb] = (r.background.match(/\d+/g) || [255, 255, 255]).map(Number);
    const dark = rr + gg + bb < 3 * 128;
    if (dark !== (theme === 'dark')) throw new Error(`${name}: the ${theme} theme did not apply (background ${r.background})`);
    out.push({ page: name, theme, violations: r.violations });
  }
  mark(`axe ${name} (${Date.now() - start} ms)`);
}

// One page goes through every page by the app's router, so that
// axe-core is injected once: anonymous first, then signed in, then the
// operator console (whose token lives in the page's memory).
module.exports = async (s, p) => {
  const out = [];
  const page = await s.page({ name: 'axe', bypassCSP: true });
  await open(page, '/');
  await check(page, 'feed', out);
  // axe-core can see a problem here: an image without a text alternative
  // is reported, then taken away again.
  const canary = await page.evaluate(async () => {
    const img = document.createElement('img');
    img.src = 'data:,';
    document.getElementById('page').append(img);
    const res = await window.axe.run(document, { runOnly: { type: 'rule', values: ['image-alt'] }, resultTypes: ['violations'] });
    img.remove();
    return res.violations.map((v) => v.id);
  });
  if (canary.join() !== 'image-alt') throw new Error(`axe-core missed an image without alt: ${JSON.stringify(canary)}`);
  for (const [name, path] of [['event', `/events/${p.event}`], ['login', '/login'], ['register', '/register'],
    ['forgot-password', '/forgot-password'], ['reset-password', '/reset-password?token=a-token'],
    ['leaderboard', '/leaderboard'], ['p2p', '/p2p'], ['chat', '/chat']]) {
    await go(page, path);
    await check(page, name, out);
  }

  await go(page, '/login');
  await page.getByLabel('Email').fill(p.user.email);
  await page.getByLabel('Password').fill(p.user.password);
  await page.getByRole('main').getByRole('button', { name: 'Log in' }).click();
  await signedIn(page);
  for (const [name, path] of [['profile', '/profile'], ['notifications', '/notifications'], ['deposit', '/deposit'], ['withdraw', '/withdraw'], ['event, signed in', `/events/${p.event}`]]) {
    await go(page, path);
    await check(page, name, out);
  }

  await go(page, '/admin');
  await adminReady(page, 'login');
  await check(page, 'admin sign-in', out);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await adminReady(page, 'users');
  await check(page, 'admin users', out);
  // The credit dialog, open over the page.
  await page.getByRole('row').filter({ hasText: p.user.email }).getByRole('button', { name: 'Credit', exact: true }).click();
  await page.getByRole('dialog').waitFor();
  await check(page, 'admin credit dialog', out);
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  // Each section, and the page one of its rows opens (a partner, a chat
  // session).
  for (const [name, section, open] of [['Partners', 'partners', 'Manage'], ['Support chat', 'chat', 'Open'], ['Markets', 'markets'], ['Proposals', 'proposals'], ['Withdrawals', 'withdrawals'], ['Statistics', 'stats'], ['Audit and metrics', 'audit']]) {
    await adminGo(page, name, section);
    await check(page, 'admin ' + section, out);
    if (!open) continue;
    await page.evaluate(() => delete document.documentElement.dataset.adminReady);
    await page.getByRole('row').getByRole('link', { name: open }).first().click();
    await adminReady(page, section);
    await check(page, `admin ${section}, one of them`, out);
  }
  await adminGo(page, 'Markets', 'markets');
  await page.evaluate(() => delete document.documentElement.dataset.adminReady);
  await page.getByLabel('Event ID').fill(String(p.event));
  await page.getByRole('button', { name: 'Open event' }).click();
  await adminReady(page, 'markets');
  await check(page, 'admin event markets', out);
  return out;
};
