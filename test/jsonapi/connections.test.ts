// Every request that reaches the server gets a JSON:API document, seen from a raw
// TCP client of a listening app: CONNECT (405), HTTP/1.1 without Host (400), a client that
// half-closes its socket right after the request, which on PostgreSQL got no answer at all, and a
// client still sending a body over the limit, which got a reset (EPIPE) instead of its 413.
import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { LINGER_MAX_BYTES } from '../../src/http/server.js';
import { BASE, ENGINES } from '../helpers/app.js';
import { VND, customer, errorDoc, listen, rawRequest, useHttpCore } from '../helpers/http-core.js';

/** The status line of an HTTP/1.1 answer with `status`. */
const statusLine = (status: number) => new RegExp(`^HTTP/1\\.1 ${status} `);

/**
 * A PATCH of `size` bytes written in one go, as a client that sends the whole body
 * before it reads: what it read until the connection closed, and the error its socket met, if any.
 */
/**
 * Announces a body of `announced` bytes and keeps sending it, 1 MiB at a time as the socket takes
 * it, until the server cuts the connection or `cap` bytes are sent: how far it got, and the error.
 */
function sendUntilCut(port: number, path: string, token: string, announced: number, cap: number): Promise<{ sent: number; error: string | null }> {
  return new Promise((resolve) => {
    const chunk = Buffer.alloc(1024 * 1024, ' ');
    let sent = 0;
    let error: string | null = null;
    // allowHalfOpen: the server's FIN after its 413 does not end our side; we go on sending.
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
      socket.write(`PATCH ${path} HTTP/1.1\r\nHost: api.test\r\nAuthorization: token ${token}\r\nContent-Type: ${VND}\r\nContent-Length: ${announced}\r\n\r\n`);
      const pump = () => {
        while (!socket.destroyed && sent < cap) {
          sent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
        if (sent >= cap) socket.destroy();
      };
      pump();
    });
    socket.on('data', () => {});
    socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
    socket.on('close', () => resolve({ sent, error }));
  });
}

function postWholeBody(port: number, path: string, token: string, size: number): Promise<{ text: string; error: string | null }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let error: string | null = null;
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`PATCH ${path} HTTP/1.1\r\nHost: api.test\r\nAuthorization: token ${token}\r\nContent-Type: ${VND}\r\nContent-Length: ${size}\r\n\r\n`);
      socket.write(Buffer.alloc(size, ' '));
    });
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
    socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString(), error }));
  });
}

describe.each(ENGINES)('connections on %s', (engine) => {
  const { t, x } = useHttpCore(engine);
  let port: number;
  beforeAll(async () => {
    port = await listen(t.app);
  });

  it.each([
    ['an authority target', 'api.test:443', '', 'This server is not a proxy; CONNECT is not supported.', '/api.test:443'],
    ['a path of the API', '/customers', 'GET', 'Use GET on this path.', '/customers'],
  ])('CONNECT to %s → 405 method_not_allowed with Allow, then the connection closes', async (_n, target, allow, detail, self) => {
    const r = await rawRequest(port, `CONNECT ${target} HTTP/1.1\r\nHost: api.test\r\nAccept: ${VND}\r\n\r\n`);
    expect(r.statusLine).toMatch(statusLine(405));
    expect(r.headers['content-type']).toBe(VND);
    expect(r.headers.allow).toBe(allow);
    expect(r.headers.connection).toBe('close');
    expect(JSON.parse(r.body)).toEqual({
      errors: [{ id: 'method_not_allowed', status: '405', title: 'Method not allowed', detail }],
      links: { self: `${BASE}${self}` },
    });
  });

  it.each(['/customers', '/healthz', '/no-such-thing'])('HTTP/1.1 without Host (%s) → 400 bad_request as a document', async (path) => {
    const r = await rawRequest(port, `GET ${path} HTTP/1.1\r\nAuthorization: token ${x.reseller.token}\r\nConnection: close\r\n\r\n`);
    expect(r.statusLine).toMatch(statusLine(400));
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(r.body)).toEqual({
      errors: [{ id: 'bad_request', status: '400', title: 'Bad request', detail: 'An HTTP/1.1 request must have a Host header.' }],
      links: { self: `${BASE}${path}` },
    });
  });

  it('HTTP/1.0 needs no Host: the request is answered', async () => {
    const r = await rawRequest(port, `GET /customers/${x.end1.customerId} HTTP/1.0\r\nAuthorization: token ${x.end1.token}\r\n\r\n`);
    expect(r.statusLine).toMatch(statusLine(200));
    expect(JSON.parse(r.body)).toEqual({ data: customer('end1', x.end1, x.reseller), links: { self: `${BASE}/customers/${x.end1.customerId}` } });
  });

  it('a client that half-closes right after a request that reads the database gets its answer', async () => {
    const r = await rawRequest(
      port,
      `GET /customers/${x.end1.customerId} HTTP/1.1\r\nHost: api.test\r\nAuthorization: token ${x.end1.token}\r\nAccept: ${VND}\r\n\r\n`,
      { halfClose: true },
    );
    expect(r.statusLine).toMatch(statusLine(200));
    expect(r.headers['content-type']).toBe(VND);
    expect(JSON.parse(r.body)).toEqual({ data: customer('end1', x.end1, x.reseller), links: { self: `${BASE}/customers/${x.end1.customerId}` } });
  });

  it('a client still sending a body over the limit reads its whole 413, then the connection closes without a reset', async () => {
    const path = `/customers/${x.end1.customerId}`;
    // Far more than the socket buffers hold: the client is still writing when the 413 comes.
    const { text, error } = await postWholeBody(port, path, x.end1.token, 8 * 1024 * 1024);
    expect(error).toBeNull();
    const split = text.indexOf('\r\n\r\n');
    expect(text.slice(0, split)).toMatch(statusLine(413));
    expect(text.slice(0, split).toLowerCase()).toContain('\r\nconnection: close');
    expect(JSON.parse(text.slice(split + 4))).toEqual(
      errorDoc(path, { id: 'payload_too_large', status: '413', title: 'Payload too large', detail: 'The request body is too large.' }),
    );
  });

  it('…but what is read after the answer is bounded: a client that sends far more is cut off', async () => {
    // Sent as fast as the socket takes it: however late the server looks, it cuts a client that
    // would send 4 GiB long before 1 GiB.
    const cap = 1024 * 1024 * 1024;
    const { sent, error } = await sendUntilCut(port, `/customers/${x.end1.customerId}`, x.end1.token, 4 * cap, cap);
    expect(['EPIPE', 'ECONNRESET']).toContain(error);
    expect(sent).toBeGreaterThan(LINGER_MAX_BYTES);
    expect(sent).toBeLessThan(cap);
  });

  it('an answer given before the body arrived (a refused token) closes the connection too: the rest is not read on for a next request', async () => {
    const cap = 1024 * 1024 * 1024;
    const { sent, error } = await sendUntilCut(port, `/customers/${x.end1.customerId}`, 'not-a-token', 4 * cap, cap);
    expect(['EPIPE', 'ECONNRESET']).toContain(error);
    expect(sent).toBeGreaterThan(LINGER_MAX_BYTES);
    expect(sent).toBeLessThan(cap);
  });

  it('a half-closed client with a PATCH body gets the answer of its write, and the write is done', async () => {
    const id = x.end2.customerId;
    const body = JSON.stringify({ data: { type: 'customer', id, attributes: { external_customer_id: 'half-closed' } } });
    const r = await rawRequest(
      port,
      `PATCH /customers/${id} HTTP/1.1\r\nHost: api.test\r\nAuthorization: token ${x.reseller.token}\r\n` +
        `Content-Type: ${VND}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      { halfClose: true },
    );
    expect(r.statusLine).toMatch(statusLine(200));
    const before = customer('end2', x.end2, x.reseller);
    const written = { ...before, attributes: { ...before.attributes, external_customer_id: 'half-closed' } };
    expect(JSON.parse(r.body)).toEqual({ data: written, links: { self: `${BASE}/customers/${id}` } });
  });

  it('a half-closed client whose request fails gets the error document', async () => {
    const r = await rawRequest(port, `GET /customers HTTP/1.1\r\nHost: api.test\r\nAuthorization: token hp_not_a_token\r\n\r\n`, {
      halfClose: true,
    });
    expect(r.statusLine).toMatch(statusLine(401));
    expect(JSON.parse(r.body)).toEqual(
      errorDoc('/customers', { id: 'unauthorized', status: '401', title: 'Authentication required', detail: 'Invalid or revoked API token.' }),
    );
  });
});
