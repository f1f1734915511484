// People and following: a visitor goes from the leaderboard to a trader's
// public profile (by keyboard), a hidden profile is "not found"; a user
// edits their profile (a taken nickname is refused with the server's
// reason), creates an API key (shown once, with a copy button) and
// revokes it after a confirmation; follows an event with the keyboard,
// finds it on the Following page, and sees the notification when its
// creator resolves a market. axe-core checks the new pages in both
// themes when the test gives it.
const { open, until, mark, BASE } = require('./lib.js');
const { login, nav } = require('./steps.js');

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

module.exports = async (s, p) => {
  const out = {};

  // A visitor: the leaderboard's row links the trader's profile.
  const visitor = await s.page({ name: 'visitor' });
  await open(visitor, '/leaderboard');
  const link = visitor.getByRole('table').getByRole('link', { name: p.trader.name, exact: true });
  await link.focus();
  await visitor.keyboard.press('Enter');
  await visitor.waitForURL((url) => url.pathname === `/users/${p.trader.id}`);
  await visitor.getByRole('heading', { level: 1, name: p.trader.name }).waitFor();
  out.profile_text = await visitor.getByRole('main').innerText();
  await visitor.getByRole('main').getByRole('link', { name: p.event_name }).first().waitFor();
  await open(visitor, `/users/${p.hidden_id}`);
  out.hidden_heading = await visitor.getByRole('heading', { level: 1 }).innerText();
  mark('profiles seen');

  // The follower edits their profile and manages an API key.
  const me = await s.page({ name: 'follower' });
  await login(me, p.follower, '/profile');
  const edit = me.locator('#profile-edit');
  await edit.getByLabel('Nickname').fill(p.taken_nickname);
  await edit.getByRole('button', { name: 'Save profile' }).click();
  out.taken = await until('the refusal of a taken nickname', async () => {
    const text = await edit.getByRole('alert').innerText();
    return text.trim() && text;
  });
  await edit.getByLabel('Nickname').fill(p.nickname);
  await edit.getByLabel('Avatar URL').fill('https://example.com/avatar.png');
  await edit.getByRole('button', { name: 'Save profile' }).click();
  out.saved = await until('the profile saved', async () => {
    const text = await edit.getByRole('status').innerText();
    return text.trim() && text;
  });

  const keys = me.locator('#apikey-create');
  await keys.getByLabel('Key name').fill('Browser bot');
  await keys.getByLabel('Trade').check();
  await keys.getByRole('button', { name: 'Create key' }).click();
  const secret = me.locator('#apikey-secret');
  await secret.waitFor();
  out.key = await secret.inputValue();
  await me.getByRole('button', { name: 'Copy key' }).waitFor();
  await me.getByRole('button', { name: 'Revoke key Browser bot' }).waitFor();
  out.key_listed = await me.locator('.key-list').innerText();
  await me.getByRole('button', { name: 'Revoke key Browser bot' }).click();
  // The confirmation takes the focus: Enter confirms.
  await until('the confirmation to take the focus', async () => (await me.evaluate(() => document.activeElement && document.activeElement.textContent)) === 'Yes, revoke');
  await me.keyboard.press('Enter');
  await me.getByText('You have no API keys.').waitFor();
  mark('profile and keys done');

  // Follow the event by keyboard, find it on the Following page.
  await open(me, `/events/${p.event}`);
  const follow = me.getByRole('button', { name: 'Follow' });
  await until('the follow button to be ready', async () => follow.isEnabled());
  await follow.focus();
  await me.keyboard.press('Space');
  await me.getByRole('button', { name: 'Following', pressed: true }).waitFor();
  await nav(me, 'Following');
  await me.getByRole('heading', { level: 1, name: 'Following' }).waitFor();
  await me.getByRole('main').getByRole('link', { name: p.event_name }).waitFor();
  mark('followed');

  // The creator resolves a market; the follower is told.
  const r = await fetch(`${BASE}/api/v1/events/${p.event}/pools/${p.pool}/markets/${p.market}/close`, {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + p.creator_token, 'Content-Type': 'application/json' },
    body: JSON.stringify({ won_side: 'YES' }),
  });
  if (r.status !== 200) throw new Error(`the close answered ${r.status}: ${await r.text()}`);
  await until('the unread badge', async () => /unread/.test(await me.getByRole('navigation', { name: 'Main' }).innerText()));
  await me.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /^Notifications/ }).click();
  out.notification = await until('the resolution notification', async () => {
    const text = await me.getByRole('main').innerText();
    return /event you follow/.test(text) && text;
  });

  out.axe = null;
  if (process.env.AXE_CORE) {
    out.axe = [];
    const a = await s.page({ name: 'axe', bypassCSP: true });
    await login(a, p.follower, `/users/${p.trader.id}`);
    await axeBothThemes(a, 'public profile', out.axe);
    for (const [name, path] of [['hidden profile', `/users/${p.hidden_id}`], ['following', '/following'], ['event with the follow button', `/events/${p.event}`], ['profile', '/profile']]) {
      await open(a, path);
      await axeBothThemes(a, name, out.axe);
    }
  }
  return out;
};
