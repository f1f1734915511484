import { h } from '../dom.js';
import { t } from '../i18n.js';
import { pageHeading } from '../ui.js';

export function render(main) {
  main.append(pageHeading(t('notfound.title')), h('p', null, t('notfound.text'), ' ', h('a', { href: '/' }, t('notfound.home'))));
}
