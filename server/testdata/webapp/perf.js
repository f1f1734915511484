// The first load of each path in a fresh browser profile (nothing cached):
// the bytes the network transferred (compressed, headers included, as
// Chromium's DevTools count them: Network.loadingFinished's
// encodedDataLength), until the app is ready and every request but the
// live stream has finished; and the time from navigation start to the
// app's ready mark (<html data-ready="1">) and to the load event.
const { BASE, until } = require('./lib.js');

module.exports = async (s, p) => {
  const out = [];
  for (const path of p.paths) {
    const page = await s.page({ name: 'cold ' + path });
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
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    const pending = new Map();
    let bytes = 0;
    let requests = 0;
    cdp.on('Network.requestWillBeSent', (e) => { if (e.type !== 'EventSource') pending.set(e.requestId, e.request.url); });
    cdp.on('Network.loadingFinished', (e) => {
      if (!pending.has(e.requestId)) return;
      pending.delete(e.requestId);
      bytes += e.encodedDataLength;
      requests++;
    });
    cdp.on('Network.loadingFailed', (e) => pending.delete(e.requestId));
    await page.goto(BASE + path, { waitUntil: 'load' });
    await page.waitForFunction(() => window.__readyAt !== undefined);
    await until('every request of the first load to finish', async () => pending.size === 0);
    const t = await page.evaluate(() => ({ ready: window.__readyAt, load: performance.getEntriesByType('navigation')[0].loadEventEnd }));
    out.push({ path, bytes, requests, ready_ms: t.ready, load_ms: t.load });
    await cdp.detach();
  }
  return out;
};
