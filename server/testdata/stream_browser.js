// Drives headless Chromium for TestStreamInBrowser (stream_browser_test.go)
// through playwright-core: a page opens two EventSources on the server the
// test started, one public (market:{id}), one of the me topic opened with a
// ticket, and reports what they receive. The Go test sends commands on
// stdin, one a line, and reads one JSON line per command on stdout:
//
//   opens N     wait until the public EventSource has opened N times
//   wait N M    wait until the public one has N messages and me has M
//   quit
//
// Environment: PLAYWRIGHT_CORE (the package's directory), CHROMIUM (the
// browser), BASE (the server as the browser sees it), MARKET, TOKEN (the
// user's Bearer token, to buy tickets).
const { chromium } = require(process.env.PLAYWRIGHT_CORE);
const readline = require('readline');

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'],
  });
  // The API's answers forbid scripts (Content-Security-Policy): the page is
  // an API answer, so the test's script bypasses that.
  const context = await browser.newContext({ bypassCSP: true });
  const page = await context.newPage();
  page.on('console', (m) => console.error('page:', m.text()));
  await page.goto(process.env.BASE + '/healthz');
  await page.evaluate(({ market, token }) => {
    window.pub = { got: [], opens: 0, errors: 0 };
    window.me = { got: [], opens: 0, errors: 0, tickets: 0 };
    const es = new EventSource('/api/v1/stream?topics=market:' + market);
    es.onopen = () => window.pub.opens++;
    es.onerror = () => window.pub.errors++;
    for (const t of ['trade', 'price', 'reset']) {
      es.addEventListener(t, (e) => window.pub.got.push({ id: e.lastEventId, event: t, data: JSON.parse(e.data) }));
    }
    // The me topic, as the API's documentation says a browser opens it: a
    // ticket per connection; when the EventSource gives up (its automatic
    // reconnection sends the used ticket again and is refused), a new
    // ticket and a new EventSource resuming after the last id received.
    let lastID = '';
    const openMe = async () => {
      const r = await fetch('/api/v1/stream/tickets', { method: 'POST', headers: { Authorization: 'Bearer ' + token } });
      const { ticket } = await r.json();
      window.me.tickets++;
      let url = '/api/v1/stream?topics=me&ticket=' + encodeURIComponent(ticket);
      if (lastID !== '') url += '&last_event_id=' + lastID;
      const me = new EventSource(url);
      me.onopen = () => window.me.opens++;
      me.onerror = () => {
        window.me.errors++;
        if (me.readyState === EventSource.CLOSED) {
          setTimeout(openMe, 200);
        }
      };
      for (const t of ['notification', 'balance', 'reset']) {
        me.addEventListener(t, (e) => {
          lastID = e.lastEventId;
          window.me.got.push({ id: e.lastEventId, event: t, data: JSON.parse(e.data) });
        });
      }
    };
    openMe();
  }, { market: process.env.MARKET, token: process.env.TOKEN });

  const state = () => page.evaluate(() => ({ pub: window.pub, me: window.me }));
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const [cmd, a, b] = line.trim().split(/\s+/);
    if (cmd === 'quit') break;
    let out;
    try {
      if (cmd === 'opens') {
        await page.waitForFunction((n) => window.pub.opens >= n && window.me.opens >= 1, +a, { timeout: 30000 });
      } else if (cmd === 'wait') {
        await page.waitForFunction(([n, m]) => window.pub.got.length >= n && window.me.got.length >= m, [+a, +b], { timeout: 30000 });
      }
      out = await state();
    } catch (e) {
      out = { error: String(e), ...(await state()) };
    }
    console.log(JSON.stringify(out));
  }
  await browser.close();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
