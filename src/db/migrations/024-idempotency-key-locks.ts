// PostgreSQL: an idempotency key in flight is a session advisory lock, not a row (docs/decisions/
// 0026-safe-retries.md "PostgreSQL: the key in flight is a session lock"). `hostplane_claim_key`
// takes the key's lock for the calling session and then reads the key's row: a VOLATILE function,
// so its read has a snapshot of its own, taken after the lock — an answer stored and released by
// another instance just before is seen (the calling statement's snapshot, taken before the lock,
// might miss it). It answers one row: `locked`, and the stored key's columns (null without one).
// The lock's name is 'hostplane idempotency <schema> <scope>' || E'\n' || '<key>' (KEY_LOCK_NAME in
// src/http/idempotency.repository.ts, which releases it). SQLite: nothing (one API process).
import { sql, type Kysely } from 'kysely';
import type { Engine } from '../dialect.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  if (engine !== 'postgres') return;
  await sql`
    create function hostplane_claim_key(p_scope text, p_key text)
    returns table (locked boolean, fingerprint text, created_at text, expires_at text, status integer, headers text, body text)
    language plpgsql volatile as $$
    begin
      locked := pg_try_advisory_lock(hashtextextended('hostplane idempotency ' || current_schema() || ' ' || p_scope || E'\\n' || p_key, 0));
      select k.fingerprint, k.created_at, k.expires_at, k.status, k.headers, k.body
        into fingerprint, created_at, expires_at, status, headers, body
        from idempotency_keys k where k.scope = p_scope and k.idempotency_key = p_key;
      return next;
    end $$`.execute(db);
}
