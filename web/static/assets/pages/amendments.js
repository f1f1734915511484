// An event's amendments: dated notes of its creator, in both languages
// (GET /api/v1/events/{id} carries them, oldest first). The creator gets
// an Add amendment form (POST /api/v1/events/{id}/amendments) and, until
// the first trade, an Edit names and rules form (PATCH
// /api/v1/events/{id}), which sends the event's pools back as they are
// with the new rules: the server opens them afresh.
import { h, clear, field } from '../dom.js';
import { t, loc, dateTime, language } from '../i18n.js';
import { api } from '../api.js';
import { inlineAlert, announce } from '../ui.js';

// traded reports whether the event looks traded or closed: the server
// decides (409 event_traded), this only hides a form that cannot work.
function editable(ev) {
  return (ev.pools || []).every((p) => (p.markets || []).every((m) => !m.resolved && !(m.volume > 0)));
}

// poolsBody is the event's pools as PATCH takes them, with the rules
// given, the markets at their current (opening) probabilities.
function poolsBody(ev, rules) {
  const clamp = (p) => Math.min(0.99, Math.max(0.01, p));
  return (ev.pools || []).map((p, i) => ({
    name: p.name, name_ru: p.name_ru || '', rules: rules[i].rules, rules_ru: rules[i].rules_ru,
    margin: p.margin, lmsr_b_kopecks: p.metadata.lmsr_b_kopecks, live_at: p.live_at, finish_at: p.finish_at,
    exclusive: Boolean(p.exclusive),
    markets: (p.markets || []).map((m) => ({
      name: m.name, name_ru: m.name_ru || '', yes_name: m.yes_name, no_name: m.no_name,
      probability: p.exclusive ? m.yes_probability : clamp(m.yes_probability),
      // An exclusive pool's Other answer stays Other.
      ...(m.other ? { other: true } : {}),
    })),
  }));
}

// amendmentsSection returns the section for ev; onChanged(focusId) is
// called after an edit or an amendment, to reload the event.
export function amendmentsSection(ev, { isCreator, onChanged }) {
  const list = ev.amendments || [];
  if (!list.length && !isCreator) return null;
  const other = language() === 'ru' ? 'en' : 'ru';
  const items = list.map((a) => {
    const main = loc(a, 'text');
    const second = other === 'ru' ? a.text_ru : (a.text_ru ? a.text : '');
    return h('li', { class: 'amendment' },
      h('p', { class: 'meta' }, h('time', { datetime: a.created_at }, dateTime(a.created_at))),
      h('p', { class: 'rules' }, main),
      second && second !== main ? h('p', { class: 'rules muted', lang: other }, second) : null);
  });
  const section = h('section', { class: 'card amendments', 'aria-labelledby': 'amendments-title' },
    h('h2', { id: 'amendments-title', tabindex: '-1' }, t('amend.title')),
    list.length ? h('ol', { class: 'plain-list' }, items) : h('p', { class: 'muted' }, t('amend.none')));
  if (isCreator) {
    section.append(amendForm(ev, onChanged));
    if (editable(ev)) section.append(editForm(ev, onChanged));
  }
  return section;
}

function amendForm(ev, onChanged) {
  const alert = inlineAlert();
  const text = h('textarea', { maxlength: '2000', required: true, name: 'text' });
  const textRu = h('textarea', { maxlength: '2000', name: 'text_ru' });
  const form = h('form', { class: 'amend-form', 'aria-labelledby': 'amend-add-title' },
    h('h3', { id: 'amend-add-title' }, t('amend.add')),
    alert,
    field(t('amend.text'), text, t('amend.text_hint')),
    field(t('amend.text_ru'), textRu),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn btn-primary' }, t('amend.submit'))));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    alert.textContent = '';
    try {
      await api('POST', `/events/${ev.id}/amendments`, { text: text.value, text_ru: textRu.value });
    } catch (err) {
      alert.textContent = err.message;
      return;
    }
    announce(t('amend.added'));
    await onChanged('amendments-title');
  });
  return form;
}

function editForm(ev, onChanged) {
  const alert = inlineAlert();
  const name = h('input', { type: 'text', maxlength: '200', required: true, value: ev.name, name: 'name' });
  const nameRu = h('input', { type: 'text', maxlength: '200', value: ev.name_ru || '', name: 'name_ru' });
  const rules = (ev.pools || []).map((p) => ({
    pool: p,
    rules: h('textarea', { maxlength: '10000', value: p.rules || '' }),
    rulesRu: h('textarea', { maxlength: '10000', value: p.rules_ru || '' }),
  }));
  const form = h('form', { class: 'edit-form', 'aria-labelledby': 'amend-edit-title' },
    h('p', { class: 'hint' }, t('amend.edit_hint')),
    alert,
    field(t('amend.name'), name),
    field(t('amend.name_ru'), nameRu),
    rules.map((r) => h('fieldset', null, h('legend', null, loc(r.pool, 'name')),
      field(t('amend.rules'), r.rules), field(t('amend.rules_ru'), r.rulesRu))),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn btn-primary' }, t('amend.save'))));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    alert.textContent = '';
    const body = { name: name.value, name_ru: nameRu.value };
    const changed = rules.some((r) => r.rules.value !== (r.pool.rules || '') || r.rulesRu.value !== (r.pool.rules_ru || ''));
    if (changed) body.pools = poolsBody(ev, rules.map((r) => ({ rules: r.rules.value, rules_ru: r.rulesRu.value })));
    try {
      await api('PATCH', `/events/${ev.id}`, body);
    } catch (err) {
      alert.textContent = err.message;
      return;
    }
    announce(t('amend.saved'));
    await onChanged('page-title');
  });
  return h('details', { class: 'edit-event' }, h('summary', { id: 'amend-edit-title' }, t('amend.edit')), form);
}
