// Slow clients (docs/decisions/0002-rate-limiting.md): a real listening server with short
// REQUEST_TIMEOUT_MS and HEADERS_TIMEOUT_MS cuts off clients that drip headers or bodies, and still
// answers others. The slow client never reaches the database, so one engine is enough.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { waitFor } from '../helpers/wait.js';

describe('timeouts of a listening server', () => {
  let t: TestApp;
  let x: Tenants;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp('sqlite', { REQUEST_TIMEOUT_MS: '1500', HEADERS_TIMEOUT_MS: '1000', KEEP_ALIVE_TIMEOUT_MS: '1000' });
    x = await seedTenants(t.admin);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => t?.close());

  /** Sends `head` at once, then `drip` one byte every `gapMs`; resolves when the server closes the socket. */
  function slowClient(head: string, drip: string, gapMs = 200) {
    return new Promise<{ ms: number; response: string; dripped: number }>((resolve, reject) => {
      const started = Date.now();
      let response = '';
      let i = 0;
      const socket = net.connect(port, '127.0.0.1', () => {
        if (head) socket.write(head);
      });
      const timer = setInterval(() => {
        if (i < drip.length && !socket.destroyed) socket.write(drip[i++]);
      }, gapMs);
      const guard = setTimeout(() => {
        socket.destroy();
        reject(new Error(`socket still open after 8 s (sent ${i} bytes)`));
      }, 8000);
      socket.on('data', (d) => (response += d));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearInterval(timer);
        clearTimeout(guard);
        resolve({ ms: Date.now() - started, response, dripped: i });
      });
    });
  }

  it('a client sending its headers byte by byte is cut off within seconds (HEADERS_TIMEOUT_MS)', async () => {
    const r = await slowClient('GET /customers HTTP/1.1\r\nHost: api.test\r\n', `X-Slow: ${'a'.repeat(200)}\r\n\r\n`);
    expect(r.ms).toBeLessThan(5000);
    expect(r.dripped).toBeLessThan(200);
    expect(r.response).toMatch(/^HTTP\/1\.1 408 /);
    expect(r.response.split('\r\n\r\n')[1]).toBe('{"errors":[{"id":"request_timeout","status":"408","title":"Request timeout"}]}');
  });

  it('a client that sends its headers and then the body slowly is cut off (REQUEST_TIMEOUT_MS)', async () => {
    const head =
      `PATCH /customers/${x.end1.customerId} HTTP/1.1\r\nHost: api.test\r\nAuthorization: token ${x.reseller.token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: 200\r\n\r\n`;
    const r = await slowClient(head, 'a'.repeat(200));
    expect(r.ms).toBeLessThan(5000);
    expect(r.dripped).toBeLessThan(200);
    expect(r.response).toMatch(/^HTTP\/1\.1 408 /);
    expect(r.response.split('\r\n\r\n')[1]).toBe('{"errors":[{"id":"request_timeout","status":"408","title":"Request timeout"}]}');
  });

  it('an unauthenticated slow body is answered 401 and the socket still closes within seconds', async () => {
    const head =
      `PATCH /customers/${x.end1.customerId} HTTP/1.1\r\nHost: api.test\r\n` +
      `Content-Type: application/json\r\nContent-Length: 200\r\n\r\n`;
    const r = await slowClient(head, 'a'.repeat(200));
    expect(r.ms).toBeLessThan(5000);
    expect(r.dripped).toBeLessThan(200);
    expect(r.response).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('a connection that sends nothing is closed within seconds', async () => {
    const r = await slowClient('', '');
    expect(r.ms).toBeLessThan(5000);
  });

  it('a client that pipelines requests and never reads the answers is disconnected (idle socket timeout)', async () => {
    const open = () => new Promise<number>((resolve) => t.app.server.getConnections((_e, n) => resolve(n)));
    const before = await open();
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.pause(); // never reads: the answers pile up in the server's socket buffers
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET /openapi.json HTTP/1.1\r\nHost: api.test\r\n\r\n'.repeat(300));
    await waitFor('the server holds the connection', async () => (await open()) > before);
    // The server closes it once nothing moves either way for REQUEST_TIMEOUT_MS.
    await waitFor('the server drops the connection', async () => (await open()) === before, 8000);
    socket.destroy();
  });

  it('a normal request on the same server is answered', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});
