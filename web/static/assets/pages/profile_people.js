// Two sections of the signed-in user's profile page (profile.js appends
// them): editing the public profile (PATCH /api/v1/auth/me: name,
// nickname, avatar URL, hidden), with the server's errors shown by the
// form, and personal API keys (/api/v1/auth/api-keys: create with a name
// and scopes, the key shown once with a copy button, the list with when
// each was last used, revoke after a confirmation).
import { h, clear, field } from '../dom.js';
import { t, dateTime } from '../i18n.js';
import { api } from '../api.js';
import { setMe } from '../state.js';
import { inlineAlert, statusBox, empty, announce } from '../ui.js';

// profileEditor is the form of the public profile, filled from me.
export function profileEditor(me) {
  const alert = inlineAlert();
  const done = statusBox();
  const name = h('input', { type: 'text', autocomplete: 'name', required: true, maxlength: '100', value: me.name || '' });
  const nickname = h('input', { type: 'text', autocomplete: 'nickname', maxlength: '32', value: me.nickname || '', spellcheck: 'false' });
  const avatar = h('input', { type: 'url', autocomplete: 'photo', maxlength: '2048', value: me.avatar_url || '', placeholder: 'https://' });
  const hidden = h('input', { type: 'checkbox', checked: Boolean(me.profile_hidden) });
  hidden.id = 'profile-hidden';
  const form = h('form', { class: 'form-narrow', novalidate: true, id: 'profile-edit' }, alert,
    field(t('people.name'), name),
    field(t('people.nickname'), nickname, t('people.nickname_hint')),
    field(t('people.avatar'), avatar, t('people.avatar_hint')),
    h('div', { class: 'field field-check' }, hidden, h('label', { for: hidden.id }, t('people.hidden'))),
    h('p', { class: 'meta' }, t('people.hidden_hint')),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'btn btn-primary' }, t('people.save')),
      h('a', { href: `/users/${me.id}` }, t('people.view_public'))),
    done);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    alert.textContent = '';
    done.textContent = '';
    try {
      const r = await api('PATCH', '/auth/me', {
        name: name.value.trim(),
        nickname: nickname.value.trim(),
        avatar_url: avatar.value.trim(),
        profile_hidden: hidden.checked,
      });
      done.textContent = t('people.saved');
      setMe(r.user);
    } catch (err) {
      alert.textContent = err.message;
    }
  });
  return h('section', { 'aria-labelledby': 'people-edit-title', class: 'card' },
    h('h2', { id: 'people-edit-title' }, t('people.edit')), form);
}

// apiKeysSection lists the caller's keys and makes and revokes them.
export function apiKeysSection(ctx) {
  const alert = inlineAlert();
  const listBox = h('div', { 'aria-live': 'polite' });
  const created = h('div');
  const name = h('input', { type: 'text', required: true, maxlength: '64' });
  const read = h('input', { type: 'checkbox', checked: true, id: 'key-scope-read' });
  const trade = h('input', { type: 'checkbox', id: 'key-scope-trade' });
  const form = h('form', { class: 'form-narrow', novalidate: true, id: 'apikey-create' }, alert,
    field(t('keys.name'), name),
    h('fieldset', { class: 'field' },
      h('legend', null, t('keys.scopes')),
      h('div', { class: 'field-check' }, read, h('label', { for: read.id }, t('keys.scope.read'))),
      h('div', { class: 'field-check' }, trade, h('label', { for: trade.id }, t('keys.scope.trade')))),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn btn-primary' }, t('keys.create'))));

  async function load() {
    let r;
    try {
      r = await api('GET', '/auth/api-keys', null, { signal: ctx.signal });
    } catch (e) {
      alert.textContent = e.message;
      return;
    }
    const keys = r.keys || [];
    if (!keys.length) {
      clear(listBox, empty(t('keys.none')));
      return;
    }
    clear(listBox, h('ul', { class: 'plain-list key-list' }, keys.map((k) => keyRow(k))));
  }

  function keyRow(k) {
    const row = h('li', { class: 'key-row' });
    const paint = () => clear(row,
      h('span', { class: 'key-name' }, k.name), ' ',
      h('span', { class: 'meta' }, (k.scopes || []).map((s) => t('keys.scope.' + s)).join(', '), ' · ',
        k.last_used_at ? t('keys.last_used', { t: dateTime(k.last_used_at) }) : t('keys.never_used')), ' ',
      h('button', { type: 'button', class: 'btn btn-small', 'aria-label': t('keys.revoke_named', { name: k.name }), onClick: confirm }, t('keys.revoke')));
    function confirm() {
      const yes = h('button', { type: 'button', class: 'btn btn-small', onClick: revoke }, t('keys.revoke_confirm'));
      const no = h('button', { type: 'button', class: 'btn btn-small', onClick: () => { paint(); row.querySelector('button').focus(); } }, t('action.cancel'));
      clear(row, h('span', { role: 'alert' }, t('keys.revoke_question', { name: k.name })), ' ', yes, ' ', no);
      yes.focus();
    }
    async function revoke() {
      try {
        await api('DELETE', `/auth/api-keys/${k.id}`);
      } catch (e) {
        alert.textContent = e.message;
        paint();
        return;
      }
      announce(t('keys.revoked', { name: k.name }));
      await load();
      name.focus();
    }
    paint();
    return row;
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    alert.textContent = '';
    const scopes = [];
    if (read.checked) scopes.push('read');
    if (trade.checked) scopes.push('trade');
    let k;
    try {
      k = await api('POST', '/auth/api-keys', { name: name.value.trim(), scopes });
    } catch (err) {
      alert.textContent = err.message;
      return;
    }
    name.value = '';
    const secret = h('input', { type: 'text', readonly: true, value: k.key, id: 'apikey-secret', class: 'mono', spellcheck: 'false' });
    const copied = statusBox();
    const copy = h('button', { type: 'button', class: 'btn btn-small' }, t('keys.copy'));
    copy.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(k.key);
      } catch {
        secret.select();
        document.execCommand('copy');
      }
      copied.textContent = t('keys.copied');
    });
    clear(created, h('div', { class: 'notice', id: 'apikey-created' },
      h('p', null, h('strong', null, t('keys.created', { name: k.name }))),
      h('p', null, t('keys.shown_once')),
      field(t('keys.secret'), secret),
      h('div', { class: 'actions' }, copy, h('button', { type: 'button', class: 'btn btn-small', onClick: () => { clear(created); name.focus(); } }, t('keys.done'))),
      copied));
    secret.focus();
    secret.select();
    await load();
  });
  load();
  return h('section', { 'aria-labelledby': 'keys-title', class: 'card' },
    h('h2', { id: 'keys-title' }, t('keys.title')),
    h('p', { class: 'meta' }, t('keys.intro')),
    created, listBox, h('h3', null, t('keys.new')), form);
}
