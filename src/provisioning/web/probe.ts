// What a web server answers for a host (API guide "Subdomains"; docs/decisions/0008-web-servers.md
// "Done = live"): one request to the server's own listen address with that Host (and, over HTTPS,
// that SNI name), no redirect followed, so a job can compare the exact Location or a marker body
// with what it configured.
import http from 'node:http';
import https from 'node:https';
import { splitListen } from './caddy-config.js';
import type { WebServerConn } from './sites.js';

export interface ProbeAnswer {
  status: number;
  location: string | null;
  body: string;
}

/** Bodies are read up to this many bytes (a marker or an error page, never a download). */
const MAX_BODY = 1 << 20;

/** Where to connect for a listen address: '0.0.0.0' and '' → 127.0.0.1, '::' → ::1. */
function dialHost(host: string): string {
  if (host === '' || host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

/**
 * What the web server answers for `host` + `path` on plain HTTP (or HTTPS with SNI = host, any
 * cert accepted): `await probeSite(server, 'shop.example.com', '/a?x=1')` →
 * `{ status: 301, location: 'https://t.example/a?x=1', body: '' }`. Rejects when the server
 * cannot be reached, the TLS handshake fails or nothing answers within `timeoutMs` (10 s).
 */
export function probeSite(
  server: WebServerConn,
  host: string,
  path = '/',
  o: { https?: boolean; timeoutMs?: number } = {},
): Promise<ProbeAnswer> {
  const secure = o.https === true;
  const listen = secure ? server.httpsListen : server.httpListen;
  if (listen === null) return Promise.reject(new Error(`web server ${server.name} has no https listen address`));
  const { host: listenHost, port } = splitListen(listen);
  const timeoutMs = o.timeoutMs ?? 10_000;
  const scheme = secure ? 'https' : 'http';
  const what = `${scheme}://${host}${path} on ${server.name} (${listen})`;
  return new Promise((resolve, reject) => {
    const options: https.RequestOptions = {
      host: dialHost(listenHost),
      port,
      path,
      method: 'GET',
      agent: false,
      headers: { Host: host, 'User-Agent': 'hostplane-probe' },
      timeout: timeoutMs,
    };
    if (secure) Object.assign(options, { servername: host, rejectUnauthorized: false });
    const req = (secure ? https : http).request(options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < MAX_BODY) chunks.push(c);
        size += c.length;
      });
      res.on('end', () => {
        const location = res.headers.location;
        resolve({
          status: res.statusCode ?? 0,
          location: typeof location === 'string' ? location : null,
          body: Buffer.concat(chunks).subarray(0, MAX_BODY).toString('utf8'),
        });
      });
      res.on('error', (err) => reject(new Error(`probe of ${what} failed: ${err.message}`)));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => reject(new Error(`probe of ${what} failed: ${err.message}`)));
    req.end();
  });
}
