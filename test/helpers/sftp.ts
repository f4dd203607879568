// Real OpenSSH clients against the local stack's SFTP server (docs/decisions/0023-sftp.md): a key
// made with ssh-keygen in a temp dir, sftp and ssh in batch mode, the host key checked against the
// stack's known_hosts.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

export interface SftpServer {
  host: string;
  port: number;
  known_hosts: string;
}

export interface ClientKey {
  /** The private key's file. */
  file: string;
  /** The public key's line, as writeAuthorizedKeys takes it. */
  pub: string;
}

/** A new ed25519 key pair in `dir`. */
export async function newKey(dir: string, name: string): Promise<ClientKey> {
  const file = path.join(dir, name);
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ssh-keygen: ${r.stderr}`);
  return { file, pub: (await fs.readFile(`${file}.pub`, 'utf8')).trim() };
}

export interface ClientRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

const common = (server: SftpServer, key: ClientKey) => [
  '-o', 'BatchMode=yes', '-o', `UserKnownHostsFile=${server.known_hosts}`, '-o', 'StrictHostKeyChecking=yes',
  '-o', 'IdentitiesOnly=yes', '-o', 'ConnectTimeout=10', '-F', '/dev/null', '-i', key.file,
];

/** The client's run; `child` to end a long one (a tunnel) by its pid. */
type Running = Promise<ClientRun> & { child: ChildProcess };

function runClient(command: string, args: string[], input = ''): Running {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], timeout: 30_000 });
  const run = new Promise<ClientRun>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
  return Object.assign(run, { child });
}

/** `sftp -b -` with `commands` (one a line) as `user`. */
export function sftpBatch(server: SftpServer, user: string, key: ClientKey, commands: string[]): Running {
  return runClient('sftp', [...common(server, key), '-P', String(server.port), '-b', '-', `${user}@${server.host}`], `${commands.join('\n')}\n`);
}

/** `ssh <extra…> user@host <command…>`. */
export function ssh(server: SftpServer, user: string, key: ClientKey, extra: string[], command: string[] = []): Running {
  return runClient('ssh', [...common(server, key), '-p', String(server.port), ...extra, `${user}@${server.host}`, ...command]);
}

/** Whether the OpenSSH clients are installed (Debian: openssh-client). */
export function clientsMissing(): string | null {
  const absent = ['ssh', 'sftp', 'ssh-keygen'].filter((bin) => spawnSync('bash', ['-c', `command -v ${bin}`]).status !== 0);
  return absent.length ? `${absent.join(', ')} not installed (Debian: openssh-client)` : null;
}

/** What the stack's SFTP server needs beyond the rest: root, sshd, unshare. */
export function sftpServerMissing(): string | null {
  if (process.getuid?.() !== 0) return 'the stack runs sshd as root (it switches to the package users)';
  if (spawnSync('test', ['-x', '/usr/sbin/sshd']).status !== 0) return '/usr/sbin/sshd is not installed (Debian: openssh-server)';
  if (spawnSync('bash', ['-c', 'command -v unshare && command -v setpriv']).status !== 0) return 'unshare or setpriv is not installed (Debian: util-linux)';
  return clientsMissing();
}
