// A server without a Telegram bot: the profile page has no Telegram
// section (the link route answered 503 telegram_not_configured).
const { until } = require('./lib.js');
const { login } = require('./steps.js');

module.exports = async (s, p) => {
  const page = await s.page({ name: 'no bot' });
  await login(page, p.user, '/profile');
  // The API keys section comes after it and loads after it asked.
  await page.locator('#apikey-create').waitFor();
  await until('the link to be asked', async () => page.evaluate(() => performance.getEntriesByType('resource').some((e) => e.name.endsWith('/api/v1/auth/telegram/link'))));
  await page.waitForTimeout(300);
  return {
    hidden: await page.locator('#telegram').evaluate((el) => el.hidden),
    text: await page.getByRole('main').innerText(),
  };
};
