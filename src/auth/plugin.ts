// Authenticates every API route before its body is read (API guide "Authentication"); routes opt
// into the legacy reseller password with `config: { auth: 'token-or-legacy' }`.
//
// Hot reads check the token in their own statement (`config: { tokenRead }`, docs/decisions/
// 0012-request-path.md): the hook runs one statement that finds the token's owner and what the
// read finds in the owner's scope, in one snapshot. The token is checked against the store on
// every request as before — a revoked token is refused by the first request after the revoke's
// commit, on every instance — but costs no round trip of its own.
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { actorResolver, invalidToken, ownerActor, tokenOf, type Actor, type AuthMode } from './actor.js';
import type { OwnerColumns } from './auth.repository.js';
import { hashToken } from './tokens.js';
import { parseNumericId } from '../db/ids.js';
import { AuthRepository } from './auth.repository.js';
import { routeRefusal } from './token-scope.js';
import { sessionCookieOf, sessionResolver, sessionUnauthorized, type PanelSession } from './panel-session.js';

/**
 * A read that checks the request's token in its own statement: the statement selects the owner's
 * columns (OWNER_COLUMNS) joined to the rows the owner may see, and answers no row at all when the
 * token does not authenticate (src/auth/auth.repository.ts `tokenOwner`).
 */
export interface TokenRead {
  /**
   * The read's arguments from the routed request (its params, before validation), or null when
   * this request reads otherwise (a name or id no object can have): its token is then looked up
   * alone, as on every other route.
   */
  args(request: FastifyRequest): unknown[] | null;
  /** Runs the statement: `rows` as the store answers them, each with the owner's columns. */
  run(tokenHash: string, ...args: unknown[]): Promise<OwnerColumns[]>;
  /** The column that is null in the one row of an owner who sees nothing (a left join without match). */
  key: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor | null;
    /** The panel session that authenticated the request (API guide "Panel sessions (extension)"), else null. */
    panelSession: PanelSession | null;
    /** What the route's TokenRead found, and with which arguments (readWithToken). */
    tokenReadResult: { args: unknown[]; rows: unknown[] } | null;
  }
  interface FastifyContextConfig {
    auth?: AuthMode;
    tokenRead?: TokenRead;
  }
}

export function registerAuth(app: FastifyInstance, db: Kysely<Database>) {
  app.decorateRequest('actor', null);
  app.decorateRequest('tokenReadResult', null);
  app.decorateRequest('panelSession', null);
  const resolveActor = actorResolver(db);
  const repo = new AuthRepository(db);
  const used = usageRecorder(repo, app.log);
  const resolveSession = sessionResolver(repo, (err) => app.log.warn({ err }, "could not note the panel session's last use"));
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    // Unknown paths answer 404 without authentication; operational routes are open.
    if (config?.infra || !request.routeOptions.url || config?.auth === 'none') return;
    // The panel's cookie stands for the contact's token; an Authorization header wins over it.
    const cookie = request.headers.authorization === undefined ? sessionCookieOf(request.headers.cookie) : undefined;
    if (cookie !== undefined) {
      const { actor, session } = await resolveSession(cookie, request);
      request.actor = actor;
      request.panelSession = session;
      return;
    }
    if (config?.auth === 'session' && request.headers.authorization === undefined) throw sessionUnauthorized('No panel session; log in with POST /session.', false);
    const read = config?.tokenRead;
    const args = read ? read.args(request) : null;
    const token = args ? tokenOf(request.headers.authorization) : undefined;
    let actor: Actor;
    if (read && args && token !== undefined) {
      const rows = await read.run(hashToken(token), ...args);
      if (!rows.length) throw invalidToken();
      // Kept before the token's limits are judged: a read that also took something (a key's lock
      // with the token, src/http/idempotency.ts) gives it back when the request is refused.
      request.tokenReadResult = { args, rows: (rows as unknown as Record<string, unknown>[]).filter((r) => r[read.key] !== null) };
      actor = ownerActor(rows[0], request.ip);
    } else {
      actor = await resolveActor(request.headers.authorization, config?.auth ?? 'token', request.ip);
    }
    request.actor = actor;
    // Awaited only when it writes: an `await` of nothing would still cost every request a turn.
    const noting = actor.tokenId === null ? undefined : used(actor.tokenId);
    if (noting) await noting;
    // A scoped token's route check, before the body is read: a refused write changes nothing.
    const refusal = actor.scope && routeRefusal(actor.scope, request.method, request.routeOptions.url);
    if (refusal) throw refusal;
  });
}

const MINUTE_MS = 60_000;

/**
 * Notes a token's last use (`admin token list`) at most once a minute per token and process: the
 * one request a minute that notes it waits for one small write, every other request issues no
 * statement for it (docs/decisions/0028-token-scopes.md). A failed write is logged, never answered.
 */
function usageRecorder(repo: AuthRepository, log: FastifyBaseLogger) {
  const noted = new Map<number, number>();
  return (tokenId: number): Promise<void> | undefined => {
    const now = Date.now();
    const last = noted.get(tokenId);
    if (last !== undefined && now - last < MINUTE_MS) return undefined;
    // Bounded: forgetting only means one more write for a token.
    if (noted.size >= 10_000) noted.clear();
    noted.set(tokenId, now);
    return repo
      .touch(tokenId, new Date(now).toISOString(), new Date(now - MINUTE_MS).toISOString())
      .catch((err: unknown) => log.warn({ err, tokenId }, "could not note the token's last use"));
  };
}

/**
 * The TokenRead of `GET /<segment>/:id` for a numeric id: `run(hash, id)` for an id that can exist;
 * for one that cannot, the token is looked up alone and the route answers 404.
 */
export function idTokenRead(run: (hash: string, id: number) => Promise<OwnerColumns[]>): TokenRead {
  return {
    key: 'id',
    args: (request) => {
      const id = parseNumericId((request.params as { id?: string }).id ?? '');
      return id === null ? null : [id];
    },
    run: (hash, id) => run(hash, id as number),
  };
}

/** The authenticated caller of an API route (the hook guarantees it is set). */
export function actorOf(request: { actor: Actor | null }): Actor {
  if (!request.actor) throw new Error('route without authentication');
  return request.actor;
}

/**
 * The rows the route's TokenRead found for exactly these arguments (possibly none), or undefined
 * when it did not run for them: `readWithToken<DomainRow>(request, ace) ?? await repo.findVisible(actor, ace)`.
 */
export function readWithToken<R>(request: FastifyRequest, ...args: unknown[]): R[] | undefined {
  const r = request.tokenReadResult;
  if (!r || r.args.length !== args.length || r.args.some((a, i) => a !== args[i])) return undefined;
  return r.rows as R[];
}
