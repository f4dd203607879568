// DKIM key rotation (API guide "Sending mail"; docs/decisions/0021-dkim-signing.md): a new key with
// a new selector is published first; the mail server signs with it only once every DNS server
// answers its record; the old key's record goes a TTL after the switch. One job (dkim-key update)
// walks the steps, each saved as progress, so a worker that dies resumes where it was.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { Store } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import { MapVersionsRepository } from '../../provisioning/mail/map-versions.repository.js';
import { mapProgress } from '../../provisioning/mail/versioned-map.js';
import { AppError } from '../../errors.js';
import { withJobs } from '../../queue/enqueue.js';
import type { QueueJobRow } from '../../queue/jobs.js';
import { defineJob, objectIdOf, type JobContext, type JobResult } from '../job-contract.js';
import type { ServiceDeps } from '../service-deps.js';
import { generateDkimKey } from './dns-records.base-records.js';
import { DkimKeysRepository, type DkimKeyRow, type UnsignedDomain } from './dns-records.dkim.repository.js';
import { applyPollMs } from './dns-records.jobs.js';
import { DnsRecordsRepository } from './dns-records.repository.js';

/** A new selector: `hp` and the date, then random hex (never one a resolver has cached as absent). */
export const newSelector = (now = new Date()) => `hp${now.toISOString().slice(0, 10).replaceAll('-', '')}${crypto.randomBytes(3).toString('hex')}`;

/** A rotation waits for a retiring record at most this long between looks. */
const RETIRE_POLL_MS = 60_000;

export class DkimService {
  private readonly store: Store;
  private readonly ttl: number;
  constructor(deps: ServiceDeps) {
    this.store = deps.store;
    this.ttl = deps.config.dnsDefaultTtl;
  }

  keys(domain: string): Promise<DkimKeyRow[]> {
    return new DkimKeysRepository(this.store.db).keysOf(domain);
  }

  unsigned(): Promise<UnsignedDomain[]> {
    return new DkimKeysRepository(this.store.db).unsignedDomains();
  }

  /**
   * Starts a rotation of `domain`'s key: the new key and its record (pending) and the job that
   * publishes, switches and retires. Refused while a rotation is under way or for a domain without
   * presence (no zone to publish in).
   */
  async rotate(domain: string): Promise<{ key: DkimKeyRow; job: QueueJobRow }> {
    const fresh = await generateDkimKey();
    const selector = newSelector();
    return withJobs(this.store, async (trx, enqueue) => {
      const records = new DnsRecordsRepository(trx);
      await records.lockDomain(domain);
      const keys = new DkimKeysRepository(trx);
      if (!(await keys.hasPresence(domain))) throw new AppError('resource_not_found', `No domain ${domain} with presence (its zone is served by hostplane).`);
      const busy = (await keys.keysOf(domain)).find((k) => k.state !== 'signing');
      if (busy) throw new AppError('conflict', `A rotation of ${domain}'s DKIM key is under way (selector ${busy.selector} is ${busy.state}); rotate again once it is done.`);
      const recordId = await records.insert({ domain, name: `${selector}._domainkey`, record_type: 'TXT', data: fresh.txt, ttl: this.ttl, tag: 'managed', state: 'pending' });
      const id = await keys.insert({ domain, selector, private_key: fresh.privateKeyPem, record_id: recordId, state: 'publishing' });
      const job = await enqueue({ customerId: null, jobType: 'dkim-key', action: 'update', objectId: String(id), payload: { domain } });
      return { key: (await keys.byId(id))!, job };
    });
  }
}

interface Progress {
  /** The DNS change that published the new record. */
  published?: number;
  /** The DNS change that removed the retired records. */
  removed?: number;
  /** The key-table version of each mail server of the zone that signs with the new key. */
  switched?: Record<string, number>;
}

const Payload = Type.Object({ domain: Type.String({ minLength: 1 }) });
type Ctx = JobContext<{ domain: string }>;

/** Publish (pending → active, announced) and wait until every DNS server answers it. */
async function publish(ctx: Ctx, key: DkimKeyRow, p: Progress): Promise<JobResult | null> {
  if (p.published === undefined) {
    p.published = await ctx.store.db.transaction().execute(async (trx) => {
      const records = new DnsRecordsRepository(trx);
      await records.lockDomain(key.domain);
      if (key.record_id !== null) await records.transition(key.record_id, 'pending', 'active');
      const id = await ctx.drivers.dns.recordChange(trx, key.domain, [`${key.selector}._domainkey`]);
      await ctx.saveProgress({ ...p, published: id }, trx);
      return id;
    });
  }
  return (await ctx.drivers.dns.isApplied(p.published)) ? null : { status: 'wait', ms: applyPollMs(ctx.job) };
}

/**
 * The switch: the new key signs, the old ones retire a TTL of their record from now; the key tables
 * of the zone's mail servers change (their versions saved: the old record stays until they apply them).
 */
async function switchKeys(ctx: Ctx, key: DkimKeyRow, p: Progress): Promise<void> {
  await ctx.store.db.transaction().execute(async (trx) => {
    const records = new DnsRecordsRepository(trx);
    await records.lockDomain(key.domain);
    const keys = new DkimKeysRepository(trx);
    let ttl = 0;
    for (const old of (await keys.keysOf(key.domain)).filter((k) => k.state === 'signing')) {
      ttl = Math.max(ttl, old.record_id === null ? 0 : ((await records.byId(old.record_id))?.ttl ?? 0));
    }
    await keys.switchTo(key, new Date(Date.now() + ttl * 1000).toISOString());
    const maps = new MapVersionsRepository(trx);
    const switched: Record<string, number> = {};
    for (const server of await keys.serversOf(key.domain)) switched[server] = await maps.bump(server, 'dkim-keys');
    await ctx.saveProgress({ ...p, switched }, trx);
    p.switched = switched;
  });
}

/** Removes the retired keys and their records once their time has come; wait until then. */
async function retire(ctx: Ctx, domain: string, p: Progress): Promise<JobResult> {
  if (p.removed === undefined) {
    const retiring = (await new DkimKeysRepository(ctx.store.db).keysOf(domain)).filter((k) => k.state === 'retiring');
    const due = Math.max(0, ...retiring.map((k) => Date.parse(k.retire_at ?? '') - Date.now()).filter(Number.isFinite));
    if (due > 0) return { status: 'wait', ms: Math.min(due, RETIRE_POLL_MS) };
    // No server may still sign with a key whose record goes.
    for (const [server, keys] of Object.entries(p.switched ?? {})) {
      const waiting = await dkimApplied(ctx.store.db, server, { keys }, `the old DKIM key of ${domain} stays published`);
      if (waiting) return waiting;
    }
    p.removed = await ctx.store.db.transaction().execute(async (trx) => {
      const records = new DnsRecordsRepository(trx);
      await records.lockDomain(domain);
      const keys = new DkimKeysRepository(trx);
      const gone = (await keys.keysOf(domain)).filter((k) => k.state === 'retiring');
      for (const k of gone) {
        if (k.record_id !== null) await records.delete(k.record_id);
        await keys.remove(k.id);
      }
      const id = await ctx.drivers.dns.recordChange(trx, domain, gone.map((k) => `${k.selector}._domainkey`));
      await ctx.saveProgress({ ...p, removed: id }, trx);
      return id;
    });
  }
  return (await ctx.drivers.dns.isApplied(p.removed)) ? { status: 'done' } : { status: 'wait', ms: applyPollMs(ctx.job) };
}

/** ('dkim-key', 'update'): the steps of one rotation, each resumed from the saved progress. */
export const rotateDkimKeyJob = defineJob({
  type: 'dkim-key',
  action: 'update',
  payload: Payload,
  run: async (ctx) => {
    const p: Progress = { ...((ctx.progress as Progress | null) ?? {}) };
    const key = await new DkimKeysRepository(ctx.store.db).byId(objectIdOf(ctx.job));
    if (key?.state === 'publishing') {
      const waiting = await publish(ctx, key, p);
      if (waiting) return waiting;
      await switchKeys(ctx, key, p);
    }
    return retire(ctx, ctx.payload.domain, p);
  },
});

export const DKIM_JOBS = [rotateDkimKeyJob];

/** The versions of a server's DKIM tables that a change waits for (decision 0019). */
export interface DkimVersions {
  signing: number;
  keys: number;
}

/**
 * In the transaction of a new address: the versions of `server`'s DKIM tables its job waits for (its
 * mail is signed from then on). When it brings its domain to the server, the tables are bumped;
 * otherwise they list the domain already, and the job waits for the current versions all the same:
 * a rspamd that has not fetched them yet (just started, or backing off after a failed request)
 * would send the address's first mail unsigned. Undefined before the server ever had DKIM tables.
 */
export async function bumpDkimForAddress(trx: Kysely<Database>, server: string, address: { id: number; domain: string }): Promise<DkimVersions | undefined> {
  const maps = new MapVersionsRepository(trx);
  if (!(await new DkimKeysRepository(trx).domainOnServer(server, address.domain, address.id))) {
    return { signing: await maps.bump(server, 'dkim-signing'), keys: await maps.bump(server, 'dkim-keys') };
  }
  const [signing, keys] = [await maps.current(server, 'dkim-signing'), await maps.current(server, 'dkim-keys')];
  return signing && keys && signing.version > 0 && keys.version > 0 ? { signing: signing.version, keys: keys.version } : undefined;
}

/**
 * Whether `server` applies `versions` of its DKIM tables: a job's result while it does not.
 * `const wait = await dkimApplied(ctx.store.db, 'mx1', v); if (wait) return wait;`
 */
export async function dkimApplied(db: Kysely<Database>, server: string, versions: Partial<DkimVersions>, what: string): Promise<JobResult | null> {
  for (const [map, version] of [['dkim-signing', versions.signing], ['dkim-keys', versions.keys]] as const) {
    if (version === undefined) continue;
    const p = await mapProgress(db, server, map, version);
    if (p.state === 'pending') return { status: 'wait', ms: p.retryMs };
    if (p.state === 'silent') throw new Error(`${what}: ${p.reason}`);
  }
  return null;
}
