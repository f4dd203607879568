// What the DNS benches share (bench/dns.bench.ts, bench/dns-peers.ts): filling a store with zones
// of records in bulk, directly with Kysely (no jobs, no change log: a DNS server started
// afterwards loads them like any other zone), and a small UDP client that waits for an answer.
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import dnsPacket, { type DecodedPacket } from 'dns-packet';
import { sql } from 'kysely';
import type { Store } from '../src/db/index.js';
import { nowIso } from '../src/db/time.js';

/** Records per bulk zone (the store is filled with zones this size), and rows per insert statement. */
export const BULK_ZONE = 1000;
const SQLITE_BATCH = 500;
const PG_BATCH = 10_000;

/** The store a bench fills: an open store and which engine it is. */
export interface BulkTarget {
  engine: 'sqlite' | 'postgres';
  store: Store;
}

/** An owner of bulk zones: a customer id and one of its packages (e.g. a DemoCustomer). */
export interface ZoneOwner {
  id: string;
  package_id: string;
}

export type NewRecord = { domain: string; name: string; record_type: string; data: string; ttl: number; tag: 'custom'; state: 'active'; created_at: string; updated_at: string };

/** `count` records `h<from>`… of `domain`: mostly A records under distinct names, every tenth (i % 10 === 9) a TXT. */
export function bulkRecords(domain: string, from: number, count: number, at: string): NewRecord[] {
  const out: NewRecord[] = [];
  for (let i = from; i < from + count; i++) {
    // Mostly A records under distinct names, every tenth a TXT: a zone of hosts.
    out.push(
      i % 10 === 9
        ? { domain, name: `h${i}`, record_type: 'TXT', data: `"bench record ${i}"`, ttl: 3600, tag: 'custom', state: 'active', created_at: at, updated_at: at }
        : { domain, name: `h${i}`, record_type: 'A', data: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, ttl: 3600, tag: 'custom', state: 'active', created_at: at, updated_at: at },
    );
  }
  return out;
}

/** Inserts `rows` in one transaction (SQLite) or in statements of PG_BATCH rows (PostgreSQL). */
export async function insertRecords(h: BulkTarget, rows: NewRecord[]) {
  if (!rows.length) return;
  if (h.engine === 'postgres') {
    // One statement per batch, the columns as arrays: COPY-like, without per-value parameters.
    for (let i = 0; i < rows.length; i += PG_BATCH) {
      const b = rows.slice(i, i + PG_BATCH);
      const col = <K extends keyof NewRecord>(k: K) => b.map((r) => r[k]);
      await sql`insert into dns_records (domain, name, record_type, data, ttl, tag, state, created_at, updated_at)
        select * from unnest(${col('domain')}::text[], ${col('name')}::text[], ${col('record_type')}::text[], ${col('data')}::text[],
          ${col('ttl')}::int[], ${col('tag')}::text[], ${col('state')}::text[], ${col('created_at')}::text[], ${col('updated_at')}::text[])`.execute(h.store.db);
    }
    return;
  }
  await h.store.db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += SQLITE_BATCH) await trx.insertInto('dns_records').values(rows.slice(i, i + SQLITE_BATCH)).execute();
  });
}

/** Records in the store, all zones. */
export const recordCount = async (h: BulkTarget) =>
  Number((await h.store.db.selectFrom('dns_records').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

/**
 * Bulk zones `bulkNNNNN.example` of BULK_ZONE records, owned by `owners` in turn:
 * `await new Filler(h, [a, b]).fill(1_000_000)` tops the store up to 1M records in all and
 * answers the seconds it took; a later fill() continues in the last zone.
 */
export class Filler {
  private zones = 0;
  /** Records already in the last zone (it is topped up before a new one starts). */
  private inLast = BULK_ZONE;

  constructor(
    private readonly h: BulkTarget,
    private readonly owners: ZoneOwner[],
  ) {}

  async fill(target: number): Promise<number> {
    const started = performance.now();
    let missing = target - (await recordCount(this.h));
    const owners = this.owners;
    const at = nowIso();
    let pending: NewRecord[] = [];
    const flushAt = this.h.engine === 'postgres' ? 100_000 : 50_000;
    while (missing > 0) {
      if (this.inLast >= BULK_ZONE) {
        const owner = owners[this.zones % owners.length];
        const name = `bulk${String(this.zones).padStart(5, '0')}.example`;
        await this.h.store.db
          .insertInto('domains')
          .values({
            name, name_unicode: name, customer_id: Number(owner.id), package_id: Number(owner.package_id), is_registered: 0, registration_created_at: null,
            registration_expires_at: null, registration_status: null, has_presence: 1, dns_update_lock: 0, dns_migration_mode: 0, created_at: at,
          })
          .execute();
        this.zones++;
        this.inLast = 0;
      }
      const n = Math.min(missing, BULK_ZONE - this.inLast);
      pending.push(...bulkRecords(`bulk${String(this.zones - 1).padStart(5, '0')}.example`, this.inLast, n, at));
      this.inLast += n;
      missing -= n;
      if (pending.length >= flushAt) {
        await insertRecords(this.h, pending);
        pending = [];
      }
    }
    await insertRecords(this.h, pending);
    // PostgreSQL: statistics as autovacuum would have them shortly after a load this size.
    if (this.h.engine === 'postgres') await sql`analyze dns_records`.execute(this.h.store.db);
    return (performance.now() - started) / 1000;
  }
}

// ---- DNS client --------------------------------------------------------------------------------

/** One UDP socket to 127.0.0.1:`port`; answers are matched to waiting callers by question name and type. */
export class DnsClient {
  private readonly sock = dgram.createSocket('udp4');
  private readonly waiting = new Map<string, (p: DecodedPacket) => void>();
  private id = 0;

  constructor(private readonly port: number) {
    this.sock.on('message', (msg) => {
      let p: DecodedPacket;
      try {
        p = dnsPacket.decode(msg);
      } catch {
        return;
      }
      const q = p.questions[0];
      if (q) this.waiting.get(`${q.name.toLowerCase()} ${q.type}`)?.(p);
    });
  }

  send(name: string, type: string) {
    this.id = (this.id + 1) & 0xffff;
    this.sock.send(dnsPacket.encode({ type: 'query', id: this.id, flags: 0, questions: [{ type, name }] }), this.port, '127.0.0.1');
  }

  /** Sends the query every `everyMs` until `accept` takes an answer; rejects after `limitMs`. */
  until(name: string, type: string, accept: (p: DecodedPacket) => boolean, everyMs: number, limitMs: number): Promise<DecodedPacket> {
    const key = `${name.toLowerCase()} ${type}`;
    return new Promise((resolve, reject) => {
      const stop = () => {
        clearInterval(timer);
        clearTimeout(limit);
        this.waiting.delete(key);
      };
      this.waiting.set(key, (p) => {
        if (!accept(p)) return;
        stop();
        resolve(p);
      });
      const timer = setInterval(() => this.send(name, type), everyMs);
      const limit = setTimeout(() => {
        stop();
        reject(new Error(`no answer for ${name} ${type} within ${limitMs} ms`));
      }, limitMs);
      this.send(name, type);
    });
  }

  close() {
    this.sock.close();
  }
}

/** The texts of a packet's TXT answers, each record's strings joined. */
export const txtOf = (p: DecodedPacket): string[] =>
  p.answers.filter((a) => a.type === 'TXT').map((a) => (Array.isArray(a.data) ? a.data : [a.data]).map((b: Buffer | string) => b.toString()).join(''));
