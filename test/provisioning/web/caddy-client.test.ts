// CaddyClient against an admin endpoint that misbehaves as Caddy's does while it restarts its
// admin endpoint after a load (docs/decisions/0008-web-servers.md "Caddy: the whole desired state,
// pushed and re-pushed"): a connection reset before any answer is tried again; an answer that
// breaks off, a refusal and an endpoint that keeps resetting are not hidden.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CaddyClient } from '../../../src/provisioning/web/caddy-client.js';

interface Peer {
  url: string;
  seen: string[];
  close(): Promise<void>;
}

/** An HTTP peer: `resets` first connections are reset unanswered, then `answer` serves. */
async function peer(resets: number, answer: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Peer> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (seen.length <= resets) req.socket.resetAndDestroy();
    else req.on('end', () => answer(req, res)).resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const ADMIN_ONLY = { admin: { listen: '127.0.0.1:2019' } };
let open: Peer | null = null;
afterEach(async () => {
  await open?.close();
  open = null;
});

describe('CaddyClient when a connection gets no answer', () => {
  it('a reset before any answer is tried again: the config is read on the third connection', async () => {
    open = await peer(2, (_req, res) => res.end(JSON.stringify(ADMIN_ONLY)));
    expect(await new CaddyClient(open.url).current()).toEqual(ADMIN_ONLY);
    expect(open.seen).toEqual(['GET /config/', 'GET /config/', 'GET /config/']);
  });

  it('a load whose connection is reset is sent again (the whole config: safe to repeat)', async () => {
    let loaded = '';
    open = await peer(1, (req, res) => {
      if (req.method === 'GET') return res.end(JSON.stringify(ADMIN_ONLY));
      loaded = 'yes';
      res.end();
    });
    // The first connection (the GET) is reset; the GET again, then the POST.
    expect(await new CaddyClient(open.url).ensure({ ...ADMIN_ONLY, apps: {} })).toBe(true);
    expect(open.seen).toEqual(['GET /config/', 'GET /config/', 'POST /load']);
    expect(loaded).toBe('yes');
  });

  it('an endpoint that keeps resetting: after four connections, an error that names the request and the reset', async () => {
    open = await peer(100, () => undefined);
    await expect(new CaddyClient(open.url).ensure(ADMIN_ONLY)).rejects.toThrow(
      new RegExp(`^Caddy admin API: GET ${open.url.replace(/\./g, '\\.')}/config/ failed: (read ECONNRESET|socket hang up)$`),
    );
    expect(open.seen).toHaveLength(4);
  });

  it('an answer that breaks off is not sent again: Caddy got the request', async () => {
    open = await peer(0, (_req, res) => {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('{"admin"');
      setTimeout(() => res.socket?.resetAndDestroy(), 20);
    });
    await expect(new CaddyClient(open.url).current()).rejects.toThrow(/^Caddy admin API: GET .*\/config\/ failed: /);
    expect(open.seen).toEqual(['GET /config/']);
  });

  it('a refused config is not sent again: its status and message', async () => {
    open = await peer(0, (req, res) => {
      if (req.method === 'GET') return res.end('null');
      res.writeHead(400, { 'Content-Type': 'application/json' }).end('{"error":"loading config: no_such_handler"}');
    });
    await expect(new CaddyClient(open.url).ensure(ADMIN_ONLY)).rejects.toThrow(
      `Caddy at ${open.url} refused the configuration (HTTP 400): loading config: no_such_handler`,
    );
    expect(open.seen).toEqual(['GET /config/', 'POST /load']);
  });

  it('nothing listening: refused four times, then an error that says so', async () => {
    const gone = await peer(0, () => undefined);
    await gone.close();
    await expect(new CaddyClient(gone.url).current()).rejects.toThrow(/^Caddy admin API: GET .*\/config\/ failed: connect ECONNREFUSED/);
  });
});
