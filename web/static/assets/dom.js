// DOM helpers. Every piece of user text reaches the page through
// text nodes (h's string children, or the text attribute), never innerHTML:
// the Content-Security-Policy forbids inline scripts, and this keeps
// comments, names and chat messages from ever being read as markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

function setAttrs(el, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') {
      el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
    } else if (k === 'text') {
      el.textContent = String(v);
    } else if (k === 'dataset') {
      for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = dv;
    } else if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2).toLowerCase(), v);
    } else if (k === 'value' && 'value' in el && el.namespaceURI !== SVG_NS) {
      el.value = v;
    } else if ((k === 'checked' || k === 'selected' || k === 'disabled') && k in el) {
      el[k] = Boolean(v);
    } else if (v === true) {
      el.setAttribute(k, '');
    } else {
      el.setAttribute(k, String(v));
    }
  }
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false || c === true) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// h('button', {class: 'btn', onClick: fn}, 'Buy YES') builds an element.
// Attributes: class (string or array), text, dataset, on<Event> handlers,
// value/checked/selected/disabled as properties; true sets an empty
// attribute, false/null/undefined leaves it out. Children: nodes, strings
// (as text), arrays, and false/null (skipped).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

// s() is h() for SVG elements (charts).
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

// clear(el, ...children) replaces el's children.
export function clear(el, ...children) {
  while (el.firstChild) el.removeChild(el.firstChild);
  append(el, children);
  return el;
}

let uid = 0;
// id('amount') gives a unique element id, for label/for and aria-* links.
export function id(prefix = 'id') {
  uid += 1;
  return `${prefix}-${uid}`;
}

// field(label, input, hint) is a labelled form row: <label for> names the
// control, an optional hint is linked with aria-describedby.
export function field(label, input, hint) {
  if (!input.id) input.id = id('f');
  const row = h('div', { class: 'field' }, h('label', { for: input.id }, label), input);
  if (hint) {
    const hid = id('hint');
    const described = input.getAttribute('aria-describedby');
    input.setAttribute('aria-describedby', described ? `${described} ${hid}` : hid);
    row.appendChild(h('p', { class: 'hint', id: hid }, hint));
  }
  return row;
}

// select(options, value, attrs): options are [value, label] pairs.
export function select(options, value, attrs) {
  const el = h('select', attrs, options.map(([v, l]) => h('option', { value: v }, l)));
  if (value !== undefined && value !== null) el.value = String(value);
  return el;
}
