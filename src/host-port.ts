// An address as people and URLs write it: `host:port`, IPv6 hosts in brackets.

/** `hostPort('127.0.0.1', 8080)` → `127.0.0.1:8080`; `hostPort('::', 8080)` → `[::]:8080`. */
export const hostPort = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);
