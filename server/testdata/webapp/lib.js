// Shared by the web app's browser flows (driver.js): a Session of browser
// contexts, and the steps several flows take (open a page and wait for the
// app, sign in as the operator, read an amount of money).
const BASE = process.env.BASE;
const ADMIN_TOKEN = process.env.ADMIN_TOKEN;
const TIMEOUT = 15000;

// A Session holds the contexts one flow opened (each a separate browser
// profile: its own cookies), remembers every Content-Security-Policy
// violation and uncaught error of their pages, and closes them at the end.
class Session {
  constructor(browser) {
    this.browser = browser;
    this.contexts = [];
    this.pages = [];
    this.problems = [];
  }

  // page opens a page in a new context. opts: name (for the reports),
  // colorScheme, bypassCSP (only for injecting axe-core, whose inline
  // script the app's policy refuses), viewport, and for a phone
  // (phone.js) isMobile, hasTouch, userAgent and deviceScaleFactor.
  async page(opts = {}) {
    const phone = opts.isMobile ? { isMobile: true, hasTouch: !!opts.hasTouch, userAgent: opts.userAgent, deviceScaleFactor: opts.deviceScaleFactor || 1 } : {};
    const ctx = await this.browser.newContext({
      bypassCSP: !!opts.bypassCSP,
      colorScheme: opts.colorScheme || 'light',
      viewport: opts.viewport || { width: 1280, height: 900 },
      locale: opts.locale || 'en-US',
      reducedMotion: 'reduce',
      ...phone,
    });
    ctx.setDefaultTimeout(TIMEOUT);
    this.contexts.push(ctx);
    const page = await ctx.newPage();
    page.label = opts.name || `page ${this.pages.length + 1}`;
    const csp = !opts.bypassCSP;
    page.on('console', (m) => {
      const text = m.text();
      if (csp && /Content Security Policy|Refused to/.test(text)) this.problems.push(`${page.label}: CSP: ${text}`);
      if (process.env.PREDICTKIT_WEBAPP_DEBUG) console.error(`${page.label} console:`, text);
    });
    page.on('pageerror', (e) => this.problems.push(`${page.label}: uncaught: ${e && e.stack ? e.stack : e}`));
    this.pages.push(page);
    return page;
  }

  // checkClean fails the flow when a page broke the CSP or threw.
  checkClean() {
    if (this.problems.length) throw new Error('the pages reported problems:\n' + this.problems.join('\n'));
  }

  // describe tells what each page showed, for a failure's report.
  async describe() {
    const out = [];
    for (const p of this.pages) {
      try {
        const text = await p.evaluate(() => (document.querySelector('main') || document.body).innerText);
        out.push({ page: p.label, url: p.url(), text: text.slice(0, 1500), problems: this.problems.filter((s) => s.startsWith(p.label + ':')) });
      } catch (e) {
        out.push({ page: p.label, error: String(e) });
      }
    }
    return out;
  }

  async close() {
    for (const c of this.contexts) await c.close().catch(() => {});
  }
}

// mark logs, with PREDICTKIT_WEBAPP_DEBUG set, when (seconds since the
// driver started) a step ended: where a flow spends its time.
function mark(what) {
  if (process.env.PREDICTKIT_WEBAPP_DEBUG) console.error(`${(performance.now() / 1000).toFixed(2)} s: ${what}`);
}

// ready waits until the app has drawn its first page (app.js sets
// <html data-ready="1">).
async function ready(page) {
  await page.waitForFunction(() => document.documentElement.dataset.ready === '1', null, { timeout: TIMEOUT });
}

// open loads path from the server and waits for the app.
async function open(page, path) {
  await page.goto(BASE + path);
  await ready(page);
  mark(`${page.label} opened ${path}`);
}

// adminReady waits until the operator console has drawn section.
async function adminReady(page, section) {
  await page.waitForFunction((s) => document.documentElement.dataset.adminReady === s, section, { timeout: TIMEOUT });
}

// adminSignIn opens /admin/{section} and signs in with the admin token.
async function adminSignIn(page, section = 'users') {
  await open(page, '/admin/' + section);
  await adminReady(page, 'login');
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await adminReady(page, section);
  mark(`${page.label} signed in as the operator`);
}

// adminGo follows the console's link named name to section.
async function adminGo(page, name, section) {
  await page.evaluate(() => delete document.documentElement.dataset.adminReady);
  await page.getByRole('navigation', { name: 'Operator sections' }).getByRole('link', { name, exact: true }).click();
  await adminReady(page, section);
}

// confirm presses the button named label in the open confirmation dialog.
async function confirm(page, label) {
  const dlg = page.getByRole('dialog');
  await dlg.getByRole('button', { name: label, exact: true }).click();
  await dlg.waitFor({ state: 'detached' });
}

// kopecks reads an amount of money as displayed ("₽1,234.56", "1 234,56 ₽")
// as integer kopecks: its digits (the app always shows two decimals).
function kopecks(text) {
  const neg = /[-−]/.test(text);
  const d = String(text).replace(/[^0-9]/g, '');
  if (d === '') throw new Error(`no amount in ${JSON.stringify(text)}`);
  return (neg ? -1 : 1) * Number(d);
}

// until polls fn (async, returning a truthy value when done) every 100 ms
// for at most ms, and returns its value; on timeout it throws what.
async function until(what, fn, ms = TIMEOUT) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? ': ' + last : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

module.exports = { mark, Session, BASE, ADMIN_TOKEN, TIMEOUT, ready, open, adminReady, adminSignIn, adminGo, confirm, kopecks, until };
