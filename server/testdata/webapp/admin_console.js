// The operator's other duties in the console: the creator role (revoking
// asks first), a new partner (its key shown once), its float, webhook
// (the secret shown once; removing asks first), a key rotation and
// disabling (each asks first), then the audit and the metrics.
const { open, adminSignIn, adminGo, adminReady, confirm, ADMIN_TOKEN } = require('./lib.js');

module.exports = async (s, p) => {
  const op = await s.page({ name: 'operator' });
  // A wrong token is refused, and the field is emptied.
  await open(op, '/admin');
  await adminReady(op, 'login');
  await op.getByLabel('Admin token').fill('not-the-token');
  await op.getByRole('button', { name: 'Sign in' }).click();
  await op.getByRole('alert').filter({ hasText: 'The server refused this token.' }).waitFor();
  if ((await op.getByLabel('Admin token').inputValue()) !== '') throw new Error('the refused token stays in the field');
  await adminSignIn(op, 'users');

  await op.getByRole('searchbox', { name: 'Search users' }).fill(p.user.email);
  await op.getByRole('button', { name: 'Search', exact: true }).click();
  // The search's own answer first: a role change made on the newest users'
  // list shown before it would have its notice replaced by the search's.
  await op.getByRole('status').filter({ hasText: '1 users shown.' }).waitFor();
  const row = op.getByRole('row').filter({ hasText: p.user.email });
  await row.getByRole('button', { name: 'Make creator' }).click();
  await op.getByRole('status').filter({ hasText: 'is now a creator' }).waitFor();
  await row.getByRole('button', { name: 'Revoke creator' }).click();
  await confirm(op, 'Revoke creator');
  await op.getByRole('status').filter({ hasText: 'is no longer a creator' }).waitFor();
  await row.getByRole('button', { name: 'Make creator' }).click();
  await row.getByRole('button', { name: 'Revoke creator' }).waitFor();

  await adminGo(op, 'Partners', 'partners');
  await op.getByLabel('Partner name').fill(p.partner_name);
  await op.getByRole('button', { name: 'Create partner' }).click();
  const keyBox = op.getByRole('textbox', { name: `The key of ${p.partner_name}` });
  const key = await keyBox.inputValue();
  await op.getByRole('button', { name: 'I have saved it' }).click();
  await keyBox.waitFor({ state: 'detached' });

  await op.evaluate(() => delete document.documentElement.dataset.adminReady);
  await op.getByRole('row').filter({ hasText: p.partner_name }).getByRole('link', { name: 'Manage' }).click();
  await adminReady(op, 'partners');
  await op.getByRole('heading', { level: 1, name: `Partners: ${p.partner_name}` }).waitFor();
  const id = Number(new URL(op.url()).pathname.split('/').pop());

  const float = op.getByRole('region', { name: 'Float', exact: true });
  await float.getByLabel('Amount, ₽').fill('500');
  await float.getByRole('button', { name: 'Add to the float' }).click();
  await op.getByRole('status').filter({ hasText: /float of .* is now/ }).waitFor();

  const hook = op.getByRole('region', { name: 'Webhook', exact: true });
  await hook.getByLabel('Webhook URL').fill(p.webhook_url);
  await hook.getByRole('button', { name: 'Save webhook' }).click();
  const secret = await op.getByRole('textbox', { name: 'The webhook\'s signing secret' }).inputValue();
  await hook.getByText(`Sends to ${p.webhook_url}`).waitFor();

  const keys = op.getByRole('region', { name: 'Key', exact: true });
  await keys.getByLabel('Old key keeps working for, seconds').fill('0');
  await keys.getByRole('button', { name: 'Rotate key' }).click();
  await confirm(op, 'Rotate key');
  const newKey = await op.getByRole('textbox', { name: `The new key of ${p.partner_name}` }).inputValue();

  await hook.getByRole('button', { name: 'Remove webhook' }).click();
  await confirm(op, 'Remove webhook');
  await hook.getByText('No webhook is set.').waitFor();

  // Escape cancels a confirmation and gives the focus back.
  await op.getByRole('button', { name: 'Disable partner' }).click();
  await op.getByRole('dialog').waitFor();
  await op.keyboard.press('Escape');
  await op.getByRole('dialog').waitFor({ state: 'detached' });
  const focused = await op.evaluate(() => document.activeElement.textContent);
  if (focused !== 'Disable partner') throw new Error(`after Escape the focus is on ${JSON.stringify(focused)}`);
  await op.getByText('Status: active').waitFor();
  await op.keyboard.press('Enter');
  await confirm(op, 'Disable partner');
  await op.getByText('Status: disabled').waitFor();

  await adminGo(op, 'Audit and metrics', 'audit');
  const audit = await op.getByText(/^The ledger is sound/).innerText();
  const trades = await op.getByRole('row', { name: /^Trades executed/ }).getByRole('cell').innerText();

  // The token was kept in memory only: nothing stored has it, and a
  // reload asks for it again.
  const stored = await op.evaluate(() => JSON.stringify([{ ...localStorage }, { ...sessionStorage }, document.cookie]));
  const cookies = JSON.stringify(await op.context().cookies());
  if (stored.includes(ADMIN_TOKEN) || cookies.includes(ADMIN_TOKEN)) throw new Error('the admin token is stored in the browser');
  await op.reload();
  await adminReady(op, 'login');
  return { partner_id: id, key, new_key: newKey, secret, audit, trades };
};
