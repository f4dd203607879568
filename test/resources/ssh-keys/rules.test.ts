// The rules of SSH public keys (API guide "SSH keys"), as properties (fast-check) and against
// ssh-keygen: every accepted algorithm is taken with the fingerprint and size ssh-keygen prints;
// whatever else arrives is refused with a detail, never an exception, and never echoes a private key.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePublicKey, RSA_MIN_BITS, type KeyCheck } from '../../../src/resources/ssh-keys/ssh-keys.rules.js';
import { ED25519, newKey, opensshPrivateKey, sshKeygenView, type KeyKind } from '../../helpers/ssh-keys.js';

const accepted = (c: KeyCheck) => {
  if (!c.ok) throw new Error(`refused: ${c.detail}`);
  return c.key;
};
const detail = (c: KeyCheck) => {
  if (c.ok) throw new Error(`accepted: ${c.key.line}`);
  return c.detail;
};

// Made once: RSA generation takes a while.
const KEYS: Record<KeyKind, ReturnType<typeof newKey>> = {
  ed25519: ED25519[0],
  p256: newKey('p256', 'ec256@test'),
  p384: newKey('p384'),
  p521: newKey('p521', 'ec521 with spaces in the comment'),
  rsa3072: newKey('rsa3072', 'rsa@test'),
  rsa4096: newKey('rsa4096'),
};
const SHORT_RSA = newKey('rsa2048', 'old@test');

describe('SSH public key rules', () => {
  it.each(Object.keys(KEYS))('accepts %s with the fingerprint and size ssh-keygen -l prints', (kind) => {
    const k = KEYS[kind as KeyKind];
    const key = accepted(parsePublicKey(k.line));
    const view = sshKeygenView(k.line);
    expect({ fingerprint: key.fingerprint, bits: key.bits, algorithm: key.algorithm, line: key.line }).toEqual({
      fingerprint: view.fingerprint, bits: view.bits, algorithm: k.alg, line: k.line,
    });
  });

  it('takes the line as a .pub file holds it: a final newline, spaces around; the comment keeps its words', () => {
    const k = KEYS.p521;
    expect(accepted(parsePublicKey(`  ${k.line}\n`)).line).toBe(k.line);
    expect(accepted(parsePublicKey(`${k.line}\r\n`)).line).toBe(k.line);
    const [alg, data] = k.line.split(' ');
    expect(accepted(parsePublicKey(`${alg}\t${data}   a   b`)).line).toBe(`${alg} ${data} a b`);
    expect(accepted(parsePublicKey(`${alg} ${data}`))).toMatchObject({ comment: '', line: `${alg} ${data}` });
    // A comment may name an algorithm: it is not a second key.
    expect(accepted(parsePublicKey(`${alg} ${data} my ssh-ed25519 key`)).comment).toBe('my ssh-ed25519 key');
  });

  it('refuses RSA under 3072 bits, ssh-dss, FIDO sk- keys, certificates and names it does not know', () => {
    expect(detail(parsePublicKey(SHORT_RSA.line))).toBe(`This RSA key has 2048 bits; RSA keys need at least ${RSA_MIN_BITS} (ssh-keygen -t rsa -b 4096), or use ssh-ed25519.`);
    const data = ED25519[1].line.split(' ')[1];
    expect(detail(parsePublicKey(`ssh-dss ${data}`))).toMatch(/^ssh-dss \(DSA\) keys are not accepted/);
    expect(detail(parsePublicKey(`sk-ssh-ed25519@openssh.com ${data}`))).toMatch(/^sk-ssh-ed25519@openssh\.com keys \(FIDO security keys\) are not accepted yet/);
    expect(detail(parsePublicKey(`ssh-ed25519-cert-v01@openssh.com ${data}`))).toMatch(/^Certificates/);
    expect(detail(parsePublicKey(`ssh-foo ${data}`))).toMatch(/^ssh-foo keys are not accepted\. Accepted: ssh-ed25519/);
  });

  it('refuses a blob whose type, curve or key does not match the line', () => {
    const [, edData] = ED25519[2].line.split(' ');
    expect(detail(parsePublicKey(`ssh-rsa ${edData}`))).toBe('The key data is of type "ssh-ed25519", not ssh-rsa as the line says.');
    const [, p256Data] = KEYS.p256.line.split(' ');
    expect(detail(parsePublicKey(`ecdsa-sha2-nistp384 ${p256Data}`))).toBe('The key data is of type "ecdsa-sha2-nistp256", not ecdsa-sha2-nistp384 as the line says.');
    // The type string says nistp384 but the curve inside says nistp256.
    const blob = Buffer.from(p256Data, 'base64');
    const relabelled = Buffer.concat([Buffer.from([0, 0, 0, 19]), Buffer.from('ecdsa-sha2-nistp384'), blob.subarray(4 + 19)]);
    expect(detail(parsePublicKey(`ecdsa-sha2-nistp384 ${relabelled.toString('base64')}`))).toBe('The key data names curve "nistp256", not nistp384 as ecdsa-sha2-nistp384 requires.');
    // A point off the curve.
    const bent = Buffer.from(blob);
    bent[bent.length - 1] ^= 1;
    expect(detail(parsePublicKey(`ecdsa-sha2-nistp256 ${bent.toString('base64')}`))).toBe('The key data is not a valid ecdsa-sha2-nistp256 key (it may be cut off or altered).');
    // Cut off, and one byte too many.
    const ed = Buffer.from(edData, 'base64');
    expect(detail(parsePublicKey(`ssh-ed25519 ${ed.subarray(0, ed.length - 3).toString('base64')}`))).toMatch(/not a valid ssh-ed25519 key/);
    expect(detail(parsePublicKey(`ssh-ed25519 ${Buffer.concat([ed, Buffer.from([0])]).toString('base64')}`))).toMatch(/not a valid ssh-ed25519 key/);
  });

  it('refuses broken base64, options or a command before the key, several keys, several lines, and no key at all', () => {
    const line = ED25519[3].line;
    const [alg, data] = line.split(' ');
    expect(detail(parsePublicKey(`${alg} ${data.slice(0, -1)}`))).toBe('The key data is not valid base64.');
    expect(detail(parsePublicKey(`${alg} ${data.replace('A', '*')}`))).toBe('The key data is not valid base64.');
    expect(detail(parsePublicKey(alg))).toBe('The key data (base64) after ssh-ed25519 is missing.');
    const options = 'Options or a command before the key (e.g. command="…", no-pty, from="…") are not accepted: send only `<algorithm> <base64> [comment]`.';
    expect(detail(parsePublicKey(`command="rm -rf /" ${line}`))).toBe(options);
    expect(detail(parsePublicKey(`no-pty ${line}`))).toBe(options);
    expect(detail(parsePublicKey(`restrict,from="10.0.0.1" ${line}`))).toBe(options);
    expect(detail(parsePublicKey(`${line} ${ED25519[4].line}`))).toBe('public_key holds several keys: send one key per request.');
    expect(detail(parsePublicKey(`${line}\n${ED25519[4].line}`))).toBe('public_key holds several lines: send one key per request.');
    expect(detail(parsePublicKey(`${line}\n\n`))).toBe('public_key holds several lines: send one key per request.');
    expect(detail(parsePublicKey(''))).toMatch(/^public_key is empty/);
    expect(detail(parsePublicKey('hello world'))).toMatch(/^public_key is not an OpenSSH public key/);
    expect(detail(parsePublicKey(`${line} ${'c'.repeat(300)}`))).toBe('The comment after the key is longer than 255 characters.');
    expect(detail(parsePublicKey(`${line} a\u0000b`))).toBe('public_key contains control characters.');
    expect(detail(parsePublicKey(42))).toMatch(/^public_key must be a string/);
  });

  it('refuses a private key pasted by mistake — OpenSSH, PKCS#8, or the body alone — without repeating any of it', () => {
    const { privateText } = opensshPrivateKey();
    const pem = KEYS.p256.privatePem;
    const body = privateText.split('\n').slice(1, -2).join('\n');
    for (const text of [privateText, pem, body, body.split('\n')[0], `${KEYS.p256.line}\n${pem}`]) {
      const d = detail(parsePublicKey(text));
      expect(d).toBe('This is a private key. Never send it anywhere; send the public key (the .pub file, e.g. ~/.ssh/id_ed25519.pub) instead. It was not stored.');
    }
  });

  it('property: any text is answered with a key or a detail, never an exception; a refusal repeats none of the key data', () => {
    const line = ED25519[5].line;
    const texts = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.string({ unit: 'grapheme', maxLength: 100 }),
      // The real line with a few characters changed, dropped or added.
      fc.tuple(fc.nat(line.length - 1), fc.nat(line.length - 1), fc.string({ maxLength: 4 })).map(([a, b, s]) => line.slice(0, Math.min(a, b)) + s + line.slice(Math.max(a, b))),
      fc.uint8Array({ minLength: 0, maxLength: 120 }).map((b) => `ssh-ed25519 ${Buffer.from(b).toString('base64')}`),
      fc.uint8Array({ minLength: 0, maxLength: 300 }).map((b) => `ssh-rsa ${Buffer.from(b).toString('base64')}`),
      fc.uint8Array({ minLength: 0, maxLength: 140 }).map((b) => `ecdsa-sha2-nistp256 ${Buffer.from(b).toString('base64')}`),
    );
    fc.assert(
      fc.property(texts, (text) => {
        const c = parsePublicKey(text);
        if (c.ok) {
          // Accepted only what ssh-keygen reads the same way: the real key with another comment, or
          // another valid key (any 32 bytes are an ed25519 key, so a changed base64 letter can be one).
          expect(c.key.fingerprint).toBe(sshKeygenView(c.key.line).fingerprint);
          return;
        }
        // Algorithm names may be named back; key data never.
        for (const word of text.split(/\s+/).filter((w) => w.length > 12 && !/^[a-z0-9-]+(@openssh\.com)?$/.test(w))) expect(c.detail).not.toContain(word);
      }),
      { numRuns: 400 },
    );
  });

  it('property: every key of an accepted algorithm is accepted, with the line normalised idempotently', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ED25519), fc.stringMatching(/^[a-zA-Z0-9@._-]{0,20}( [a-zA-Z0-9@._-]{1,10}){0,2}$/), (k, comment) => {
        const [alg, data] = k.line.split(' ');
        const key = accepted(parsePublicKey(`${alg} ${data} ${comment}`));
        expect(accepted(parsePublicKey(key.line))).toEqual(key);
        expect(key.line).toBe([alg, data, ...comment.split(' ').filter(Boolean)].join(' '));
      }),
    );
  });
});
