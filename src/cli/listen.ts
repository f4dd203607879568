// Why `serve` or `dns` could not open a port, said with the setting that changes it: a newcomer
// whose port 5300 is taken learns about DNS_LISTEN, not only EADDRINUSE.
import net from 'node:net';
import { parseListen } from '../dns/server.js';
import { hostPort } from '../host-port.js';
import { CliError } from './context.js';

type Code = 'EADDRINUSE' | 'EACCES' | 'EADDRNOTAVAIL';

const REASONS: Record<Code, string> = {
  EADDRINUSE: 'the port is already in use (by another program, or another hostplane)',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'this machine has no such address',
};

/** What to set instead, per failure: `fixes[code](host, port)`. */
type Fixes = Record<Code, (host: string, port: number) => string>;

const HTTP_FIXES: Fixes = {
  EADDRINUSE: (_host, port) => `Set PORT to another port, e.g. PORT=${port < 65535 ? port + 1 : port - 1}.`,
  EACCES: () => 'Set PORT to 1024 or above, e.g. PORT=8080 (or see docs/operator-guide.md for privileged ports).',
  EADDRNOTAVAIL: () => 'Set HOST to an address of this machine, e.g. HOST=127.0.0.1, or HOST=0.0.0.0 for all of them.',
};

const DNS_FIXES: Fixes = {
  EADDRINUSE: (host, port) => `Set DNS_LISTEN=host:port to move the DNS server, e.g. DNS_LISTEN=${hostPort(host, port < 65535 ? port + 1 : port - 1)}`,
  EACCES: (host) => `Set DNS_LISTEN to a port of 1024 or above, e.g. DNS_LISTEN=${hostPort(host, 5300)} (or see docs/operator-guide.md for port 53)`,
  EADDRNOTAVAIL: (_host, port) => `Set DNS_LISTEN to an address of this machine, e.g. DNS_LISTEN=127.0.0.1:${port}`,
};

/** `err` as a CliError naming the settings that fix it, or unchanged when it is not about the address. */
function listenFailure(err: unknown, what: string, host: string, port: number, fix: (code: Code) => string): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (!code || !(code in REASONS)) return err;
  return new CliError(`cannot listen for ${what} on ${hostPort(host, port)}: ${REASONS[code as Code]}. ${fix(code as Code)}`, 'listen_failed');
}

/** For `app.listen()` on HOST:PORT. */
export const httpListenFailure = (err: unknown, host: string, port: number) =>
  listenFailure(err, 'HTTP', host, port, (code) => HTTP_FIXES[code](host, port));

/** For the DNS server on DNS_LISTEN; `serve` may run without it, `hostplane dns` exists to run it. */
export function dnsListenFailure(err: unknown, dnsListen: string, canTurnOff: boolean): unknown {
  const bind = parseListen(dnsListen);
  if (!bind) return err;
  const { host, port } = bind;
  return listenFailure(err, 'DNS', host, port, (code) => `${DNS_FIXES[code](host, port)}${canTurnOff ? ', or DNS_LISTEN=off to run without it' : ''}.`);
}

/**
 * Resolves when HOST:PORT can be listened on now (it is bound and at once released), rejects with
 * the error listening would meet: for checks before work that only makes sense if `serve` starts.
 */
export function probeListen(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
