// Making markets, end to end in the app (TestMakingMarketsInBrowser), in
// three steps the Go test checks the server between:
//   create: a creator builds an exclusive pool on the New event page with
//     its last market marked "Other (answers may be added later)" (the
//     checkbox is one per pool and absent from binary pools), previews,
//     creates and publishes it; axe-core checks the form.
//   split: a user buys YES on Other; the creator adds an answer on the
//     event page; the user's profile shows the holding split into YES on
//     Other and YES on the new answer.
//   dispute: the creator resolves a listed answer the winner, which with
//     the challenge window only proposes it; the user disputes it from the
//     event page with a reason; the operator voids the question in the
//     console's queue; the user's event page shows the answers resolved.
const { open, adminSignIn, confirm, until } = require('./lib.js');
const { login, nav, market, buy } = require('./steps.js');

function marketGroup(page, n) {
  return page.getByRole('group', { name: `Market ${n}`, exact: true });
}

async function fillMarket(page, n, name, percent) {
  const m = marketGroup(page, n);
  await m.getByLabel('Name (English)').fill(name);
  await m.getByLabel('Opening probability, %').fill(percent);
}

const OTHER = 'Other (answers may be added later)';

// otherBoxes tells, for markets 1..n, whether each Other checkbox is
// visible and checked: "-" hidden, "x" checked, "o" unchecked.
async function otherBoxes(page, n) {
  let out = '';
  for (let i = 1; i <= n; i++) {
    const box = marketGroup(page, i).getByLabel(OTHER);
    if (!(await box.isVisible())) out += '-';
    else out += (await box.isChecked()) ? 'x' : 'o';
  }
  return out;
}

async function create(s, p) {
  const page = await s.page({ name: 'creator' });
  await login(page, p.creator, '/');
  await nav(page, 'New event');
  await page.getByRole('heading', { level: 1, name: 'New event' }).waitFor();
  await page.getByLabel('Event name (English)').fill(p.name);
  const pool = page.getByRole('group', { name: 'Pool 1', exact: true });
  await pool.getByLabel('Question (English)').fill('Who wins?');
  await pool.getByLabel('Rules (English)').fill('The official result.');
  await pool.getByLabel('Liquidity b, ₽').fill('3000');
  await pool.getByRole('button', { name: 'Add a market to pool 1' }).click();
  await pool.getByRole('button', { name: 'Add a market to pool 1' }).click();
  const binary = await otherBoxes(page, 3);
  await pool.getByLabel('Exclusive: exactly one market wins').check();
  const exclusive = await otherBoxes(page, 3);
  await fillMarket(page, 1, p.markets[0], '50');
  await fillMarket(page, 2, p.markets[1], '30');
  await fillMarket(page, 3, p.other, '20');
  // One Other per pool: checking the third unchecks the second.
  await marketGroup(page, 2).getByLabel(OTHER).check();
  await marketGroup(page, 3).getByLabel(OTHER).check();
  const chosen = await otherBoxes(page, 3);
  await until('the subsidy of the pool', async () => /puts up/.test(await page.locator('[data-cost]').innerText()));
  await page.getByRole('button', { name: 'Preview', exact: true }).click();
  const preview = page.getByRole('region', { name: 'Preview' });
  await preview.getByText(p.other).waitFor();
  const previewText = await preview.innerText();
  await page.getByRole('button', { name: 'Create event' }).click();
  await page.getByRole('heading', { name: 'Event created' }).waitFor();
  await page.getByRole('button', { name: 'Publish to the feed' }).click();
  await page.getByRole('status').filter({ hasText: 'The event is in the feed.' }).waitFor();
  const href = await page.getByRole('main').getByRole('link', { name: new RegExp(p.name) }).getAttribute('href');
  await page.getByRole('main').getByRole('link', { name: new RegExp(p.name) }).click();
  const tag = await market(page, p.other).locator('[data-other]').innerText();
  return { event: Number(href.split('/').pop()), boxes: { binary, exclusive, chosen }, preview: previewText, other_tag: tag, axe: await violations(s, p) };
}

// violations runs axe-core on the form with an exclusive pool and its
// Other checked, in a context that bypasses the CSP to inject it (as
// axe.js does); null without axe-core.
async function violations(s, p) {
  if (!process.env.AXE_CORE) return null;
  const page = await s.page({ name: 'axe', bypassCSP: true });
  await login(page, p.creator, '/');
  await open(page, '/events/new');
  await page.getByLabel('Event name (English)').fill('Axe');
  const pool = page.getByRole('group', { name: 'Pool 1', exact: true });
  await pool.getByLabel('Exclusive: exactly one market wins').check();
  await pool.getByRole('button', { name: 'Add a market to pool 1' }).click();
  await marketGroup(page, 2).getByLabel(OTHER).check();
  await page.getByRole('button', { name: 'Preview', exact: true }).click();
  await page.getByRole('region', { name: 'Preview' }).waitFor();
  await page.addScriptTag({ path: process.env.AXE_CORE });
  return page.evaluate(async () => {
    const res = await window.axe.run(document, { resultTypes: ['violations'] });
    return res.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join(', ')}`);
  });
}

// positionRows is the user's open positions on the profile page, as text.
async function positionRows(page, names) {
  const region = page.getByRole('region', { name: 'Open positions' });
  return until('the open positions of the split', async () => {
    const rows = await region.getByRole('row').allInnerTexts();
    return names.every((n) => rows.some((r) => r.includes(n))) ? rows : null;
  });
}

async function split(s, p) {
  const user = await s.page({ name: 'user' });
  await login(user, p.user, `/events/${p.event}`);
  const bought = await buy(user, p.other, 'YES', p.amount);

  const creator = await s.page({ name: 'creator' });
  await login(creator, p.creator, `/events/${p.event}`);
  const form = creator.getByRole('form', { name: 'Add an answer' });
  await form.getByLabel('Answer (English)').fill(p.answer);
  await form.getByLabel('Answer (Russian)').fill(p.answer_ru);
  await form.getByLabel('Probability, %').fill(p.answer_percent);
  await form.getByRole('button', { name: 'Add answer' }).click();
  await market(creator, p.answer).waitFor();
  // The user's open page shows the new answer by itself.
  await market(user, p.answer).waitFor();

  await nav(user, 'Profile');
  const rows = await positionRows(user, [p.other, p.answer]);
  return { bought, rows };
}

async function dispute(s, p) {
  const creator = await s.page({ name: 'creator' });
  await login(creator, p.creator, `/events/${p.event}`);
  const tools = creator.getByRole('group', { name: `Resolve this market: ${p.winner}` });
  await tools.getByRole('button', { name: 'Resolve YES' }).click();
  await tools.getByRole('button', { name: 'Confirm' }).click();
  const made = await creator.getByText('Outcome proposed.').first().innerText();

  const user = await s.page({ name: 'user' });
  await login(user, p.user, `/events/${p.event}`);
  const card = market(user, p.winner);
  const proposed = await card.getByText(/Proposed: YES, final at .* unless disputed/).innerText();
  await card.getByRole('button', { name: 'Dispute', exact: true }).click();
  await card.getByLabel('Why is the proposed outcome wrong?').fill(p.reason);
  await card.getByRole('button', { name: 'Send dispute' }).click();
  const disputed = await market(user, p.winner).getByText('Disputed: the operator decides').innerText();

  const op = await s.page({ name: 'operator' });
  await adminSignIn(op, 'markets');
  const item = op.getByRole('article').filter({ hasText: p.winner }).filter({ hasText: p.reason });
  await item.waitFor();
  const queued = await item.innerText();
  await item.getByRole('group', { name: `Resolve ${p.winner}` }).getByRole('button', { name: p.decision, exact: true }).click();
  await confirm(op, p.decision);
  await op.getByText('No disputed proposal waits for a decision.').waitFor();

  await user.reload();
  const states = {};
  for (const name of p.all) {
    const c = market(user, name);
    await c.getByText(/resolved by the operator/).first().waitFor();
    states[name] = await c.innerText();
  }
  return { made, proposed, disputed, queued, states };
}

module.exports = async (s, p) => {
  if (p.step === 'create') return create(s, p);
  if (p.step === 'split') return split(s, p);
  if (p.step === 'dispute') return dispute(s, p);
  throw new Error(`no step ${p.step}`);
};
