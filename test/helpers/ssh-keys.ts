// SSH keys for tests (API guide "SSH keys"): real key pairs from node's crypto in OpenSSH's
// one-line public form, and ssh-keygen's own view of a line (fingerprint, bits) to compare with.
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const str = (b: Buffer | string) => {
  const body = typeof b === 'string' ? Buffer.from(b, 'latin1') : b;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length);
  return Buffer.concat([len, body]);
};
/** An unsigned big-endian number as an SSH mpint (a leading zero when the top bit is set). */
const mpint = (b: Buffer) => {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const n = b.subarray(i);
  return str(n[0] & 0x80 ? Buffer.concat([Buffer.from([0]), n]) : n);
};
const fromUrl = (s: string) => Buffer.from(s, 'base64url');

export type KeyKind = 'ed25519' | 'p256' | 'p384' | 'p521' | `rsa${number}`;

/** The wire blob of a node public key. */
export function blobOf(key: crypto.KeyObject): { alg: string; blob: Buffer } {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.kty === 'OKP') return { alg: 'ssh-ed25519', blob: Buffer.concat([str('ssh-ed25519'), str(fromUrl(jwk.x!))]) };
  if (jwk.kty === 'RSA') return { alg: 'ssh-rsa', blob: Buffer.concat([str('ssh-rsa'), mpint(fromUrl(jwk.e!)), mpint(fromUrl(jwk.n!))]) };
  const curve = { 'P-256': 'nistp256', 'P-384': 'nistp384', 'P-521': 'nistp521' }[jwk.crv!]!;
  const alg = `ecdsa-sha2-${curve}`;
  return { alg, blob: Buffer.concat([str(alg), str(curve), str(Buffer.concat([Buffer.from([4]), fromUrl(jwk.x!), fromUrl(jwk.y!)]))]) };
}

/** A new key pair of `kind`: its public line (`<alg> <base64> [comment]`) and private PEM. */
export function newKey(kind: KeyKind = 'ed25519', comment = ''): { line: string; alg: string; blob: Buffer; privatePem: string } {
  const pair =
    kind === 'ed25519'
      ? crypto.generateKeyPairSync('ed25519')
      : kind.startsWith('rsa')
        ? crypto.generateKeyPairSync('rsa', { modulusLength: Number(kind.slice(3)) })
        : crypto.generateKeyPairSync('ec', { namedCurve: { p256: 'P-256', p384: 'P-384', p521: 'P-521' }[kind as 'p256']! });
  const { alg, blob } = blobOf(pair.publicKey);
  const line = `${alg} ${blob.toString('base64')}${comment ? ` ${comment}` : ''}`;
  return { line, alg, blob, privatePem: pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() };
}

/** A small pool of keys made once (RSA generation is slow): `pool.ed25519[0]`. */
export const ED25519 = Array.from({ length: 12 }, (_, i) => newKey('ed25519', `key${i}@test`));

/** What `ssh-keygen -l` says of a public key line: `{ bits, fingerprint }`. */
export function sshKeygenView(line: string): { bits: number; fingerprint: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-key-'));
  try {
    const file = path.join(dir, 'k.pub');
    fs.writeFileSync(file, `${line}\n`);
    const out = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', file], { encoding: 'utf8' });
    const [bits, fingerprint] = out.trim().split(' ');
    return { bits: Number(bits), fingerprint };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** An OpenSSH-format private key as `ssh-keygen` writes it. */
export function opensshPrivateKey(): { privateText: string; publicLine: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-key-'));
  try {
    const file = path.join(dir, 'id');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'me@laptop', '-f', file]);
    return { privateText: fs.readFileSync(file, 'utf8'), publicLine: fs.readFileSync(`${file}.pub`, 'utf8').trim() };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
