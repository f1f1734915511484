// The first load of each path in a fresh browser profile (nothing cached):
// the bytes the network transferred (compressed, headers included, as
// Chromium's DevTools count them: Network.loadingFinished's
// encodedDataLength), until the app is ready and every request but the
// live stream has finished; and the time from navigation start to the
// app's ready mark (<html data-ready="1">) and to the load event.
//
// p.paths lists paths a visitor opens; p.pages lists {name, path, who}:
// who "" is a visitor, "user" p.user signed in first (the sign-in's own
// loads are not counted: the cache is emptied and disabled before the
// page is opened), "operator" the console signed in with the admin token
// on the page itself (the token lives in the tab's memory), so that its
// first load counts the sign-in page, the console's modules and its first
// section's data.
const { BASE, ADMIN_TOKEN, adminReady, until } = require('./lib.js');
const { login } = require('./steps.js');

module.exports = async (s, p) => {
  const out = [];
  const pages = p.pages || p.paths.map((path) => ({ name: path, path, who: '' }));
  // p.warm: each path is loaded once, unmeasured, in a profile of its
  // own first, as a server that has served anyone before would be (it
  // compresses each file once, on its first request): the measure is a
  // new visitor's first load, not the server's.
  if (p.warm) {
    const warm = await s.page({ name: 'warm-up' });
    for (const { path } of pages) {
      await warm.goto(BASE + path, { waitUntil: 'load' });
      await warm.waitForFunction(() => document.documentElement.dataset.ready === '1');
    }
  }
  for (const { name, path, who } of pages) {
    const page = await s.page({ name: 'cold ' + path });
    if (who === 'user') await login(page, p.user);
    // The moment the app marks itself ready, seen by an observer that is
    // in the page before any of its scripts (not by polling from here).
    await page.addInitScript(() => {
      new MutationObserver((_, obs) => {
        if (document.documentElement && document.documentElement.dataset.ready === '1') {
          window.__readyAt = performance.now();
          obs.disconnect();
        }
      }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-ready'] });
    });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.clearBrowserCache');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    const pending = new Map();
    let bytes = 0;
    let requests = 0;
    // Live streams never finish: they are not part of the load.
    cdp.on('Network.requestWillBeSent', (e) => {
      if (e.type !== 'EventSource' && !e.request.url.includes('/api/v1/stream')) pending.set(e.requestId, e.request.url);
    });
    cdp.on('Network.loadingFinished', (e) => {
      if (!pending.has(e.requestId)) return;
      pending.delete(e.requestId);
      bytes += e.encodedDataLength;
      requests++;
    });
    cdp.on('Network.loadingFailed', (e) => pending.delete(e.requestId));
    await page.goto(BASE + path, { waitUntil: 'load' });
    await page.waitForFunction(() => window.__readyAt !== undefined);
    if (who === 'operator') {
      await adminReady(page, 'login');
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await adminReady(page, path.split('/')[2] || 'users');
    }
    try {
      // The time budget is PREDICTKIT_WEBAPP_READY_MS's; this wait only collects
      // the bytes, so a CI machine busy with other suites gets longer.
      await until(`every request of the first load of ${path} to finish`, async () => pending.size === 0, 60000);
    } catch (e) {
      throw new Error(`${e.message} (still pending: ${[...pending.values()].join(', ')})`);
    }
    const t = await page.evaluate(() => ({ ready: window.__readyAt, load: performance.getEntriesByType('navigation')[0].loadEventEnd }));
    out.push({ name, path, bytes, requests, ready_ms: t.ready, load_ms: t.load });
    await cdp.detach();
  }
  return out;
};
