// Building blocks of the operator console: DOM construction (text only
// ever through text nodes, by the app's h()), tables, labelled fields, the
// confirm and form dialogs, the panel that shows a secret once, and amounts
// typed by the operator.

import { h, clear, id as uid } from '../dom.js';
import { dateTime } from '../i18n.js';
import { ta } from './i18n-admin.js';

export { h, clear };

// field is a labelled control: {input, node}, with <label for> and an
// optional hint wired by aria-describedby. attrs.tag picks the element
// (input by default); a checkbox puts its label after it.
export function field(label, attrs = {}, hint) {
  const { tag = 'input', ...rest } = attrs;
  const input = h(tag, { ...rest, id: rest.id || uid('adm') });
  const check = rest.type === 'checkbox';
  let hintNode = null;
  if (hint) {
    hintNode = h('p', { class: 'hint', id: uid('adm-hint') }, hint);
    input.setAttribute('aria-describedby', hintNode.id);
  }
  const lab = h('label', { for: input.id }, label);
  return { input, node: h('div', { class: check ? 'field field-check' : 'field' }, check ? [input, lab] : [lab, input], hintNode) };
}

// table builds a table with a caption and column headers; rows are arrays
// of cells (nodes or text); the first cell is the row's header.
export function table(caption, headers, rows) {
  return h('div', { class: 'table-wrap' },
    h('table', null,
      h('caption', null, caption),
      h('thead', null, h('tr', null, headers.map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', null, rows.map((r) => h('tr', null, r.map((c, i) => (i === 0 ? h('th', { scope: 'row' }, c) : h('td', null, c))))))));
}

// qs({a: 1, b: ''}) is "?a=1": empty values are left out.
export function qs(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v != null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? '?' + s : '';
}

// parseKopecks reads a rouble amount typed by the operator ("100",
// "99.5", "1 000,25") as integer kopecks by string arithmetic (no
// floating point), or returns null when it is not a positive amount.
export function parseKopecks(text) {
  const t = String(text).replace(/[\s\u00a0]/g, '').replace(',', '.');
  const m = /^(\d{1,11})(?:\.(\d{1,2}))?$/.exec(t);
  if (!m) return null;
  const k = Number(m[1]) * 100 + Number((m[2] || '').padEnd(2, '0'));
  return k > 0 ? k : null;
}

// timeEl is a <time> element for v (an ISO string or Unix milliseconds).
export function timeEl(v) {
  if (v == null) return '—';
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return String(v);
  return h('time', { datetime: d.toISOString() }, dateTime(d.toISOString()));
}

// hostOf is where dialogs go: inside the page's main landmark, in the
// part the router clears when the operator leaves the page (so a dialog
// never outlives its page).
function hostOf() {
  return document.getElementById('page') || document.querySelector('main') || document.body;
}

// confirmDialog asks a yes/no question in a modal <dialog> and resolves
// to true only when the operator confirms. Cancel has the focus first,
// Escape cancels, and the focus returns to where it was.
export function confirmDialog(message, confirmLabel) {
  return new Promise((resolve) => {
    const back = document.activeElement;
    const titleID = uid('adm-dlg');
    const msgID = uid('adm-dlgmsg');
    const dlg = h('dialog', { class: 'adm-dialog', 'aria-labelledby': titleID, 'aria-describedby': msgID });
    let answered = false;
    const finish = (yes) => {
      if (answered) return;
      answered = true;
      if (dlg.open) dlg.close();
      dlg.remove();
      if (back && back.isConnected && typeof back.focus === 'function') back.focus();
      resolve(yes);
    };
    const cancel = h('button', { type: 'button', class: 'btn', onclick: () => finish(false) }, ta('cancel'));
    const ok = h('button', { type: 'button', class: 'btn adm-danger', onclick: () => finish(true) }, confirmLabel || ta('confirm'));
    clear(dlg,
      h('h2', { id: titleID }, confirmLabel || ta('confirm')),
      h('p', { id: msgID }, message),
      h('div', { class: 'actions' }, cancel, ok));
    dlg.addEventListener('cancel', (e) => { e.preventDefault(); finish(false); });
    dlg.addEventListener('close', () => finish(false));
    hostOf().append(dlg);
    dlg.showModal();
    cancel.focus();
  });
}

// formDialog shows a modal form (title, fields) whose submit calls
// onSubmit(); the dialog closes when it resolves true. Returns nothing.
export function formDialog(title, fields, submitLabel, onSubmit) {
  const back = document.activeElement;
  const titleID = uid('adm-dlg');
  const error = h('div', { class: 'alert', role: 'alert' });
  const dlg = h('dialog', { class: 'adm-dialog', 'aria-labelledby': titleID });
  const close = () => {
    if (dlg.open) dlg.close();
    dlg.remove();
    if (back && back.isConnected && typeof back.focus === 'function') back.focus();
  };
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, submitLabel);
  const form = h('form', {
    onsubmit: async (e) => {
      e.preventDefault();
      submit.disabled = true;
      clear(error);
      try {
        const msg = await onSubmit();
        if (msg === true) close();
        else if (msg) clear(error, msg);
      } finally {
        submit.disabled = false;
      }
    },
  }, h('h2', { id: titleID }, title), fields.map((f) => f.node), error,
  h('div', { class: 'actions' }, h('button', { type: 'button', class: 'btn', onclick: close }, ta('cancel')), submit));
  dlg.append(form);
  dlg.addEventListener('close', close);
  hostOf().append(dlg);
  dlg.showModal();
  if (fields[0]) fields[0].input.focus();
  return { close, error };
}

// secretPanel shows a key or secret once: a labelled read-only field the
// operator can select or copy, and a button that removes it for good.
export function secretPanel(title, secret, announce) {
  const headID = uid('adm-secret');
  const f = field(title, { readonly: true, value: secret, class: 'adm-secret', spellcheck: 'false', autocomplete: 'off' }, ta('secret.once'));
  const panel = h('section', { class: 'card adm-once', 'aria-labelledby': headID },
    h('h2', { id: headID }, title),
    f.node,
    h('div', { class: 'actions' },
      navigator.clipboard ? h('button', {
        type: 'button', class: 'btn',
        onclick: async () => {
          try { await navigator.clipboard.writeText(secret); announce(ta('secret.copied')); } catch { f.input.select(); }
        },
      }, ta('secret.copy')) : null,
      h('button', { type: 'button', class: 'btn btn-primary', onclick: () => { f.input.value = ''; panel.remove(); } }, ta('secret.done'))));
  queueMicrotask(() => { f.input.focus(); f.input.select(); });
  return panel;
}

// errorText is what to tell the operator about a failed request: the
// app's ApiError already carries a translated message with the server's
// detail.
export function errorText(err) {
  if (err && err.status === 0) return ta('error.network');
  return ta('error', { msg: (err && err.message) || String(err) });
}
