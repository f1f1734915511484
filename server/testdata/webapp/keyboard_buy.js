// A buy with the keyboard alone: from the top of the event page, Tab to
// the market's "Buy YES", Enter, type the amount, Enter for the quote,
// Tab to "Confirm", Enter. No click after signing in.
const { open } = require('./lib.js');
const { login, market } = require('./steps.js');

const maxPresses = 150;

// focused describes the element that has the focus.
function focused(page) {
  return page.evaluate(() => {
    const e = document.activeElement;
    const card = e && e.closest('article');
    const head = card && card.querySelector('h3');
    return { tag: e ? e.tagName : '', text: e ? e.textContent.trim() : '', market: head ? head.textContent.trim() : '' };
  });
}

module.exports = async (s, p) => {
  const page = await s.page({ name: 'typist' });
  await login(page, p.user);
  await open(page, `/events/${p.event}`);
  await market(page, p.market_name).getByRole('button', { name: 'Buy YES' }).waitFor();
  let presses = 0;
  const tabTo = async (want) => {
    for (;;) {
      const f = await focused(page);
      if (want(f)) return;
      if (++presses > maxPresses) throw new Error(`${maxPresses} Tab presses did not reach the control; the focus is on ${JSON.stringify(f)}`);
      await page.keyboard.press('Tab');
    }
  };
  await tabTo((f) => f.tag === 'BUTTON' && f.text === 'Buy YES' && f.market === p.market_name);
  await page.keyboard.press('Enter');
  presses++;
  const form = page.getByRole('form', { name: `Buy YES: ${p.market_name}` });
  await form.waitFor();
  await tabTo((f) => f.tag === 'INPUT');
  await page.keyboard.type(p.amount);
  await page.keyboard.press('Enter');
  presses++;
  await form.getByRole('status').filter({ hasText: 'Shares' }).waitFor();
  await tabTo((f) => f.tag === 'BUTTON' && f.text === 'Confirm');
  await page.keyboard.press('Enter');
  presses++;
  await market(page, p.market_name).getByText(/^Bought \d/).waitFor();
  return { presses };
};
