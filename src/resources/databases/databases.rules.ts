// How databases are named (API guide "Databases"): `<the package's Linux user>_<n>`, in
// `[a-z0-9_]`, at most 32 characters; the database's user has the same name.

/** MySQL 8 allows user names of at most 32 characters (MariaDB more): names stay within both. */
export const NAME_MAX = 32;
/** Room for `_` and a number of up to 5 digits after the package's part. */
const BASE_MAX = NAME_MAX - 6;

/**
 * The part of every database name of a package: its Linux user in `[a-z0-9_]`, so customers
 * recognise their databases (`demo_shop` → `demo_shop_1`, `demo_shop_2`).
 */
export function namePrefix(linuxUser: string): string {
  const base = linuxUser.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, BASE_MAX);
  return `${base || 'db'}_`;
}

/**
 * The next name after `taken` (names beginning with `prefix`): the highest number plus one. It may
 * be longer than NAME_MAX: then no name is left. On PostgreSQL the create computes it in SQL
 * (DatabasesRepository.insertNextWithJob), by the same rule.
 */
export function nextName(prefix: string, taken: string[]): string {
  let max = 0;
  for (const name of taken) {
    const rest = name.slice(prefix.length);
    if (/^[0-9]+$/.test(rest)) max = Math.max(max, Number(rest));
  }
  return `${prefix}${max + 1}`;
}
