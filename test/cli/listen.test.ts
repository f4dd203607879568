// A port that is taken: `serve` and `dns` exit 1 with one line naming the setting
// that moves them (PORT, DNS_LISTEN, or DNS_LISTEN=off), instead of a bare EADDRINUSE, and leave
// nothing listening. The port is held by another program: a plain TCP server (and, for DNS, a UDP
// socket on the same port, as another DNS server would hold it).
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exited, freePort, spawnCli } from '../helpers/cli.js';
import { canListen } from '../helpers/ports.js';

/** Holds 127.0.0.1:`port` over TCP, and over UDP too with `udp`. */
async function occupy(port: number, udp = false) {
  const tcp = net.createServer();
  await new Promise<void>((resolve, reject) => tcp.once('error', reject).listen(port, '127.0.0.1', resolve));
  const sock = udp ? dgram.createSocket('udp4') : null;
  if (sock) await new Promise<void>((resolve, reject) => sock.once('error', reject).bind(port, '127.0.0.1', resolve));
  return { close: async () => { sock?.close(); await new Promise((r) => tcp.close(r)); } };
}


// A port the DNS server gets for UDP and TCP: free for both a moment ago.
async function freeDnsPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    const sock = dgram.createSocket('udp4');
    const ok = await new Promise<boolean>((resolve) => sock.once('error', () => resolve(false)).bind(port, '127.0.0.1', () => resolve(true)));
    sock.close();
    if (ok) return port;
  }
}

describe('a taken port names the setting that moves it', { timeout: 60_000 }, () => {
  let dir: string;
  let env: Record<string, string>;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-listen-'));
    env = { DATABASE_URL: path.join(dir, 'hostplane.db'), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('serve: the HTTP port is taken → PORT', async () => {
    const port = await freePort();
    const held = await occupy(port);
    try {
      const r = await exited(spawnCli(['serve'], { ...env, PORT: String(port), DNS_LISTEN: 'off' }));
      expect(r).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `hostplane: cannot listen for HTTP on 127.0.0.1:${port}: the port is already in use (by another program, or another hostplane). ` +
          `Set PORT to another port, e.g. PORT=${port + 1}.\n`,
      });
    } finally {
      await held.close();
    }
  });

  it('serve: the DNS port is taken → DNS_LISTEN=host:port or DNS_LISTEN=off; the HTTP port it had opened is released', async () => {
    const [httpPort, dnsPort] = [await freePort(), await freeDnsPort()];
    const held = await occupy(dnsPort, true);
    try {
      const r = await exited(spawnCli(['serve'], { ...env, PORT: String(httpPort), DNS_LISTEN: `127.0.0.1:${dnsPort}` }));
      expect(r).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `hostplane: cannot listen for DNS on 127.0.0.1:${dnsPort}: the port is already in use (by another program, or another hostplane). ` +
          `Set DNS_LISTEN=host:port to move the DNS server, e.g. DNS_LISTEN=127.0.0.1:${dnsPort + 1}, or DNS_LISTEN=off to run without it.\n`,
      });
      expect(await canListen(httpPort)).toBe(true);
    } finally {
      await held.close();
    }
  });

  it('dns: the port is taken → DNS_LISTEN=host:port (off is no way to run the DNS server)', async () => {
    const dnsPort = await freeDnsPort();
    const held = await occupy(dnsPort, true);
    try {
      const r = await exited(spawnCli(['dns'], { ...env, DNS_LISTEN: `127.0.0.1:${dnsPort}` }));
      expect(r).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `hostplane: cannot listen for DNS on 127.0.0.1:${dnsPort}: the port is already in use (by another program, or another hostplane). ` +
          `Set DNS_LISTEN=host:port to move the DNS server, e.g. DNS_LISTEN=127.0.0.1:${dnsPort + 1}.\n`,
      });
    } finally {
      await held.close();
    }
  });
});
