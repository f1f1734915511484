// Strings and number formats in English and Russian. t('key', {n: 3})
// looks the key up in the current language (English when missing there)
// and fills {n}-style placeholders. Other modules add their own keys with
// addStrings({en: {...}, ru: {...}}).
import { en, ru } from './strings.js';

const dicts = { en: { ...en }, ru: { ...ru } };
let lang = 'en';

export function addStrings(more) {
  for (const l of Object.keys(dicts)) Object.assign(dicts[l], more[l] || {});
}

export function browserLanguage() {
  const langs = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || 'en'];
  for (const l of langs) {
    const p = String(l).slice(0, 2).toLowerCase();
    if (p === 'ru' || p === 'en') return p;
  }
  return 'en';
}

export function setLanguage(l) {
  lang = l === 'ru' ? 'ru' : 'en';
  document.documentElement.lang = lang;
}

export function language() {
  return lang;
}

export function has(key) {
  return key in dicts[lang] || key in dicts.en;
}

export function t(key, params) {
  let str = dicts[lang][key];
  if (str === undefined) str = dicts.en[key];
  if (str === undefined) return key;
  if (params) str = str.replace(/\{(\w+)\}/g, (m, p) => (p in params ? String(params[p]) : m));
  return str;
}

// loc(obj, 'name') is obj.name_ru in Russian when it is set, else obj.name.
export function loc(obj, field) {
  if (!obj) return '';
  if (lang === 'ru' && obj[field + '_ru']) return obj[field + '_ru'];
  return obj[field] || '';
}

const cache = {};
function nf(key, opts) {
  const k = lang + key;
  if (!cache[k]) cache[k] = new Intl.NumberFormat(lang === 'ru' ? 'ru-RU' : 'en-US', opts);
  return cache[k];
}

// Money arrives as integer kopecks; dividing by 100 is for display only.
export function money(kopecks) {
  if (kopecks === null || kopecks === undefined) return '—';
  return nf('money', { style: 'currency', currency: 'RUB', currencyDisplay: 'narrowSymbol', minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(Number(kopecks) / 100);
}

// roubles(kopecks) is money() without the kopecks when there are none
// ("₽100", "₽1,000.50"): for amounts in a sentence, such as a rule.
export function roubles(kopecks) {
  if (kopecks === null || kopecks === undefined) return '—';
  if (Number(kopecks) % 100 !== 0) return money(kopecks);
  return nf('roubles', { style: 'currency', currency: 'RUB', currencyDisplay: 'narrowSymbol', minimumFractionDigits: 0, maximumFractionDigits: 0 }).format(Number(kopecks) / 100);
}

// rub(x) formats an amount already in roubles (the PnL chart's unit).
export function rub(x) {
  return nf('money', { style: 'currency', currency: 'RUB', currencyDisplay: 'narrowSymbol', minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(Number(x));
}

export function num(n) {
  return nf('num', { maximumFractionDigits: 2 }).format(Number(n));
}

// pct(0.5512) is "55.1%".
export function pct(p) {
  return nf('pct', { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(Number(p));
}

// bps(4365) shows a price in basis points per token (10000 = 1 RUB) as
// money per token: 4365 bps is 43.65 kopecks.
export function bps(b) {
  return money(Number(b) / 100);
}

export function dateTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toLocaleString(lang === 'ru' ? 'ru-RU' : 'en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}

export function time(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toLocaleTimeString(lang === 'ru' ? 'ru-RU' : 'en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

// side('YES') is the side's name in the current language.
export function side(s) {
  return s === 'NO' ? t('side.no') : t('side.yes');
}
