// Money out in the browser (TestWithdrawInBrowser,
// webapp_money_browser_test.go), one part a run (p.part):
//
// withdraw — the operator credits a user in the console; on /withdraw the
//   user reads the rules and the figures, is refused too much (bonus
//   does not count), a wrongly checksummed address and past the daily
//   limit, each error shown and the balance unchanged; requests, cancels
//   (refunded) and requests again; the operator copies an address,
//   approves one withdrawal with its transaction hash (a bad hash
//   refused first) and rejects another with a reason, and the user's
//   open page shows them paid and rejected, live, with a notification;
//   the operator approving one the user cancelled meanwhile is told so;
//   the status filter; axe-core on both pages in both themes;
// russian — the Withdraw page in Russian shows none of its English strings;
// phone — the Withdraw page and the queue, with rows, fit a phone's screen.
const path = require('path');
const { open, until, kopecks, adminSignIn, adminGo, BASE, ADMIN_TOKEN, mark } = require('./lib.js');
const { login, adminCredit, headerBalance } = require('./steps.js');
const phone = require('./phone.js');

// admin calls an operator route from the test (not the browser).
async function admin(method, route, body) {
  const r = await fetch(BASE + '/api/v1/admin' + route, {
    method,
    headers: { Authorization: 'Bearer ' + ADMIN_TOKEN, 'Content-Type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!r.ok) throw new Error(`${method} ${route}: ${r.status} ${await r.text()}`);
  return r.json();
}

// figure reads one of the Withdraw page's amounts (data-withdrawable,
// data-available) in kopecks.
async function figure(page, name) {
  return kopecks(await page.locator(`[data-${name}]`).innerText());
}

async function waitFigure(page, name, want) {
  return until(`${name} to be ${want}`, async () => (await figure(page, name)) === want);
}

// request fills the form and sends it; it returns the form's alert text
// ('' when it was accepted, then the new row's id).
async function request(page, chain, address, amount) {
  const form = page.getByRole('form', { name: 'Request a withdrawal' });
  await form.getByLabel('Network').selectOption(chain);
  await form.getByLabel('Address').fill(address);
  await form.getByLabel('Amount, ₽').fill(amount);
  const before = await page.locator('tr[data-withdrawal]').count();
  await form.getByRole('button', { name: 'Request withdrawal' }).click();
  return until(`the answer to ${amount} on ${chain}`, async () => {
    const alert = (await form.getByRole('alert').innerText()).trim();
    if (alert) return { alert };
    const status = (await form.getByRole('status').innerText()).trim();
    if (status.includes('requested') && (await page.locator('tr[data-withdrawal]').count()) > before) {
      return { alert: '', status, id: Number(await page.locator('tr[data-withdrawal]').first().getAttribute('data-withdrawal')) };
    }
    return null;
  });
}

function row(page, id) {
  return page.locator(`tr[data-withdrawal="${id}"]`);
}

async function waitStatus(page, id, status) {
  await until(`withdrawal ${id} to be ${status}`, async () => (await row(page, id).getAttribute('data-status')) === status);
  return row(page, id).innerText();
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

// queueRows is the console's table: each row's withdrawal id, in order.
async function queueRows(op) {
  return op.locator('.adm-results tbody tr').evaluateAll((trs) => trs.map((tr) => Number(tr.dataset.withdrawal)));
}

async function showStatus(op, label, want) {
  await op.getByLabel('Show').selectOption({ label });
  await until(`the ${label} withdrawals`, async () => {
    const caption = await op.locator('.adm-results caption, .adm-results p').first().innerText();
    return caption.includes(label) || (want === 0 && caption.includes('No withdrawal'));
  });
  return queueRows(op);
}

const parts = {
  async withdraw(s, p) {
    const out = {};
    const op = await s.page({ name: 'operator' });
    await adminSignIn(op, 'users');
    await adminCredit(op, p.user.email, p.credit);
    const user = await s.page({ name: 'user' });
    await login(user, p.user, '/withdraw');
    await waitFigure(user, 'withdrawable', p.credit_kopecks);
    out.summary = await user.getByRole('region', { name: 'What you can withdraw' }).innerText();
    out.rules = await user.getByRole('region', { name: 'How withdrawals work' }).innerText();
    out.chains = await user.getByLabel('Network').locator('option').evaluateAll((os) => os.map((o) => o.value));
    out.nav = await user.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Withdraw', exact: true }).getAttribute('aria-current');
    out.page_text_has_null = /\bnull\b/.test(await user.getByRole('main').innerText());

    // Refusals: each shown, nothing taken.
    const form = user.getByRole('form', { name: 'Request a withdrawal' });
    out.too_much = (await request(user, 'ethereum', p.evm_good, p.too_much)).alert;
    out.bad_address = (await request(user, 'ethereum', p.evm_bad, p.first)).alert;
    out.bad_address_invalid = await form.getByLabel('Address').getAttribute('aria-invalid');
    out.not_an_amount = (await request(user, 'ethereum', p.evm_good, 'ten')).alert;
    out.after_refusals = await figure(user, 'withdrawable');
    out.header_after_refusals = await headerBalance(user);

    // Asked, cancelled, asked again.
    const first = await request(user, 'ethereum', p.evm_good, p.first);
    out.first_id = first.id;
    out.first_row = await waitStatus(user, first.id, 'pending');
    await waitFigure(user, 'withdrawable', p.credit_kopecks - p.first_kopecks);
    out.after_first = await figure(user, 'withdrawable');
    await row(user, first.id).getByRole('button', { name: /^Cancel/ }).click();
    out.cancelled_row = await waitStatus(user, first.id, 'cancelled');
    await waitFigure(user, 'withdrawable', p.credit_kopecks);
    out.after_cancel = await figure(user, 'withdrawable');
    const tron = await request(user, 'tron', p.tron_good, p.second);
    out.tron_id = tron.id;
    await waitStatus(user, tron.id, 'pending');
    // More money: the daily limit, not the balance, is what stops the next.
    await admin('POST', `/users/${p.user.id}/credit`, { amount_kopecks: p.second_credit_kopecks, bonus: false });
    await waitFigure(user, 'withdrawable', p.credit_kopecks - p.second_kopecks + p.second_credit_kopecks);
    await waitFigure(user, 'available', p.limit_kopecks - p.second_kopecks);
    out.over_limit = (await request(user, 'polygon', p.evm_good, p.over_limit)).alert;
    const poly = await request(user, 'polygon', p.evm_good, p.third);
    out.poly_id = poly.id;
    await waitStatus(user, poly.id, 'pending');
    out.available_after_third = await until('the figures after the third', async () => {
      const a = await figure(user, 'available');
      return a === p.limit_kopecks - p.second_kopecks - p.third_kopecks && a;
    });
    mark('the user asked for three withdrawals');

    // The operator's queue: pending, oldest first; copy, approve, reject.
    await adminGo(op, 'Withdrawals', 'withdrawals');
    out.queue = await until('the queue', async () => { const r = await queueRows(op); return r.length === 2 && r; });
    out.queue_tron_row = await op.locator(`.adm-results tr[data-withdrawal="${tron.id}"]`).innerText();
    await op.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
    await op.locator(`.adm-results tr[data-withdrawal="${tron.id}"]`).getByRole('button', { name: /^Copy/ }).click();
    await op.getByRole('status').filter({ hasText: 'copied' }).waitFor();
    out.copied = await op.evaluate(() => navigator.clipboard.readText());

    await op.locator(`.adm-results tr[data-withdrawal="${tron.id}"]`).getByRole('button', { name: 'Approve' }).click();
    let dlg = op.getByRole('dialog');
    await dlg.getByLabel('Transaction hash').fill('not-a-hash');
    await dlg.getByRole('button', { name: 'Approve' }).click();
    out.bad_hash = await until('the bad hash refused', async () => (await dlg.getByRole('alert').innerText()).trim());
    await dlg.getByLabel('Transaction hash').fill(p.tron_tx);
    await dlg.getByRole('button', { name: 'Approve' }).click();
    await dlg.waitFor({ state: 'detached' });
    out.approved = await op.getByRole('status').filter({ hasText: 'is paid' }).innerText();
    out.paid_row = await waitStatus(user, tron.id, 'paid');
    const unread = user.getByRole('banner').getByRole('link', { name: /^Notifications.*unread/ });
    await unread.waitFor();
    out.unread_after_paid = await unread.innerText();

    await op.locator(`.adm-results tr[data-withdrawal="${poly.id}"]`).getByRole('button', { name: 'Reject' }).click();
    dlg = op.getByRole('dialog');
    // No reason: the browser refuses the empty required field, and the
    // dialog stays.
    await dlg.getByRole('button', { name: 'Reject' }).click();
    out.no_reason_missing = await dlg.getByLabel('Reason').evaluate((el) => el.validity.valueMissing);
    out.no_reason_open = await dlg.isVisible();
    await dlg.getByLabel('Reason').fill(p.reason);
    await dlg.getByRole('button', { name: 'Reject' }).click();
    await dlg.waitFor({ state: 'detached' });
    out.rejected = await op.getByRole('status').filter({ hasText: 'is rejected' }).innerText();
    out.rejected_row = await waitStatus(user, poly.id, 'rejected');
    await waitFigure(user, 'withdrawable', p.credit_kopecks - p.second_kopecks + p.second_credit_kopecks);
    out.after_decisions = await figure(user, 'withdrawable');
    out.queue_after = await until('the queue emptied', async () => { const r = await queueRows(op); return r.length === 0 && r; }).catch(() => null);
    out.queue_empty_text = await op.locator('.adm-results').innerText();

    // Decided elsewhere: the user cancels what the operator is about to pay.
    const late = await request(user, 'ethereum', p.evm_good, p.late);
    out.late_id = late.id;
    await op.getByRole('button', { name: 'Refresh' }).click();
    await until('the late one in the queue', async () => (await queueRows(op)).includes(late.id));
    await row(user, late.id).getByRole('button', { name: /^Cancel/ }).click();
    await waitStatus(user, late.id, 'cancelled');
    await op.locator(`.adm-results tr[data-withdrawal="${late.id}"]`).getByRole('button', { name: 'Approve' }).click();
    dlg = op.getByRole('dialog');
    await dlg.getByLabel('Transaction hash').fill(p.evm_tx);
    await dlg.getByRole('button', { name: 'Approve' }).click();
    await dlg.waitFor({ state: 'detached' });
    out.decided_elsewhere = await until('the 409 told', async () => (await op.locator('.adm-content > [role=alert]').innerText()).trim());
    out.queue_after_late = await queueRows(op);

    // The filter.
    out.paid_list = await showStatus(op, 'Paid');
    out.paid_list_text = await op.locator('.adm-results').innerText();
    out.rejected_list = await showStatus(op, 'Rejected');
    out.rejected_list_text = await op.locator('.adm-results').innerText();
    out.cancelled_list = await showStatus(op, 'Cancelled');
    out.all_list = await showStatus(op, 'All');

    // After a reload, the same; and the notifications page.
    await open(user, '/withdraw');
    await waitStatus(user, tron.id, 'paid');
    out.reloaded = await user.locator('tbody').innerText();
    await open(user, '/notifications');
    await user.getByRole('main').getByRole('article').first().waitFor();
    out.notifications = await user.getByRole('main').innerText();
    out.notification_links = await user.getByRole('main').getByRole('link').evaluateAll((as) => as.map((a) => a.getAttribute('href') + ' ' + a.textContent));

    if (process.env.AXE_CORE) {
      const axeUser = await s.page({ name: 'axe user', bypassCSP: true });
      await login(axeUser, p.user, '/withdraw');
      await waitStatus(axeUser, tron.id, 'paid');
      out.axe_withdraw = await violations(axeUser);
      const axeOp = await s.page({ name: 'axe operator', bypassCSP: true });
      await adminSignIn(axeOp, 'users');
      await adminGo(axeOp, 'Withdrawals', 'withdrawals');
      await showStatus(axeOp, 'All');
      out.axe_queue = await violations(axeOp);
      // A pending one, for its buttons and the dialog.
      const pending = await request(axeUser, 'ethereum', p.evm_good, p.late);
      await showStatus(axeOp, 'Pending');
      await until('the pending one', async () => (await queueRows(axeOp)).includes(pending.id));
      out.axe_queue_pending = await violations(axeOp);
      await axeOp.locator(`.adm-results tr[data-withdrawal="${pending.id}"]`).getByRole('button', { name: 'Reject' }).click();
      await axeOp.getByRole('dialog').waitFor();
      out.axe_reject_dialog = await violations(axeOp);
    }
    return out;
  },

  async russian(s, p) {
    const { en, ru } = await import(path.join(__dirname, '../../../web/static/assets/strings.js'));
    // The page's own English strings that differ in Russian, by their
    // fragments between placeholders.
    const bad = [];
    for (const [k, v] of Object.entries(en)) {
      if (!/^(withdraw\.|nav\.(deposit|withdraw)$)/.test(k) || ru[k] === v) continue;
      for (const part of v.split(/\{\w+\}/)) {
        const frag = part.trim().replace(/^[\s:·.,—–()"“”]+|[\s:·.,—–()"“”]+$/g, '');
        if (/[A-Za-z]{3}/.test(frag) && frag.length >= 4) bad.push({ key: k, text: frag });
      }
    }
    const page = await s.page({ name: 'russian' });
    await open(page, '/login');
    await page.getByLabel('Email').fill(p.user.email);
    await page.getByLabel('Password').fill(p.user.password);
    await page.getByRole('main').getByRole('button', { name: 'Log in' }).click();
    await page.waitForFunction(() => document.documentElement.lang === 'ru' && document.querySelector('[data-balance]'));
    await open(page, '/withdraw');
    await page.locator('tr[data-withdrawal]').first().waitFor();
    await page.waitForTimeout(300);
    const text = await page.evaluate(() => document.body.innerText);
    const leaks = [];
    for (const b of bad) {
      const re = new RegExp(`(^|[^\\p{L}])${b.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\p{L}])`, 'u');
      if (re.test(text)) leaks.push(`${b.key} “${b.text}”`);
    }
    return { leaks, checked: bad.length, text };
  },

  async phone(s, p) {
    const out = [];
    const user = await s.page({ name: 'phone user', ...phone.PHONE });
    await login(user, p.user, '/withdraw');
    await user.locator('tr[data-withdrawal]').first().waitFor();
    out.push({ name: 'withdraw', ...(await user.evaluate(phone.overflow)) });
    const op = await s.page({ name: 'phone operator', ...phone.PHONE });
    await adminSignIn(op, 'users');
    await adminGo(op, 'Withdrawals', 'withdrawals');
    await showStatus(op, 'All');
    out.push({ name: 'admin-withdrawals', ...(await op.evaluate(phone.overflow)) });
    return out;
  },
};

module.exports = async (s, p) => {
  const part = parts[p.part];
  if (!part) throw new Error(`no part ${p.part}`);
  return part(s, p);
};
