// The challenge window: a holder sees the creator's proposed outcome on
// the event page and disputes it with a reason; the operator finds the
// dispute in the console's queue and resolves the market the other way,
// which returns the bond; the holder's page shows the market resolved.
const { adminSignIn, confirm } = require('./lib.js');
const { login, market } = require('./steps.js');

module.exports = async (s, p) => {
  const holder = await s.page({ name: 'holder' });
  await login(holder, p.user, `/events/${p.event}`);
  const card = market(holder, p.market_name);
  await card.getByText(/Proposed: YES, final at .* unless disputed/).waitFor();
  const proposed = await card.innerText();
  await card.getByRole('button', { name: 'Dispute', exact: true }).click();
  await card.getByLabel('Why is the proposed outcome wrong?').fill(p.reason);
  await card.getByRole('button', { name: 'Send dispute' }).click();
  await holder.getByRole('article', { name: p.market_name, exact: true }).getByText('Disputed: the operator decides').waitFor();

  const op = await s.page({ name: 'operator' });
  await adminSignIn(op, 'markets');
  const item = op.getByRole('article').filter({ hasText: p.market_name });
  await item.getByText(p.reason).waitFor();
  const queued = await item.innerText();
  await item.getByRole('group', { name: `Resolve ${p.market_name}` }).getByRole('button', { name: 'NO', exact: true }).click();
  await confirm(op, 'NO');
  await op.getByText('No disputed proposal waits for a decision.').waitFor();

  await holder.reload();
  const after = market(holder, p.market_name);
  await after.getByText(/Resolved/i).first().waitFor();
  return { proposed, queued, state: await after.innerText() };
};
