// The app's "New event" page. A creator builds an exclusive pool of three
// markets, sees the subsidy the server counts for it, previews, creates
// and publishes it, and finds it in the feed; axe-core checks the page.
// With proposals on (p.proposer set), a user who is not a creator
// proposes an event, the operator approves it in the console, and the
// user sees the notification.
const { open, adminSignIn, confirm, until } = require('./lib.js');
const { login, nav } = require('./steps.js');

// fillMarket types market n (1-based) of the page's only pool.
async function fillMarket(page, n, name, percent) {
  const m = page.getByRole('group', { name: `Market ${n}`, exact: true });
  await m.getByLabel('Name (English)').fill(name);
  await m.getByLabel('Opening probability, %').fill(percent);
}

// subsidyText waits for the live subsidy line and returns it.
async function subsidyText(page) {
  const cost = page.locator('[data-cost]');
  return until('the live subsidy', async () => {
    const text = await cost.innerText();
    return /puts up/.test(text) ? text : null;
  });
}

async function creatorFlow(s, p) {
  const page = await s.page({ name: 'creator' });
  await login(page, p.creator, '/');
  await nav(page, 'New event');
  await page.getByRole('heading', { level: 1, name: 'New event' }).waitFor();
  await page.getByLabel('Event name (English)').fill(p.name);
  const pool = page.getByRole('group', { name: 'Pool 1', exact: true });
  await pool.getByLabel('Question (English)').fill('Who wins?');
  await pool.getByLabel('Rules (English)').fill('The official result.');
  await pool.getByLabel('Exclusive: exactly one market wins').check();
  await pool.getByLabel('Liquidity b, ₽').fill(p.b_roubles);
  await pool.getByRole('button', { name: 'Add a market to pool 1' }).click();
  await pool.getByRole('button', { name: 'Add a market to pool 1' }).click();
  await fillMarket(page, 1, 'Ann', '50');
  await fillMarket(page, 2, 'Bob', '30');
  await fillMarket(page, 3, 'Cy', '20');
  if (p.tag) await page.getByRole('group', { name: 'Tags' }).getByLabel(p.tag).check();
  // The last change's answer: the line names the server's subsidy.
  const subsidy = await until('the subsidy of the three markets', async () => {
    const text = await subsidyText(page);
    return text.includes(p.want_subsidy) ? text : null;
  });
  await page.getByRole('button', { name: 'Preview', exact: true }).click();
  const preview = page.getByRole('region', { name: 'Preview' });
  await preview.getByText('Cy').waitFor();
  const previewText = await preview.innerText();
  await page.getByRole('button', { name: 'Create event' }).click();
  await page.getByRole('heading', { name: 'Event created' }).waitFor();
  await page.getByRole('button', { name: 'Publish to the feed' }).click();
  await page.getByRole('status').filter({ hasText: 'The event is in the feed.' }).waitFor();
  await open(page, '/');
  await page.getByRole('main').getByRole('link', { name: p.name }).waitFor();
  return { subsidy, preview: previewText };
}

// violations runs axe-core on the filled form, in a context that
// bypasses the CSP to inject it (as axe.js does).
async function violations(s, p) {
  if (!process.env.AXE_CORE) return null;
  const page = await s.page({ name: 'axe', bypassCSP: true });
  await login(page, p.creator, '/');
  await open(page, '/events/new');
  await page.getByLabel('Event name (English)').fill('Axe');
  await subsidyText(page).catch(() => null);
  await page.getByRole('button', { name: 'Preview', exact: true }).click();
  await page.getByRole('region', { name: 'Preview' }).waitFor();
  await page.addScriptTag({ path: process.env.AXE_CORE });
  return page.evaluate(async () => {
    const res = await window.axe.run(document, { resultTypes: ['violations'] });
    return res.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join(', ')}`);
  });
}

async function proposerFlow(s, p) {
  const user = await s.page({ name: 'proposer' });
  await login(user, p.proposer, '/');
  await nav(user, 'Propose an event');
  await user.getByText('holds an ante of').first().waitFor();
  await user.getByLabel('Event name (English)').fill(p.proposal_name);
  const pool = user.getByRole('group', { name: 'Pool 1', exact: true });
  await pool.getByLabel('Question (English)').fill('Will it happen?');
  await fillMarket(user, 1, 'It happens', '40');
  const ante = await until('the ante', async () => {
    const text = await user.locator('[data-cost]').innerText();
    return /holds/.test(text) ? text : null;
  });
  await user.getByRole('button', { name: 'Propose event' }).click();
  await user.getByRole('heading', { name: 'Proposal sent' }).waitFor();
  const waiting = await user.getByRole('main').getByText('awaits the operator').innerText();

  const op = await s.page({ name: 'operator' });
  await adminSignIn(op, 'proposals');
  const card = op.getByRole('region', { name: new RegExp(p.proposal_name) });
  await card.getByRole('button', { name: 'Approve' }).click();
  await confirm(op, 'Approve');
  await op.getByRole('status').filter({ hasText: 'was approved and published' }).waitFor();
  await op.getByText('No proposal is waiting.').waitFor();

  await open(user, '/notifications');
  const note = await user.getByRole('main').getByText('Proposal approved').first().innerText();
  return { ante, waiting, notification: note };
}

module.exports = async (s, p) => {
  if (p.proposer) return proposerFlow(s, p);
  const out = await creatorFlow(s, p);
  out.axe = await violations(s, p);
  return out;
};
