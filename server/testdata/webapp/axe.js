// axe-core on every main page of the app and of the operator console, in
// the light theme and then the dark one (the same page, switched: the
// browser's colour scheme and the app's data-theme). axe-core's script
// is injected inline, which the app's Content-Security-Policy refuses, so
// these contexts, and only these, bypass the policy.
const { open, adminSignIn, adminGo, adminReady, until } = require('./lib.js');
const { login } = require('./steps.js');

const themes = ['light', 'dark'];

// settle waits until the page shows no loading placeholder.
async function settle(page) {
  await until('the page to load', async () => !(await page.evaluate(() => (document.querySelector('main') || document.body).innerText.includes('Loading…'))));
}

async function check(page, name, out) {
  await settle(page);
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: process.env.AXE_CORE });
  for (const theme of themes) {
    await page.emulateMedia({ colorScheme: theme });
    await page.evaluate((th) => { document.documentElement.dataset.theme = th; }, theme);
    const r = await page.evaluate(async () => {
      const res = await window.axe.run(document, { resultTypes: ['violations'] });
      return {
        background: getComputedStyle(document.body).backgroundColor,
        violations: res.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) })),
      };
    });
    const [rr, gg, bb] = (r.background.match(/\d+/g) || [255, 255, 255]).map(Number);
    const dark = rr + gg + bb < 3 * 128;
    if (dark !== (theme === 'dark')) throw new Error(`${name}: the ${theme} theme did not apply (background ${r.background})`);
    out.push({ page: name, theme, violations: r.violations });
  }
}

module.exports = async (s, p) => {
  const out = [];
  const anon = await s.page({ name: 'anonymous', bypassCSP: true });
  for (const [name, path] of [['feed', '/'], ['event', `/events/${p.event}`], ['login', '/login'], ['register', '/register'],
    ['leaderboard', '/leaderboard'], ['p2p', '/p2p'], ['chat', '/chat']]) {
    await open(anon, path);
    await check(anon, name, out);
  }

  const user = await s.page({ name: 'user', bypassCSP: true });
  await login(user, p.user);
  for (const [name, path] of [['profile', '/profile'], ['notifications', '/notifications'], ['event, signed in', `/events/${p.event}`]]) {
    await open(user, path);
    await check(user, name, out);
  }

  const op = await s.page({ name: 'operator', bypassCSP: true });
  await open(op, '/admin');
  await adminReady(op, 'login');
  await check(op, 'admin sign-in', out);
  await adminSignIn(op, 'users');
  await check(op, 'admin users', out);
  // The credit dialog, open over the page.
  await op.getByRole('row').filter({ hasText: p.user.email }).getByRole('button', { name: 'Credit', exact: true }).click();
  await op.getByRole('dialog').waitFor();
  await check(op, 'admin credit dialog', out);
  await op.keyboard.press('Escape');
  await op.getByRole('dialog').waitFor({ state: 'detached' });
  for (const [name, section] of [['Partners', 'partners'], ['Support chat', 'chat'], ['Markets', 'markets'], ['Audit and metrics', 'audit']]) {
    await adminGo(op, name, section);
    await check(op, 'admin ' + section, out);
  }
  await adminGo(op, 'Markets', 'markets');
  await op.evaluate(() => delete document.documentElement.dataset.adminReady);
  await op.getByLabel('Event ID').fill(String(p.event));
  await op.getByRole('button', { name: 'Open event' }).click();
  await adminReady(op, 'markets');
  await check(op, 'admin event markets', out);
  return out;
};
