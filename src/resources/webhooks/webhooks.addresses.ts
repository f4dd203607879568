// Where webhooks may go (API guide "Webhooks"; docs/decisions/0027-webhooks.md): never to the
// special-purpose ranges of IPv4 and IPv6 (loopback, private, link-local, multicast, unspecified,
// documentation, …), IPv4 inside IPv6 judged as the IPv4 it carries, never to this host's own
// addresses nor to the operator's networks (WEBHOOK_DENY_CIDRS), unless the operator allows a
// range (WEBHOOK_ALLOW_CIDRS). Pure but for this host's interface list, so property tests reach it.
import net from 'node:net';
import os from 'node:os';

/** An address as 4 or 16 bytes. */
interface Ip {
  v6: boolean;
  bytes: number[];
}

/** A range: its first address and how many leading bits count. */
interface Cidr extends Ip {
  bits: number;
}

function v4Bytes(s: string): number[] {
  return s.split('.').map(Number);
}

/** The 16 bytes of an IPv6 address that net.isIPv6 accepts (a trailing dotted quad included). */
function v6Bytes(s: string): number[] {
  let text = s.replace(/%.*$/, '');
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = v4Bytes(quad[1]);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const words = (part: string | undefined) => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const front = words(head);
  const back = words(tail);
  const all = tail === undefined ? front : [...front, ...Array(8 - front.length - back.length).fill(0), ...back];
  return all.flatMap((w) => [w >> 8, w & 0xff]);
}

function parseIp(address: string): Ip | null {
  const family = net.isIP(address.replace(/%.*$/, ''));
  if (family === 4) return { v6: false, bytes: v4Bytes(address) };
  if (family === 6) return { v6: true, bytes: v6Bytes(address) };
  return null;
}

/** `10.0.0.0/8`, `fd00::/8`, or one address (all its bits). */
export function parseCidr(text: string): Cidr | null {
  const [address, bits] = text.trim().split('/');
  const ip = parseIp(address);
  if (!ip) return null;
  const max = ip.v6 ? 128 : 32;
  const n = bits === undefined ? max : /^[0-9]{1,3}$/.test(bits) ? Number(bits) : NaN;
  return n >= 0 && n <= max ? { ...ip, bits: n } : null;
}

function inCidr(ip: Ip, c: Cidr): boolean {
  if (ip.v6 !== c.v6) return false;
  for (let i = 0; i < c.bits; i++) {
    const bit = (b: number[]) => (b[i >> 3] >> (7 - (i & 7))) & 1;
    if (bit(ip.bytes) !== bit(c.bytes)) return false;
  }
  return true;
}

const cidr = (text: string) => parseCidr(text)!;

/** IPv6 ranges that carry an IPv4 address, and where: judged as that IPv4 address. */
const CARRIERS: [Cidr, number, string][] = [
  [cidr('::ffff:0:0/96'), 12, 'IPv4-mapped'],
  [cidr('64:ff9b::/96'), 12, 'NAT64'],
  [cidr('2002::/16'), 2, '6to4'],
];

/** Special-purpose ranges (IANA's registries), the most specific first: [range, what it is]. */
const SPECIAL: [Cidr, string][] = (
  [
    ['0.0.0.0/8', 'unspecified'],
    ['10.0.0.0/8', 'private'],
    ['100.64.0.0/10', 'shared (carrier-grade NAT)'],
    ['127.0.0.0/8', 'loopback'],
    ['169.254.0.0/16', 'link-local'],
    ['172.16.0.0/12', 'private'],
    ['192.0.0.0/24', 'reserved'],
    ['192.0.2.0/24', 'documentation'],
    ['192.88.99.0/24', 'reserved'],
    ['192.168.0.0/16', 'private'],
    ['198.18.0.0/15', 'benchmarking'],
    ['198.51.100.0/24', 'documentation'],
    ['203.0.113.0/24', 'documentation'],
    ['224.0.0.0/4', 'multicast'],
    ['240.0.0.0/4', 'reserved'],
    ['::/128', 'unspecified'],
    ['::1/128', 'loopback'],
    ['2001:db8::/32', 'documentation'],
    ['2001::/23', 'reserved'],
    ['fc00::/7', 'private (unique local)'],
    ['fe80::/10', 'link-local'],
    ['ff00::/8', 'multicast'],
  ] as const
).map(([range, what]) => [cidr(range), what]);

/** Global unicast IPv6: anything outside it (and not special above) is reserved. */
const GLOBAL_V6 = cidr('2000::/3');

/** What the operator decided (WEBHOOK_ALLOW_CIDRS, WEBHOOK_DENY_CIDRS), parsed once. */
export interface AddressPolicy {
  allow: Cidr[];
  deny: Cidr[];
}

export const addressPolicy = (o: { allowCidrs: string[]; denyCidrs: string[] }): AddressPolicy => ({
  allow: o.allowCidrs.map(cidr),
  deny: o.denyCidrs.map(cidr),
});

/** The IPv4 address an IPv6 address carries (mapped, NAT64, 6to4), or the address itself. */
function carried(ip: Ip): { ip: Ip; via: string | null } {
  if (!ip.v6) return { ip, via: null };
  for (const [range, at, via] of CARRIERS) {
    if (inCidr(ip, range)) return { ip: { v6: false, bytes: ip.bytes.slice(at, at + 4) }, via };
  }
  return { ip, via: null };
}

/** The addresses of this host's interfaces (every call: interfaces come and go). */
function ownAddresses(): Ip[] {
  return Object.values(os.networkInterfaces())
    .flatMap((list) => list ?? [])
    .map((i) => parseIp(i.address))
    .filter((ip): ip is Ip => ip !== null);
}

const same = (a: Ip, b: Ip) => a.v6 === b.v6 && a.bytes.every((x, i) => x === b.bytes[i]);

/** What a receiver's address is to webhooks: refused (with why), allowed by the operator (plain http:// too), or public. */
export type AddressVerdict = { ok: false; reason: string } | { ok: true; allowed: boolean };

/**
 * `judgeAddress('10.1.2.3', policy)` → `{ ok: false, reason: 'a private address' }`;
 * `judgeAddress('::ffff:127.0.0.1', policy)` → refused as the loopback address it carries;
 * `judgeAddress('127.0.0.1', { allow: [127.0.0.0/8], … })` → `{ ok: true, allowed: true }`.
 */
export function judgeAddress(address: string, policy: AddressPolicy): AddressVerdict {
  const parsed = parseIp(address);
  if (!parsed) return { ok: false, reason: 'not an IP address' };
  const { ip, via } = carried(parsed);
  const as = via ? ` (${via}, carrying ${ip.bytes.join('.')})` : '';
  if (policy.allow.some((c) => inCidr(ip, c) || inCidr(parsed, c))) return { ok: true, allowed: true };
  const special = SPECIAL.find(([range]) => inCidr(ip, range))?.[1] ?? (ip.v6 && !inCidr(ip, GLOBAL_V6) ? 'reserved' : null);
  if (special) return { ok: false, reason: `a ${special} address${as}` };
  if (policy.deny.some((c) => inCidr(ip, c) || inCidr(parsed, c))) return { ok: false, reason: `an address of the service's own networks${as}` };
  if (ownAddresses().some((own) => same(own, ip) || same(own, parsed))) return { ok: false, reason: `an address of this server${as}` };
  return { ok: true, allowed: false };
}
