// A signed-in user writes to the support chat and calls an operator; the
// operator finds the session in the console's queue, opens it and answers;
// the user's chat shows the answer.
const { adminSignIn, adminReady } = require('./lib.js');
const { login } = require('./steps.js');

module.exports = async (s, p) => {
  const user = await s.page({ name: 'user' });
  await login(user, p.user, '/chat');
  await user.getByLabel('Message').fill(p.message);
  await user.getByRole('button', { name: 'Send', exact: true }).click();
  await user.getByRole('log').getByText(p.message).waitFor();
  await user.getByRole('button', { name: 'Call an operator' }).click();
  await user.getByText('An operator has been called').first().waitFor();

  const op = await s.page({ name: 'operator' });
  await adminSignIn(op, 'chat');
  const row = op.getByRole('row')
    .filter({ has: op.getByRole('cell', { name: `user ${p.user.id}`, exact: true }) })
    .filter({ has: op.getByRole('cell', { name: 'waiting for an operator', exact: true }) });
  const link = row.getByRole('link', { name: 'Open' });
  const href = await link.getAttribute('href');
  const sessionID = decodeURIComponent(href.split('/').pop());
  await op.evaluate(() => delete document.documentElement.dataset.adminReady);
  await link.click();
  await adminReady(op, 'chat');
  await op.getByRole('log').getByText(p.message).waitFor();
  await op.getByLabel('Reply').fill(p.reply);
  await op.getByRole('button', { name: 'Send reply' }).click();
  await op.getByRole('log').getByText(p.reply).waitFor();

  await user.getByRole('log').getByText(p.reply).waitFor();
  return { session_id: sessionID };
};
