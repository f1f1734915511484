// The faults a user of the web app met, each checked as a user would see it
// (webapp_appfix_browser_test.go runs one part per call, p.part):
// chat — the support chat of a signed-in user is the same in two browsers,
//   and an operator's answer shows in both;
// russian — in Russian, no English string of strings.js shows on the
//   feed, an event, the profile and the notifications, and names are the
//   Russian ones;
// reply — a reply notification's link opens the event at the comment,
//   scrolled to and highlighted;
// resolved — a resolved market reads as resolved (outcome, 100/0, no
//   trade buttons, the payout), a voided one as refunded;
// money — a user with no money is told to ask the support chat, on the
//   profile and in the trade form;
// ticks — the PnL chart's axis ticks are round amounts;
// narrow — at 390×844 nothing on the profile and event pages is wider
//   than the screen, and positions are cards;
// console — the operator console has its own layout, axe-clean in both
//   themes.
const path = require('path');
const { open, until, adminSignIn, BASE, ADMIN_TOKEN } = require('./lib.js');
const { login } = require('./steps.js');

// admin calls an operator route from the test (not the browser).
async function admin(method, route, body) {
  const r = await fetch(BASE + '/api/v1/admin' + route, {
    method,
    headers: { Authorization: 'Bearer ' + ADMIN_TOKEN, 'Content-Type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!r.ok) throw new Error(`${method} ${route}: ${r.status} ${await r.text()}`);
  return r.json();
}

async function axe(page) {
  if (!process.env.AXE_CORE) return null;
  await page.addScriptTag({ path: process.env.AXE_CORE });
  return page.evaluate(async () => {
    const res = await window.axe.run(document, { resultTypes: ['violations'] });
    return res.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join(', ')}`);
  });
}

const parts = {
  async chat(s, p) {
    const laptop = await s.page({ name: 'laptop' });
    await login(laptop, p.user, '/chat');
    await laptop.getByLabel('Message').fill(p.question);
    await laptop.getByRole('button', { name: 'Send' }).click();
    await laptop.getByRole('log').getByText(p.question).waitFor();
    // The operator answers the user's session.
    const { sessions } = await admin('GET', '/chat/sessions?limit=100');
    const mine = sessions.find((x) => x.user_id === p.user.id);
    if (!mine) throw new Error('the operator does not see the user\'s session');
    await admin('POST', `/chat/sessions/${mine.session_id}/messages`, { text: p.answer });
    // Another browser of the same user: nothing in it but the sign-in.
    const phone = await s.page({ name: 'phone' });
    await login(phone, p.user, '/chat');
    await phone.getByRole('log').getByText(p.answer).waitFor();
    const phoneText = await phone.getByRole('log').innerText();
    await laptop.getByRole('log').getByText(p.answer).waitFor({ timeout: 15000 });
    const laptopText = await laptop.getByRole('log').innerText();
    return { laptop: laptopText, phone: phoneText };
  },

  async russian(s, p) {
    const { en, ru } = await import(path.join(__dirname, '../../../web/static/assets/strings.js'));
    // The English strings a Russian page must not show: those that differ
    // in Russian, whole (with word boundaries), or the literal fragments
    // of a template.
    const bad = [];
    for (const [k, v] of Object.entries(en)) {
      if (ru[k] === v || !/[A-Za-z]{3}/.test(v)) continue;
      for (const part of v.split(/\{\w+\}/)) {
        const frag = part.trim().replace(/^[\s:·.,—–()"“”]+|[\s:·.,—–()"“”]+$/g, '');
        if (/[A-Za-z]{3}/.test(frag) && (frag.length >= 4 || part === v)) bad.push({ key: k, text: frag });
      }
    }
    const page = await s.page({ name: 'russian' });
    // Signing in switches the app to the profile's language (Russian), so
    // the steps' English "Log out" never shows: wait for the language.
    await open(page, '/login');
    await page.getByLabel('Email').fill(p.user.email);
    await page.getByLabel('Password').fill(p.user.password);
    await page.getByRole('main').getByRole('button', { name: 'Log in' }).click();
    await page.waitForFunction(() => document.documentElement.lang === 'ru' && document.querySelector('[data-balance]'));
    const leaks = [];
    const visit = async (where, route, waitFor) => {
      await open(page, route);
      await waitFor();
      await page.waitForTimeout(300);
      const text = await page.evaluate(() => document.body.innerText);
      for (const b of bad) {
        const re = new RegExp(`(^|[^\\p{L}])${b.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\p{L}])`, 'u');
        if (re.test(text)) leaks.push(`${where}: ${b.key} “${b.text}”`);
      }
      return text;
    };
    await visit('feed', '/', () => page.getByRole('link', { name: p.event_name_ru }).first().waitFor());
    const eventText = await visit('event', `/events/${p.event}`, () => page.getByRole('heading', { level: 1, name: p.event_name_ru }).waitFor());
    await visit('profile', '/profile', () => page.getByRole('heading', { level: 1 }).waitFor());
    const notes = await visit('notifications', '/notifications', () => page.locator('.notification').first().waitFor());
    return { leaks, event: eventText, notifications: notes };
  },

  async reply(s, p) {
    const page = await s.page({ name: 'reader' });
    await login(page, p.user, '/notifications');
    await page.getByRole('link', { name: 'Open the comment' }).first().click();
    await page.waitForURL((u) => u.pathname === `/events/${p.event}` && u.hash === `#comment-${p.comment}`);
    const target = page.locator(`#comment-${p.comment}`);
    await until('the comment highlighted', async () => (await target.getAttribute('class') || '').includes('comment-target'));
    const seen = await target.evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { inView: r.top >= 0 && r.bottom <= window.innerHeight + 1, focused: document.activeElement === el, text: el.innerText };
    });
    return seen;
  },

  async resolved(s, p) {
    const page = await s.page({ name: 'holder' });
    await login(page, p.user, `/events/${p.event}`);
    const card = (name) => page.getByRole('article', { name, exact: true });
    await card(p.won).locator('[data-payout]').waitFor();
    await card(p.voided).locator('[data-payout]').waitFor();
    const read = async (name) => ({
      text: await card(name).innerText(),
      buttons: await card(name).getByRole('button').count(),
    });
    return { won: await read(p.won), voided: await read(p.voided) };
  },

  async money(s, p) {
    const page = await s.page({ name: 'broke' });
    await login(page, p.user, '/profile');
    const notice = page.locator('[data-zero-balance]');
    await notice.waitFor();
    const profile = await notice.innerText();
    const href = await notice.getByRole('link').getAttribute('href');
    await open(page, `/events/${p.event}`);
    await page.getByRole('button', { name: 'Buy YES' }).first().click();
    const form = page.locator('.trade-form [data-zero-balance]');
    await form.waitFor();
    return { profile, href, trade: await form.innerText() };
  },

  async ticks(s, p) {
    const page = await s.page({ name: 'trader' });
    await login(page, p.user, '/profile');
    const chart = page.locator('svg.chart').first();
    await chart.waitFor();
    const labels = await chart.evaluate((svg) => [...svg.querySelectorAll('text')].filter((x) => x.getAttribute('x') === '42').map((x) => x.textContent));
    return { labels };
  },

  async narrow(s, p) {
    const page = await s.page({ name: 'phone', viewport: { width: 390, height: 844 } });
    await login(page, p.user, '/profile');
    const out = {};
    const measure = () => page.evaluate(() => {
      const w = document.documentElement.clientWidth;
      const wide = [];
      for (const el of document.querySelectorAll('body *')) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.height === 0) continue;
        if (r.right > w + 1 || r.left < -1) wide.push(`${el.tagName.toLowerCase()}.${el.className} ${Math.round(r.left)}..${Math.round(r.right)}`);
      }
      return { width: w, scroll: document.documentElement.scrollWidth, wide: wide.slice(0, 10) };
    });
    await page.locator('.table-wrap td').first().waitFor();
    out.profile = await measure();
    out.cells = await page.locator('.table-wrap td').first().evaluate((td) => ({ display: getComputedStyle(td.closest('tr')).display, label: td.getAttribute('data-label') }));
    await open(page, `/events/${p.event}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.locator('.market-prices').first().waitFor();
    await page.waitForTimeout(300);
    out.event = await measure();
    return out;
  },

  async console(s) {
    const out = {};
    for (const scheme of ['light', 'dark']) {
      const page = await s.page({ name: 'operator ' + scheme, colorScheme: scheme, bypassCSP: true });
      await adminSignIn(page, 'users');
      // The console's stylesheet loads with the console; on a busy machine
      // it may arrive after the section is ready.
      await until('the console\'s own layout', () => page.evaluate(() => getComputedStyle(document.getElementById('site-header')).display === 'none'));
      out[scheme] = await page.evaluate(() => ({
        appHeader: getComputedStyle(document.getElementById('site-header')).display,
        bar: Boolean(document.querySelector('.adm-bar')) && getComputedStyle(document.querySelector('.adm-bar')).display,
        sidebar: document.querySelector('nav.adm-side') ? getComputedStyle(document.querySelector('.adm-body')).gridTemplateColumns : '',
        mainWidth: document.querySelector('main').getBoundingClientRect().width,
      }));
      out[scheme].axe = await axe(page);
      // Back in the app, its own chrome returns.
      await page.getByRole('link', { name: 'Back to the app' }).click();
      await until('the app\'s header back', () => page.evaluate(() => getComputedStyle(document.getElementById('site-header')).display !== 'none'));
      out[scheme].back = await page.evaluate(() => !document.querySelector('.adm'));
    }
    return out;
  },
};

module.exports = async (s, p) => {
  const part = parts[p.part];
  if (!part) throw new Error(`no part ${p.part}`);
  return part(s, p);
};
