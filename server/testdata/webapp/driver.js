// Drives headless Chromium for TestWebAppInBrowser (webapp_browser_test.go)
// through playwright-core. One browser serves every flow; the Go test
// sends one JSON command a line on stdin, {"flow": NAME, "params": {...}},
// and reads one JSON line per command on stdout: {"result": {...}} or
// {"error": "...", "pages": [...]} (what each open page showed when it
// failed). A flow is the module NAME.js beside this file; it exports
// async (session, params) => result, where session (lib.js) opens browser
// contexts and pages and closes them after the flow.
//
// Environment: PLAYWRIGHT_CORE (the package's directory), CHROMIUM (the
// browser), BASE (the server's URL), ADMIN_TOKEN, AXE_CORE (axe.min.js,
// optional), SCREENSHOTS (a directory, optional).
const path = require('path');
const readline = require('readline');
const { chromium } = require(process.env.PLAYWRIGHT_CORE);
const { Session, mark } = require('./lib.js');

(async () => {
  mark('driver started');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-dev-shm-usage'],
  });
  mark('browser launched');
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (line.trim() === '' || line.trim() === 'quit') break;
    let out;
    let session;
    try {
      const { flow, params } = JSON.parse(line);
      if (!/^[a-z_]+$/.test(flow)) throw new Error(`no flow ${flow}`);
      const run = require(path.join(__dirname, flow + '.js'));
      session = new Session(browser);
      mark(`flow ${flow}`);
      const result = await run(session, params || {});
      session.checkClean();
      out = { result };
    } catch (e) {
      out = { error: String(e && e.stack ? e.stack : e), pages: session ? await session.describe() : [] };
    }
    if (session) await session.close();
    process.stdout.write(JSON.stringify(out) + '\n');
  }
  await browser.close();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
