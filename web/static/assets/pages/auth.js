// Log in and register. Logging in is POST /api/v1/auth/session with the
// e-mail and password: the server answers the profile and sets the
// HttpOnly session cookie. Registering is POST /api/v1/auth/register,
// whose answer holds an access token: the app hands it straight to
// POST /api/v1/auth/session (as a Bearer token) to put it into the cookie,
// and keeps no copy of it. A referral link (/register?ref=CODE) fills in
// the optional referral code, sent as referral_code; the server's
// invalid_referral_code is said on that field.
import { h, field } from '../dom.js';
import { t, language } from '../i18n.js';
import { api } from '../api.js';
import { getMe, setMe, ready } from '../state.js';
import { pageHeading, inlineAlert } from '../ui.js';
import { navigate } from '../app.js';

// next is where to go after signing in: a path of this app only.
function nextPath(ctx) {
  const n = ctx.query.get('next') || '/';
  return n.startsWith('/') && !n.startsWith('//') && !n.startsWith('/\\') ? n : '/';
}

export async function render(main, ctx) {
  const register = ctx.variant === 'register';
  main.append(pageHeading(register ? t('auth.register_title') : t('auth.login_title')));
  await ready();
  if (!ctx.isCurrent()) return;
  const me = getMe();
  if (me) {
    main.append(h('p', null, t('auth.already', { name: me.name })), h('p', null, h('a', { href: '/profile' }, t('nav.profile'))));
    return;
  }
  const alert = inlineAlert();
  const name = h('input', { type: 'text', name: 'name', autocomplete: 'name', required: true, maxlength: '100' });
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'email', required: true, maxlength: '254' });
  const password = h('input', { type: 'password', name: 'password', autocomplete: register ? 'new-password' : 'current-password', required: true, minlength: register ? '8' : null, maxlength: '72' });
  // The code as the link gave it; the server compares codes without
  // regard to case or surrounding spaces.
  const referral = h('input', { type: 'text', name: 'referral_code', autocomplete: 'off', autocapitalize: 'characters', spellcheck: 'false', maxlength: '64', value: (ctx.query.get('ref') || '').trim().slice(0, 64) });
  const referralRow = field(t('auth.referral'), referral, t('auth.referral_hint'));
  const referralError = h('p', { class: 'field-error', id: 'referral-error', hidden: true });
  referralRow.append(referralError);
  const referralInvalid = (on, text) => {
    referralError.textContent = on ? text : '';
    referralError.hidden = !on;
    const ids = (referral.getAttribute('aria-describedby') || '').split(' ').filter((x) => x && x !== referralError.id);
    if (on) {
      referral.setAttribute('aria-invalid', 'true');
      ids.unshift(referralError.id);
    } else {
      referral.removeAttribute('aria-invalid');
    }
    referral.setAttribute('aria-describedby', ids.join(' '));
  };
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, register ? t('auth.register') : t('auth.login'));
  const form = h('form', { class: 'form-narrow', novalidate: true },
    alert,
    register ? field(t('auth.name'), name) : null,
    field(t('auth.email'), email),
    field(t('auth.password'), password, register ? t('auth.password_hint') : null),
    register ? referralRow : null,
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    alert.textContent = '';
    if (register) referralInvalid(false);
    submit.disabled = true;
    try {
      let r;
      if (register) {
        const body = { email: email.value.trim(), password: password.value, name: name.value.trim(), language: language() };
        const code = referral.value.trim();
        if (code) body.referral_code = code;
        const reg = await api('POST', '/auth/register', body);
        r = await api('POST', '/auth/session', null, { bearer: reg.access_token });
      } else {
        r = await api('POST', '/auth/session', { email: email.value.trim(), password: password.value }, { quiet401: true });
      }
      password.value = '';
      setMe(r.user);
      navigate(nextPath(ctx), { replace: true });
    } catch (err) {
      submit.disabled = false;
      if (register && err && err.code === 'invalid_referral_code') {
        referralInvalid(true, err.message);
        referral.focus();
        return;
      }
      alert.textContent = err.message;
    }
  });
  // Element.append writes null as the text "null": the login page's
  // extra link is added only where it belongs.
  main.append(form);
  if (!register) main.append(h('p', null, h('a', { href: '/forgot-password' }, t('reset.forgot_title'))));
  main.append(
    h('p', null, register ? t('auth.have_account') : t('auth.no_account'), ' ',
      h('a', { href: register ? '/login' : '/register' }, register ? t('nav.login') : t('nav.register'))));
}
