// A user who forgot the password asks for a link on /forgot-password (the
// page says the same whether or not the address has an account), then
// opens the link the operator made (the link a mail carries), which the
// page takes out of the address, sets a new password, ticking "Also
// revoke my API keys", and logs in with it.
const { open } = require('./lib.js');
const { login } = require('./steps.js');

module.exports = async (s, p) => {
  const page = await s.page({ name: 'forgetful' });
  await open(page, '/login');
  await page.getByRole('link', { name: 'Forgot your password?' }).click();
  // The log-in page has an Email field too: fill the new page's.
  await page.getByRole('heading', { level: 1, name: 'Forgot your password?' }).waitFor();
  await page.getByLabel('Email').fill(p.user.email);
  await page.getByRole('button', { name: 'Send the link' }).click();
  const sent = await page.getByRole('status').filter({ hasText: 'a link is on its way' }).innerText();

  await open(page, `/reset-password?token=${encodeURIComponent(p.token)}`);
  await page.getByRole('heading', { level: 1, name: 'Set a new password' }).waitFor();
  const address = new URL(page.url()).search;
  await page.getByLabel('New password').fill(p.new_password);
  await page.getByLabel('Also revoke my API keys').check();
  await page.getByRole('button', { name: 'Set password' }).click();
  const done = await page.getByRole('status').filter({ hasText: 'Your password is set' }).innerText();

  await login(page, { ...p.user, password: p.new_password });
  return { sent, done, search_after_open: address };
};
