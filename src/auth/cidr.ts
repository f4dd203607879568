// Client networks a token may be used from (API guide "Scoped tokens"): CIDRs parsed into 128-bit
// numbers, IPv4 as IPv4-mapped IPv6 (`::ffff:a.b.c.d`), so a dual-stack server's `::ffff:192.0.2.1`
// and a plain `192.0.2.1` are one client.
import net from 'node:net';

export interface Cidr {
  /** The network address as a 128-bit number (IPv4 mapped), host bits cleared. */
  network: bigint;
  /** Prefix length on the 128-bit form (an IPv4 /24 is 96 + 24 = 120). */
  bits: number;
  v4: boolean;
}

const V4_MAPPED = 0xffffn << 32n;
const ALL = (1n << 128n) - 1n;

/** `192.0.2.1` or `2001:db8::1` (or `::ffff:192.0.2.1`) as a 128-bit number; null when it is not an address. */
export function addressValue(text: string): bigint | null {
  if (net.isIPv4(text)) return V4_MAPPED | text.split('.').reduce((n, o) => (n << 8n) | BigInt(Number(o)), 0n);
  if (!net.isIPv6(text) || text.includes('%')) return null;
  // An embedded dotted quad becomes two groups, then `::` is expanded to the missing zero groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let t = text;
  if (dotted) {
    const v = Number((addressValue(dotted[1]) ?? 0n) & 0xffffffffn);
    t = `${text.slice(0, -dotted[1].length)}${(v >>> 16).toString(16)}:${(v & 0xffff).toString(16)}`;
  }
  const [head, tail] = t.includes('::') ? t.split('::') : [t, undefined];
  const h = head ? head.split(':') : [];
  const tl = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - tl.length).fill('0'), ...tl];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/**
 * `192.0.2.0/24`, `2001:db8::/32`, or a single address (a /32 or /128); null when malformed or when
 * host bits are set (`192.0.2.1/24` is a typo more often than a wish).
 */
export function parseCidr(text: string): Cidr | null {
  const m = /^([^/\s]+)(?:\/(\d{1,3}))?$/.exec(text.trim());
  if (!m) return null;
  const value = addressValue(m[1]);
  if (value === null) return null;
  const v4 = net.isIPv4(m[1]);
  const max = v4 ? 32 : 128;
  const given = m[2] === undefined ? max : Number(m[2]);
  if (given > max || (m[2] !== undefined && m[2].length > 1 && m[2].startsWith('0'))) return null;
  const bits = v4 ? 96 + given : given;
  const mask = bits === 0 ? 0n : (ALL >> BigInt(128 - bits)) << BigInt(128 - bits);
  if ((value & mask) !== value) return null;
  return { network: value, bits, v4 };
}

/** The canonical text: `192.0.2.0/24`, `2001:db8::/32` (lower case, shortest IPv6 form). */
export function formatCidr(c: Cidr): string {
  if (c.v4) {
    const v = Number(c.network & 0xffffffffn);
    return `${[v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.')}/${c.bits - 96}`;
  }
  const groups = Array.from({ length: 8 }, (_, i) => Number((c.network >> BigInt(112 - 16 * i)) & 0xffffn));
  // The longest run of two or more zero groups becomes `::` (RFC 5952), the first one on a tie.
  let best = { at: -1, len: 1 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  const text = best.at < 0 ? hex.join(':') : `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.len).join(':')}`;
  return `${text}/${c.bits}`;
}

/** Whether the client address `ip` (as Fastify's request.ip gives it) lies in one of `cidrs`. */
export function addressIn(ip: string, cidrs: readonly Cidr[]): boolean {
  const value = addressValue(ip);
  if (value === null) return false;
  return cidrs.some((c) => value >> BigInt(128 - c.bits) === c.network >> BigInt(128 - c.bits));
}
