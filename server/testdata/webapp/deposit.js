// The Deposit page: a user with no money reads on the profile that the
// Deposit page is where to get some, follows the balance's link to it and
// sees their address on each watched chain (the one the server derived),
// its QR code (loaded under the app's CSP), the token, the rate and the
// confirmations, with the warning to send only that token on that chain;
// copies the address; on a phone the page is no wider than the screen;
// sees the deposits list, empty. A user who chooses Russian sees the
// page in Russian; on a server that watches no chain the page says
// deposits are not enabled.
// axe-core checks the page in both themes.
const { open, until, mark } = require('./lib.js');
const { login, nav } = require('./steps.js');

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

// history waits for the deposits list to settle and returns its text.
async function history(page) {
  const section = page.getByRole('region', { name: /Your deposits|Ваши пополнения/ });
  return until('the deposits list', async () => {
    const text = await section.innerText();
    return !text.includes('Loading…') && !text.includes('Загрузка') && text.split('\n').length > 1 && text;
  });
}

// chains reads each chain's card: its address, QR code, and texts.
async function chains(page) {
  return page.evaluate(() => [...document.querySelectorAll('section.deposit-chain')].map((sec) => {
    const img = sec.querySelector('img.deposit-qr');
    return {
      chain: sec.dataset.chain,
      heading: sec.querySelector('h2').innerText,
      address: sec.querySelector('code.deposit-address').innerText,
      qr_src: img.getAttribute('src').slice(0, 40),
      qr_alt: img.getAttribute('alt'),
      qr_loaded: img.complete && img.naturalWidth > 0,
      text: sec.innerText,
    };
  }));
}

module.exports = async (s, p) => {
  const out = {};
  const me = await s.page({ name: 'depositor' });
  await me.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await login(me, p.user, '/profile');
  out.zero_href = await me.locator('[data-zero-balance] a').getAttribute('href');
  await me.getByRole('main').getByRole('link', { name: 'Deposit', exact: true }).click();
  await me.waitForURL((url) => url.pathname === '/deposit');
  await me.getByRole('heading', { level: 1, name: 'Deposit' }).waitFor();
  await me.locator('section.deposit-chain').first().waitFor();
  await until('the QR codes to load', async () => (await chains(me)).every((c) => c.qr_loaded));
  out.chains = await chains(me);
  out.nav = await me.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Deposit', exact: true }).getAttribute('aria-current');
  out.history = await history(me);

  const first = me.locator('section.deposit-chain').first();
  await first.getByRole('button', { name: 'Copy address' }).click();
  out.copied = await until('the clipboard', async () => (await me.evaluate(() => navigator.clipboard.readText())) || false);
  mark('deposit page read');

  // On a phone nothing is wider than the screen (an address is long).
  const phone = await s.page({ name: 'phone', viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await login(phone, p.user, '/deposit');
  await phone.locator('section.deposit-chain').first().waitFor();
  out.phone_overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

  // The same page in Russian.
  const ru = await s.page({ name: 'russian' });
  await login(ru, p.ru_user, '/deposit');
  const patched = await ru.evaluate(async () => (await fetch('/api/v1/auth/me', {
    method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ language: 'ru' }),
  })).status);
  if (patched !== 200) throw new Error(`the language change answered ${patched}`);
  await open(ru, '/deposit');
  await ru.getByRole('heading', { level: 1, name: 'Пополнение' }).waitFor();
  await ru.locator('section.deposit-chain').first().waitFor();
  out.ru_text = await ru.getByRole('main').innerText();

  // A server that watches no chain.
  const off = await s.page({ name: 'deposits off' });
  await off.goto(p.off_base + '/login?next=/deposit');
  await off.waitForFunction(() => document.documentElement.dataset.ready === '1');
  await off.getByLabel('Email').fill(p.off_user.email);
  await off.getByLabel('Password').fill(p.off_user.password);
  await off.getByRole('main').getByRole('button', { name: 'Log in' }).click();
  await off.waitForURL((url) => url.pathname === '/deposit');
  out.off_text = await until('the deposits-off text', async () => {
    const text = await off.getByRole('main').innerText();
    return text.includes('not enabled') && text;
  });

  out.axe = null;
  if (process.env.AXE_CORE) {
    out.axe = [];
    const a = await s.page({ name: 'axe', bypassCSP: true });
    await login(a, p.user, '/deposit');
    await a.locator('section.deposit-chain').first().waitFor();
    await history(a);
    await axeBothThemes(a, 'deposit', out.axe);
    await nav(a, 'Profile');
    await a.getByRole('main').getByRole('link', { name: 'Deposit', exact: true }).waitFor();
  }
  return out;
};
