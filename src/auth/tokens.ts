// API tokens (API guide "Authentication"): random, prefixed `hp_` for secret scanners, stored as
// SHA-256.
import crypto from 'node:crypto';
import { randomAlnum } from '../security/password-generator.js';

export const TOKEN_PREFIX = 'hp_';

/** A new token: `hp_` + 40 base62 characters (~238 bits). */
export const generateToken = (): string => TOKEN_PREFIX + randomAlnum(40);

/**
 * Tokens carry ~238 bits of entropy, so a fast hash is enough (no brute force is possible). Once per
 * request: the one-shot crypto.hash (Node ≥ 20.12) costs a third of a Hash object.
 */
export const hashToken = (token: string) => crypto.hash('sha256', token, 'hex');

/** What listings show of a token: enough to recognise it, too little to use it. */
export const tokenPrefix = (token: string) => token.slice(0, TOKEN_PREFIX.length + 6);
