// A page of another site (p.host_url, another origin) frames a market's
// embed (/embed/markets/{id}, with the iframe the server's oEmbed answer
// gave); the frame shows the market's YES price, and a trade made through
// the API meanwhile moves it, live. Then axe-core checks the embed page on
// its own, in English and in Russian, in the light theme and the dark one
// (by prefers-color-scheme: the embed has no theme switch of its own).
const { BASE, until, mark } = require('./lib.js');

module.exports = async (s, p) => {
  const host = await s.page({ name: 'host site' });
  await host.goto(p.host_url);
  const frame = host.frameLocator('iframe');
  const price = frame.locator('#price');
  const before = await until('the framed price', async () => {
    const t = await price.innerText();
    return /%$/.test(t) && t;
  });
  const name = await frame.getByRole('heading', { level: 1 }).innerText();
  const link = frame.getByRole('link', { name: /Trade on predictkit/ });
  const href = await link.getAttribute('href');
  const target = await link.getAttribute('target');
  const rel = await link.getAttribute('rel');
  mark('the frame shows the price');

  // Once the embed follows its stream, trade through the API.
  await frame.locator('main[data-live="1"]').waitFor();
  const r = await fetch(`${BASE}/api/v1/markets/${p.market}/buy`, {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + p.token, 'Content-Type': 'application/json' },
    body: JSON.stringify({ side: 'YES', amount_kopecks: p.amount }),
  });
  if (!r.ok) throw new Error(`the buy answered ${r.status} ${await r.text()}`);
  const trade = await r.json();
  const start = Date.now();
  const after = await until('the framed price to move', async () => {
    const t = await price.innerText();
    return t !== before && t;
  });
  const moved_ms = Date.now() - start;
  mark(`the frame's price moved in ${moved_ms} ms`);

  const axe = [];
  if (process.env.AXE_CORE) {
    // A context of its own that bypasses the CSP to inject axe-core, as
    // axe.js does for the app.
    const page = await s.page({ name: 'axe', bypassCSP: true });
    for (const [lang, query] of [['en', ''], ['ru', '?lang=ru']]) {
      await page.goto(`${BASE}/embed/markets/${p.market}${query}`);
      await page.addScriptTag({ path: process.env.AXE_CORE });
      for (const theme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme: theme });
        const res = await page.evaluate(async () => {
          const out = await window.axe.run(document, { resultTypes: ['violations'] });
          return {
            background: getComputedStyle(document.body).backgroundColor,
            violations: out.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join(', ')}`),
          };
        });
        const [rr, gg, bb] = (res.background.match(/\d+/g) || [255, 255, 255]).map(Number);
        if ((rr + gg + bb < 3 * 128) !== (theme === 'dark')) throw new Error(`the ${theme} theme did not apply (background ${res.background})`);
        axe.push({ theme: `${theme}, ${lang}`, violations: res.violations });
      }
    }
  }
  return { before, after, name, href, target, rel, moved_ms, yes_probability: trade.market.yes_probability, axe: process.env.AXE_CORE ? axe : null };
};
