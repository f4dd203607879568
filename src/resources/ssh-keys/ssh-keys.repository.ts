// All SQL of SSH keys (API guide "SSH keys"): scoped reads for the API (a key is visible when its
// customer is in the caller's scope, src/db/scope.ts), and the writes of the service, the jobs and
// the sshd log follower (recordUse).
import type { Kysely, Selectable } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Database, SshKeysTable } from '../../db/schema.js';
import { visibleTo } from '../../db/scope.js';
import { fetchPage, type Page } from '../../db/paging.js';
import { nowIso } from '../../db/time.js';
import { lockedPackageRows } from '../../db/locks.js';
import type { WebServerRow } from '../../provisioning/web/servers.repository.js';

export type SshKeyRow = Selectable<SshKeysTable>;

/** Filters after parsing: each given attribute holds at least one value (OR within, AND across). */
export interface SshKeyFilters {
  packageIds?: number[];
  fingerprints?: string[];
  algorithms?: string[];
}

export interface NewSshKey {
  customer_id: number;
  package_id: number;
  public_key: string;
  algorithm: string;
  fingerprint: string;
  description: string;
}

/** What a create reads of its package and plan (lockPackageForCreate). */
export interface PackageForKeys {
  id: number;
  customer_id: number;
  linux_user: string;
  web_server_name: string | null;
  ssh_keys_per_package: number;
}

/** What the jobs of a key need: its package's Linux user and the package's web server (null: not registered). */
export interface KeyTarget {
  packageId: number;
  linuxUser: string;
  server: WebServerRow | null;
  serverName: string | null;
}

export class SshKeysRepository {
  /** Pass a transaction for writes that belong together (key + job). */
  constructor(private readonly db: Kysely<Database>) {}

  private base(actor: Actor) {
    return this.db.selectFrom('ssh_keys').selectAll('ssh_keys').where(visibleTo(actor, 'ssh_keys.customer_id'));
  }

  findVisible(actor: Actor, id: number) {
    return this.base(actor).where('ssh_keys.id', '=', id).executeTakeFirst();
  }

  list(actor: Actor, f: SshKeyFilters, page: Page | null) {
    let q = this.base(actor);
    if (f.packageIds) q = q.where('ssh_keys.package_id', 'in', f.packageIds);
    if (f.fingerprints) q = q.where('ssh_keys.fingerprint', 'in', f.fingerprints);
    if (f.algorithms) q = q.where('ssh_keys.algorithm', 'in', f.algorithms);
    return fetchPage(q.orderBy('ssh_keys.id'), page);
  }

  byId(id: number) {
    return this.db.selectFrom('ssh_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * A package of the caller's scope with its plan's key limit, read under the package lock
   * (src/db/locks.ts), so parallel creates in one package count one after the other. Undefined when
   * the package is not in the caller's scope.
   */
  async lockPackageForCreate(actor: Actor, id: number): Promise<PackageForKeys | undefined> {
    const rows = await lockedPackageRows(
      this.db,
      id,
      this.db
        .selectFrom('packages')
        .innerJoin('plans', 'plans.id', 'packages.plan_id')
        .select(['packages.id', 'packages.customer_id', 'packages.linux_user', 'packages.web_server_name', 'plans.ssh_keys_per_package'])
        .where(visibleTo(actor, 'packages.customer_id')),
    );
    return rows[0];
  }

  /** How many keys the package holds that are (or are becoming) part of its key file: `deleting` ones do not count. */
  async countActive(packageId: number): Promise<number> {
    const r = await this.db
      .selectFrom('ssh_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('package_id', '=', packageId)
      .where('state', '!=', 'deleting')
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** The package's key with this fingerprint, in any state. */
  withFingerprint(packageId: number, fingerprint: string) {
    return this.db.selectFrom('ssh_keys').select(['id', 'state']).where('package_id', '=', packageId).where('fingerprint', '=', fingerprint).executeTakeFirst();
  }

  insert(k: NewSshKey): Promise<SshKeyRow> {
    return this.db
      .insertInto('ssh_keys')
      .values({ ...k, state: 'pending', created_at: nowIso(), last_used_at: null })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** Marks the key being deleted unless it is already; true when this call did (one statement). */
  async markDeleting(id: number): Promise<boolean> {
    const r = await this.db.updateTable('ssh_keys').set({ state: 'deleting' }).where('id', '=', id).where('state', '!=', 'deleting').executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Moves a key from one state to another; false when it was not in `from` (or is gone). */
  async transition(id: number, from: SshKeyRow['state'], to: SshKeyRow['state']): Promise<boolean> {
    const r = await this.db.updateTable('ssh_keys').set({ state: to }).where('id', '=', id).where('state', '=', from).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('ssh_keys').where('id', '=', id).execute();
  }

  /** The lines of the package's key file: every key not being deleted, oldest first. */
  async keyLines(packageId: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('ssh_keys')
      .select('public_key')
      .where('package_id', '=', packageId)
      .where('state', '!=', 'deleting')
      .orderBy('id')
      .execute();
    return rows.map((r) => r.public_key);
  }

  /** Where the key file of key `id`'s package is: its Linux user and web server; undefined when the key is gone. */
  async targetOf(id: number): Promise<(KeyTarget & { state: SshKeyRow['state'] }) | undefined> {
    const r = await this.db
      .selectFrom('ssh_keys')
      .innerJoin('packages', 'packages.id', 'ssh_keys.package_id')
      .select(['ssh_keys.state', 'ssh_keys.package_id', 'packages.linux_user', 'packages.web_server_name'])
      .where('ssh_keys.id', '=', id)
      .executeTakeFirst();
    if (!r) return undefined;
    const server = r.web_server_name ? ((await this.db.selectFrom('web_servers').selectAll().where('name', '=', r.web_server_name).executeTakeFirst()) ?? null) : null;
    return { state: r.state, packageId: r.package_id, linuxUser: r.linux_user, server, serverName: r.web_server_name };
  }

  /**
   * Sets last_used_at of the key with `fingerprint` of the package whose Linux user is `linuxUser`,
   * unless it holds a later time already (log lines may arrive out of order); true when a key matched.
   */
  async recordUse(linuxUser: string, fingerprint: string, at: string): Promise<boolean> {
    const r = await this.db
      .updateTable('ssh_keys')
      .set({ last_used_at: at })
      .where('fingerprint', '=', fingerprint)
      .where('package_id', 'in', (eb) => eb.selectFrom('packages').select('packages.id').where('packages.linux_user', '=', linuxUser))
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) return true;
    // A later time stored already still counts as a match.
    const found = await this.db
      .selectFrom('ssh_keys')
      .innerJoin('packages', 'packages.id', 'ssh_keys.package_id')
      .select('ssh_keys.id')
      .where('packages.linux_user', '=', linuxUser)
      .where('ssh_keys.fingerprint', '=', fingerprint)
      .executeTakeFirst();
    return found !== undefined;
  }

  /** Places the package on web server `name` (its first subdomain or key, whichever comes first). */
  async placePackage(packageId: number, name: string): Promise<void> {
    await this.db.updateTable('packages').set({ web_server_name: name }).where('id', '=', packageId).where('web_server_name', 'is', null).execute();
  }
}
