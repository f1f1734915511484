// Telegram on the profile page: "Link Telegram" is the bot's deep link,
// opened in a new tab; the section waits, and when the fake Bot API
// delivers "/start <token>" to the server's webhook (as Telegram does
// when the user presses Start) it shows "Linked" by itself. The
// notifications toggle turns them off and on, "Unlink Telegram" unlinks
// and offers the link again. axe-core checks the section linked and not,
// in both themes, when the test gives it.
const { until, mark } = require('./lib.js');
const { login } = require('./steps.js');

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

// profileState is what GET /auth/me says of Telegram, asked with the
// page's own session.
async function profileState(page) {
  return page.evaluate(async () => {
    const r = await fetch('/api/v1/auth/me', { credentials: 'same-origin' });
    const u = (await r.json()).user;
    return { verified: u.telegram_verified, notifications: u.telegram_notifications };
  });
}

module.exports = async (s, p) => {
  const out = { axe: process.env.AXE_CORE ? [] : null };
  const page = await s.page({ name: 'telegram' });
  // The deep link opens t.me, which the test does not reach: a blank page
  // stands for Telegram.
  await page.context().route('https://t.me/**', (r) => r.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Telegram</title>' }));
  await login(page, p.user, '/profile');
  const section = page.locator('#telegram');
  const link = section.getByRole('link', { name: 'Link Telegram' });
  out.href = await link.getAttribute('href');
  out.target = await link.getAttribute('target');

  if (out.axe) {
    const a = await s.page({ name: 'axe unlinked', bypassCSP: true });
    await login(a, p.user, '/profile');
    await a.locator('#telegram').getByRole('link', { name: 'Link Telegram' }).waitFor();
    await axeBothThemes(a, 'profile, Telegram not linked', out.axe);
  }

  // The click asks for a new link (the axe page's visit replaced the
  // first one) and the new tab goes to it.
  const [tab] = await Promise.all([page.waitForEvent('popup'), link.click()]);
  await tab.waitForURL((u) => u.hostname === 't.me');
  out.tab = tab.url();
  const token = new URL(out.tab).searchParams.get('start');
  await tab.close();
  out.waiting = await until('the section to wait for Telegram', async () => {
    const text = await section.innerText();
    return text.includes('Waiting for Telegram') && text;
  });
  mark('waiting for Telegram');

  // The user presses Start in Telegram: the Bot API delivers the update.
  const res = await fetch(p.fake + '/control/deliver', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ chat_id: p.chat, language: 'en', text: '/start ' + token }),
  });
  out.delivered = await res.json();
  try {
    out.linked = await until('the section to show Linked', async () => {
      const text = await section.innerText();
      return text.includes('Linked') && text;
    });
  } catch (e) {
    throw new Error(`${e.message}; the webhook answered ${JSON.stringify(out.delivered)}; the section shows ${JSON.stringify(await section.innerText())}; the profile says ${JSON.stringify(await profileState(page))}`);
  }
  mark('linked');

  if (out.axe) {
    const a = await s.page({ name: 'axe linked', bypassCSP: true });
    await login(a, p.user, '/profile');
    await a.locator('#telegram').getByRole('checkbox', { name: 'Send my notifications to Telegram' }).waitFor();
    await axeBothThemes(a, 'profile, Telegram linked', out.axe);
  }

  // The toggle, by keyboard.
  const toggle = section.getByRole('checkbox', { name: 'Send my notifications to Telegram' });
  out.toggle_initially = await toggle.isChecked();
  await toggle.focus();
  await page.keyboard.press('Space');
  await until('the notifications to be off', async () => (await section.innerText()).includes('no longer go to Telegram'));
  out.after_off = await profileState(page);
  await toggle.click();
  await until('the notifications to be on', async () => (await section.innerText()).includes('Notifications go to Telegram.'));
  out.after_on = await profileState(page);

  await section.getByRole('button', { name: 'Unlink Telegram' }).click();
  out.unlinked = await until('the link offered again', async () => {
    const text = await section.innerText();
    return text.includes('Telegram unlinked') && (await section.getByRole('link', { name: 'Link Telegram' }).count()) === 1 && text;
  });
  out.after_unlink = await profileState(page);
  return out;
};
