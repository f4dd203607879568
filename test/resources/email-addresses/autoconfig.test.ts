// Mail client set-up (API guide "Mail client set-up"; docs/decisions/0022-mail-records-and-discovery.md):
// GET /mail/config-v1.1.xml at autoconfig.<presence domain> answers Thunderbird's clientConfig
// with the IMAP and submission servers of the mail server the domain's package lives on (a node's
// standard TLS ports, or the local stack's registered plain ports); 404 for any other domain; the
// on-demand TLS question says yes to exactly those names; and a Caddy fronting the API serves them
// over HTTPS with a certificate got on demand.
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, call, createTestApp, type TestApp } from '../../helpers/app.js';
import { requireCaddy, startPrivateCaddy, tlsHandshake, type PrivateCaddy } from '../../helpers/caddy.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { nowIso } from '../../../src/db/time.js';
import { MailServersRepository } from '../../../src/provisioning/mail/servers.repository.js';
import { caddyConfig } from '../../../src/provisioning/web/caddy-config.js';
import { CaddyClient } from '../../../src/provisioning/web/caddy-client.js';
import { probeSite } from '../../../src/provisioning/web/probe.js';

const XML_TYPE = 'application/xml; charset=utf-8';

/** The clientConfig a client gets for `domain` (`display` its Unicode form) with these servers, in order. */
function clientConfig(domain: string, display: string, imap: [string, number, string][], smtp: [string, number, string][]): string {
  const server = (tag: string, type: string, [host, port, socket]: [string, number, string]) =>
    `    <${tag} type="${type}">\n      <hostname>${host}</hostname>\n      <port>${port}</port>\n      <socketType>${socket}</socketType>\n` +
    `      <username>%EMAILADDRESS%</username>\n      <authentication>password-cleartext</authentication>\n    </${tag}>\n`;
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<clientConfig version="1.1">\n' +
    `  <emailProvider id="${domain}">\n    <domain>${domain}</domain>\n    <displayName>${display}</displayName>\n    <displayShortName>${display}</displayShortName>\n` +
    imap.map((e) => server('incomingServer', 'imap', e)).join('') +
    smtp.map((e) => server('outgoingServer', 'smtp', e)).join('') +
    '  </emailProvider>\n</clientConfig>\n'
  );
}

const NODE = (domain: string, display = domain) =>
  clientConfig(domain, display, [['mx1.example.net', 993, 'SSL'], ['mx1.example.net', 143, 'STARTTLS']], [['mx1.example.net', 587, 'STARTTLS'], ['mx1.example.net', 465, 'SSL']]);

describe.each(ENGINES)('autoconfig on %s', { timeout: 60_000 }, (engine) => {
  let t: TestApp;
  let x: Tenants;
  const autoconfig = (host: string, url = '/mail/config-v1.1.xml', method: 'GET' | 'HEAD' = 'GET') => call(t.app, method, url, { headers: { host } });
  const ask = async (domain: string) => {
    const r = await call(t.app, 'GET', `/internal/tls-allowed?domain=${encodeURIComponent(domain)}`);
    return { status: r.status, body: r.body };
  };

  beforeAll(async () => {
    t = await createTestApp(engine);
    x = await seedTenants(t.admin);
  });
  afterAll(() => t?.close());

  it('before any mail server is registered there is nothing to set up: 404', async () => {
    const r = await autoconfig('autoconfig.end1.example');
    expect({ status: r.status, type: r.headers['content-type'], cache: r.headers['cache-control'], body: r.body }).toEqual({
      status: 404, type: 'text/plain; charset=utf-8', cache: 'no-cache', body: 'No e-mail of this service at this domain.\n',
    });
    expect(await ask('autoconfig.end1.example')).toEqual({ status: 404, body: 'not a site of this service\n' });
  });

  describe('with mail servers', () => {
    beforeAll(async () => {
      const servers = new MailServersRepository(t.store.db);
      const add = (name: string, smtp: string, imap: string, isDefault: 0 | 1) =>
        servers.add({ name, doveadm_url: 'http://127.0.0.1:9', doveadm_key: 'not-used', smtp, imap, is_default: isDefault, created_at: nowIso() });
      // As node setup registers a mail node, and as deploy/local/up.sh registers the local stack.
      await add('mx1', 'mx1.example.net:25', 'mx1.example.net:993', 1);
      await add('local', '127.0.0.1:20010', '127.0.0.1:20011', 0);
      await t.store.db.updateTable('packages').set({ mail_server_name: 'local' }).where('id', '=', Number(x.end2.packageId)).execute();
    });

    it("answers the clientConfig of the domain's mail server: IMAP 993 and 143, submission 587 and 465; public, cacheable, no token", async () => {
      const r = await autoconfig('autoconfig.end1.example');
      expect({ status: r.status, type: r.headers['content-type'], cache: r.headers['cache-control'], body: r.body }).toEqual({
        status: 200, type: XML_TYPE, cache: 'public, max-age=3600', body: NODE('end1.example'),
      });
      // Thunderbird's query, other letter case, a port and a final dot in Host: the same answer.
      for (const [host, url] of [
        ['autoconfig.end1.example', '/mail/config-v1.1.xml?emailaddress=info%40end1.example'],
        ['AutoConfig.END1.example:443', '/mail/config-v1.1.xml'],
        ['autoconfig.end1.example.', '/mail/config-v1.1.xml'],
      ]) {
        const again = await autoconfig(host, url);
        expect({ status: again.status, body: again.body }, host).toEqual({ status: 200, body: NODE('end1.example') });
      }
      const head = await autoconfig('autoconfig.end1.example', '/mail/config-v1.1.xml', 'HEAD');
      expect({ status: head.status, type: head.headers['content-type'], body: head.body }).toEqual({ status: 200, type: XML_TYPE, body: '' });
    });

    it('a package on the local stack gets its registered plain ports', async () => {
      const r = await autoconfig('autoconfig.end2.example');
      expect({ status: r.status, body: r.body }).toEqual({
        status: 200,
        body: clientConfig('end2.example', 'end2.example', [['127.0.0.1', 20011, 'plain']], [['127.0.0.1', 20010, 'plain']]),
      });
    });

    it('an IDN domain: asked in ACE, shown in Unicode', async () => {
      const { customerId } = await t.admin.customers.createCustomer({ contact: { name: 'B', email: 'b@books.example' } });
      const { packageId } = await t.admin.packages.createPackage({ customerId, planId: Number(x.solo.planId), name: 'b', linuxUser: 'u_books' });
      await t.admin.domains.createDomain({ name: 'bücher.example', customerId, packageId });
      const r = await autoconfig('autoconfig.xn--bcher-kva.example');
      expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: NODE('xn--bcher-kva.example', 'bücher.example') });
    });

    it('404 for a domain that is not hosted here, one without presence, a subdomain, and on any other host', async () => {
      await t.admin.domains.createDomain({ name: 'registered-only.example', customerId: Number(x.solo.customerId), registered: true });
      for (const host of ['autoconfig.unknown.example', 'autoconfig.registered-only.example', 'autoconfig.www.end1.example', 'autoconfig.', 'autoconfig.-.example']) {
        const r = await autoconfig(host);
        expect({ status: r.status, body: r.body }, host).toEqual({ status: 404, body: 'No e-mail of this service at this domain.\n' });
      }
      // The API's own host has no such route: the API's 404.
      const api = await autoconfig('api.test');
      expect({ status: api.status, id: api.json?.errors?.[0]?.id }).toEqual({ status: 404, id: 'resource_not_found' });
    });

    it('on-demand TLS may get a certificate for autoconfig.<hosted domain> and for nothing else new', async () => {
      expect(await ask('autoconfig.end1.example')).toEqual({ status: 200, body: 'ok\n' });
      expect(await ask('AUTOCONFIG.end2.example')).toEqual({ status: 200, body: 'ok\n' });
      for (const host of ['autoconfig.unknown.example', 'end1.example', 'mail.end1.example', 'autoconfig.registered-only.example', '']) {
        expect(await ask(host), host).toEqual({ status: 404, body: 'not a site of this service\n' });
      }
      expect((await call(t.app, 'GET', '/internal/tls-allowed')).status).toBe(404);
    });

    requireCaddy()('a Caddy fronting the API', () => {
      let caddy: PrivateCaddy;
      let ca: string;

      beforeAll(async () => {
        await t.app.listen({ host: '127.0.0.1', port: 0 });
        const api = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
        caddy = await startPrivateCaddy();
        const front = { host: 'api.test', upstream: api, acmeWebroot: path.join(caddy.dir, 'webroot') };
        await new CaddyClient(caddy.server.caddyAdmin).ensure(caddyConfig(caddy.server, [], { askUrl: `http://${api}/internal/tls-allowed`, tls: 'internal', apiFront: front }));
        ca = await fs.readFile(path.join(caddy.dir, 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt'), 'utf8');
      });
      afterAll(() => caddy?.stop());

      it('serves autoconfig.<domain> over HTTPS with a certificate got on demand, and sends plain HTTP there', async () => {
        expect(await tlsHandshake(caddy.server.httpsListen!, 'autoconfig.end1.example', ca)).toEqual({
          subjectaltname: 'DNS:autoconfig.end1.example', issuer: expect.stringContaining('Caddy Local Authority'),
        });
        expect(await probeSite(caddy.server, 'autoconfig.end1.example', '/mail/config-v1.1.xml?emailaddress=info%40end1.example', { https: true })).toEqual({
          status: 200, location: null, body: NODE('end1.example'),
        });
        expect(await probeSite(caddy.server, 'autoconfig.end1.example', '/mail/config-v1.1.xml')).toEqual({
          status: 301, location: 'https://autoconfig.end1.example/mail/config-v1.1.xml', body: '',
        });
      });

      it('gets no certificate for a domain that is not hosted here', async () => {
        await expect(tlsHandshake(caddy.server.httpsListen!, 'autoconfig.unknown.example', ca)).rejects.toThrow();
      });
    });
  });
});

describe('the autoconfig record follows PUBLIC_BASE_URL and DNS_BASE_AUTOCONFIG', () => {
  it.each([
    [{}, 'api.test'],
    [{ DNS_BASE_AUTOCONFIG: 'Mail-Setup.Example.NET.' }, 'mail-setup.example.net'],
    [{ DNS_BASE_AUTOCONFIG: 'off' }, null],
    [{ PUBLIC_BASE_URL: 'http://localhost:8080' }, null],
    [{ PUBLIC_BASE_URL: 'https://192.0.2.7' }, null],
  ])('%j → %s', async (env, target) => {
    const t = await createTestApp('sqlite', env as Record<string, string>);
    try {
      const x = await seedTenants(t.admin);
      const r = await call(t.app, 'GET', '/dns-records?filter[domain]=solo.example&filter[record_type]=CNAME', { token: x.solo.token });
      expect(r.json.data.map((d: any) => [d.attributes.name, d.attributes.data])).toEqual(target ? [['autoconfig', target]] : []);
    } finally {
      await t.close();
    }
  });
  it('a host name is required', async () => {
    await expect(createTestApp('sqlite', { DNS_BASE_AUTOCONFIG: 'not a host' })).rejects.toThrow('DNS_BASE_AUTOCONFIG: "not a host" is not valid (or off)');
  });
});
