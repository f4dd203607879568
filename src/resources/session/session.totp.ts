// Two-factor login codes (API guide "Panel sessions (extension)"; docs/decisions/0030-panel-sessions.md):
// TOTP as RFC 6238 defines it with the parameters every authenticator app knows (HMAC-SHA-1, 6
// digits, 30-second steps), a step either side accepted for clock drift; and one-time recovery
// codes `xxxxx-xxxxx`. Pure: no I/O, no clock of its own.
import crypto from 'node:crypto';

export const TOTP = { digits: 6, periodS: 30, window: 1, issuer: 'hostplane' } as const;
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding: `base32(Buffer.from('foo'))` → `MZXW6`. */
export function base32(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** The bytes of a base32 text (as base32 writes it). */
export function fromBase32(text: string): Buffer {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of text) {
    value = (value << 5) | BASE32.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new secret: 20 random bytes (160 bits, RFC 4226's recommendation), in base32. */
export const newTotpSecret = (): string => base32(crypto.randomBytes(20));

/** The time step of `ms` since the epoch. */
export const stepAt = (ms: number): number => Math.floor(ms / 1000 / TOTP.periodS);

/** The code of one time step (RFC 4226 HOTP with the step as counter): `totpCode('GEZD…', 1)` → `'287082'`. */
export function totpCode(secret: string, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = crypto.createHmac('sha1', fromBase32(secret)).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const n = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** TOTP.digits;
  return String(n).padStart(TOTP.digits, '0');
}

/** The step within the window around `nowMs` whose code `code` is, or null (compared in constant time). */
export function matchingStep(secret: string, code: string, nowMs: number): number | null {
  if (!/^[0-9]{6}$/.test(code)) return null;
  const now = stepAt(nowMs);
  let found: number | null = null;
  for (let step = now - TOTP.window; step <= now + TOTP.window; step++) {
    if (crypto.timingSafeEqual(Buffer.from(totpCode(secret, step)), Buffer.from(code)) && found === null) found = step;
  }
  return found;
}

/** What authenticator apps read from the QR code: `otpauth://totp/hostplane:<email>?secret=…&issuer=hostplane&algorithm=SHA1&digits=6&period=30`. */
export const otpauthUri = (email: string, secret: string): string =>
  `otpauth://totp/${TOTP.issuer}:${encodeURIComponent(email)}?secret=${secret}&issuer=${TOTP.issuer}&algorithm=SHA1&digits=${TOTP.digits}&period=${TOTP.periodS}`;

// Letters and digits a person reads back without doubt (no 0/o, 1/l/i).
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
export const RECOVERY_CODES = 10;
export const RECOVERY_CODE = /^[a-z2-9]{5}-[a-z2-9]{5}$/;

/** Ten new recovery codes `xxxxx-xxxxx` (~49 bits each). */
export function newRecoveryCodes(): string[] {
  const one = () => Array.from({ length: 10 }, () => RECOVERY_ALPHABET[crypto.randomInt(RECOVERY_ALPHABET.length)]).join('');
  return Array.from({ length: RECOVERY_CODES }, () => one()).map((c) => `${c.slice(0, 5)}-${c.slice(5)}`);
}

/** A recovery code as typed (any case, spaces around) in its stored form, or null when it cannot be one. */
export function recoveryCodeOf(given: string): string | null {
  const code = given.trim().toLowerCase();
  return RECOVERY_CODE.test(code) ? code : null;
}
