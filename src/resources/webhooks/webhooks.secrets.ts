// The signing secrets of webhooks (API guide "Webhooks"; docs/decisions/0027-webhooks.md): made as
// Standard Webhooks does (`whsec_` + base64), shown once, kept sealed (src/security/secret-box.ts)
// and opened only to sign a delivery.
import crypto from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** A new secret: `whsec_` + base64 of 32 random bytes. */
export const generateSecret = (): string => SECRET_PREFIX + crypto.randomBytes(32).toString('base64');

/**
 * The Standard Webhooks signature of one delivery: `v1,` + base64 of HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the secret's bytes (after `whsec_`).
 * `sign('whsec_…', 'msg_2b…', 1767225600, '{"type":…}')` → `v1,K5oZ…=`.
 */
export function sign(secret: string, id: string, timestampS: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${crypto.createHmac('sha256', key).update(`${id}.${timestampS}.${body}`).digest('base64')}`;
}

