// What both sides of hostplane's DNS speak: the DNS server (src/dns) and the DNS driver, which asks
// the secondaries for their serial (src/provisioning/dns). Names in wire form, serial arithmetic
// and the TSIG key a secondary is registered with; pure, so both layers can import it.

/** The one TSIG algorithm offered (RFC 8945 §6: mandatory to implement; what `tsig-keygen` writes). */
export const TSIG_ALGORITHM = 'hmac-sha256';

export interface TsigKey {
  /** Lower-case, without the trailing dot. */
  name: string;
  algorithm: typeof TSIG_ALGORITHM;
  secret: Buffer;
}

/** A name in canonical wire form (RFC 4034 §6.2: lower case, uncompressed): `nameWire('Key.') `. */
export function nameWire(name: string): Buffer {
  const s = name.replace(/\.$/, '').toLowerCase();
  const parts = s === '' ? [] : s.split('.');
  const out = Buffer.alloc(parts.reduce((n, p) => n + p.length + 1, 1));
  let o = 0;
  for (const p of parts) {
    out[o++] = p.length;
    out.write(p, o, 'latin1');
    o += p.length;
  }
  return out;
}

/** Reads the name at `off` (following pointers); returns it lower-cased, dot-joined, and the offset after it. */
export function readName(msg: Buffer, off: number): { name: string; next: number } | null {
  const labels: string[] = [];
  let p = off;
  let next = -1;
  for (let hops = 0; hops < 64; hops++) {
    if (p >= msg.length) return null;
    const len = msg[p];
    if (len === 0) {
      if (next < 0) next = p + 1;
      return { name: labels.join('.').toLowerCase(), next };
    }
    if ((len & 0xc0) === 0xc0) {
      if (p + 1 >= msg.length) return null;
      if (next < 0) next = p + 2;
      p = ((len & 0x3f) << 8) | msg[p + 1];
      continue;
    }
    if (len > 63 || p + 1 + len > msg.length) return null;
    labels.push(msg.toString('latin1', p + 1, p + 1 + len));
    p += 1 + len;
  }
  return null;
}

/** RFC 1982 serial arithmetic: a is newer than b. */
export const serialGt = (a: number, b: number) => a !== b && ((a - b) >>> 0) < 2 ** 31;
