// What the registries of web and mail servers share: forgetting a server is refused while a
// package lives there (hostplane moves no package) and for the default while others remain.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { serializeTransactions } from '../db/dialect.js';
import { AppError } from '../errors.js';

/** Names at most 10 ids: `1, 4, 7` or `1, 2, …, 10 and 5 more`. */
export function someIds(ids: number[]): string {
  return ids.length <= 10 ? ids.join(', ') : `${ids.slice(0, 10).join(', ')} and ${ids.length - 10} more`;
}

interface ServerRepository {
  byName(name: string): Promise<{ is_default: number } | undefined>;
  packagesOn(name: string): Promise<number[]>;
  list(): Promise<{ name: string }[]>;
  remove(name: string): Promise<void>;
}

/**
 * `removeServer(db, name, { kind: 'web', holds: 'sites and files', lock, repo: (trx) => new WebServersRepository(trx), notFound })`:
 * one transaction under the registry's lock.
 */
export async function removeServer(
  db: Kysely<Database>,
  name: string,
  o: { kind: string; holds: string; lock: string; repo(trx: Kysely<Database>): ServerRepository; notFound(name: string): AppError },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await serializeTransactions(trx, o.lock);
    const repo = o.repo(trx);
    const row = await repo.byName(name);
    if (!row) throw o.notFound(name);
    const packages = await repo.packagesOn(name);
    if (packages.length) {
      const one = packages.length === 1;
      throw new AppError(
        'invalid_state',
        `${one ? 'Package' : 'Packages'} ${someIds(packages)} ${one ? 'lives' : 'live'} on ${o.kind} server "${name}" ` +
          `(${o.holds} are there); a ${o.kind} server is removed only while no package lives on it.`,
      );
    }
    const others = (await repo.list()).filter((s) => s.name !== name);
    if (row.is_default && others.length) {
      throw new AppError('invalid_state', `"${name}" is the default ${o.kind} server; make another the default first (${others.map((s) => s.name).join(', ')}).`);
    }
    await repo.remove(name);
  });
}
