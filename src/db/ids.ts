// Integer ids as they arrive in URLs and filters. The store's ids are 32-bit integers, so anything
// else cannot exist (and must not reach PostgreSQL, which would reject it with an error).
import { notFound } from '../errors.js';

/** `parseNumericId('10001')` → 10001; `'abc'`, `'010001'` (one id, one spelling) and `'99999999999'` → null. */
export const parseNumericId = (id: string) => (/^[1-9][0-9]{0,9}$/.test(id) && Number(id) <= 2147483647 ? Number(id) : null);

/** The ids among filter values; values that cannot be ids simply match nothing. */
export const idValues = (values: string[] | undefined) =>
  values?.map(parseNumericId).filter((n): n is number => n !== null);

/**
 * The object with the numeric id of a URL, or 404 for an id that cannot exist or is not found
 * (in the caller's scope): `findOr404('plan', id, (n) => repo.findVisible(actor, n))`.
 */
export async function findOr404<R>(what: string, id: string, find: (id: number) => Promise<R | undefined>): Promise<R> {
  const n = parseNumericId(id);
  const row = n === null ? undefined : await find(n);
  if (row === undefined) throw notFound(what);
  return row;
}
