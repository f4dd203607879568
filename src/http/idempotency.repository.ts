// All SQL of idempotency keys (migration 017; API guide "Safe retries"). Times are ISO strings of
// the caller's clock (src/db/time.ts), compared as text like every timestamp of the store.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { sql } from 'kysely';
import type { OnConflictBuilder } from 'kysely';
import { commitUnflushed, jsonRowsInsert, type JsonRowsColumn } from '../db/dialect.js';
import { precompiled, precompiledWrite } from '../db/precompiled.js';
import { OWNER_COLUMNS, tokenOwner, type OwnerColumns } from '../auth/auth.repository.js';

/**
 * The fingerprint of a key claimed before its request's body was read (claimWithToken): its
 * answer brings the real one; until then a repeat cannot be told from another request.
 */
export const PENDING_FINGERPRINT = '';

/** A key and the request that holds it. */
export interface KeyClaim {
  scope: string;
  key: string;
  /** Random per request: only the holder stores its answer or frees the key. */
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

/** The row of claimWithToken: the token's owner, and `claimed` when this request took the key. */
export interface TokenClaimRow extends OwnerColumns {
  claimed: string | null;
}

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

/**
 * A claim's ON CONFLICT: the key is taken over when it expired, or when its first request never
 * answered and was taken before `abandonedBefore`; else the claim takes nothing.
 */
function takeOverStale(oc: OnConflictBuilder<Database, 'idempotency_keys'>, now: string, abandonedBefore: string) {
  return oc
    .columns(['scope', 'idempotency_key'])
    .doUpdateSet((eb) => ({
      fingerprint: eb.ref('excluded.fingerprint'),
      claim: eb.ref('excluded.claim'),
      status: null,
      headers: null,
      body: null,
      created_at: eb.ref('excluded.created_at'),
      expires_at: eb.ref('excluded.expires_at'),
    }))
    .where((eb) =>
      eb.or([
        eb('idempotency_keys.expires_at', '<=', now),
        eb.and([eb('idempotency_keys.status', 'is', null), eb('idempotency_keys.created_at', '<=', abandonedBefore)]),
      ]),
    );
}

export class IdempotencyRepository {
  // Built once per repository (src/db/precompiled.ts): building the claim's ON CONFLICT costs more than running it.
  private readonly claimKey;
  private readonly answerKeys;
  private readonly storeKeys;
  private readonly findKey;
  private readonly claimWithTokenKey;

  constructor(private readonly db: Kysely<Database>) {
    this.claimKey = precompiledWrite(db, (scope: string, key: string, fingerprint: string, claim: string, now: string, expiresAt: string, abandonedBefore: string) =>
      db
        .insertInto('idempotency_keys')
        .values({ scope, idempotency_key: key, fingerprint, claim, status: null, headers: null, body: null, created_at: now, expires_at: expiresAt })
        .onConflict((oc) => takeOverStale(oc, now, abandonedBefore))
        // Unflushed: the write it guards commits after it, synchronously, which flushes it too.
        .returning(['claim', commitUnflushed(db).as('unflushed')]),
    );
    // The token's owner and the claim in one statement (PostgreSQL: a data-modifying WITH).
    this.claimWithTokenKey = precompiledWrite(db, (hash: string, key: string, claim: string, now: string, expiresAt: string, abandonedBefore: string) =>
      db
        .with('claimed', (w) =>
          w
            .insertInto('idempotency_keys')
            .columns(['scope', 'idempotency_key', 'fingerprint', 'claim', 'created_at', 'expires_at'])
            .expression(
              db.selectFrom(tokenOwner(db, hash)).select([
                // tokenKeyScope (src/http/idempotency-key.ts), in SQL.
                sql<string>`'token:' || owner.token_id`.as('scope'),
                sql<string>`${key}::text`.as('idempotency_key'),
                sql<string>`${PENDING_FINGERPRINT}::text`.as('fingerprint'),
                sql<string>`${claim}::text`.as('claim'),
                sql<string>`${now}::text`.as('created_at'),
                sql<string>`${expiresAt}::text`.as('expires_at'),
              ]),
            )
            .onConflict((oc) => takeOverStale(oc, now, abandonedBefore))
            .returning(['claim', commitUnflushed(db).as('unflushed')]),
        )
        .selectFrom(tokenOwner(db, hash))
        .select([...OWNER_COLUMNS, sql<string | null>`(select claim from claimed)`.as('claimed')]),
    );
    // Unflushed (docs/decisions/0026): lost only if PostgreSQL itself crashes within a second; the
    // key then counts as abandoned, as after an instance that died before storing its answer.
    this.findKey = precompiled(db, (scope: string, key: string) =>
      db.selectFrom('idempotency_keys').select(['fingerprint', 'created_at', 'expires_at', 'status', 'headers', 'body']).where('scope', '=', scope).where('idempotency_key', '=', key),
      { once: true },
    );
    // A key and its answer together, over one past its expiry or never answered (a key held in the process, `stored`).
    this.storeKeys = jsonRowsInsert(db, 'idempotency_keys', STORED_COLUMNS, {
      onConflict: sql`(scope, idempotency_key) do update set ${sql.join(STORED_COLUMNS.slice(2).map(([c]) => sql`${sql.id(c)} = excluded.${sql.id(c)}`))} where idempotency_keys.expires_at <= excluded.created_at or idempotency_keys.status is null`,
      returning: ['claim'],
      unflushed: true,
    });
    // An answer goes to its key only while the request's claim holds it. An upsert, not an UPDATE
    // joined to the batch: its conflict always finds the row through the key's index, where the
    // planner chose to hash the whole table while it was new (not yet analyzed). The fingerprint
    // too: a key claimed with the token had none yet.
    this.answerKeys = jsonRowsInsert(db, 'idempotency_keys', STORED_COLUMNS, {
      onConflict: sql`(scope, idempotency_key) do update set status = excluded.status, headers = excluded.headers, body = excluded.body, fingerprint = excluded.fingerprint where idempotency_keys.claim = excluded.claim`,
      returning: ['claim'],
      unflushed: true,
    });
  }

  /**
   * Takes the key for a request, in one statement: a key nobody used, one past `expires_at`, or
   * one whose first request never answered and was taken before `abandonedBefore`. False when
   * another request holds it or has answered it (read that with `find`).
   */
  async claim(c: KeyClaim & { fingerprint: string }, at: { now: string; expiresAt: string; abandonedBefore: string }): Promise<boolean> {
    return (await this.claimKey.all(c.scope, c.key, c.fingerprint, c.claim, at.now, at.expiresAt, at.abandonedBefore)).length > 0;
  }

  /**
   * PostgreSQL: checks the token and claims the key for it in one statement, as `claim` does (scope
   * `token:<id>`, the fingerprint PENDING_FINGERPRINT until the answer). No row: the token does not
   * authenticate, and nothing was claimed.
   */
  claimWithToken(hash: string, c: { key: string; claim: string }, at: { now: string; expiresAt: string; abandonedBefore: string }): Promise<TokenClaimRow[]> {
    return this.claimWithTokenKey.all(hash, c.key, c.claim, at.now, at.expiresAt, at.abandonedBefore) as Promise<TokenClaimRow[]>;
  }

  find(scope: string, key: string): Promise<KeyRecord | undefined> {
    return this.findKey.first(scope, key);
  }

  /**
   * Stores keys with their answers in one statement (keys held in the process until they answered,
   * src/http/idempotency.ts), each unless its key is stored and not yet expired; answers the ones
   * not stored.
   */
  async stored(keys: readonly (KeyClaim & KeyAnswer & { fingerprint: string; created_at: string; expires_at: string })[]): Promise<KeyClaim[]> {
    const { rows } = await this.db.executeQuery(this.storeKeys(keys.map((k) => [k.scope, k.key, k.fingerprint, k.claim, k.status, k.headers, k.body, k.created_at, k.expires_at])));
    const stored = new Set(rows.map((r) => String(r.claim)));
    return keys.filter((k) => !stored.has(k.claim));
  }

  /**
   * Stores answers in one statement, each if its `claim` still holds the key; answers the claims
   * that no longer did (their keys were taken for abandoned meanwhile). A key no longer stored at
   * all (never so within the moment an answer waits for its batch) is stored anew, times from `at`.
   */
  async answer(answers: readonly (KeyClaim & KeyAnswer & { fingerprint: string })[], at: { now: string; expiresAt: string }): Promise<KeyClaim[]> {
    // One row per key (an upsert may not change a row twice): of two claims of one key, one was taken over.
    const byKey = new Map(answers.map((a) => [`${a.scope}\n${a.key}`, a]));
    const { rows } = await this.db.executeQuery(this.answerKeys([...byKey.values()].map((a) => [a.scope, a.key, a.fingerprint, a.claim, a.status, a.headers, a.body, at.now, at.expiresAt])));
    const stored = new Set(rows.map((r) => `${String(r.claim)}`));
    return answers.filter((a) => !stored.has(a.claim));
  }

  /** Frees the key (its request failed with a 5xx): the next request with it runs anew. */
  async release(c: KeyClaim): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('scope', '=', c.scope).where('idempotency_key', '=', c.key).where('claim', '=', c.claim).execute();
  }

  /** Deletes the keys past their expiry; answers how many. */
  async purge(now: string): Promise<number> {
    const r = await this.db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
