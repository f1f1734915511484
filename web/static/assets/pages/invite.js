// The Invite friends page (GET /api/v1/users/me/referrals): the signed-in
// user's invitation link with a Copy button, the rule in one sentence, how
// many friends registered through it and how many qualified, and the bonus
// earned. A reward arrives on the me stream (a referral_reward notification
// and a balance change): the figures are read again then, so they change
// without a reload; coming back to the tab reads them again too, since a
// friend's registration sends the referrer nothing.
import { h, clear } from '../dom.js';
import { t, money, roubles, num } from '../i18n.js';
import { api } from '../api.js';
import { getMe, ready } from '../state.js';
import { pageHeading, loading, showError, announce, statusBox } from '../ui.js';
import { onMeEvent } from '../app.js';

// copyLink puts the link on the clipboard or, where the page may not
// write it (an insecure origin, a refusal), selects it for the user.
async function copyLink(input, status) {
  try {
    await navigator.clipboard.writeText(input.value);
    status.textContent = t('invite.copied');
  } catch {
    input.focus();
    input.select();
    status.textContent = t('invite.copy_manually');
  }
}

function rule(r) {
  if (Number(r.reward_kopecks) > 0) return t('invite.rule', { reward: roubles(r.reward_kopecks), volume: roubles(r.qualify_kopecks) });
  return t('invite.rule_none', { volume: roubles(r.qualify_kopecks) });
}

// figure is one of the counts: its name, and its value in a dd marked
// data-figure for whoever reads the page (the browser test).
function figure(name, key, value) {
  return h('div', null, h('dt', null, name), h('dd', { 'data-figure': key }, value));
}

export async function render(main, ctx) {
  main.append(pageHeading(t('invite.title')));
  await ready();
  if (!ctx.isCurrent()) return;
  if (!getMe()) {
    main.append(h('p', null, h('a', { href: '/login?next=/invite' }, t('invite.login'))));
    return;
  }
  const body = h('div', null, loading());
  main.append(body);
  let r;
  try {
    r = await api('GET', '/users/me/referrals', null, { signal: ctx.signal });
  } catch (e) {
    if (!ctx.isCurrent()) return;
    clear(body);
    showError(e);
    return;
  }
  if (!ctx.isCurrent()) return;

  const copied = statusBox();
  const link = h('input', { type: 'text', id: 'invite-link', class: 'mono', readonly: true, value: r.link, spellcheck: 'false', autocomplete: 'off', 'aria-labelledby': 'invite-link-title', 'aria-describedby': 'invite-code' });
  const code = h('p', { class: 'hint', id: 'invite-code' }, t('invite.code', { code: r.code }));
  const ruleText = h('p', { class: 'invite-rule', id: 'invite-rule' }, rule(r));
  const figures = h('dl', { class: 'invite-figures' });
  const paint = (x) => clear(figures,
    figure(t('invite.referred'), 'referred', num(x.referred)),
    figure(t('invite.qualified'), 'qualified', num(x.qualified)),
    figure(t('invite.earned'), 'earned', money(x.earned_kopecks)));
  paint(r);

  clear(body,
    h('p', null, t('invite.intro')),
    h('section', { class: 'card', 'aria-labelledby': 'invite-link-title' },
      h('h2', { id: 'invite-link-title' }, t('invite.link')),
      h('div', { class: 'invite-link-row' }, link,
        h('button', { type: 'button', class: 'btn btn-primary', onClick: () => copyLink(link, copied) }, t('invite.copy'))),
      code,
      copied),
    ruleText,
    h('p', { class: 'meta' }, t('invite.rule_bonus')),
    h('section', { 'aria-labelledby': 'invite-results-title' },
      h('h2', { id: 'invite-results-title' }, t('invite.results')),
      figures));

  // refresh reads the figures again (at most one request at a time; a
  // burst of stream messages makes one more read after it).
  let busy = false;
  let again = false;
  let timer = 0;
  async function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      const x = await api('GET', '/users/me/referrals', null, { signal: ctx.signal });
      if (!ctx.isCurrent()) return;
      const changed = x.qualified !== r.qualified || x.earned_kopecks !== r.earned_kopecks;
      if (x.referred !== r.referred || changed) paint(x);
      if (x.link !== link.value) link.value = x.link;
      if (x.reward_kopecks !== r.reward_kopecks || x.qualify_kopecks !== r.qualify_kopecks) ruleText.textContent = rule(x);
      r = x;
      if (changed) announce(t('invite.updated', { n: num(x.qualified), amount: money(x.earned_kopecks) }));
    } catch (e) {
      if (ctx.isCurrent()) showError(e);
    } finally {
      busy = false;
      if (again && ctx.isCurrent()) {
        again = false;
        refresh();
      }
    }
  }
  const soon = () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(refresh, 200);
  };
  ctx.onCleanup(() => window.clearTimeout(timer));
  ctx.onCleanup(onMeEvent((type, d) => {
    if ((type === 'notification' && d && d.type === 'referral_reward') || type === 'balance' || type === 'reset') soon();
  }));
  const onVisible = () => {
    if (document.visibilityState === 'visible') soon();
  };
  document.addEventListener('visibilitychange', onVisible);
  ctx.onCleanup(() => document.removeEventListener('visibilitychange', onVisible));
}
