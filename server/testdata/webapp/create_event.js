// A fresh install: the empty feed tells a visitor how the operator
// starts and a creator where creating is described; the operator creates
// an event in the console (a refused one shows the server's reason),
// shows it, and the visitor's feed lists it.
const { open, adminSignIn, adminReady } = require('./lib.js');
const { login } = require('./steps.js');

module.exports = async (s, p) => {
  const visitor = await s.page({ name: 'visitor' });
  await open(visitor, '/');
  const main = visitor.getByRole('main');
  await main.getByText('No active events yet.').waitFor();
  await main.getByText('predictkit admin create-event -f event.json -creator ID').waitFor();
  const consoleHref = await main.getByRole('link', { name: 'Operator console' }).getAttribute('href');
  const axe = await emptyFeedViolations(s);

  const creator = await s.page({ name: 'creator' });
  await login(creator, p.creator, '/');
  const howTo = creator.getByRole('main').getByRole('link', { name: 'How to create an event' });
  await howTo.waitFor();
  const docsHref = await howTo.getAttribute('href');

  const op = await s.page({ name: 'operator' });
  await adminSignIn(op, 'markets');
  await op.getByLabel('Owner (user ID)').fill(String(p.creator.id));
  await op.getByLabel('Event (JSON)').fill(JSON.stringify({ ...p.event, colour: 'red' }));
  await op.getByRole('button', { name: 'Create event' }).click();
  const refused = await op.getByRole('alert').filter({ hasText: 'colour' }).innerText();
  await op.getByLabel('Event (JSON)').fill(JSON.stringify(p.event));
  await op.getByRole('button', { name: 'Create event' }).click();
  const created = await op.getByRole('status').filter({ hasText: 'created' }).innerText();
  await op.evaluate(() => delete document.documentElement.dataset.adminReady);
  await op.getByRole('link', { name: /^Open event/ }).click();
  await adminReady(op, 'markets');
  await op.getByRole('button', { name: 'Show in the feed' }).click();
  await op.getByRole('status').filter({ hasText: 'The event is in the feed.' }).waitFor();

  await open(visitor, '/');
  await visitor.getByRole('main').getByRole('link', { name: p.event.name }).waitFor();
  return { console_href: consoleHref, docs_href: docsHref, refused, created, axe };
};

// emptyFeedViolations runs axe-core (when the test gives it) on the empty
// feed, in a context of its own that bypasses the CSP to inject it, as
// axe.js does; null without axe-core.
async function emptyFeedViolations(s) {
  if (!process.env.AXE_CORE) return null;
  const page = await s.page({ name: 'axe', bypassCSP: true });
  await open(page, '/');
  await page.getByRole('main').getByRole('link', { name: 'Operator console' }).waitFor();
  await page.addScriptTag({ path: process.env.AXE_CORE });
  return page.evaluate(async () => {
    const res = await window.axe.run(document, { resultTypes: ['violations'] });
    return res.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join(', ')}`);
  });
}
