// Conditional requests (API guide "Safe retries"; docs/decisions/0026-safe-retries.md): the ETag of
// one object, If-None-Match on its GET (304), If-Match and If-None-Match on the writes that change it
// (412 when it changed meanwhile), decided in the order of RFC 9110 §13.2.2. The tag is strong: a
// digest of the bytes of the object's resource object, as GET sends it.
import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Precondition } from '../db/locks.js';
import type { LinkBuilder, ResourceObject } from './document.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route decides If-Match and If-None-Match itself, on its object's ETag (updateRoute,
     * deleteRoute); on other writes the safe-retries plugin decides them (src/http/safe-retries.ts).
     */
    conditional?: boolean;
  }
}

/** One entity tag of a condition: `"…"` (strong) or `W/"…"` (weak); `tag` keeps the quotes. */
export interface EntityTag {
  weak: boolean;
  tag: string;
}

/** `*` (any current representation) or a list of tags. */
export type TagCondition = '*' | EntityTag[];

/** The conditions of a request that name entity tags. */
export interface Conditions {
  ifMatch?: TagCondition;
  ifNoneMatch?: TagCondition;
}

/** What a request's conditions decide: go on, 304 (a read whose tag the client holds), 412. */
export type Outcome = 'proceed' | 'not-modified' | 'failed';

// etagc of RFC 9110 §8.8.3: visible ASCII but DQUOTE, and obs-text (Node reads header bytes as latin1).
const OPAQUE = /^"[\x21\x23-\x7e\x80-\xff]*"/;

/**
 * An If-Match or If-None-Match field value: `*`, or a comma-separated list of entity tags (empty
 * elements allowed, as in every list field); null when it is neither.
 * `parseTagCondition('W/"a", "b"')` → `[{ weak: true, tag: '"a"' }, { weak: false, tag: '"b"' }]`.
 */
export function parseTagCondition(value: string): TagCondition | null {
  const v = value.trim();
  if (v === '*') return '*';
  const tags: EntityTag[] = [];
  let rest = v;
  for (;;) {
    rest = rest.replace(/^[ \t]*(,[ \t]*)*/, '');
    if (rest === '') break;
    const weak = rest.startsWith('W/');
    const m = OPAQUE.exec(weak ? rest.slice(2) : rest);
    if (!m) return null;
    tags.push({ weak, tag: m[0] });
    rest = (weak ? rest.slice(2) : rest).slice(m[0].length).replace(/^[ \t]*/, '');
    if (rest !== '' && !rest.startsWith(',')) return null;
  }
  return tags.length ? tags : null;
}

/** Whether `condition` holds for the current tag (`null`: the object exists but has no tag): strong or weak comparison (RFC 9110 §8.8.3.2). */
function matches(condition: TagCondition, current: string | null, strong: boolean): boolean {
  if (condition === '*') return true;
  if (current === null) return false;
  return condition.some((t) => t.tag === current && !(strong && t.weak));
}

/**
 * The outcome of `c` for an object whose strong tag is `current` (null: an object without a tag),
 * by RFC 9110 §13.2.2: If-Match first (strong comparison), then If-None-Match (weak comparison),
 * whose match answers 304 to a read and 412 to a write.
 * `evaluate({ ifNoneMatch: [{ weak: true, tag: '"x"' }] }, '"x"', true)` → `'not-modified'`.
 */
export function evaluate(c: Conditions, current: string | null, read: boolean): Outcome {
  if (c.ifMatch !== undefined && !matches(c.ifMatch, current, true)) return 'failed';
  if (c.ifNoneMatch !== undefined && matches(c.ifNoneMatch, current, false)) return read ? 'not-modified' : 'failed';
  return 'proceed';
}

const HEADERS = [
  ['if-match', 'If-Match'],
  ['if-none-match', 'If-None-Match'],
] as const;

/**
 * The conditions a request names, or null when it names none (two header lookups: a request
 * without conditions costs nothing more); 400 `invalid_header` for a value that is no condition.
 */
export function conditionsOf(request: FastifyRequest): Conditions | null {
  let out: Conditions | null = null;
  for (const [name, display] of HEADERS) {
    const raw = request.headers[name];
    if (raw === undefined) continue;
    const parsed = parseTagCondition(String(raw));
    if (parsed === null) {
      throw new AppError('invalid_header', `${display} must be * or a list of entity tags such as "xyz" or W/"xyz".`, { header: display });
    }
    out ??= {};
    out[name === 'if-match' ? 'ifMatch' : 'ifNoneMatch'] = parsed;
  }
  return out;
}

/** The strong ETag of a representation whose resource object serializes to `json`. */
export const entityTag = (json: string) => `"${crypto.hash('sha256', json, 'base64url').slice(0, 22)}"`;

/** The ETag an object's resource object has (what GET answers for it). */
export const tagOf = (resource: ResourceObject) => entityTag(JSON.stringify(resource));

export const preconditionFailed = () =>
  new AppError('precondition_failed', 'The object has changed since the entity tag you sent: read it again (its ETag) and decide anew.');

/**
 * The check a conditional PATCH or DELETE hands its service, which runs it inside its transaction
 * on the object as it is then (src/db/locks.ts): 412 unless the conditions hold for the tag GET
 * would answer. Undefined when the request names no condition.
 * `const p = preconditionOf(request, toResource); await service.update(actor, id, attrs, p)`.
 */
export function preconditionOf<R>(request: FastifyRequest, toResource: (row: R) => ResourceObject): Precondition<R> | undefined {
  const c = conditionsOf(request);
  if (!c) return undefined;
  const check = ((row: R) => {
    check.checked = true;
    if (evaluate(c, tagOf(toResource(row)), false) !== 'proceed') throw preconditionFailed();
  }) as Precondition<R>;
  check.checked = false;
  return check;
}

/**
 * After a conditional write's service returned: it must have run the check (a service that
 * ignores it would have written unconditionally; fail loudly, never silently).
 */
export function assertChecked(p: Precondition<never> | undefined): void {
  if (p && !p.checked) throw new Error('a conditional write whose service did not check its precondition');
}

/**
 * Sends the single-resource document of `data` (data first, then links.self of the request, as
 * JSON.stringify would write it) with the ETag of `tagged` (default: `data` itself, serialized
 * once for both). `conditional`: a read, whose conditions are decided against that tag (304 with
 * the tag and no body, or 412).
 */
export function sendTagged(
  request: FastifyRequest,
  reply: FastifyReply,
  links: LinkBuilder,
  data: ResourceObject,
  o: { tagged?: ResourceObject; conditional?: boolean } = {},
): string | FastifyReply {
  const json = JSON.stringify(data);
  const etag = o.tagged === undefined ? entityTag(json) : tagOf(o.tagged);
  reply.header('etag', etag);
  if (o.conditional) {
    const c = conditionsOf(request);
    const outcome = c ? evaluate(c, etag, true) : 'proceed';
    if (outcome === 'failed') throw preconditionFailed();
    if (outcome === 'not-modified') return reply.code(304).send();
  }
  // A JSON type, which the negotiation's onSend hook replaces by the negotiated one (src/jsonapi/plugin.ts).
  reply.type('application/json');
  return `{"data":${json},"links":{"self":${JSON.stringify(links.request(request.url))}}}`;
}
