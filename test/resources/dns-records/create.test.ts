// POST /dns-records (API guide "DNS records", "Queue jobs", "Compatibility with existing clients"):
// 202 with the queue-job, the record and its job in one transaction, validation of every type, name,
// TTL and the envelope (422 pointing at each faulty field), and which domains a caller may use.
import { beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, type TestApp } from '../../helpers/app.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { errorBody, invalidAttribute } from '../../helpers/errors.js';
import { DOMAIN_NAME_RULE } from '../../../src/domain-name.js';
import { HEX64, dnsRecordsSuite, jobBody, record, recordIdOf, txt, type Rec } from '../../helpers/dns-records.js';

describe.each(ENGINES)('dns-records on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  const { post, get, list, row } = dnsRecordsSuite(engine, (a) => ({ t, x } = a));

  describe('POST /dns-records (API guide "Queue jobs", "Compatibility with existing clients")', () => {
    it('answers 202 with the queue-job document and Content-Location; the record is listed at once', async () => {
      const r = await call(t.app, 'POST', '/dns-records', {
        token: x.end1.token,
        headers: { accept: 'application/vnd.hostplane.v1+json' },
        body: { data: { type: 'dns-record', attributes: { record_type: 'TXT', name: '_acme-challenge', domain: 'end1.example', data: 'token-value-1', ttl: 300 } } },
      });
      expect(r.status).toBe(202);
      expect(r.headers['content-type']).toBe('application/vnd.api+json');
      const recordId = recordIdOf(r);
      expect(recordId).toMatch(/^[1-9][0-9]*$/);
      expect(r.headers['content-location']).toBe(`${BASE}/queue-jobs/${r.json.data.id}`);
      expect(r.body).toBe(jobBody(r, 'create', recordId, x.end1.customerId, `${BASE}/dns-records`));
      // The job as GET /queue-jobs/{id} shows it: the same representation.
      const job = await call(t.app, 'GET', `/queue-jobs/${r.json.data.id}`, { token: x.end1.token });
      expect(job.json.data).toEqual(r.json.data);
      // Pending (not served yet), but a client listing right after POST finds it.
      expect((await row(recordId))?.state).toBe('pending');
      const expected = record(recordId, { record_type: 'TXT', name: '_acme-challenge', domain: 'end1.example', data: 'token-value-1', ttl: 300 });
      expect((await get(recordId)).json.data).toEqual(expected);
      expect((await list('?filter[domain]=end1.example&filter[record_type]=TXT')).json.data).toContainEqual(expected);
    });

    it('a reseller creates records in its end customers\' domains; the job belongs to the end customer', async () => {
      const r = await post({ record_type: 'A', name: 'by-reseller', domain: 'end2.example', data: '192.0.2.99' }, x.reseller.token);
      expect(r.status).toBe(202);
      expect(r.body).toBe(jobBody(r, 'create', recordIdOf(r), x.end2.customerId, `${BASE}/dns-records`));
      expect((await get(recordIdOf(r), x.end2.token)).json.data).toEqual(
        record(recordIdOf(r), { record_type: 'A', name: 'by-reseller', domain: 'end2.example', data: '192.0.2.99' }),
      );
    });

    it('the record and its job are written in one transaction: a rejected record leaves no job', async () => {
      const before = await t.store.db.selectFrom('queue_jobs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      expect((await post(txt('', 'v=spf1 mx -all'))).status).toBe(409);
      const after = await t.store.db.selectFrom('queue_jobs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n));
    });
  });

  describe('names, types and data (API guide "DNS records")', () => {
    const accepted: [string, Record<string, unknown>, Partial<Rec>][] = [
      ['A', { record_type: 'A', name: 'a-host', data: '192.0.2.1' }, { name: 'a-host', data: '192.0.2.1' }],
      ['AAAA, canonical text (RFC 5952)', { record_type: 'AAAA', name: 'v6', data: '2001:DB8:0:0::0:1' }, { name: 'v6', data: '2001:db8::1' }],
      ['CNAME with trailing dot, lower-cased', { record_type: 'CNAME', name: 'alias', data: 'Target.Example.NET.' }, { name: 'alias', data: 'target.example.net' }],
      ['CNAME to an _ name (ACME delegation)', { record_type: 'CNAME', name: '_acme-challenge.deleg', data: '_acme-challenge.auth.example.net' }, { name: '_acme-challenge.deleg', data: '_acme-challenge.auth.example.net' }],
      ['CNAME to an IDN host', { record_type: 'CNAME', name: 'idn-target', data: 'münchen.example' }, { name: 'idn-target', data: 'xn--mnchen-3ya.example' }],
      ['MX, single spaces, lower case', { record_type: 'MX', name: 'mx', data: ' 10  Mail.Example.COM. ' }, { name: 'mx', data: '10 mail.example.com' }],
      ['null MX (RFC 7505)', { record_type: 'MX', name: 'nomail', data: '0 .' }, { name: 'nomail', data: '0 .' }],
      ['TXT kept as sent', { record_type: 'TXT', name: 'note', data: ' two  spaces "and quotes" ' }, { name: 'note', data: ' two  spaces "and quotes" ' }],
      ['TXT of 4096 bytes (split on the wire)', { record_type: 'TXT', name: 'long', data: 'k'.repeat(4096) }, { name: 'long', data: 'k'.repeat(4096) }],
      ['SRV', { record_type: 'SRV', name: '_sip._tcp', data: '10 60 5060 SIP.Example.com.' }, { name: '_sip._tcp', data: '10 60 5060 sip.example.com' }],
      ['SRV "no service"', { record_type: 'SRV', name: '_imap._tcp', data: '0 0 0 .' }, { name: '_imap._tcp', data: '0 0 0 .' }],
      ['CAA, tag lower-cased, value quoted', { record_type: 'CAA', name: '', data: '0 ISSUE letsencrypt.org' }, { data: '0 issue "letsencrypt.org"' }],
      ['CAA iodef', { record_type: 'CAA', name: 'caa', data: '128 iodef "mailto:security@example.com"' }, { name: 'caa', data: '128 iodef "mailto:security@example.com"' }],
      ['NS below the apex', { record_type: 'NS', name: 'sub', data: 'ns1.example.net.' }, { name: 'sub', data: 'ns1.example.net' }],
      ['DS, digest joined and upper-cased', { record_type: 'DS', name: 'sub', data: `12345 13 2 ${HEX64.slice(0, 32)} ${HEX64.slice(32)}` }, { name: 'sub', data: `12345 13 2 ${HEX64.toUpperCase()}` }],
      ['TLSA', { record_type: 'TLSA', name: '_443._tcp.www', data: `3 1 1 ${HEX64}` }, { name: '_443._tcp.www', data: `3 1 1 ${HEX64.toUpperCase()}` }],
      ['record_type in any case', { record_type: 'txt', name: 'lower-type', data: 'x' }, { record_type: 'TXT', name: 'lower-type', data: 'x' }],
      ['@ is the apex', { record_type: 'TXT', name: '@', data: 'at-apex' }, { data: 'at-apex' }],
      ['no name is the apex (clients that omit empty fields)', { record_type: 'TXT', data: 'omitted-name' }, { data: 'omitted-name' }],
      ['several labels, upper case', { record_type: 'A', name: 'A.B.C', data: '192.0.2.2' }, { name: 'a.b.c', data: '192.0.2.2' }],
      ['_ labels', { record_type: 'TXT', name: '_dmarc', data: 'v=DMARC1; p=none' }, { name: '_dmarc', data: 'v=DMARC1; p=none' }],
      ['a leading * wildcard', { record_type: 'A', name: '*', data: '192.0.2.3' }, { name: '*', data: '192.0.2.3' }],
      ['a wildcard below a label', { record_type: 'A', name: '*.shop', data: '192.0.2.4' }, { name: '*.shop', data: '192.0.2.4' }],
      ['an IDN name gets *_ace forms', { record_type: 'A', name: 'Bücher', data: '192.0.2.5' }, { name: 'bücher', name_ace: 'xn--bcher-kva', data: '192.0.2.5' }],
      ['an ACE name shows in Unicode', { record_type: 'A', name: 'xn--mnchen-3ya.shop', data: '192.0.2.6' }, { name: 'münchen.shop', name_ace: 'xn--mnchen-3ya.shop', data: '192.0.2.6' }],
      ['the domain in Unicode, upper case or with a trailing dot', { record_type: 'TXT', name: 'dom', domain: 'END1.Example.', data: 'x' }, { name: 'dom', data: 'x' }],
      ['ttl at both ends', { record_type: 'TXT', name: 'ttl-min', data: 'x', ttl: 300 }, { name: 'ttl-min', data: 'x', ttl: 300 }],
      ['ttl 86400', { record_type: 'TXT', name: 'ttl-max', data: 'x', ttl: 86400 }, { name: 'ttl-max', data: 'x', ttl: 86400 }],
      ['ttl null is the default', { record_type: 'TXT', name: 'ttl-null', data: 'x', ttl: null }, { name: 'ttl-null', data: 'x' }],
    ];
    it.each(accepted)('accepts %s and stores the normalised form', async (_label, attrs, want) => {
      const r = await post({ domain: 'end1.example', ...attrs });
      expect(r.status).toBe(202);
      const id = recordIdOf(r);
      expect(r.body).toBe(jobBody(r, 'create', id, x.end1.customerId, `${BASE}/dns-records`));
      const g = await get(id);
      expect(g.json.data).toEqual(record(id, { record_type: String(attrs.record_type), domain: 'end1.example', data: '', ...want } as Rec));
    });

    const rejected: [string, Record<string, unknown>, string, string][] = [
      ['an uncreatable type', { record_type: 'SOA', data: 'x' }, 'record_type', 'Unsupported record type; creatable types: A, AAAA, CNAME, MX, TXT, SRV, CAA, NS, DS, TLSA.'],
      ['A not an address', { record_type: 'A', data: '192.0.2' }, 'data', 'A data must be an IPv4 address in dotted-decimal form, e.g. 192.0.2.10.'],
      ['A with leading zeros', { record_type: 'A', data: '010.0.0.1' }, 'data', 'A data must be an IPv4 address in dotted-decimal form, e.g. 192.0.2.10.'],
      ['A with two addresses', { record_type: 'A', data: '192.0.2.1 192.0.2.2' }, 'data', 'data must have the form "IPv4 address".'],
      ['AAAA with a zone index', { record_type: 'AAAA', data: 'fe80::1%eth0' }, 'data', 'AAAA data must be an IPv6 address, e.g. 2001:db8::10.'],
      ['AAAA an IPv4 address', { record_type: 'AAAA', data: '192.0.2.1' }, 'data', 'AAAA data must be an IPv6 address, e.g. 2001:db8::10.'],
      ['CNAME a relative name', { record_type: 'CNAME', name: 'c1', data: 'www' }, 'data', 'CNAME data must be a fully qualified domain name (it is always absolute).'],
      ['CNAME an address', { record_type: 'CNAME', name: 'c2', data: '192.0.2.1' }, 'data', 'CNAME data must be a fully qualified domain name (it is always absolute).'],
      ['CNAME at the apex', { record_type: 'CNAME', name: '', data: 'target.example.net' }, 'name', 'CNAME records are not allowed at the apex of the domain.'],
      ['MX without preference', { record_type: 'MX', data: 'mail.example.com' }, 'data', 'data must have the form "preference host".'],
      ['MX preference out of range', { record_type: 'MX', data: '65536 mail.example.com' }, 'data', 'MX preference must be a whole number from 0 to 65535.'],
      ['MX "." with a preference', { record_type: 'MX', data: '10 .' }, 'data', 'MX host must be a fully qualified host name (or "." with preference 0: null MX, RFC 7505).'],
      ['MX host with _', { record_type: 'MX', data: '10 _mail.example.com' }, 'data', 'MX host must be a fully qualified host name (or "." with preference 0: null MX, RFC 7505).'],
      ['TXT empty', { record_type: 'TXT', data: '' }, 'data', 'TXT data must not be empty.'],
      ['TXT with a control character', { record_type: 'TXT', data: 'bell\u0007' }, 'data', 'TXT data must be printable text without control characters.'],
      ['TXT over 4096 bytes', { record_type: 'TXT', data: 'ü'.repeat(2049) }, 'data', 'data must be at most 4096 bytes.'],
      ['SRV without _service._proto', { record_type: 'SRV', name: 'sip', data: '10 60 5060 sip.example.com' }, 'name', 'SRV name must start with _service._protocol, e.g. _sip._tcp (RFC 2782).'],
      ['SRV with three fields', { record_type: 'SRV', name: '_sip._tcp', data: '10 5060 sip.example.com' }, 'data', 'data must have the form "priority weight port target".'],
      ['CAA unterminated quote', { record_type: 'CAA', data: '0 issue "letsencrypt.org' }, 'data', 'CAA value: a quoted value needs its closing quote.'],
      ['CAA iodef not a URL', { record_type: 'CAA', data: '0 iodef "ftp://example.com"' }, 'data', 'CAA iodef value must be a mailto: or http(s): URL (RFC 8659 §4.4).'],
      ['CAA flags out of range', { record_type: 'CAA', data: '256 issue "ca.example"' }, 'data', 'CAA flags must be a whole number from 0 to 255.'],
      ['NS at the apex', { record_type: 'NS', name: '@', data: 'ns1.example.net' }, 'name', 'NS records are not allowed at the apex of the domain.'],
      ['NS at a wildcard', { record_type: 'NS', name: '*', data: 'ns1.example.net' }, 'name', 'NS records are not allowed at a wildcard name.'],
      ['DS digest of the wrong length', { record_type: 'DS', name: 'sub', data: '12345 13 2 ABCD' }, 'data', 'DS digest must have 64 hex digits.'],
      ['DS unknown digest type', { record_type: 'DS', name: 'sub', data: `12345 13 3 ${HEX64}` }, 'data', 'DS digest type must be 1 (SHA-1), 2 (SHA-256) or 4 (SHA-384).'],
      ['TLSA without _port._proto', { record_type: 'TLSA', name: 'www', data: `3 1 1 ${HEX64}` }, 'name', 'TLSA name must start with _port._protocol, e.g. _443._tcp (RFC 6698).'],
      ['TLSA odd hex', { record_type: 'TLSA', name: '_443._tcp', data: '3 1 0 abc' }, 'data', 'TLSA certificate association data must be hexadecimal (an even number of digits 0-9, A-F).'],
      ['name with an empty label', { record_type: 'A', name: 'a..b', data: '192.0.2.1' }, 'name', 'name has an empty label.'],
      ['name with a trailing dot', { record_type: 'A', name: 'www.', data: '192.0.2.1' }, 'name', 'name is relative to the domain: leave out the trailing dot and the domain.'],
      ['* not first', { record_type: 'A', name: 'a.*', data: '192.0.2.1' }, 'name', 'A wildcard * is allowed only as the first label of name.'],
      ['* inside a label', { record_type: 'A', name: 'foo*', data: '192.0.2.1' }, 'name', 'A wildcard is a whole label: * alone, as the first label.'],
      ['name with a space', { record_type: 'A', name: 'a b', data: '192.0.2.1' }, 'name', 'name must not contain spaces or control characters.'],
      ['name with a leading hyphen', { record_type: 'A', name: '-a', data: '192.0.2.1' }, 'name', '"-a" is not a valid label: letters, digits, hyphens and underscores, at most 63 characters, no hyphen at either end.'],
      ['a label of 64 characters', { record_type: 'A', name: 'l'.repeat(64), data: '192.0.2.1' }, 'name', `"${'l'.repeat(64)}" is not a valid label: letters, digits, hyphens and underscores, at most 63 characters, no hyphen at either end.`],
      ['a name too long with the domain', { record_type: 'A', name: Array(5).fill('l'.repeat(50)).join('.'), data: '192.0.2.1' }, 'name', 'name and domain together exceed 253 characters.'],
      ['ttl below 300', { record_type: 'TXT', data: 'x', ttl: 299 }, 'ttl', 'ttl must be from 300 to 86400 seconds.'],
      ['ttl above 86400', { record_type: 'TXT', data: 'x', ttl: 86401 }, 'ttl', 'ttl must be from 300 to 86400 seconds.'],
      ['ttl not whole', { record_type: 'TXT', data: 'x', ttl: 300.5 }, 'ttl', 'Must be integer.'],
      ['ttl as a string', { record_type: 'TXT', data: 'x', ttl: '300' }, 'ttl', 'Must be integer.'],
      ['data not a string', { record_type: 'MX', data: 10 }, 'data', 'Must be string.'],
      ['an unknown attribute', { record_type: 'MX', data: '10 mail.example.com', priority: 10 }, 'priority', 'Unknown or read-only attribute "priority".'],
      ['a response-only attribute', { record_type: 'A', data: '192.0.2.1', fqdn: 'end1.example' }, 'fqdn', 'Unknown or read-only attribute "fqdn".'],
    ];
    it.each(rejected)('422 for %s, pointing at the field', async (_label, attrs, field, detail) => {
      const r = await post({ domain: 'end1.example', ...attrs });
      expect(r.status).toBe(422);
      expect(r.json).toEqual(invalidAttribute('/dns-records', field, detail));
    });

    it('every faulty field is reported at once', async () => {
      const r = await post({ record_type: 'MX', name: 'a..b', domain: 'end1.example', data: 'mail', ttl: 1 });
      expect(r.status).toBe(422);
      expect(r.json).toEqual({
        errors: [
          invalidAttribute('/dns-records', 'name', 'name has an empty label.').errors[0],
          invalidAttribute('/dns-records', 'ttl', 'ttl must be from 300 to 86400 seconds.').errors[0],
          invalidAttribute('/dns-records', 'data', 'data must have the form "preference host".').errors[0],
        ],
        links: { self: `${BASE}/dns-records` },
      });
    });

    it('the envelope: data.type must be dns-record, no client id, required attributes', async () => {
      const wrongType = await call(t.app, 'POST', '/dns-records', {
        token: x.end1.token,
        body: { data: { type: 'dns-records', attributes: { record_type: 'A', domain: 'end1.example', data: '192.0.2.1' } } },
      });
      expect(wrongType.status).toBe(422);
      expect(wrongType.json).toEqual(
        errorBody('invalid_api_data', 422, 'Invalid data', 'Must be one of: "dns-record".', `${BASE}/dns-records`, { pointer: '/data/type' }),
      );
      const withId = await call(t.app, 'POST', '/dns-records', {
        token: x.end1.token,
        body: { data: { type: 'dns-record', id: '5', attributes: { record_type: 'A', domain: 'end1.example', data: '192.0.2.1' } } },
      });
      expect(withId.json).toEqual(
        errorBody('invalid_api_data', 422, 'Invalid data', 'Unknown or read-only attribute "id".', `${BASE}/dns-records`, { pointer: '/data/id' }),
      );
      const missing = await post({ record_type: 'A', domain: 'end1.example' });
      expect(missing.json).toEqual(invalidAttribute('/dns-records', 'data', '"data" is required.'));
      const noBody = await call(t.app, 'POST', '/dns-records', { token: x.end1.token, headers: { 'content-type': 'application/vnd.api+json' } });
      expect(noBody.status).toBe(422);
      expect(noBody.json).toEqual(errorBody('invalid_api_data', 422, 'Invalid data', 'Must be object.', `${BASE}/dns-records`, { pointer: '/' }));
    });

    it('ttl defaults to DNS_DEFAULT_TTL', async () => {
      const other = await createTestApp(engine, { DNS_DEFAULT_TTL: '900' });
      try {
        const y = await seedTenants(other.admin);
        const r = await call(other.app, 'POST', '/dns-records', {
          token: y.solo.token,
          body: { data: { type: 'dns-record', attributes: { record_type: 'TXT', name: 'x', domain: 'solo.example', data: 'v' } } },
        });
        expect(r.status).toBe(202);
        const g = await call(other.app, 'GET', `/dns-records/${recordIdOf(r)}`, { token: y.solo.token });
        expect(g.json.data).toEqual(record(recordIdOf(r), { record_type: 'TXT', name: 'x', domain: 'solo.example', data: 'v', ttl: 900 }));
        // Base records of that deployment take it too.
        const base = await call(other.app, 'GET', '/dns-records?filter[domain]=solo.example&filter[record_type]=MX', { token: y.solo.token });
        expect(base.json.data.map((d: any) => d.attributes.ttl)).toEqual([900]);
      } finally {
        await other.close();
      }
    });
  });

  describe('the domain (API guide "DNS records": a presence domain of the caller, without subdomains)', () => {
    // A domain of end1 that is registered only, without presence (no package).
    beforeAll(async () => {
      await t.admin.domains.createDomain({ name: 'registered-only.example', customerId: Number(x.end1.customerId), registered: true });
    });

    it('another tenant\'s domain and an unknown domain answer 404', async () => {
      for (const domain of ['end2.example', 'solo.example', 'reseller.example', 'nowhere.example']) {
        const r = await post({ record_type: 'A', name: 'x', domain, data: '192.0.2.1' });
        expect(r.status).toBe(404);
        expect(r.json).toEqual(errorBody('resource_not_found', 404, 'Resource not found', 'No such domain.', `${BASE}/dns-records`));
      }
    });

    it('a domain without presence answers 422', async () => {
      const r = await post({ record_type: 'A', name: 'x', domain: 'registered-only.example', data: '192.0.2.1' });
      expect(r.status).toBe(422);
      expect(r.json).toEqual(
        invalidAttribute('/dns-records', 'domain', 'registered-only.example is not used in a package (no presence); DNS records need a presence domain.'),
      );
    });

    it('a subdomain of one of the caller\'s domains answers 422 naming domain and name', async () => {
      const r = await post({ record_type: 'TXT', name: '', domain: '_acme-challenge.www.end1.example', data: 'x' });
      expect(r.status).toBe(422);
      expect(r.json).toEqual(
        invalidAttribute('/dns-records', 'domain', 'domain takes the domain without subdomains: use domain "end1.example" and name "_acme-challenge.www".'),
      );
      // The record's own name is kept in front of the labels moved out of domain; @ is the apex.
      for (const [name, hint] of [['_x', '_x.www'], ['a.b', 'a.b.www'], ['@', 'www'], ['*', '*.www']]) {
        const sub = await post({ record_type: 'TXT', name, domain: 'www.end1.example', data: 'x' });
        expect(sub.json).toEqual(
          invalidAttribute('/dns-records', 'domain', `domain takes the domain without subdomains: use domain "end1.example" and name "${hint}".`),
        );
      }
      // …but a subdomain of someone else's domain is simply unknown.
      const foreign = await post({ record_type: 'TXT', name: '', domain: 'www.end2.example', data: 'x' });
      expect(foreign.status).toBe(404);
    });

    it('a name that cannot be a domain answers 422', async () => {
      const r = await post({ record_type: 'A', name: 'x', domain: 'not a domain', data: '192.0.2.1' });
      expect(r.json).toEqual(invalidAttribute('/dns-records', 'domain', `"not a domain" is not a domain name: it contains a space. ${DOMAIN_NAME_RULE}`));
    });

    it('an IDN domain: domain is its id (ACE), fqdn in Unicode', async () => {
      await t.admin.domains.createDomain({ name: 'Bücher.example', customerId: Number(x.end1.customerId), packageId: Number(x.end1.packageId) });
      const r = await post({ record_type: 'A', name: 'Straße', domain: 'bücher.example', data: '192.0.2.7' });
      expect(r.status).toBe(202);
      const id = recordIdOf(r);
      const g = await get(id);
      expect(g.body).toBe(
        JSON.stringify({
          data: record(id, { record_type: 'A', name: 'straße', name_ace: 'xn--strae-oqa', domain: 'xn--bcher-kva.example', domain_unicode: 'bücher.example', data: '192.0.2.7' }),
          links: { self: `${BASE}/dns-records/${id}` },
        }),
      );
      // Filters take either form.
      for (const f of ['bücher.example', 'XN--BCHER-KVA.example']) {
        const l = await list(`?filter[domain]=${encodeURIComponent(f)}&filter[record_type]=A`);
        expect(l.json.data.map((d: any) => d.id)).toContain(id);
      }
    });
  });
});
