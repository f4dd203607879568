// What the /subdomains tests share (docs/decisions/0008-web-servers.md): a store with the local
// stack's web server registered (deploy/local/up.sh: a private Caddy on loopback ports; PHP-FPM
// masters started by the worker under the stack dir), an app that listens (Caddy asks it about
// on-demand certificates) with the worker and reconciler of that web server and a DNS server, and a
// customer whose plan offers the installed PHP version.
import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { call, createTestApp, freshStore, processUrl, type EngineName, type TestApp, type TestStore } from './app.js';
import { freePort } from './ports.js';
import { DOWN, PHP, script, upOnFreePorts, STACK_UP_MS } from './stack.js';
import type { WebServerConn } from '../../src/provisioning/web/sites.js';
import { WebServersRepository, webServerConn } from '../../src/provisioning/web/servers.repository.js';

/** The name up.sh registers the stack's web server under. */
export const WEB = 'local';
/** The installed PHP version the plans offer first. */
export const PHP_VERSION = Object.keys(PHP)[0] ?? '8.2';

export interface SubdomainsSuite {
  t: TestApp;
  /** The app's base URL (links start with it). */
  base: string;
  /** The stack's web server as the driver sees it (http/https listen addresses, home root). */
  web: WebServerConn;
  /** The stack dir (caddy/caddy.pid, www/<linux user>/…). */
  dir: string;
  /** stack.json's web.sftp, with `{ sftp: true }`. */
  sftp?: { host: string; port: number; host_key_fingerprint: string; known_hosts: string; log: string };
  /** A customer of its own with a package on a plan offering PHP_VERSION and a presence domain. */
  customer(o?: { maxSubdomains?: number; phpVersions?: string[]; databaseVersions?: string[]; linuxUser?: string }): Promise<{ token: string; domain: string; packageId: string; linuxUser: string; home: string }>;
}

/**
 * `const s = useSubdomainsSuite(engine)`: the stack, the app and the DNS server for one engine.
 * `{ sftp: true }`: in a dir every user can enter, so the stack runs its SFTP server and the
 * packages get users of their own (docs/decisions/0023-sftp.md); `s.sftp` then says where.
 */
export function useSubdomainsSuite(engine: EngineName, o: { sftp?: boolean } = {}): SubdomainsSuite {
  const s = {} as SubdomainsSuite;
  let ts: TestStore | undefined;
  let root: string | undefined;
  let n = 0;
  beforeAll(async () => {
    ts = await freshStore(engine);
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-web-'));
    if (o.sftp) await fs.chmod(root, 0o755);
    s.dir = path.join(root, 'stack');
    const up = await upOnFreePorts(s.dir, { DATABASE_URL: processUrl(ts) });
    expect(up.run, up.run.stderr).toMatchObject({ code: 0 });
    if (o.sftp) {
      s.sftp = JSON.parse(await fs.readFile(path.join(s.dir, 'stack.json'), 'utf8')).web.sftp;
      expect(s.sftp, up.run.stdout).toBeDefined();
    }
    s.web = webServerConn((await new WebServersRepository(ts.store.db).byName(WEB))!);
    const port = await freePort();
    s.base = `http://127.0.0.1:${port}`;
    s.t = await createTestApp(
      engine,
      { WEB_SERVER: WEB, WEB_TLS_ISSUER: 'internal', PUBLIC_BASE_URL: s.base, JOB_POLL_MS: '50' },
      { worker: true, dns: true, store: ts, reconcileMs: 500 },
    );
    await s.t.app.listen({ host: '127.0.0.1', port });
    s.customer = async (o = {}) => {
      const key = `c${++n}`;
      const { customerId, contactId } = await s.t.admin.customers.createCustomer({ organization: `${key} AG`, contact: { name: key, email: `admin@${key}.example`, phone: '+49 30 1234567' } });
      const { planId } = await s.t.admin.packages.createPlan({
        name: `${key} plan`, maxSubdomains: o.maxSubdomains ?? 20, phpVersions: o.phpVersions ?? [PHP_VERSION],
        ...(o.databaseVersions ? { maxDatabases: 5, databaseVersions: o.databaseVersions } : {}),
      });
      const linuxUser = o.linuxUser ?? `web_${key}`;
      const { packageId } = await s.t.admin.packages.createPackage({ customerId, planId, name: key, linuxUser });
      const { domain } = await s.t.admin.domains.createDomain({ name: `${key}-site.example`, customerId, packageId, registered: true });
      const { token } = await s.t.admin.customers.issueToken(contactId, 'test');
      return { token, domain, packageId: String(packageId), linuxUser, home: path.join(s.web.homeRoot, linuxUser) };
    };
  }, STACK_UP_MS);
  afterAll(async () => {
    await s.t?.close();
    if (s.dir) await script(DOWN, [s.dir], {});
    await ts?.drop();
    if (root) await fs.rm(root, { recursive: true, force: true });
  }, 60_000);
  return s;
}

/** POST /subdomains as `token`. */
export const postSubdomain = (t: TestApp, token: string, attributes: Record<string, unknown>) =>
  call(t.app, 'POST', '/subdomains', { token, body: { data: { type: 'subdomain', attributes } } });

/** PATCH /subdomains/{id} as `token`. */
export const patchSubdomain = (t: TestApp, token: string, id: string, attributes: Record<string, unknown>) =>
  call(t.app, 'PATCH', `/subdomains/${id}`, { token, body: { data: { type: 'subdomain', id, attributes } } });

/**
 * What a browser gets from the web server for `host` + `path`, not following redirects: plain
 * HTTP to its listen address with that Host, or HTTPS with SNI = host (Caddy's internal CA is not
 * trusted here, so the certificate's names are returned instead of verified).
 */
export function browse(web: WebServerConn, host: string, urlPath = '/', o: { https?: boolean } = {}): Promise<{ status: number; location: string | null; body: string; certNames: string | null }> {
  const listen = o.https ? web.httpsListen! : web.httpListen;
  const port = Number(listen.slice(listen.lastIndexOf(':') + 1));
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port, path: urlPath, method: 'GET', headers: { host }, timeout: 10_000, agent: false as const };
    const done = (res: http.IncomingMessage) => {
      // Read while the socket is still the response's (it is handed back to the agent at the end).
      const cert = o.https ? (res.socket as import('node:tls').TLSSocket).getPeerCertificate() : null;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, location: (res.headers.location as string | undefined) ?? null, body, certNames: cert ? String(cert.subjectaltname ?? '') : null });
      });
    };
    const req = o.https ? https.request({ ...options, servername: host, rejectUnauthorized: false, agent: false }, done) : http.request(options, done);
    req.on('timeout', () => req.destroy(new Error(`no answer from ${listen} for ${host}`)));
    req.on('error', reject);
    req.end();
  });
}
