// A phone-sized pass over every page of the app (TestWebAppOnPhone,
// webapp_phone_browser_test.go): each page of PAGES at 390×844 CSS pixels
// with a touch screen and a phone's user agent, checked for horizontal
// overflow (the document no wider than the screen, and no element
// reaching past its right edge, unless a box that scrolls or clips it
// keeps it inside), and, with p.dir set, a PNG of the screen into
// p.dir/<name>.png.
const path = require('path');
const { open, adminSignIn, adminReady, until, mark } = require('./lib.js');
const { login } = require('./steps.js');

// PAGES is every page of the app, one line each: [name, path, who].
// who is 'anon' (a visitor), 'user' (p.user, signed in), 'creator'
// (p.creator, signed in) or 'operator' (the console, signed in with the
// admin token; its pages are reached through the app's router, since
// the token lives in the tab's memory). In path, {event} is p.event,
// {resolved} p.resolved and {user} p.user.id. A page added to the app is
// a line added here.
const PAGES = [
  ['feed', '/', 'anon'],
  ['event', '/events/{event}', 'anon'],
  ['event-resolved', '/events/{resolved}', 'anon'],
  ['login', '/login', 'anon'],
  ['register', '/register', 'anon'],
  ['forgot-password', '/forgot-password', 'anon'],
  ['reset-password', '/reset-password?token=a-token', 'anon'],
  ['leaderboard', '/leaderboard', 'anon'],
  ['p2p', '/p2p', 'anon'],
  ['chat', '/chat', 'anon'],
  ['not-found', '/no-such-page', 'anon'],
  ['tag', '/tags/politics', 'anon'],
  ['search', '/?q=cup', 'anon'],
  ['public-profile', '/users/{user}', 'anon'],
  ['following', '/following', 'user'],
  ['event-signed-in', '/events/{event}', 'user'],
  ['profile', '/profile', 'user'],
  ['notifications', '/notifications', 'user'],
  ['new-event', '/events/new', 'creator'],
  ['admin-sign-in', '/admin', 'anon'],
  ['admin-users', '/admin/users', 'operator'],
  ['admin-partners', '/admin/partners', 'operator'],
  ['admin-chat', '/admin/chat', 'operator'],
  ['admin-markets', '/admin/markets', 'operator'],
  ['admin-proposals', '/admin/proposals', 'operator'],
  ['admin-audit', '/admin/audit', 'operator'],
  ['deposit', '/deposit', 'user'],
  ['withdraw', '/withdraw', 'user'],
  ['admin-withdrawals', '/admin/withdrawals', 'operator'],
  ['stats', '/stats', 'creator'],
  ['admin-stats', '/admin/stats', 'operator'],
];

// The phone: an iPhone 12–15's screen in CSS pixels, with touch and a
// mobile browser's user agent.
const PHONE = {
  viewport: { width: 390, height: 844 },
  isMobile: true,
  hasTouch: true,
  deviceScaleFactor: 1,
  userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
};

// settle waits for the page's heading and until it shows no loading
// placeholder.
async function settle(page) {
  await page.waitForFunction(() => document.querySelector('#page h1'));
  await until('the page to load', async () => !(await page.evaluate(() => (document.querySelector('main') || document.body).innerText.includes('Loading…'))));
  await page.evaluate(() => document.fonts.ready);
}

// overflow measures what reaches past the screen's right edge: the
// document's scroll width, and the outermost visible elements whose box
// ends past it with no ancestor that scrolls or clips it within the
// screen (a table in a scrolling wrapper is fine; the wrapper must fit).
function overflow() {
  const vw = document.documentElement.clientWidth;
  const describe = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += '#' + el.id;
    if (el.classList.length) s += '.' + [...el.classList].join('.');
    const text = (el.innerText || '').trim().replace(/\s+/g, ' ').slice(0, 40);
    return text ? `${s} "${text}"` : s;
  };
  const held = (el) => {
    // Not the body's: a body that hides what overflows cuts it off.
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX !== 'visible' || s.clipPath !== 'none') return a.getBoundingClientRect().right <= vw + 1;
    }
    return false;
  };
  const offenders = [];
  for (const el of document.body.querySelectorAll('*')) {
    const s = getComputedStyle(el);
    if (s.display === 'none' || s.visibility === 'hidden') continue;
    // Visually hidden text (for screen readers) is clipped to nothing.
    if (s.clip !== 'auto' || s.clipPath.startsWith('inset(50%')) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || r.right <= vw + 1) continue;
    if (held(el)) continue;
    // Only the outermost: a child of an offender says nothing new.
    if (offenders.some((o) => o.el.contains(el))) continue;
    offenders.push({ el, right: Math.round(r.right) });
  }
  return {
    width: vw,
    inner_width: window.innerWidth,
    scroll_width: document.scrollingElement.scrollWidth,
    offenders: offenders.slice(0, 10).map((o) => `${describe(o.el)} ends at ${o.right}px`),
  };
}

// canary shows that the check sees an overflow: a box wider than the
// screen put into the page is reported, then taken away again, and so is
// one held in a box that scrolls sideways, which is not.
async function canary(page) {
  await page.evaluate(() => {
    const wide = document.createElement('div');
    wide.id = 'phone-canary';
    wide.style.width = '600px';
    wide.style.height = '10px';
    document.getElementById('page').append(wide);
  });
  const bare = await page.evaluate(overflow);
  await page.evaluate(() => {
    const wide = document.getElementById('phone-canary');
    const box = document.createElement('div');
    box.id = 'phone-canary-box';
    box.style.overflowX = 'auto';
    wide.replaceWith(box);
    box.append(wide);
  });
  const held = await page.evaluate(overflow);
  await page.evaluate(() => document.getElementById('phone-canary-box').remove());
  if (bare.scroll_width <= bare.width || bare.offenders.length !== 1) throw new Error(`the overflow check missed a 600-pixel box: ${JSON.stringify(bare)}`);
  if (held.offenders.length !== 0) throw new Error(`the overflow check reported a box held in a scrolling one: ${JSON.stringify(held)}`);
}

module.exports = async (s, p) => {
  const out = [];
  const pages = {};
  const fill = (pth) => pth.replace('{event}', p.event).replace('{resolved}', p.resolved).replace('{user}', p.user.id);
  // One page (one browser profile) per kind of visitor, made on first use.
  const pageFor = async (who) => {
    if (pages[who]) return pages[who];
    const page = await s.page({ name: `phone ${who}`, ...PHONE });
    if (who === 'user') await login(page, p.user);
    if (who === 'creator') await login(page, p.creator);
    if (who === 'operator') await adminSignIn(page, 'users');
    pages[who] = page;
    return page;
  };
  for (const [name, raw, who] of PAGES) {
    const start = Date.now();
    const page = await pageFor(who);
    const target = fill(raw);
    if (who === 'operator') {
      const section = target.split('/')[2];
      await page.evaluate(() => delete document.documentElement.dataset.adminReady);
      await page.evaluate((t) => {
        history.pushState(null, '', t);
        window.dispatchEvent(new PopStateEvent('popstate', { state: null }));
      }, target);
      await adminReady(page, section);
    } else {
      await open(page, target);
    }
    await settle(page);
    await page.evaluate(() => window.scrollTo(0, 0));
    if (out.length === 0) await canary(page);
    const o = await page.evaluate(overflow);
    let file = '';
    if (p.dir) {
      file = path.join(p.dir, `${name}.png`);
      await page.screenshot({ path: file, fullPage: false, animations: 'disabled' });
    }
    out.push({ name, path: target, ...o, file });
    mark(`phone ${name} (${Date.now() - start} ms)`);
  }
  return out;
};

// The phone and the overflow check, for flows that fill a page first
// (money.js: the Withdraw page with withdrawals in it).
module.exports.PHONE = PHONE;
module.exports.overflow = overflow;
