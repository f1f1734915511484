// The feed as a visitor uses it: the search box finds an event by a word
// of its Russian rules and by an English answer's name (and keeps the
// words in the address), the sort changes the order, the Resolved filter
// shows resolved cards that read as resolved, and a tag's page lists only
// its events; axe-core checks the feed and the tag page in both themes.
const { open, until } = require('./lib.js');

// names reads the events' names on the page, in order.
async function names(page) {
  return page.getByRole('main').locator('article h2').allInnerTexts();
}

// waitNames waits until the page lists exactly want (an array), or, with
// a function, until it says yes; it returns the names.
async function waitNames(page, what, want) {
  return until(what, async () => {
    const got = await names(page);
    const ok = typeof want === 'function' ? want(got) : JSON.stringify(got) === JSON.stringify(want);
    return ok && got;
  });
}

async function violations(page) {
  const out = [];
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: process.env.AXE_CORE });
  for (const theme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: theme });
    await page.evaluate((th) => { document.documentElement.dataset.theme = th; }, theme);
    const vs = await page.evaluate(async () => {
      const res = await window.axe.run(document, { resultTypes: ['violations'] });
      return res.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join(', ')}`);
    });
    for (const v of vs) out.push(`${theme}: ${v}`);
  }
  return out;
}

module.exports = async (s, p) => {
  const page = await s.page({ name: 'visitor' });
  await open(page, '/');
  const main = page.getByRole('main');
  const all = await waitNames(page, 'the feed', (got) => got.length === p.open_count);

  // Search by keyboard: type, and the list follows after a pause.
  const box = main.getByRole('searchbox', { name: 'Search events' });
  await box.focus();
  await page.keyboard.type(p.rules_word_ru);
  const byRules = await waitNames(page, 'the search by a Russian rules word', (got) => got.length === 1 && got);
  const url = page.url();
  await box.fill('');
  await page.keyboard.type(p.answer_en);
  await page.keyboard.press('Enter');
  const byAnswer = await waitNames(page, 'the search by an English answer', (got) => got.length === 1 && got[0] !== byRules[0] && got);
  await box.fill('');
  await page.keyboard.press('Enter');
  await waitNames(page, 'the whole feed again', (got) => got.length === p.open_count);

  const sort = main.getByLabel('Sort by');
  await sort.selectOption('new');
  const byNew = await waitNames(page, 'the newest first', (got) => got.length === p.open_count && JSON.stringify(got) !== JSON.stringify(all) && got);
  await sort.selectOption('volume');
  const byVolume = await waitNames(page, 'the largest volume first', (got) => got.length === p.open_count && JSON.stringify(got) !== JSON.stringify(byNew) && got);

  await main.getByRole('radio', { name: 'Resolved' }).check();
  // As many resolved events as open ones: wait for the open ones to go.
  const resolved = await waitNames(page, 'the resolved events', (got) => got.length === p.resolved_count && !got.some((n) => byVolume.includes(n)) && got);
  const resolvedCard = await main.locator('article', { hasText: p.resolved_event }).innerText();
  const voidedCard = await main.locator('article', { hasText: p.voided_event }).innerText();
  const axeFeed = process.env.AXE_CORE ? await axePage(s, '/') : null;

  await open(page, `/tags/${p.tag}`);
  const heading = await main.getByRole('heading', { level: 1 }).innerText();
  const tagged = await waitNames(page, 'the tag page', (got) => got.length > 0 && got);
  const axeTag = process.env.AXE_CORE ? await axePage(s, `/tags/${p.tag}`) : null;
  return {
    all, by_rules: byRules, url, by_answer: byAnswer, by_new: byNew, by_volume: byVolume,
    resolved, resolved_card: resolvedCard, voided_card: voidedCard, heading, tagged, axe_feed: axeFeed, axe_tag: axeTag,
  };
};

// axePage opens path in a context that bypasses the CSP (only to inject
// axe-core, as axe.js does) and returns the violations of both themes.
async function axePage(s, path) {
  const page = await s.page({ name: 'axe ' + path, bypassCSP: true });
  await open(page, path);
  await until('the cards', async () => (await names(page)).length > 0);
  return violations(page);
}
