// Property tests (fast-check) for the scope checker (API guide "Scoped tokens";
// docs/decisions/0028-token-scopes.md): CIDRs parse, print and match exactly as Node's own
// net.BlockList matches them (IPv4 clients also in their IPv4-mapped IPv6 form); what is no network
// is refused; `_acme-challenge` names are told apart from every other name; the route check refuses
// every write of a read-only token, lets an ACME token reach exactly the ACME clients' routes, and a
// domain-limited token only the routes of domains.
import net from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressIn, addressValue, formatCidr, parseCidr } from '../../src/auth/cidr.js';
import { isAcmeChallengeName, routeRefusal, type TokenScope } from '../../src/auth/token-scope.js';
import { parseAllowIps, parseExpiry } from '../../src/admin/token-options.js';

const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.'));
const v6 = fc.ipV6();
/** A network of `ip` with `bits`, host bits cleared, printed as a person would write it. */
const networkOf = (ip: string, bits: number, family: 'ipv4' | 'ipv6') => {
  const value = addressValue(ip)!;
  const total = family === 'ipv4' ? 96 + bits : bits;
  const shift = BigInt(128 - total);
  return formatCidr({ network: (value >> shift) << shift, bits: total, v4: family === 'ipv4' });
};
const blockList = (cidr: string) => {
  const [addr, bits] = cidr.split('/');
  const b = new net.BlockList();
  b.addSubnet(addr, Number(bits), net.isIPv4(addr) ? 'ipv4' : 'ipv6');
  return b;
};

describe('CIDRs', () => {
  it('an IPv4 network matches an address exactly when net.BlockList says so, in dotted and in IPv4-mapped form', () => {
    fc.assert(
      fc.property(v4, fc.nat(32), v4, (base, bits, client) => {
        const cidr = networkOf(base, bits, 'ipv4');
        const parsed = parseCidr(cidr)!;
        expect(formatCidr(parsed)).toBe(cidr);
        const expected = blockList(cidr).check(client, 'ipv4');
        expect(addressIn(client, [parsed])).toBe(expected);
        expect(addressIn(`::ffff:${client}`, [parsed])).toBe(expected);
        expect(addressIn(base, [parsed])).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('an IPv6 network matches an address exactly when net.BlockList says so; its text is canonical and parses back', () => {
    fc.assert(
      fc.property(v6, fc.nat(128), v6, (base, bits, client) => {
        const cidr = networkOf(base, bits, 'ipv6');
        const parsed = parseCidr(cidr)!;
        expect(parsed).not.toBeNull();
        expect(formatCidr(parsed)).toBe(cidr);
        expect(cidr).toBe(cidr.toLowerCase());
        expect(net.isIPv6(cidr.split('/')[0])).toBe(true);
        // Another spelling of the same network (upper case, expanded) gives the same text.
        expect(formatCidr(parseCidr(`${base.toUpperCase()}/${bits}`) ?? parsed)).toBe(cidr);
        expect(addressIn(client, [parsed])).toBe(blockList(cidr).check(client, 'ipv6'));
        expect(addressIn(base, [parsed])).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('a single address is a /32 or /128; host bits, bad prefixes and non-addresses are refused', () => {
    fc.assert(
      fc.property(v4, fc.integer({ min: 1, max: 31 }), (ip, bits) => {
        expect(parseAllowIps([ip])).toEqual([`${ip.split('.').map(Number).join('.')}/32`]);
        const network = networkOf(ip, bits, 'ipv4');
        if (network.split('/')[0] !== ip) expect(parseCidr(`${ip}/${bits}`)).toBeNull();
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (junk) => {
        const [addr, bits] = junk.split('/');
        const ok = (net.isIP(addr) !== 0 && !addr.includes('%')) && (bits === undefined || /^(0|[1-9]\d{0,2})$/.test(bits));
        if (!ok) expect(parseCidr(junk), junk).toBeNull();
      }),
      { numRuns: 1000 },
    );
    for (const bad of ['192.0.2.0/33', '2001:db8::/129', '192.0.2.0/024', '192.0.2.1/24', 'fe80::1%eth0', '', '/24', 'example.com']) expect(parseCidr(bad), bad).toBeNull();
    expect(() => parseAllowIps(['192.0.2.1/24'])).toThrow('--allow-ip "192.0.2.1/24" is not an address or network');
    expect(parseAllowIps(['192.0.2.0/24', '192.0.2.0/24', '2001:DB8:0::/32'])).toEqual(['192.0.2.0/24', '2001:db8::/32']);
  });
});

describe('names and routes', () => {
  const label = fc.stringMatching(/^[a-z0-9_-]{1,12}$/);
  it('_acme-challenge and _acme-challenge.<sub> are ACME names; nothing else is', () => {
    fc.assert(
      fc.property(fc.array(label, { maxLength: 3 }), label, (sub, other) => {
        expect(isAcmeChallengeName(['_acme-challenge', ...sub].join('.'))).toBe(true);
        const name = [other, ...sub].join('.');
        expect(isAcmeChallengeName(name)).toBe(other === '_acme-challenge');
        expect(isAcmeChallengeName(`${other}._acme-challenge`)).toBe(other === '_acme-challenge');
        expect(isAcmeChallengeName(`_acme-challenge${other}`)).toBe(false);
      }),
    );
  });

  const segment = fc.constantFrom('customers', 'domains', 'packages', 'plans', 'queue-jobs', 'dns-records', 'databases', 'subdomains', 'email-addresses', 'ssh-keys', 'domain-availability', 'webhooks', 'audit-events');
  const route = fc.tuple(segment, fc.constantFrom('', '/:id', '/:name', '/:id/password', '/:id/forward-to/:target')).map(([s, tail]) => `/${s}${tail}`);
  const method = fc.constantFrom('GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'PUT');
  const scope = fc.record({
    readOnly: fc.boolean(),
    domains: fc.option(fc.constantFrom(['a.example'], ['a.example', 'b.example']), { nil: null }),
    acmeChallenge: fc.boolean(),
  });
  const ACME = ['GET /domains', 'GET /domains/:name', 'GET /dns-records', 'GET /dns-records/:id', 'POST /dns-records', 'DELETE /dns-records/:id', 'GET /queue-jobs', 'GET /queue-jobs/:id'];

  it('read-only refuses every method but GET and HEAD; ACME allows exactly its routes; domains only the routes of domains', () => {
    fc.assert(
      fc.property(scope, method, route, (s: TokenScope, m, r) => {
        const refusal = routeRefusal(s, m, r);
        const asGet = m === 'HEAD' ? 'GET' : m;
        const seg = r.split('/')[1];
        const allowed =
          !(s.readOnly && asGet !== 'GET') &&
          (s.acmeChallenge ? ACME.includes(`${asGet} ${r}`) : s.domains ? ['domains', 'dns-records', 'subdomains', 'email-addresses', 'queue-jobs'].includes(seg) : true);
        expect(refusal === null, `${m} ${r} ${JSON.stringify(s)}`).toBe(allowed);
        if (refusal) {
          expect(refusal).toMatchObject({ code: 'token_scope', status: 403 });
          if (s.readOnly && asGet !== 'GET') expect(refusal.detail).toBe('This token is read-only.');
          else if (s.domains) expect(refusal.detail).toContain(s.domains.join(', '));
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('--expires', () => {
  const now = new Date('2026-11-29T12:00:00Z');
  it('a date is 00:00 Europe/Berlin of that day (summer and winter time); a timestamp keeps its offset; the past and junk are refused', () => {
    expect(parseExpiry('2027-01-31', now)).toBe('2027-01-30T23:00:00.000Z');
    expect(parseExpiry('2027-07-01', now)).toBe('2027-06-30T22:00:00.000Z');
    expect(parseExpiry('2027-01-31T12:00:00+05:30', now)).toBe('2027-01-31T06:30:00.000Z');
    expect(parseExpiry('2026-11-29T12:00:01Z', now)).toBe('2026-11-29T12:00:01.000Z');
    expect(() => parseExpiry('2026-11-29T12:00:00Z', now)).toThrow('--expires 2026-11-29T12:00:00Z is not in the future.');
    expect(() => parseExpiry('2026-11-29', now)).toThrow('is not in the future');
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (junk) => {
        try {
          const at = parseExpiry(junk, now);
          expect(Date.parse(at)).toBeGreaterThan(now.getTime());
        } catch (e) {
          expect((e as Error).message).toMatch(/^--expires .* (is not a date|is not in the future)/s);
        }
      }),
      { numRuns: 1000 },
    );
    expect(() => parseExpiry('2027-02-30', now)).toThrow('is not a date');
    expect(() => parseExpiry('2027-01-31T12:00:00', now)).toThrow('is not a date');
  });
});
