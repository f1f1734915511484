// PNGs of the main pages (feed, event, profile, deposit, the operator
// console) in the light and the dark theme, into the directory p.dir.
const path = require('path');
const { open, adminSignIn, until } = require('./lib.js');
const { login } = require('./steps.js');

async function settle(page) {
  await until('the page to load', async () => !(await page.evaluate(() => (document.querySelector('main') || document.body).innerText.includes('Loading…'))));
}

module.exports = async (s, p) => {
  const files = [];
  for (const theme of ['light', 'dark']) {
    // shot waits for the page's h1 (a navigation may still be drawing
    // the page before), then for its data.
    const shot = async (page, name, heading) => {
      await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
      await settle(page);
      const f = path.join(p.dir, `${name}-${theme}.png`);
      await page.screenshot({ path: f, fullPage: false, animations: 'disabled' });
      files.push(f);
    };
    const anon = await s.page({ name: `anonymous ${theme}`, colorScheme: theme, viewport: { width: 1200, height: 800 } });
    await open(anon, '/');
    await shot(anon, 'feed', 'Events');
    await open(anon, `/events/${p.event}`);
    await shot(anon, 'event', p.event_name);
    const user = await s.page({ name: `user ${theme}`, colorScheme: theme, viewport: { width: 1200, height: 800 } });
    await login(user, p.user, '/profile');
    // A signed-in user's theme is the profile's: set it where the user would.
    await user.getByLabel('Theme').selectOption({ label: theme === 'dark' ? 'Dark' : 'Light' });
    await user.waitForFunction((th) => document.documentElement.dataset.theme === th, theme);
    await user.evaluate(() => window.scrollTo(0, 0));
    await shot(user, 'profile', 'Profile');
    await user.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Deposit', exact: true }).click();
    await user.locator('section.deposit-chain img.deposit-qr').first().waitFor();
    await shot(user, 'deposit', 'Deposit');
    const op = await s.page({ name: `operator ${theme}`, colorScheme: theme, viewport: { width: 1200, height: 800 } });
    await adminSignIn(op, 'users');
    await op.evaluate((th) => { document.documentElement.dataset.theme = th; }, theme);
    await shot(op, 'admin', 'Users');
  }
  return files;
};
