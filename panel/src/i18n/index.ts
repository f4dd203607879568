// A small dictionary of our own (docs/decisions/0031-customer-panel.md): English and German, the
// language from the browser, switchable, remembered in localStorage (only the language: the
// session itself is an HttpOnly cookie the page never sees).
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { de } from './de';
import { en, type MessageKey, type Messages } from './en';

export type Lang = 'en' | 'de';
export const LANGS: { code: Lang; name: string }[] = [
  { code: 'en', name: 'English' },
  { code: 'de', name: 'Deutsch' },
];
const DICTIONARIES: Record<Lang, Messages> = { en, de };
const STORAGE_KEY = 'hostplane.lang';

/** The remembered choice, else the first browser language we have, else English. */
export function initialLang(): Lang {
  const stored = safeStorage()?.getItem(STORAGE_KEY);
  if (stored === 'en' || stored === 'de') return stored;
  for (const l of navigator.languages ?? [navigator.language]) {
    const base = l.toLowerCase().split('-')[0];
    if (base === 'de' || base === 'en') return base;
  }
  return 'en';
}

export function rememberLang(lang: Lang) {
  safeStorage()?.setItem(STORAGE_KEY, lang);
  document.documentElement.lang = lang;
}

// Storage may be switched off (private modes, policies): the panel then simply forgets.
function safeStorage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

export type T = (key: MessageKey, vars?: Record<string, string | number>) => string;

export function translator(lang: Lang): T {
  const dict = DICTIONARIES[lang];
  return (key, vars) => {
    const text: string = dict[key] ?? en[key] ?? key;
    return vars ? text.replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m)) : text;
  };
}

export function hasKey(key: string): key is MessageKey {
  return key in en;
}

/** Dates and numbers the way the user's language writes them. */
export function formatDate(lang: Lang, iso: string): string {
  return new Intl.DateTimeFormat(lang === 'de' ? 'de-DE' : 'en-GB', { dateStyle: 'medium' }).format(new Date(iso));
}

/** A moment, to the second, in the user's language and the browser's time zone. */
export function formatDateTime(lang: Lang, iso: string): string {
  return new Intl.DateTimeFormat(lang === 'de' ? 'de-DE' : 'en-GB', { dateStyle: 'medium', timeStyle: 'medium' }).format(new Date(iso));
}

export interface I18n {
  lang: Lang;
  t: T;
  setLang(lang: Lang): void;
}
export const I18nContext = createContext<I18n>({ lang: 'en', t: translator('en'), setLang: () => {} });
export const useI18n = () => useContext(I18nContext);
export type { MessageKey };
