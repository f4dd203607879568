// DoveadmClient's HTTP exchange (src/provisioning/mail/doveadm.ts) against a small HTTP server
// playing doveadm: the request as doveadm reads it (path, key, JSON body with its length), and the
// failures a person must tell apart: a server that is silent past the timeout, one that closes in
// the middle of its answer, one that answers something else; the key in none of the messages.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DoveadmClient, DoveadmError } from '../../../src/provisioning/mail/doveadm.js';

const KEY = 'secret-doveadm-key';

describe('DoveadmClient over HTTP', () => {
  const seen: { method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  let behave: (req: http.IncomingMessage, res: http.ServerResponse) => void = () => {};
  let origin: string;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      behave(req, res);
    });
  });
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });

  const failure = (p: Promise<unknown>) => p.then(() => null, (e: DoveadmError) => ({ error: e.constructor.name, message: e.message, status: e.status }));

  it('a POST as doveadm reads it: /doveadm/v1, the key in its header, the JSON body with its length; the answer by tag', async () => {
    behave = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('[["doveadmResponse",[{"type":"STORAGE"}],"c0"]]');
    seen.length = 0;
    expect(await new DoveadmClient(origin, KEY).run('quotaGet', { user: 'ä@d.example' })).toEqual({ ok: true, data: [{ type: 'STORAGE' }] });
    const body = '[["quotaGet",{"user":"ä@d.example"},"c0"]]';
    expect(seen).toEqual([{
      method: 'POST', url: '/doveadm/v1', body,
      headers: expect.objectContaining({ authorization: `X-Dovecot-API ${Buffer.from(KEY).toString('base64')}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
    }]);
  });

  it('silent past the timeout, closing in the middle of the answer, answering 500: each its own words, without the key', async () => {
    behave = () => {}; // never answers
    expect(await failure(new DoveadmClient(origin, KEY, { timeoutMs: 200 }).commands())).toEqual({ error: 'DoveadmError', message: `doveadm at ${origin} did not answer: no answer within 0.2 s`, status: undefined });
    behave = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' }).write('[{"command":');
      setTimeout(() => res.destroy(), 50);
    };
    expect(await failure(new DoveadmClient(origin, KEY, { timeoutMs: 5000 }).commands())).toEqual({ error: 'DoveadmError', message: `doveadm at ${origin} did not answer in full: aborted`, status: undefined });
    behave = (_req, res) => {
      res.writeHead(200).write('[');
    };
    expect(await failure(new DoveadmClient(origin, KEY, { timeoutMs: 200 }).commands())).toEqual({ error: 'DoveadmError', message: `doveadm at ${origin} did not answer in full: no answer within 0.2 s`, status: undefined });
    behave = (_req, res) => res.writeHead(500).end(`no ${KEY} here`);
    expect(await failure(new DoveadmClient(origin, KEY).commands())).toEqual({ error: 'DoveadmError', message: `doveadm at ${origin} answered HTTP 500: no *** here`, status: 500 });
  });
});
