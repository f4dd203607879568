// The Idempotency-Key request header and what a key is bound to (API guide "Safe retries";
// docs/decisions/0026-safe-retries.md): its syntax, the fingerprint of the request it was first
// sent with, and whose key it is. Pure functions.
import crypto from 'node:crypto';
import type { Actor } from '../auth/actor.js';

/** The longest key accepted, in characters. */
export const MAX_KEY_LENGTH = 255;

// A Structured Fields string (RFC 8941 §3.3.3): printable ASCII, `\` escaping only `"` and `\`.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;
// A bare token: the characters of a Structured Fields token, also as its first one (UUIDs begin
// with a digit, and clients send them unquoted).
const BARE = /^[A-Za-z0-9!#$%&'*+.^_`|~:/-]+$/;

/**
 * The key an Idempotency-Key field value names: a quoted string (the header's syntax: `"…"`, with
 * `\"` and `\\`) or a bare token, of 1 to MAX_KEY_LENGTH characters once unquoted; null for
 * anything else (parameters, lists, control or non-ASCII characters, empty).
 * `parseIdempotencyKey('"a\\"b"')` → `'a"b'`; `parseIdempotencyKey('8e03978e-40d5')` → `'8e03978e-40d5'`.
 */
export function parseIdempotencyKey(value: string): string | null {
  const v = value.replace(/^[ \t]+|[ \t]+$/g, '');
  const quoted = SF_STRING.exec(v);
  const key = quoted ? quoted[1].replace(/\\(["\\])/g, '$1') : BARE.test(v) ? v : null;
  return key !== null && key.length >= 1 && key.length <= MAX_KEY_LENGTH ? key : null;
}

/**
 * What makes two requests "the same request" for a key: the method, the path and query as sent
 * (runs of slashes as one, as the router reads them), and the body's JSON (white space aside).
 * Two requests are the same when their texts are; the store keeps the text's fingerprint.
 * `requestText('POST', '/dns-records', { data: … })` → `'POST\n/dns-records\n{"data":…}'`.
 */
export function requestText(method: string, path: string, body: unknown): string {
  return `${method}\n${path.replace(/\/{2,}/g, '/')}\n${body === undefined ? '' : JSON.stringify(body)}`;
}

/** The fingerprint a key is stored with: SHA-256 of the request's text, 43 base64url characters. */
export const textFingerprint = (text: string): string => crypto.hash('sha256', text, 'base64url');


/**
 * Whose keys a request uses: its API token's, the contact's for a panel session (API guide "Panel
 * sessions (extension)"), or the customer's for the reseller's legacy password.
 */
export const keyScope = (actor: Actor): string =>
  actor.tokenId !== null ? tokenKeyScope(actor.tokenId) : actor.contactId !== null ? `contact:${actor.contactId}` : `customer:${actor.customerId}`;

/** `scope\nkey`: a key's name in this process (its lock's name on PostgreSQL ends with it). */
export const keyName = (k: { scope: string; key: string }): string => `${k.scope}\n${k.key}`;

/** The scope of an API token's keys (PostgreSQL's key-lock statement builds it in SQL alike: 'token:' || id). */
export const tokenKeyScope = (tokenId: number): string => `token:${tokenId}`;
