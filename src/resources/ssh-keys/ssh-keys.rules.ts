// What an SSH public key must be to be stored (API guide "SSH keys"): one key in OpenSSH's one-line
// form `<algorithm> <base64> [comment]`, of an algorithm we accept, whose blob really is such a key.
// Pure: property tests reach every rule (test/resources/ssh-keys/rules.test.ts).
//
// Accepted: ssh-ed25519; ecdsa-sha2-nistp256/384/521; ssh-rsa with a modulus of 3072 bits or more.
// Refused: everything else (ssh-dss, short RSA, certificates, FIDO `sk-` keys), a private key pasted
// by mistake (never echoed back), options or a command before the key, several keys, broken base64.
import crypto from 'node:crypto';

export const ACCEPTED_ALGORITHMS = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-rsa'] as const;
export type SshKeyAlgorithm = (typeof ACCEPTED_ALGORITHMS)[number];

/** The smallest RSA modulus accepted (NIST's floor after 2030, and OpenSSH's recommendation). */
export const RSA_MIN_BITS = 3072;
/** OpenSSH's own ceiling (SSHBUF_MAX_BIGNUM): a larger key could not log in anyway. */
export const RSA_MAX_BITS = 16384;
/** Longer than any accepted key with a generous comment. */
export const MAX_LINE = 8192;
export const MAX_COMMENT = 255;

/** A key that passed every rule. */
export interface ParsedKey {
  algorithm: SshKeyAlgorithm;
  /** The base64 of the blob, as sent (canonical). */
  base64: string;
  comment: string;
  /** `SHA256:…` exactly as `ssh-keygen -l` prints it. */
  fingerprint: string;
  /** RSA: the modulus's length; ECDSA: the curve's size; Ed25519: 256. */
  bits: number;
  /** What is stored and written to the key file: `<algorithm> <base64>[ <comment>]`. */
  line: string;
}

export type KeyCheck = { ok: true; key: ParsedKey } | { ok: false; detail: string };

const refuse = (detail: string): KeyCheck => ({ ok: false, detail });

const CURVES: Record<string, { curve: string; jwk: string; point: number; bits: number }> = {
  'ecdsa-sha2-nistp256': { curve: 'nistp256', jwk: 'P-256', point: 65, bits: 256 },
  'ecdsa-sha2-nistp384': { curve: 'nistp384', jwk: 'P-384', point: 97, bits: 384 },
  'ecdsa-sha2-nistp521': { curve: 'nistp521', jwk: 'P-521', point: 133, bits: 521 },
};

/** Algorithm names OpenSSH knows: what a line's first word is when it is a key (else it may be options). */
const KEY_TYPE = /^(ssh-[a-z0-9-]+|ecdsa-sha2-[a-z0-9-]+|sk-[a-z0-9-]+@openssh\.com|[a-z0-9-]+-cert-v0[0-9]@openssh\.com|rsa-sha2-(256|512))(@openssh\.com)?$/;

/** Why an algorithm OpenSSH knows is refused, for its detail. */
function refusedAlgorithm(alg: string): string {
  const accepted = 'Accepted: ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, and ssh-rsa of 3072 bits or more.';
  if (alg === 'ssh-dss') return `ssh-dss (DSA) keys are not accepted: OpenSSH no longer allows them. ${accepted}`;
  if (alg.startsWith('sk-')) return `${alg} keys (FIDO security keys) are not accepted yet. ${accepted}`;
  if (alg.includes('-cert-')) return `Certificates (${alg}) are not accepted; send the public key itself. ${accepted}`;
  return `${alg} keys are not accepted. ${accepted}`;
}

/** The SSH wire format's strings (RFC 4251 §5): uint32 length, then the bytes. */
class Reader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}
  string(): Buffer | null {
    if (this.at + 4 > this.buf.length) return null;
    const n = this.buf.readUInt32BE(this.at);
    if (this.at + 4 + n > this.buf.length) return null;
    const s = this.buf.subarray(this.at + 4, this.at + 4 + n);
    this.at += 4 + n;
    return s;
  }
  get done() {
    return this.at === this.buf.length;
  }
}

const b64url = (b: Buffer) => b.toString('base64url');

/** An mpint (RFC 4251 §5) as unsigned bytes without leading zeros; null when negative. */
function unsigned(mpint: Buffer): Buffer | null {
  if (mpint.length && mpint[0] & 0x80) return null;
  let i = 0;
  while (i < mpint.length && mpint[i] === 0) i++;
  return mpint.subarray(i);
}

const bitLength = (n: Buffer) => (n.length === 0 ? 0 : (n.length - 1) * 8 + (32 - Math.clz32(n[0])));

/** Whether node's crypto (OpenSSL) takes the key: the point is on its curve, the numbers make a key. */
function loads(jwk: crypto.JsonWebKey): boolean {
  try {
    crypto.createPublicKey({ key: jwk, format: 'jwk' });
    return true;
  } catch {
    return false;
  }
}

/** The blob's own checks: its type string equals `alg`, and the key inside is a valid one. Bits, or a detail. */
function checkBlob(alg: SshKeyAlgorithm, blob: Buffer): { bits: number } | { detail: string } {
  const broken = { detail: `The key data is not a valid ${alg} key (it may be cut off or altered).` };
  const r = new Reader(blob);
  const type = r.string();
  if (!type) return broken;
  if (type.toString('latin1') !== alg) {
    return { detail: `The key data is of type "${type.toString('latin1').replace(/[^\x20-\x7e]/g, '?').slice(0, 60)}", not ${alg} as the line says.` };
  }
  if (alg === 'ssh-ed25519') {
    const pk = r.string();
    if (!pk || pk.length !== 32 || !r.done || !loads({ kty: 'OKP', crv: 'Ed25519', x: b64url(pk) })) return broken;
    return { bits: 256 };
  }
  if (alg === 'ssh-rsa') {
    const e = r.string();
    const n = r.string();
    if (!e || !n || !r.done) return broken;
    const eu = unsigned(e);
    const nu = unsigned(n);
    if (!eu || !nu || eu.length === 0 || eu.length > 8 || !(eu[eu.length - 1] & 1)) return broken;
    const bits = bitLength(nu);
    if (bits < RSA_MIN_BITS) return { detail: `This RSA key has ${bits} bits; RSA keys need at least ${RSA_MIN_BITS} (ssh-keygen -t rsa -b 4096), or use ssh-ed25519.` };
    if (bits > RSA_MAX_BITS) return { detail: `This RSA key has ${bits} bits; OpenSSH takes at most ${RSA_MAX_BITS}.` };
    if (!loads({ kty: 'RSA', n: b64url(nu), e: b64url(eu) })) return broken;
    return { bits };
  }
  const c = CURVES[alg];
  const curve = r.string();
  const q = r.string();
  if (!curve || !q || !r.done) return broken;
  if (curve.toString('latin1') !== c.curve) return { detail: `The key data names curve "${curve.toString('latin1').replace(/[^\x20-\x7e]/g, '?').slice(0, 30)}", not ${c.curve} as ${alg} requires.` };
  // Only the uncompressed point form: what OpenSSH writes and reads.
  if (q.length !== c.point || q[0] !== 4) return broken;
  const half = (c.point - 1) / 2;
  if (!loads({ kty: 'EC', crv: c.jwk, x: b64url(q.subarray(1, 1 + half)), y: b64url(q.subarray(1 + half)) })) return broken;
  return { bits: c.bits };
}

/** `SHA256:` + the unpadded base64 of the blob's SHA-256, as `ssh-keygen -l` prints it. */
export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${crypto.createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** Whether the text is (part of) a private key: PEM/OpenSSH blocks, PuTTY files, or an OpenSSH private blob. */
function looksPrivate(text: string): boolean {
  if (/PRIVATE KEY-----/.test(text) || /PuTTY-User-Key-File/.test(text)) return true;
  // `openssh-key-v1\0` base64-encoded: the body of an OPENSSH PRIVATE KEY block without its armour.
  return /b3BlbnNzaC1rZXktdjE/.test(text);
}

const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Checks one public key as a customer pastes it; the detail of a refusal never repeats the text
 * (it may be a private key): `parsePublicKey('ssh-ed25519 AAAAC3… me@laptop')` → `{ ok: true, key }`.
 */
export function parsePublicKey(input: unknown): KeyCheck {
  if (typeof input !== 'string') return refuse('public_key must be a string: one line `<algorithm> <base64> [comment]`.');
  if (looksPrivate(input)) {
    return refuse('This is a private key. Never send it anywhere; send the public key (the .pub file, e.g. ~/.ssh/id_ed25519.pub) instead. It was not stored.');
  }
  // A final newline is how the .pub file ends; anything else on another line is another key.
  const text = input.replace(/^[ \t]+|[ \t]*(\r?\n)?$/g, '');
  if (text === '') return refuse('public_key is empty: send one line `<algorithm> <base64> [comment]`, e.g. the content of ~/.ssh/id_ed25519.pub.');
  if (/[\r\n]/.test(text)) return refuse('public_key holds several lines: send one key per request.');
  if (text.length > MAX_LINE) return refuse(`public_key is longer than ${MAX_LINE} characters.`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(text)) return refuse('public_key contains control characters.');
  const words = text.split(/[ \t]+/);
  const [alg, data] = words;
  if (!KEY_TYPE.test(alg)) {
    if (words.slice(1).some((w) => KEY_TYPE.test(w))) {
      return refuse('Options or a command before the key (e.g. command="…", no-pty, from="…") are not accepted: send only `<algorithm> <base64> [comment]`.');
    }
    return refuse('public_key is not an OpenSSH public key: one line `<algorithm> <base64> [comment]`, e.g. the content of ~/.ssh/id_ed25519.pub.');
  }
  if (!(ACCEPTED_ALGORITHMS as readonly string[]).includes(alg)) return refuse(refusedAlgorithm(alg));
  const algorithm = alg as SshKeyAlgorithm;
  if (data === undefined) return refuse(`The key data (base64) after ${algorithm} is missing.`);
  if (!CANONICAL_BASE64.test(data)) return refuse('The key data is not valid base64.');
  // Another whole key on the same line (two .pub files pasted without a newline): an algorithm
  // followed by base64 that starts as every key blob does (a length below 2^24: `AAAA`).
  const rest = words.slice(2);
  if (rest.some((w, i) => KEY_TYPE.test(w) && /^AAAA[A-Za-z0-9+/]{16,}={0,2}$/.test(rest[i + 1] ?? ''))) {
    return refuse('public_key holds several keys: send one key per request.');
  }
  const comment = rest.join(' ');
  if (comment.length > MAX_COMMENT) return refuse(`The comment after the key is longer than ${MAX_COMMENT} characters.`);
  const blob = Buffer.from(data, 'base64');
  const checked = checkBlob(algorithm, blob);
  if ('detail' in checked) return refuse(checked.detail);
  return {
    ok: true,
    key: { algorithm, base64: data, comment, fingerprint: fingerprintOf(blob), bits: checked.bits, line: comment ? `${algorithm} ${data} ${comment}` : `${algorithm} ${data}` },
  };
}
