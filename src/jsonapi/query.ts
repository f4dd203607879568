// Filters and paging of list endpoints (API guide "Filters and paging").
import { AppError } from '../errors.js';

export const MAX_PAGE_SIZE = 1000;
export const DEFAULT_PAGE_SIZE = 100;

const CONTROL = /[\u0000-\u001f\u007f]/;
/** Keeps `(number - 1) * size` an exact integer for every engine's OFFSET. */
export const MAX_PAGE_NUMBER = 999_999_999;

export interface ListQuery {
  /** attribute → accepted values (OR); attributes combine with AND. */
  filters: Record<string, string[]>;
  page: { number: number; size: number } | null;
}

const bad = (parameter: string, detail: string) => new AppError('invalid_parameter', detail, { parameter });

function positiveInt(parameter: string, raw: string, max: number): number {
  if (!/^[0-9]+$/.test(raw)) throw bad(parameter, `${parameter} must be a whole number.`);
  const n = raw.length > 15 ? Infinity : Number(raw);
  if (n < 1 || n > max) throw bad(parameter, `${parameter} must be between 1 and ${max}.`);
  return n;
}

/**
 * Parses `filter[x]=a,b&filter[x]=c&page[size]=10` (raw or percent-encoded brackets, already
 * decoded by the query parser) against the filters a list endpoint allows.
 * `parseListQuery({ 'filter[domain]': 'a.de,b.de' }, ['domain'])` → `{ filters: { domain: ['a.de','b.de'] }, page: null }`.
 */
export function parseListQuery(query: Record<string, unknown>, allowed: readonly string[]): ListQuery {
  const filters: Record<string, string[]> = {};
  let number: number | undefined;
  let size: number | undefined;
  for (const [key, rawValue] of Object.entries(query ?? {})) {
    const values = (Array.isArray(rawValue) ? rawValue : [rawValue]).map(String);
    const f = /^filter\[([a-z_]+)\]$/.exec(key);
    if (f) {
      if (!allowed.includes(f[1])) {
        throw bad(key, allowed.length ? `Unknown filter ${f[1]}; allowed: ${allowed.join(', ')}.` : 'This list has no filters.');
      }
      const parts = values.flatMap((v) => v.split(',')).map((v) => v.trim());
      if (parts.some((p) => p === '')) throw bad(key, `${key} must not be empty.`);
      // No attribute value contains control characters (and PostgreSQL rejects NUL in text).
      if (parts.some((p) => CONTROL.test(p))) throw bad(key, `${key} must not contain control characters.`);
      filters[f[1]] = [...new Set([...(filters[f[1]] ?? []), ...parts])];
      continue;
    }
    if (key === 'page[number]' || key === 'page[size]') {
      if (values.length !== 1) throw bad(key, `${key} must be given once.`);
      if (key === 'page[number]') number = positiveInt(key, values[0], MAX_PAGE_NUMBER);
      else size = positiveInt(key, values[0], MAX_PAGE_SIZE);
      continue;
    }
    throw bad(key, `Unknown query parameter ${key}.`);
  }
  const page = number === undefined && size === undefined ? null : { number: number ?? 1, size: size ?? DEFAULT_PAGE_SIZE };
  return { filters, page };
}

/** The query string of page `n` of the same request, keeping every other parameter (raw brackets). */
export function pageQuery(query: Record<string, unknown>, n: number, size: number): string {
  const parts: string[] = [];
  for (const [key, v] of Object.entries(query ?? {})) {
    if (key === 'page[number]' || key === 'page[size]') continue;
    for (const value of Array.isArray(v) ? v : [v]) parts.push(`${encode(key).replace(/%5B/g, '[').replace(/%5D/g, ']')}=${encode(String(value))}`);
  }
  parts.push(`page[number]=${n}`, `page[size]=${size}`);
  return '?' + parts.join('&');
}

/** Percent-encodes a query value, keeping commas (the OR separator) readable; never throws. */
function encode(s: string): string {
  // encodeURIComponent throws on a lone surrogate; a query parser never produces one, but a link
  // builder must not be the place where a request fails.
  const wellFormed = s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  return encodeURIComponent(wellFormed).replace(/%2C/g, ',');
}
