// All SQL of idempotency keys (migration 017; API guide "Safe retries"). Times are ISO strings of
// the caller's clock (src/db/time.ts), compared as text like every timestamp of the store.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { sql, type RawBuilder } from 'kysely';
import { jsonRowsInsert, type JsonRowsColumn } from '../db/dialect.js';
import { precompiled, sessionStatement } from '../db/precompiled.js';
import { OWNER_COLUMNS, tokenOwner, type OwnerColumns } from '../auth/auth.repository.js';
import { keyName } from './idempotency-key.js';

/** A key and the request that holds it. */
export interface KeyClaim {
  scope: string;
  key: string;
  /** Random per request: a held key is freed only by the request that holds it. */
  claim: string;
}

/** What a key holds: the first request's fingerprint and, once it answered, its answer. */
export interface KeyRecord {
  fingerprint: string;
  created_at: string;
  expires_at: string;
  status: number | null;
  headers: string | null;
  body: string | null;
}

/** What a key-lock statement answers: whether this session took the key's lock, and the key as stored (null columns without one). */
export interface LockedKey {
  locked: boolean;
  fingerprint: string | null;
  created_at: string | null;
  expires_at: string | null;
  status: number | null;
  headers: string | null;
  body: string | null;
}

/** The row of the token statement that also takes the key's lock (PostgreSQL, tokenLockStatement). */
export type TokenLockRow = OwnerColumns & LockedKey;

/**
 * The lock of a key, and the key as stored, for `scope` and `key` (SQL expressions): the lock's
 * name is 'hostplane idempotency <schema> <scope>' || E'\n' || '<key>' (UNLOCK_SQL repeats it).
 * The row is read with the statement's snapshot, taken before the lock: src/http/idempotency-locks.ts
 * says why an answer stored by another instance cannot slip between the two.
 */
const lockedKey = (scope: RawBuilder<string>, key: RawBuilder<string>) =>
  sql<LockedKey>`(select pg_try_advisory_lock(hashtextextended('hostplane idempotency ' || current_schema() || ' ' || ${scope} || E'\\n' || ${key}, 0)) as locked, x.fingerprint, x.created_at, x.expires_at, x.status, x.headers, x.body from (select 1) as one left join idempotency_keys x on x.scope = ${scope} and x.idempotency_key = ${key})`;

/** A stored key's columns as read (KeyRecord). */
const KEY_COLUMNS = ['fingerprint', 'created_at', 'expires_at', 'status', 'headers', 'body'] as const;
const LOCKED_KEY_COLUMNS = ['locked', ...KEY_COLUMNS] as const;
/** tokenKeyScope (src/http/idempotency-key.ts), in SQL, of the token's owner (tokenOwner). */
const OWNER_TOKEN_SCOPE = sql<string>`'token:' || owner.token_id`;

/** Releases session locks taken by lockedKey, one per `scope\nkey`; answers how many were held. */
const UNLOCK_SQL = `select count(*) filter (where pg_advisory_unlock(hashtextextended('hostplane idempotency ' || current_schema() || ' ' || n, 0)))::int as released from unnest($1::text[]) as n`;

/** A stored answer. */
export interface KeyAnswer {
  status: number;
  /** JSON object of header name → value. */
  headers: string;
  body: string | null;
}

/** The columns of a stored key, in the order of `stored`'s rows (the first two name the key). */
const STORED_COLUMNS = [
  ['scope', 'text'], ['idempotency_key', 'text'], ['fingerprint', 'text'], ['claim', 'text'], ['status', 'integer'],
  ['headers', 'text'], ['body', 'text'], ['created_at', 'text'], ['expires_at', 'text'],
] as const satisfies readonly JsonRowsColumn[];

export class IdempotencyRepository {
  private readonly storeKeys;
  private readonly findKey;
  /** PostgreSQL, on a key-lock session: the token's owner, and the lock and row of the key in its scope, one statement. */
  readonly tokenLockStatement;
  /** SQLite: the token's owner and the row of the key in its scope, one read (`locked` always 1: no locks there). */
  private readonly tokenKeyRead;

  constructor(private readonly db: Kysely<Database>) {
    this.scopeLockStatement = sessionStatement((scope: string, key: string) =>
      db.selectFrom(lockedKey(sql<string>`${scope}::text`, sql<string>`${key}::text`).as('k')).select(LOCKED_KEY_COLUMNS.map((c) => sql.ref(`k.${c}`).as(c))),
    );
    this.tokenLockStatement = sessionStatement((hash: string, key: string) =>
      db
        .selectFrom(tokenOwner(db, hash))
        // Only a token that authenticates takes a lock.
        .innerJoin(sql<LockedKey>`lateral ${lockedKey(OWNER_TOKEN_SCOPE, sql<string>`${key}::text`)}`.as('k'), (j) => j.onTrue())
        .select([...OWNER_COLUMNS, ...LOCKED_KEY_COLUMNS.map((c) => sql.ref(`k.${c}`).as(c))]),
    );
    this.tokenKeyRead = precompiled(
      db,
      (hash: string, key: string) =>
        db
          .selectFrom(tokenOwner(db, hash))
          .leftJoin('idempotency_keys as x', (j) => j.on('x.scope', '=', OWNER_TOKEN_SCOPE).on('x.idempotency_key', '=', key))
          .select([...OWNER_COLUMNS, sql<number>`1`.as('locked'), ...KEY_COLUMNS.map((c) => `x.${c}` as const)]),
      { once: true },
    );
    this.findKey = precompiled(db, (scope: string, key: string) =>
      db.selectFrom('idempotency_keys').select(KEY_COLUMNS).where('scope', '=', scope).where('idempotency_key', '=', key),
      { once: true },
    );
    // A key and its answer together, over one past its expiry or never answered (claimed by an
    // older version, which stored a row for a key in flight).
    this.storeKeys = jsonRowsInsert(db, 'idempotency_keys', STORED_COLUMNS, {
      onConflict: sql`(scope, idempotency_key) do update set ${sql.join(STORED_COLUMNS.slice(2).map(([c]) => sql`${sql.id(c)} = excluded.${sql.id(c)}`))} where idempotency_keys.expires_at <= excluded.created_at or idempotency_keys.status is null`,
      returning: ['claim'],
      unflushed: true,
    });
  }

  /** PostgreSQL, on a key-lock session: takes the key's lock for that session and reads the key. */
  readonly scopeLockStatement;

  /** PostgreSQL, on the session that took them: releases the locks of these keys (`scope\nkey` each). */
  unlockStatement(names: readonly string[]) {
    return { name: 'hp_unlock_keys', text: UNLOCK_SQL, values: [names] };
  }

  /** SQLite: the token's owner with the key as stored in the token's scope; no row: the token does not authenticate. */
  async withToken(hash: string, key: string): Promise<TokenLockRow[]> {
    return (await this.tokenKeyRead.all(hash, key)) as unknown as TokenLockRow[];
  }

  find(scope: string, key: string): Promise<KeyRecord | undefined> {
    return this.findKey.first(scope, key);
  }

  /**
   * Stores keys with their answers in one statement (keys held until they answered,
   * src/http/idempotency.ts), each unless its key is stored, answered and not yet expired; answers
   * the ones not stored.
   */
  async stored(keys: readonly (KeyClaim & KeyAnswer & { fingerprint: string; created_at: string; expires_at: string })[]): Promise<KeyClaim[]> {
    // One row per key (PostgreSQL's upsert may not change a row twice): of two answers to one key
    // (a key taken for abandoned in the process), the first is stored, the other reported not stored.
    const seen = new Set<string>();
    const once = keys.filter((k) => !seen.has(keyName(k)) && seen.add(keyName(k)));
    const { rows } = await this.db.executeQuery(this.storeKeys(once.map((k) => [k.scope, k.key, k.fingerprint, k.claim, k.status, k.headers, k.body, k.created_at, k.expires_at])));
    const stored = new Set(rows.map((r) => String(r.claim)));
    return keys.filter((k) => !stored.has(k.claim));
  }

  /** Deletes the keys past their expiry; answers how many. */
  async purge(now: string): Promise<number> {
    const r = await this.db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
