// Forgotten passwords. /forgot-password asks for a reset mail: POST
// /api/v1/auth/password/reset-request, which answers 202 whether or not
// the address has an account, so the page says the same either way.
// /reset-password is where that mail's link leads
// (<PREDICTKIT_PUBLIC_URL>/reset-password?token=...): the page takes the
// token out of the address at once (so it stays in no history entry and
// no screenshot), asks for the new password and sends both to POST
// /api/v1/auth/password/reset, with revoke_api_keys when the user ticks
// "Also revoke my API keys" (a reset signs out every session and refuses
// every older reset link and stream ticket; keys go only when asked, since
// they may drive the user's own programs). The token is single-use and
// lives an hour.
import { h, field } from '../dom.js';
import { t } from '../i18n.js';
import { api } from '../api.js';
import { pageHeading, inlineAlert } from '../ui.js';

export async function render(main, ctx) {
  if (ctx.variant === 'reset') {
    renderReset(main, ctx);
    return;
  }
  main.append(pageHeading(t('reset.forgot_title')));
  const alert = inlineAlert();
  const status = h('p', { role: 'status' });
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'email', required: true, maxlength: '254' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('reset.send'));
  const form = h('form', { class: 'form-narrow', novalidate: true },
    alert, status,
    h('p', null, t('reset.forgot_intro')),
    field(t('auth.email'), email),
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    alert.textContent = '';
    status.textContent = '';
    submit.disabled = true;
    try {
      await api('POST', '/auth/password/reset-request', { email: email.value.trim() });
      status.textContent = t('reset.sent', { email: email.value.trim() });
    } catch (err) {
      alert.textContent = err.message;
    } finally {
      submit.disabled = false;
    }
  });
  main.append(form, h('p', null, h('a', { href: '/login' }, t('nav.login'))));
}

function renderReset(main, ctx) {
  main.append(pageHeading(t('reset.title')));
  const token = ctx.query.get('token') || '';
  if (token) window.history.replaceState(window.history.state, '', '/reset-password');
  if (!token) {
    main.append(h('p', null, t('reset.no_token')), h('p', null, h('a', { href: '/forgot-password' }, t('reset.forgot_title'))));
    return;
  }
  const alert = inlineAlert();
  const status = h('p', { role: 'status' });
  const password = h('input', { type: 'password', name: 'new-password', autocomplete: 'new-password', required: true, minlength: '8', maxlength: '72' });
  const revokeKeys = h('input', { type: 'checkbox', name: 'revoke-api-keys', id: 'reset-revoke-api-keys' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('reset.set'));
  const form = h('form', { class: 'form-narrow', novalidate: true },
    alert, status,
    field(t('reset.new_password'), password, t('auth.password_hint')),
    h('div', { class: 'field field-check' }, revokeKeys, h('label', { for: revokeKeys.id }, t('reset.revoke_keys'))),
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    alert.textContent = '';
    submit.disabled = true;
    try {
      const revoked = revokeKeys.checked;
      await api('POST', '/auth/password/reset', { token, new_password: password.value, revoke_api_keys: revoked });
      password.value = '';
      form.replaceChildren(status);
      status.append(t('reset.done'), ' ', revoked ? t('reset.keys_revoked') + ' ' : '', h('a', { href: '/login' }, t('nav.login')));
    } catch (err) {
      alert.textContent = err.code === 'invalid_token' ? t('reset.bad_token') : err.message;
      submit.disabled = false;
    }
  });
  main.append(form);
}
