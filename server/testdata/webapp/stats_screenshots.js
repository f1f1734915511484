// The statistics pages' screenshots (TestStatsInBrowser with
// PREDICTKIT_SCREENSHOTS), over the demo data: the app's /stats as the
// demo's creator, a statistics viewer, in the light theme, into
// p.dir/stats.png, and the console's Statistics in the dark theme into
// p.dir/admin-stats.png. Each is the whole page.
const path = require('path');
const { adminSignIn } = require('./lib.js');
const { login } = require('./steps.js');

module.exports = async (s, p) => {
  const files = [];
  const drawn = async (page) => {
    await page.locator('[data-range="30"]').waitFor();
    await page.locator('[data-chart="open_interest"] svg').waitFor();
    await page.evaluate(() => document.fonts.ready);
  };
  const app = await s.page({ name: 'statistics', colorScheme: 'light', viewport: { width: 1200, height: 900 } });
  await login(app, p.viewer, '/stats');
  await drawn(app);
  let f = path.join(p.dir, 'stats.png');
  await app.screenshot({ path: f, fullPage: true, animations: 'disabled' });
  files.push(f);
  const op = await s.page({ name: 'console statistics', colorScheme: 'dark', viewport: { width: 1200, height: 900 } });
  await adminSignIn(op, 'stats');
  await op.evaluate(() => { document.documentElement.dataset.theme = 'dark'; });
  await drawn(op);
  f = path.join(p.dir, 'admin-stats.png');
  await op.screenshot({ path: f, fullPage: true, animations: 'disabled' });
  files.push(f);
  return files;
};
