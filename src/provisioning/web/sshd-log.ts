// When a package's SSH key was last used (docs/decisions/0023-sftp.md "Last use"): sshd logs every
// login with the key's fingerprint — "Accepted publickey for <user> from <addr> port <p> ssh2:
// <ALG> SHA256:<fp>" — in the journal of ssh.service on a node and in the local stack's `-E` file.
// The web worker follows that log and hands each login to a callback (the store's update).
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import readline from 'node:readline';
import { LINUX_USER_RE } from './webspace-dirs.js';

export interface SshKeyUse {
  /** The package's Linux user that logged in. */
  user: string;
  /** As ssh-keygen -l prints it: `SHA256:` and the unpadded base64 of the key blob's SHA-256. */
  fingerprint: string;
  /** When the line was read (the follower reads as sshd writes). */
  at: Date;
}

// Certificates ("ED25519-CERT SHA256:… ID …") are not keys hostplane hands out: not matched.
const ACCEPTED_RE = /Accepted publickey for (\S+) from \S+ port \d+ ssh2: ([A-Z0-9-]+) (SHA256:[A-Za-z0-9+/]{43})\s*$/;

/**
 * A login of sshd's log line, or null for any other line.
 * `parseSshdLine('sshd[7]: Accepted publickey for web_c1 from 127.0.0.1 port 4711 ssh2: ED25519 SHA256:…')`
 */
export function parseSshdLine(line: string, at: Date = new Date()): SshKeyUse | null {
  const m = ACCEPTED_RE.exec(line.replace(/\r$/, ''));
  if (!m || m[2].endsWith('-CERT') || !LINUX_USER_RE.test(m[1])) return null;
  return { user: m[1], fingerprint: m[3], at };
}

/** The fingerprint sshd logs for an OpenSSH one-line public key (`ssh-ed25519 AAAA… comment`). */
export function sshKeyFingerprint(publicKey: string): string {
  const blob = publicKey.trim().split(/\s+/)[1] ?? '';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(blob)) throw new Error('not an OpenSSH one-line public key');
  return `SHA256:${crypto.createHash('sha256').update(Buffer.from(blob, 'base64')).digest('base64').replace(/=+$/, '')}`;
}

/** `journal`: ssh.service's journal (a node); else an absolute file sshd writes with -E (the local stack). */
export type SshdLogSource = 'journal' | string;

export interface FollowOptions {
  log?: { warn(o: object, m: string): void };
  /** Wait before following again after the reader exited [5000 ms]. */
  restartMs?: number;
}

/** The command that prints new lines of the source as they come, none of the old ones. */
function followCommand(source: SshdLogSource): [string, string[]] {
  if (source === 'journal') return ['journalctl', ['--follow', '--lines=0', '--output=cat', '--unit=ssh.service']];
  if (!source.startsWith('/')) throw new Error(`sshd's log must be "journal" or an absolute file; got "${source}"`);
  // -F: a file that is replaced (log rotation) or made only later is followed too.
  return ['tail', ['-n', '0', '-F', source]];
}

/**
 * Follows sshd's log and calls `onUse` for each login by key, one after the other; a failing call
 * is logged and the next line read. Returns the stop function (ends the reader it started, by pid).
 * `const stop = followSshdLog('journal', (u) => keys.recordUse(u.user, u.fingerprint, u.at))`
 */
export function followSshdLog(source: SshdLogSource, onUse: (use: SshKeyUse) => void | Promise<void>, o: FollowOptions = {}): () => Promise<void> {
  const [command, args] = followCommand(source);
  let stopped = false;
  let child: ChildProcess | null = null;
  let timer: NodeJS.Timeout | null = null;
  let queue = Promise.resolve();
  const start = () => {
    const c = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    child = c;
    c.on('error', (err) => o.log?.warn({ err, source }, "cannot follow sshd's log"));
    readline.createInterface({ input: c.stdout! }).on('line', (line) => {
      const use = parseSshdLine(line);
      if (!use) return;
      queue = queue.then(() => onUse(use)).catch((err: unknown) => o.log?.warn({ err, user: use.user }, 'recording an SSH key use failed'));
    });
    c.on('close', () => {
      child = null;
      if (stopped) return;
      o.log?.warn({ source }, "the reader of sshd's log ended: following it again shortly");
      timer = setTimeout(start, o.restartMs ?? 5000);
    });
  };
  start();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    const c = child;
    if (c && c.exitCode === null && c.signalCode === null) {
      const closed = new Promise((resolve) => c.once('close', resolve));
      c.kill('SIGTERM');
      await closed;
    }
    await queue;
  };
}
