// The creator of an event whose exclusive pool has an Other answer adds
// an answer from the event page; a holder of a NO on Other, watching the
// same page, sees the new answer appear and their holding become YES on
// the other answers, without a reload.
const { until } = require('./lib.js');
const { login, market } = require('./steps.js');

module.exports = async (s, p) => {
  const holder = await s.page({ name: 'holder' });
  await login(holder, p.holder, `/events/${p.event}`);
  await market(holder, p.other_name).getByText(/You hold/).waitFor();

  const creator = await s.page({ name: 'creator' });
  await login(creator, p.creator, `/events/${p.event}`);
  const otherTag = await market(creator, p.other_name).locator('[data-other]').innerText();
  const form = creator.getByRole('form', { name: 'Add an answer' });
  await form.getByLabel('Answer (English)').fill(p.name);
  await form.getByLabel('Answer (Russian)').fill(p.name_ru);
  await form.getByLabel('Probability, %').fill('90');
  await form.getByRole('button', { name: 'Add answer' }).click();
  const refused = await until('the refusal of a probability above Other\'s', async () => {
    const text = await form.getByRole('alert').innerText();
    return text.trim() && text;
  });
  await form.getByLabel('Probability, %').fill(p.percent);
  await form.getByRole('button', { name: 'Add answer' }).click();
  const card = market(creator, p.name);
  const added = await until('the new answer\'s confirmation', async () => {
    const text = await card.getByRole('status').first().innerText();
    return text.trim() && text;
  });

  await market(holder, p.name).waitFor();
  const held = await until('the holding on the first answer', async () => {
    const text = await market(holder, p.first_name).innerText();
    return /You hold/.test(text) && text;
  });
  const axe = await formViolations(s, p);
  return { other_tag: otherTag, refused, added, held, axe };
};

// formViolations runs axe-core (when the test gives it) on the creator's
// event page with its "Add an answer" form, in a context of its own that
// bypasses the CSP to inject it, as axe.js does; null without axe-core.
async function formViolations(s, p) {
  if (!process.env.AXE_CORE) return null;
  const page = await s.page({ name: 'axe', bypassCSP: true });
  await login(page, p.creator, `/events/${p.event}`);
  await page.getByRole('form', { name: 'Add an answer' }).waitFor();
  await page.addScriptTag({ path: process.env.AXE_CORE });
  return page.evaluate(async () => {
    const res = await window.axe.run(document, { resultTypes: ['violations'] });
    return res.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join(', ')}`);
  });
}
