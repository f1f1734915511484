// Referrals and levels (TestInviteInBrowser): Alice opens Invite friends
// from the header, reads the rule and her figures and copies her link; a
// referral code nobody has is refused on the register page's field; Bob
// opens Alice's link (the code filled in), registers, is credited by the
// operator and buys past the qualifying volume; Alice's page, header and
// unread count follow without a reload, and the notification reads in
// English and Russian. Bob's profile shows his level, which changes live
// with a second buy; his public profile and the leaderboard show it.
// axe-core checks the pages in both themes when the test gives it, and
// p.dir (when set) gets the page's screenshot, invite.png.
const path = require('path');
const { open, ready, until, mark, BASE, ADMIN_TOKEN } = require('./lib.js');
const { login, signedIn, nav, buy, headerBalance } = require('./steps.js');

const colourRules = ['color-contrast', 'link-in-text-block'];

// settle waits until the page shows no loading placeholder.
async function settle(page) {
  await until('the page to load', async () => !(await page.evaluate(() => (document.querySelector('main') || document.body).innerText.includes('Loading…'))));
}

async function axeBothThemes(page, name, out) {
  await settle(page);
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

// figures reads the Invite friends page's counts as shown.
async function figures(page) {
  return page.evaluate(() => {
    const f = (k) => {
      const el = document.querySelector(`[data-figure="${k}"]`);
      return el ? el.textContent : '';
    };
    return { referred: f('referred'), qualified: f('qualified'), earned: f('earned') };
  });
}

// fillRegister fills the register form's own fields (not the code).
async function fillRegister(page, u) {
  await page.getByLabel('Name', { exact: true }).fill(u.name);
  await page.getByLabel('Email', { exact: true }).fill(u.email);
  await page.getByLabel('Password', { exact: true }).fill(u.password);
}

// badge is the text of the first level badge inside scope, once it reads want.
async function badge(scope, what, want, ms) {
  return until(what, async () => {
    const b = scope.locator('.level-badge').first();
    if (!(await b.count())) return false;
    const text = (await b.innerText()).trim();
    return text === want && text;
  }, ms);
}

async function api(page, method, url, body) {
  return page.evaluate(async ([m, u, b]) => {
    const r = await fetch(u, { method: m, headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: b ? JSON.stringify(b) : undefined });
    const text = await r.text();
    if (!r.ok) throw new Error(`${m} ${u}: ${r.status} ${text}`);
    return text ? JSON.parse(text) : null;
  }, [method, url, body]);
}

module.exports = async (s, p) => {
  const out = { axe: process.env.AXE_CORE ? [] : null };

  // ---- Alice's page and her link ----
  const alice = await s.page({ name: 'alice' });
  await alice.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
  await login(alice, p.alice);
  await nav(alice, 'Invite');
  await alice.getByRole('heading', { level: 1, name: 'Invite friends', exact: true }).waitFor();
  const linkBox = alice.getByRole('textbox', { name: 'Your invitation link' });
  await linkBox.waitFor();
  out.link = await linkBox.inputValue();
  out.rule = (await alice.locator('#invite-rule').innerText()).trim();
  out.before = await figures(alice);
  await alice.getByRole('button', { name: 'Copy link' }).click();
  out.copied = await until('the copy to be confirmed', async () => {
    const text = (await alice.locator('.invite-link-row ~ .status').innerText()).trim();
    return text && text;
  });
  out.clipboard = await alice.evaluate(() => navigator.clipboard.readText());
  out.header_before = await headerBalance(alice);
  // A reload would drop this mark: what Alice sees next arrives live.
  await alice.evaluate(() => { window.inviteLive = true; });
  mark('alice copied her link');

  // ---- an unknown code is refused, nothing created ----
  const bob = await s.page({ name: 'bob' });
  await open(bob, '/register?ref=' + encodeURIComponent(p.bad_code));
  const code = bob.getByLabel('Referral code (optional)');
  out.bad_field = await code.inputValue();
  await fillRegister(bob, p.bob);
  await bob.getByRole('button', { name: 'Create account' }).click();
  const fieldError = bob.locator('#referral-error');
  await fieldError.waitFor({ state: 'visible' });
  out.bad_error = await fieldError.innerText();
  out.bad_invalid = await code.getAttribute('aria-invalid');
  out.bad_path = new URL(bob.url()).pathname;
  if ((await bob.getByRole('banner').getByRole('link', { name: 'Log in', exact: true }).count()) !== 1) throw new Error('an unknown referral code signed Bob in');
  if (!(await code.evaluate((el) => el === document.activeElement))) throw new Error('the refused code\'s field does not have the focus');

  // ---- Bob registers through Alice's link ----
  await bob.goto(out.clipboard);
  await ready(bob);
  out.prefilled = await bob.getByLabel('Referral code (optional)').inputValue();
  await fillRegister(bob, p.bob);
  await bob.getByRole('button', { name: 'Create account' }).click();
  await signedIn(bob);
  out.bob_id = (await api(bob, 'GET', '/api/v1/auth/me')).user.id;
  const credit = await fetch(`${BASE}/api/v1/admin/users/${out.bob_id}/credit`, {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + ADMIN_TOKEN, 'Content-Type': 'application/json' },
    body: JSON.stringify({ amount_kopecks: 100000, bonus: false }),
  });
  if (credit.status !== 200) throw new Error(`the credit answered ${credit.status}: ${await credit.text()}`);
  await open(bob, `/events/${p.event}`);
  await buy(bob, p.market, 'YES', p.buy);
  mark('bob bought');

  // ---- Alice's page follows ----
  out.after = await until('Alice\'s page to show the qualified friend', async () => {
    const f = await figures(alice);
    return f.qualified === '1' && f.earned !== '₽0.00' && f;
  }, 30000);
  out.header_after = await until('Alice\'s header balance to rise', async () => {
    const b = await headerBalance(alice);
    return b !== out.header_before && b;
  });
  out.unread = await until('Alice\'s unread notification', async () => {
    const b = alice.getByRole('banner').locator('[data-unread] .badge [aria-hidden="true"]');
    return (await b.count()) > 0 && (await b.innerText()).trim();
  });
  out.live = await alice.evaluate(() => window.inviteLive === true);

  // ---- Bob's level, live on his profile ----
  await nav(bob, 'Profile');
  await bob.getByRole('heading', { level: 1, name: 'Profile', exact: true }).waitFor();
  const mine = bob.locator('[data-my-level]');
  out.level_before = await badge(mine, 'Bob\'s level 2', 'Level 2', 30000);
  await bob.evaluate(() => { window.levelLive = true; });
  await api(bob, 'POST', `/api/v1/markets/${p.market_id}/buy`, { side: 'YES', amount_kopecks: p.buy_kopecks });
  out.level_after = await badge(mine, 'Bob\'s level 3', 'Level 3', 30000);
  out.level_live = await bob.evaluate(() => window.levelLive === true);
  mark('bob levelled up');
  await bob.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /^Notifications/ }).click();
  const up = bob.locator('li.notification').filter({ hasText: 'level 3' });
  await up.waitFor();
  out.level_notification = await up.innerText();
  out.level_link = await up.getByRole('link').first().getAttribute('href');

  const visitor = await s.page({ name: 'visitor' });
  await open(visitor, `/users/${out.bob_id}`);
  out.public_level = await badge(visitor.getByRole('main'), 'the public profile\'s level', 'Level 3');
  // The leaderboard is counted by its own consumer: ask again until it has Bob.
  out.board_level = await until('Bob on the leaderboard at level 3', async () => {
    await open(visitor, '/leaderboard');
    await settle(visitor);
    const b = visitor.getByRole('row').filter({ hasText: p.bob.name }).locator('.level-badge');
    if (!(await b.count())) return false;
    const text = (await b.first().innerText()).trim();
    return text === 'Level 3' && text;
  }, 30000);

  // ---- the notification, in English and in Russian ----
  await alice.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /^Notifications/ }).click();
  const item = alice.locator('li.notification').filter({ hasText: p.bob.name });
  await item.waitFor();
  out.notification = await item.innerText();
  out.notify_link = await item.getByRole('link').first().getAttribute('href');
  await api(alice, 'PATCH', '/api/v1/auth/me', { language: 'ru' });
  await open(alice, '/notifications');
  const itemRu = alice.locator('li.notification').filter({ hasText: p.bob.name });
  await itemRu.waitFor();
  out.notification_ru = await itemRu.innerText();
  await open(alice, '/invite');
  await alice.locator('[data-figure="earned"]').waitFor();
  out.invite_ru = await alice.getByRole('main').innerText();
  await api(alice, 'PATCH', '/api/v1/auth/me', { language: 'en' });

  if (p.dir) {
    const shot = await s.page({ name: 'screenshot', viewport: { width: 1200, height: 800 } });
    await login(shot, p.alice, '/invite');
    await shot.locator('[data-figure="earned"]').waitFor();
    await settle(shot);
    out.screenshot = path.join(p.dir, 'invite.png');
    await shot.screenshot({ path: out.screenshot, fullPage: false, animations: 'disabled' });
  }

  if (out.axe) {
    const a = await s.page({ name: 'axe', bypassCSP: true });
    await login(a, p.alice, '/invite');
    await a.locator('[data-figure="earned"]').waitFor();
    await axeBothThemes(a, 'invite friends', out.axe);
    for (const [name, where] of [['notifications with a referral reward', '/notifications'], ['leaderboard with levels', '/leaderboard'], ['public profile with a level', `/users/${out.bob_id}`], ['profile with a level', '/profile']]) {
      await open(a, where);
      await axeBothThemes(a, name, out.axe);
    }
    const r = await s.page({ name: 'axe register', bypassCSP: true });
    await open(r, '/register?ref=' + encodeURIComponent(p.bad_code));
    await fillRegister(r, { name: 'Nobody', email: 'nobody-' + Date.now() + '@test.predictkit', password: 'password-nobody' });
    await r.getByRole('button', { name: 'Create account' }).click();
    await r.locator('#referral-error').waitFor({ state: 'visible' });
    await axeBothThemes(r, 'register with an unknown referral code', out.axe);
  }
  return out;
};
