// An address as people and URLs write it: `host:port`, IPv6 hosts in brackets.
import net from 'node:net';

/** `hostPort('127.0.0.1', 8080)` → `127.0.0.1:8080`; `hostPort('::', 8080)` → `[::]:8080`. */
export const hostPort = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/**
 * `host:port` as people write it, or null: `parseHostPort('mx1.example.com:25')` →
 * `{ host: 'mx1.example.com', port: 25 }`, `parseHostPort('[::1]:143')` → `{ host: '::1', port: 143 }`.
 * The host is a name or an IPv4 address, or an IPv6 address in brackets; the port 1 to 65535.
 */
export function parseHostPort(value: string): { host: string; port: number } | null {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)):([0-9]{1,5})$/.exec(value);
  if (!m) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return null;
  if (m[1] !== undefined && net.isIPv6(m[1]) === false) return null;
  return { host: m[1] ?? m[2], port };
}
