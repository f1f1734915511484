// A deposit on a real test chain, watched live on the Deposit page: a new
// user registers and opens /deposit, reads their BSC address, its QR code
// and the empty list; the test (p.chain, a helper of the Go test) mints
// tokens to that address in a block: the page shows the deposit pending
// with its confirmations, which grow as blocks are mined, then credited,
// with the header's balance and the unread notifications updated, all
// without a reload. axe-core checks the page with a pending and with a
// credited deposit.
const { open, until, kopecks, mark } = require('./lib.js');
const { register, login } = require('./steps.js');

// chain asks the Go test to act on the chain: mint (to an address, then
// a block) or mine (n blocks).
async function chain(p, step, body) {
  const res = await fetch(p.chain + '/' + step, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`the chain's ${step}: ${res.status} ${text}`);
  return JSON.parse(text);
}

// item reads the deposits list's first item: its status and text.
async function item(page) {
  return page.evaluate(() => {
    const li = document.querySelector('li[data-deposit]');
    return li ? { id: Number(li.dataset.deposit), status: li.dataset.status, text: li.innerText } : null;
  });
}

// waitItem waits until the first item's text includes want, and returns it.
async function waitItem(page, what, want) {
  return until(what, async () => {
    const it = await item(page);
    return it && it.text.includes(want) && it;
  }, 60000);
}

async function axe(page, name, out) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: process.env.AXE_CORE });
  for (const theme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: theme });
    await page.evaluate((th) => { document.documentElement.dataset.theme = th; }, theme);
    const vs = await page.evaluate(async () => {
      const res = await window.axe.run(document, { resultTypes: ['violations'] });
      return res.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join(', ')}`);
    });
    for (const v of vs) out.push(`${name}, ${theme}: ${v}`);
  }
}

module.exports = async (s, p) => {
  const out = { axe: process.env.AXE_CORE ? [] : null };
  const me = await s.page({ name: 'depositor' });
  await register(me, p.user);
  const profile = await me.evaluate(async () => (await (await fetch('/api/v1/auth/me')).json()).user);
  out.user_id = profile.id;
  out.profile_bsc = profile.bsc_address;
  await open(me, '/deposit');
  const card = me.locator('section.deposit-chain[data-chain="bsc"]');
  await card.waitFor();
  await until('the QR code to load', async () => card.locator('img.deposit-qr').evaluate((img) => img.complete && img.naturalWidth > 0));
  out.address = await card.locator('code.deposit-address').innerText();
  out.qr_src = (await card.locator('img.deposit-qr').getAttribute('src')).slice(0, 40);
  const section = me.getByRole('region', { name: 'Your deposits' });
  out.empty = await until('the empty list', async () => {
    const text = await section.innerText();
    return !text.includes('Loading…') && text.split('\n').length > 1 && text;
  });
  out.balance_before = kopecks(await me.getByRole('banner').locator('[data-balance]').innerText());
  // A reload would drop this mark: everything below arrives live.
  await me.evaluate(() => { window.depositLive = true; });
  mark('deposit page read');

  const minted = await chain(p, 'mint', { address: out.address });
  out.pending = await waitItem(me, 'the pending deposit', 'Pending: 1 of 3 confirmations');
  out.pending.block = minted.block;

  if (out.axe) {
    const a = await s.page({ name: 'axe', bypassCSP: true });
    await login(a, p.user, '/deposit');
    await waitItem(a, 'the pending deposit on the axe page', 'Pending');
    await axe(a, 'deposit with a pending deposit', out.axe);
    out.axe_page = a;
  }

  await chain(p, 'mine', { n: 1 });
  out.second = await waitItem(me, 'the second confirmation', 'Pending: 2 of 3 confirmations');
  await chain(p, 'mine', { n: 1 });
  out.credited = await waitItem(me, 'the credit', 'Credited');
  out.balance_after = await until('the header balance', async () => {
    const b = kopecks(await me.getByRole('banner').locator('[data-balance]').innerText());
    return b !== out.balance_before && b;
  });
  out.unread = await until('the unread notification', async () => {
    const badge = me.getByRole('banner').locator('[data-unread] .badge [aria-hidden="true"]');
    return (await badge.count()) > 0 && (await badge.innerText()).trim();
  });
  out.live = await me.evaluate(() => window.depositLive === true);
  out.notification = await me.evaluate(async () => (await (await fetch('/api/v1/notifications')).json()));

  if (out.axe_page) {
    const a = out.axe_page;
    delete out.axe_page;
    await waitItem(a, 'the credit on the axe page', 'Credited');
    await axe(a, 'deposit with a credited deposit', out.axe);
  }
  return out;
};
