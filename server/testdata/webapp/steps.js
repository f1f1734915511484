// The steps of the flows through the app's pages, by the roles and
// accessible names the app gives its controls (the app's strings.js and
// the console's i18n-admin.js, in English).
const { open, until, kopecks, mark, TIMEOUT } = require('./lib.js');

// signedIn waits until the header offers to log out.
async function signedIn(page) {
  await page.getByRole('banner').getByRole('button', { name: 'Log out' }).waitFor();
}

// noStrayNull fails when the page's main text shows "null" as a word:
// a missing value written out instead of left out.
async function noStrayNull(page) {
  await page.getByRole('main').getByRole('button').first().waitFor();
  const text = await page.getByRole('main').innerText();
  if (/\bnull\b/.test(text)) throw new Error(`${page.url()} shows a stray "null": ${JSON.stringify(text)}`);
}

// register signs u up on /register.
async function register(page, u) {
  await open(page, '/register');
  await noStrayNull(page);
  await page.getByLabel('Name').fill(u.name);
  await page.getByLabel('Email').fill(u.email);
  await page.getByLabel('Password').fill(u.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await signedIn(page);
}

// login signs u in on /login, then opens path when given.
async function login(page, u, path) {
  await open(page, '/login' + (path ? '?next=' + encodeURIComponent(path) : ''));
  await noStrayNull(page);
  await page.getByLabel('Email').fill(u.email);
  await page.getByLabel('Password').fill(u.password);
  await page.getByRole('main').getByRole('button', { name: 'Log in' }).click();
  await signedIn(page);
  if (path) await page.waitForURL((url) => url.pathname === path);
  mark(`${page.label} logged in`);
}

// nav follows the header's link named name (client-side, no reload).
async function nav(page, name) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
}

// market is a market's card on an event page.
function market(page, name) {
  return page.getByRole('article', { name, exact: true });
}

// price is the YES price a market's card shows.
async function price(page, name) {
  const p = market(page, name).locator('.market-prices');
  await until(`a price on ${name}`, async () => /\d/.test(await p.innerText()));
  return p.innerText();
}

// headerBalance is the balance in the header, in kopecks.
async function headerBalance(page) {
  const b = page.getByRole('banner').locator('[data-balance]');
  await until('the balance in the header', async () => /\d/.test(await b.innerText()));
  return kopecks(await b.innerText());
}

// buy buys side for amount roubles on the market named name: the quote
// first, then its confirmation. Returns the confirmation's text.
async function buy(page, name, side, amount) {
  const card = market(page, name);
  await card.getByRole('button', { name: `Buy ${side}` }).click();
  const form = page.getByRole('form', { name: `Buy ${side}: ${name}` });
  await form.getByLabel('Amount').fill(amount);
  await form.getByRole('button', { name: 'Get quote' }).click();
  await form.getByRole('status').filter({ hasText: 'Shares' }).waitFor();
  await form.getByRole('button', { name: 'Confirm' }).click();
  const done = card.getByText(/^Bought \d/);
  await done.waitFor({ timeout: TIMEOUT });
  return done.innerText();
}

// adminCredit finds the user by e-mail in the console and credits them.
async function adminCredit(op, email, amount) {
  await op.getByRole('searchbox', { name: 'Search users' }).fill(email);
  await op.getByRole('button', { name: 'Search', exact: true }).click();
  const row = op.getByRole('row').filter({ hasText: email });
  await row.getByRole('button', { name: 'Credit', exact: true }).click();
  const dlg = op.getByRole('dialog');
  await dlg.getByLabel('Amount, ₽').fill(amount);
  await dlg.getByRole('button', { name: 'Credit', exact: true }).click();
  await dlg.waitFor({ state: 'detached' });
  await op.getByRole('status').filter({ hasText: 'Credited' }).waitFor();
}

module.exports = { signedIn, register, login, nav, market, price, headerBalance, buy, adminCredit };
