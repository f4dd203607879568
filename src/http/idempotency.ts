// Idempotency-Key on the API's writes (API guide "Safe retries"; docs/decisions/0026-safe-retries.md):
// after authentication the key is claimed in the store, in one statement; the first answer is stored
// before it is sent, and a repeat gets exactly it — from any instance, after a restart — without the
// write running again. A repeat with another request answers 422, one while the first still runs 409.
// A request without the header costs one header lookup, no statement.
import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Store } from '../db/index.js';
import { AppError } from '../errors.js';
import { originForm } from '../jsonapi/document.js';
import { keyScope, parseIdempotencyKey, requestFingerprint } from './idempotency-key.js';
import { IdempotencyRepository, type KeyClaim, type KeyRecord } from './idempotency.repository.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The key this request holds, whose answer onSend stores; null without one (or on a replay). */
    idempotencyClaim: KeyClaim | null;
  }
}

/**
 * A first request that has not answered after this long is taken for abandoned (its instance died):
 * a repeat then runs anew. Longer than any request runs (a PATCH waits at most 15 s).
 */
export const ABANDONED_AFTER_MS = 60_000;

/** Headers that describe the exchange, not the answer: a replay gets its own. */
const NOT_STORED = /^(x-request-id|content-length|date|connection|keep-alive|transfer-encoding|retry-after|ratelimit-.*)$/i;

const inUse = () =>
  new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being answered; repeat it once that one has its answer.', { header: 'Idempotency-Key' });
const reused = () =>
  new AppError('idempotency_key_reused', 'This Idempotency-Key was used for another request (method, path or body); use a new key for a new request.', { header: 'Idempotency-Key' });
const malformed = () =>
  new AppError('invalid_header', 'Idempotency-Key must be 1 to 255 printable ASCII characters: a quoted string ("…") or a token without spaces.', { header: 'Idempotency-Key' });

/** The hooks a write route gets (src/http/safe-retries.ts): `preValidation` claims or replays, `onSend` stores. */
export function idempotencyHooks(store: Store, o: { ttlMs: number; abandonedAfterMs?: number }) {
  const repo = new IdempotencyRepository(store.db);
  const abandonedAfterMs = o.abandonedAfterMs ?? ABANDONED_AFTER_MS;

  /** Claims the key for `request`; answers what it holds when a first request has answered it. */
  async function claimOrFind(request: FastifyRequest, raw: string): Promise<KeyRecord | null> {
    const key = parseIdempotencyKey(raw);
    if (key === null) throw malformed();
    const scope = keyScope(request.actor!);
    const fingerprint = requestFingerprint(request.method, originForm(request.url), request.body);
    // A key freed or purged between the claim and the read is claimed again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const claim: KeyClaim = { scope, key, claim: crypto.randomUUID() };
      const now = Date.now();
      const at = { now: new Date(now).toISOString(), expiresAt: new Date(now + o.ttlMs).toISOString(), abandonedBefore: new Date(now - abandonedAfterMs).toISOString() };
      if (await repo.claim({ ...claim, fingerprint }, at)) {
        request.idempotencyClaim = claim;
        return null;
      }
      const found = await repo.find(scope, key);
      if (!found) continue;
      if (found.fingerprint !== fingerprint) throw reused();
      if (found.status === null) throw inUse();
      return found;
    }
    throw inUse();
  }

  /** Stores the answer for the key's repeats, or frees the key after a 5xx (the draft lets a client retry then). */
  async function keep(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<void> {
    const claim = request.idempotencyClaim!;
    request.idempotencyClaim = null;
    const body = payload === undefined || payload === null ? null : typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    if (reply.statusCode >= 500 || body === undefined) return repo.release(claim);
    const headers = Object.fromEntries(Object.entries(reply.getHeaders()).filter(([name]) => !NOT_STORED.test(name)));
    if (!(await repo.answer(claim, { status: reply.statusCode, headers: JSON.stringify(headers), body }))) {
      request.log.warn({ scope: claim.scope }, 'idempotency key was taken over before its first request answered; that answer is not kept');
    }
  }

  return {
    preValidation(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
      const raw = request.headers['idempotency-key'];
      if (raw === undefined || !request.actor) return done();
      claimOrFind(request, String(raw)).then((found) => (found ? replay(request, reply, found) : done()), done);
    },
    onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload: unknown) => void) {
      if (!request.idempotencyClaim) return done(null, payload);
      // The answer goes out whether or not it could be stored (a repeat then finds the key abandoned later).
      keep(request, reply, payload).then(
        () => done(null, payload),
        (err: unknown) => {
          request.log.warn({ err }, 'storing the answer of an idempotency key failed');
          done(null, payload);
        },
      );
    },
  };
}

/** Sends the stored answer as it was: status, headers, body (the negotiation's onSend sets the content type). */
function replay(request: FastifyRequest, reply: FastifyReply, found: KeyRecord): void {
  const headers = JSON.parse(found.headers ?? '{}') as Record<string, string | string[] | number>;
  // No handler runs, so src/resources/accepted.ts does not note the job: the audit trail takes it
  // from the stored 202's Content-Location (API guide "Audit events").
  request.queueJobId = jobNamedBy(headers['content-location']);
  reply.code(found.status!);
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  reply.send(found.body ?? undefined);
}

/** The job a stored 202 names: its Content-Location is `<base>/queue-jobs/<id>` (src/resources/accepted.ts); else null. */
function jobNamedBy(contentLocation: unknown): number | null {
  const m = typeof contentLocation === 'string' ? /\/queue-jobs\/([0-9]+)$/.exec(contentLocation) : null;
  return m ? Number(m[1]) : null;
}
