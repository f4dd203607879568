// Rules of SSH keys (API guide "SSH keys"; docs/decisions/0024-ssh-keys.md).
//
// Life of a key: POST checks it (ssh-keys.rules.ts), stores it `pending` and enqueues a create job
// on the queue of the package's web server, in one transaction; the job writes the package's whole
// key set to the key file sshd reads there and makes the key `live`. DELETE marks it `deleting` and
// enqueues a delete job that writes the set without it, then removes the row. A package without a
// web server is placed on the default one at its first key, as at its first subdomain.
import type { Kysely } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Store } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { AppError, invalidField, limitReached, notFound } from '../../errors.js';
import { EMPTY_PAGE, type Page, type PageResult } from '../../db/paging.js';
import { findOr404, idValues, parseNumericId } from '../../db/ids.js';
import { withJobs } from '../../queue/enqueue.js';
import type { QueueJobRow } from '../../queue/jobs.js';
import type { ServiceDeps } from '../service-deps.js';
import { WebServersRepository, webQueue } from '../../provisioning/web/servers.repository.js';
import { SshKeysRepository, type PackageForKeys, type SshKeyRow } from './ssh-keys.repository.js';
import { findChecked, type Precondition } from '../../db/locks.js';
import { parsePublicKey } from './ssh-keys.rules.js';

export interface SshKeyCreateInput {
  package_id: string;
  public_key: unknown;
  description?: string | null;
}

/** A write and its job: the row as the write left it. */
export interface SshKeyWrite {
  row: SshKeyRow;
  job: QueueJobRow;
}

const duplicate = () => invalidField('public_key', 'This key is in this package already.', 'conflict');

export class SshKeysService {
  private readonly store: Store;
  constructor(deps: Pick<ServiceDeps, 'store'>) {
    this.store = deps.store;
  }

  private get repo() {
    return new SshKeysRepository(this.store.db);
  }

  list(actor: Actor, filters: Record<string, string[]>, page: Page | null): Promise<PageResult<SshKeyRow>> {
    const packageIds = idValues(filters.package_id);
    if (packageIds?.length === 0) return Promise.resolve(EMPTY_PAGE);
    return this.repo.list(actor, { packageIds, fingerprints: filters.fingerprint, algorithms: filters.algorithm }, page);
  }

  get(actor: Actor, id: string) {
    return findOr404('ssh-key', id, (n) => this.repo.findVisible(actor, n));
  }

  /**
   * Stores a checked key `pending` with its create job: 422 on `public_key` for a key that breaks a
   * rule, 404 for a package out of scope, 409 for a key the package holds already or one past the
   * plan's `ssh_keys_per_package`. The key is checked before anything is read, and nothing is
   * stored on a refusal.
   */
  async create(actor: Actor, input: SshKeyCreateInput, o: { fromMenu?: boolean } = {}): Promise<SshKeyWrite> {
    const checked = parsePublicKey(input.public_key);
    if (!checked.ok) throw invalidField('public_key', checked.detail);
    const { key } = checked;
    const packageId = parseNumericId(input.package_id);
    if (packageId === null) throw notFound('package');
    try {
      return await withJobs(this.store, async (trx, enqueue) => {
        const repo = new SshKeysRepository(trx);
        const pkg = await repo.lockPackageForCreate(actor, packageId);
        if (!pkg) throw notFound('package');
        const same = await repo.withFingerprint(pkg.id, key.fingerprint);
        if (same?.state === 'deleting') {
          throw invalidField('public_key', 'This key is being deleted from this package; add it again once its delete job is done.', 'conflict');
        }
        if (same) throw duplicate();
        if ((await repo.countActive(pkg.id)) >= pkg.ssh_keys_per_package) {
          const n = pkg.ssh_keys_per_package;
          throw limitReached(`This package has reached its limit of ${n} SSH key${n === 1 ? '' : 's'} (ssh_keys_per_package of its plan).`);
        }
        const server = await this.place(trx, pkg);
        const row = await repo.insert({
          customer_id: pkg.customer_id,
          package_id: pkg.id,
          public_key: key.line,
          algorithm: key.algorithm,
          fingerprint: key.fingerprint,
          description: input.description ?? '',
        });
        const job = await enqueue({ customerId: pkg.customer_id, jobType: 'ssh-key', action: 'create', objectId: String(row.id), payload: {}, queue: webQueue(server), fromMenu: o.fromMenu });
        return { row, job };
      }, actor);
    } catch (e) {
      // The same key sent twice at once: the unique index decides.
      if (isUniqueViolation(e)) throw duplicate();
      throw e;
    }
  }

  /**
   * Marks the key `deleting` and enqueues its delete job; a key already being deleted answers
   * with its standing delete job, so a repeated DELETE is harmless. A `precondition` (API guide
   * "Safe retries") is checked on the key as it is, locked.
   */
  async delete(actor: Actor, id: string, o: { fromMenu?: boolean; precondition?: Precondition<SshKeyRow> } = {}): Promise<QueueJobRow> {
    return withJobs(this.store, async (trx, enqueue) => {
      const repo = new SshKeysRepository(trx);
      const row = await findChecked(trx, o.precondition, 'ssh_keys', 'ssh-key', id, (n) => repo.findVisible(actor, n));
      const underway = !(await repo.markDeleting(row.id));
      const target = await repo.targetOf(row.id);
      const job = { customerId: row.customer_id, jobType: 'ssh-key', action: 'delete', objectId: String(row.id), payload: {} } as const;
      return enqueue.unlessStanding(underway, job, () => enqueue({ ...job, queue: target?.serverName ? webQueue(target.serverName) : undefined, fromMenu: o.fromMenu }));
    }, actor);
  }

  /**
   * sshd accepted the key with `fingerprint` for `linuxUser` at `at` (ISO time): its last_used_at
   * moves there (never back). Called by the web worker's sshd log follower; false when no key of
   * that user has the fingerprint (deleted meanwhile, or not ours).
   * `await service.recordUse('u10002', 'SHA256:…', '2026-11-22T03:51:28.000Z')`.
   */
  async recordUse(linuxUser: string, fingerprint: string, at: string | Date): Promise<boolean> {
    const iso = typeof at === 'string' ? new Date(at).toISOString() : at.toISOString();
    return this.repo.recordUse(linuxUser, fingerprint, iso);
  }

  /** The package's web server; a package without one is placed on the default now. */
  private async place(trx: Kysely<Database>, pkg: PackageForKeys): Promise<string> {
    if (pkg.web_server_name) return pkg.web_server_name;
    const server = await new WebServersRepository(trx).defaultServer();
    if (!server) throw new AppError('service_unavailable', 'No web server is available for SSH keys yet. Please try again later or contact support.');
    await new SshKeysRepository(trx).placePackage(pkg.id, server.name);
    return server.name;
  }
}
