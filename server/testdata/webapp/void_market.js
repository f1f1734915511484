// A holder watches the event page; the operator voids the market in the
// console (after its confirmation); the holder's page shows the market
// voided and the header's balance refunded, without a reload.
const { open, adminSignIn, adminReady, confirm, until } = require('./lib.js');
const { login, market, headerBalance } = require('./steps.js');

module.exports = async (s, p) => {
  const holder = await s.page({ name: 'holder' });
  await login(holder, p.user, `/events/${p.event}`);
  const card = market(holder, p.market_name);
  await card.getByText(/You hold/).waitFor();
  const before = await headerBalance(holder);

  const op = await s.page({ name: 'operator' });
  await adminSignIn(op, 'markets');
  await op.evaluate(() => delete document.documentElement.dataset.adminReady);
  await op.getByLabel('Event ID').fill(String(p.event));
  await op.getByRole('button', { name: 'Open event' }).click();
  await adminReady(op, 'markets');
  const row = op.getByRole('row').filter({ has: op.getByRole('rowheader', { name: p.market_name, exact: true }) });
  await row.getByRole('button', { name: 'Void' }).click();
  await confirm(op, 'Void');
  await op.getByRole('status').filter({ hasText: 'voided' }).waitFor();
  await row.getByText('voided by the operator').waitFor();

  await card.getByText('Voided').first().waitFor();
  const after = await until('the refund in the header', async () => {
    const b = await headerBalance(holder);
    return b !== before && b;
  });
  return { balance_before: before, balance_after: after, state: await card.innerText() };
};
