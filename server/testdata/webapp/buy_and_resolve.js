// A user registers; the operator credits them in the console; the user
// buys YES after a quote while a second, anonymous browser on the same
// event page sees the price move without reloading; the event's creator
// resolves the market YES in the app; the user, on the profile page, sees
// the payout in the balance and the notification arrive, live.
const { open, adminSignIn, until, kopecks, mark } = require('./lib.js');
const { register, login, nav, price, buy, adminCredit } = require('./steps.js');

// profileTotal is the total balance the profile page shows, in kopecks.
async function profileTotal(page) {
  const dd = page.getByRole('region', { name: 'Balances' }).locator('dt:text-is("Total") + dd');
  await until('the profile balance', async () => /\d/.test(await dd.innerText()));
  return kopecks(await dd.innerText());
}

module.exports = async (s, p) => {
  const [user, op, watcher, creator] = await Promise.all(['user', 'operator', 'watcher', 'creator'].map((name) => s.page({ name })));
  // Four people arrive at once: the user registers, the operator signs
  // in, the watcher opens the event, its creator logs in to it.
  await Promise.all([
    register(user, p.user),
    adminSignIn(op, 'users'),
    open(watcher, `/events/${p.event}`),
    login(creator, p.creator, `/events/${p.event}`),
  ]);
  await adminCredit(op, p.user.email, p.credit);
  mark('credited');

  const priceBefore = await price(watcher, p.market_name);
  const loads = await watcher.evaluate(() => performance.getEntriesByType('navigation').length);
  await open(user, `/events/${p.event}`);
  await buy(user, p.market_name, 'YES', p.amount);
  mark('bought');

  // The watcher's page changes by itself: the live stream, no reload.
  const priceAfter = await until('the watcher to see the price move', async () => {
    const now = await price(watcher, p.market_name);
    return now !== priceBefore && now;
  });
  if ((await watcher.evaluate(() => performance.getEntriesByType('navigation').length)) !== loads) throw new Error('the watcher reloaded');
  mark('the watcher saw the price move');

  // The user waits on the profile page (reached by the header's link).
  await nav(user, 'Profile');
  const balanceBefore = await profileTotal(user);

  const tools = creator.getByRole('group', { name: `Resolve this market: ${p.market_name}` });
  await tools.getByRole('button', { name: 'Resolve YES' }).click();
  await tools.getByRole('button', { name: 'Confirm' }).click();
  await creator.getByText('The market is resolved.').first().waitFor();
  mark('resolved');

  const balanceAfter = await until('the payout on the profile', async () => {
    const b = await profileTotal(user);
    return b !== balanceBefore && b;
  });
  const unread = user.getByRole('banner').getByRole('link', { name: /^Notifications.*unread/ });
  await unread.waitFor();
  mark('the user saw the payout and the notification');
  return { price_before: priceBefore, price_after: priceAfter, balance_before: balanceBefore, balance_after: balanceAfter, notification: await unread.innerText() };
};
