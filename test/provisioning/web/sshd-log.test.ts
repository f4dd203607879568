// The SSH keys' last use from sshd's log (docs/decisions/0023-sftp.md "Last use"): the login line
// with user and fingerprint, nothing from any other line (failures, passwords, certificates, a
// name no package has); the fingerprint as ssh-keygen prints it; the follower reads what sshd
// appends to its -E file after it started and stops its reader.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followSshdLog, parseSshdLine, sshKeyFingerprint, type SshKeyUse } from '../../../src/provisioning/web/sshd-log.js';
import { pollUntil } from '../../helpers/wait.js';

const FP = 'SHA256:sOYcm6hiV7fdUqPxYE3sRfxnjQ513GRE7Bs2lo3n/vI';
const AT = new Date('2026-11-29T10:00:00Z');

describe("sshd's login lines", () => {
  it('a login by key: user, fingerprint, when it was read — from the -E file, syslog and the journal (-o cat)', () => {
    for (const line of [
      `Accepted publickey for web_c1 from 127.0.0.1 port 52576 ssh2: ED25519 ${FP}`,
      `Nov 29 10:00:00 web1 sshd[812]: Accepted publickey for web_c1 from 2001:db8::1 port 52576 ssh2: ED25519 ${FP}\r`,
      `sshd-session[4711]: Accepted publickey for web_c1 from 192.0.2.7 port 1 ssh2: RSA ${FP}`,
      `Accepted publickey for web_c1 from 192.0.2.7 port 1 ssh2: ECDSA-SK ${FP}`,
    ]) {
      expect(parseSshdLine(line, AT), line).toEqual({ user: 'web_c1', fingerprint: FP, at: AT });
    }
  });

  it('nothing from any other line', () => {
    for (const line of [
      `Accepted key ED25519 ${FP} found at /srv/www/.hostplane/ssh/authorized_keys/web_c1:1`,
      `Failed publickey for web_c1 from 127.0.0.1 port 52576 ssh2: ED25519 ${FP}`,
      'Accepted password for web_c1 from 127.0.0.1 port 52576 ssh2',
      `Accepted publickey for web_c1 from 127.0.0.1 port 52576 ssh2: ED25519-CERT ${FP} ID x (serial 1) CA ED25519 ${FP}`,
      `Accepted publickey for Root from 127.0.0.1 port 52576 ssh2: ED25519 ${FP}`,
      `Accepted publickey for web_c1 from 127.0.0.1 port 52576 ssh2: ED25519 SHA256:short`,
      '',
    ]) {
      expect(parseSshdLine(line, AT), line).toBeNull();
    }
    fc.assert(fc.property(fc.string(), (line) => {
      const use = parseSshdLine(line, AT);
      return use === null || (line.includes(`Accepted publickey for ${use.user} `) && line.includes(use.fingerprint));
    }));
  });

  it("a key's fingerprint is the one ssh-keygen -l prints (and sshd logs)", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-fp-'));
    try {
      for (const type of ['ed25519', 'rsa', 'ecdsa']) {
        const file = path.join(dir, type);
        expect(spawnSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-f', file]).status).toBe(0);
        const expected = spawnSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`], { encoding: 'utf8' }).stdout.split(' ')[1];
        expect(sshKeyFingerprint(await fs.readFile(`${file}.pub`, 'utf8')), type).toBe(expected);
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
    expect(() => sshKeyFingerprint('ssh-ed25519 not*base64')).toThrow('not an OpenSSH one-line public key');
  });
});

describe("following sshd's -E file", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-sshdlog-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('hands on each login appended after it started, in order; a failing callback does not stop it; stop ends the reader', async () => {
    const log = path.join(dir, 'sshd.log');
    await fs.writeFile(log, `Accepted publickey for old_login from 127.0.0.1 port 1 ssh2: ED25519 ${FP}\n`);
    const seen: SshKeyUse[] = [];
    let calls = 0;
    const warned: object[] = [];
    const stop = followSshdLog(log, (u) => {
      calls++;
      if (u.user === 'web_fail') throw new Error('store down');
      seen.push(u);
    }, { log: { warn: (o) => void warned.push(o) } });
    // tail starts at the end of the file once it has opened it: a first login, until it is seen.
    await pollUntil(async () => {
      await fs.appendFile(log, `Accepted publickey for web_ready from 127.0.0.1 port 2 ssh2: ED25519 ${FP}\n`);
      await new Promise((r) => setTimeout(r, 50));
      return seen.length;
    }, (n) => n > 0, 'the reader to start');
    seen.length = 0;
    calls = 0;
    for (const user of ['web_a', 'web_fail', 'web_b']) {
      await fs.appendFile(log, `Server listening\nAccepted publickey for ${user} from 127.0.0.1 port 2 ssh2: ED25519 ${FP}\n`);
    }
    await pollUntil(async () => seen.filter((u) => u.user === 'web_b').length, (n) => n > 0, 'the logins');
    expect(seen.map((u) => u.user).filter((u) => u !== 'web_ready')).toEqual(['web_a', 'web_b']);
    expect(seen.every((u) => u.fingerprint === FP)).toBe(true);
    expect(seen.some((u) => u.user === 'old_login')).toBe(false);
    calls = 0;
    expect(warned).toEqual([{ err: new Error('store down'), user: 'web_fail' }]);
    await stop();
    await fs.appendFile(log, `Accepted publickey for web_late from 127.0.0.1 port 3 ssh2: ED25519 ${FP}\n`);
    await new Promise((r) => setTimeout(r, 200));
    expect(calls).toBe(0);
  });

  it('a source that is neither journal nor an absolute file is refused', () => {
    expect(() => followSshdLog('sshd.log', () => {})).toThrow('sshd\'s log must be "journal" or an absolute file; got "sshd.log"');
  });
});
