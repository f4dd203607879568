// What the parent holds of a domain's DS (docs/decisions/0032-dnssec.md "Key lifecycle"): as Knot's
// `submission`, the servers of DNS_DNSSEC_PARENT are asked for the DS RRset over UDP (recursion
// desired, so a resolver may be named too); a step that waits for the parent goes on only when
// every one of them answers what the zone's CDS asks.
import dgram from 'node:dgram';
import net from 'node:net';
import crypto from 'node:crypto';
import dnsPacket from 'dns-packet';

/** One DS as the parent serves it: `<key tag> <algorithm> <digest type> <digest hex>`, upper case. */
export type DsText = string;

/** What one server answered: the DS set (empty: none) and its TTL, or why there is no answer. */
export type ParentAnswer = { ds: DsText[]; ttl: number | null } | { error: string };

const TIMEOUT_MS = 1000;

/** The DS RRset of `zone` at `host:port`: `await askDs('127.0.0.1', 5300, 'child.example')`. */
export function askDs(host: string, port: number, zone: string, timeoutMs = TIMEOUT_MS): Promise<ParentAnswer> {
  return new Promise((resolve) => {
    const id = crypto.randomInt(0, 65536);
    const query = dnsPacket.encode({
      type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name: zone, type: 'DS', class: 'IN' }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: dnsPacket.DNSSEC_OK }],
    });
    const sock = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    const done = (v: ParentAnswer) => {
      clearTimeout(timer);
      sock.close();
      resolve(v);
    };
    const timer = setTimeout(() => done({ error: 'no answer' }), timeoutMs);
    sock.on('error', (err) => done({ error: err.message }));
    sock.on('message', (msg) => {
      let p: ReturnType<typeof dnsPacket.decode>;
      try {
        p = dnsPacket.decode(msg);
      } catch {
        return done({ error: 'an answer that does not parse' });
      }
      if (p.id !== id) return;
      if (p.rcode !== 'NOERROR' && p.rcode !== 'NXDOMAIN') return done({ error: `RCODE ${p.rcode}` });
      const ds = p.answers.filter((a) => a.type === 'DS' && a.name.toLowerCase() === zone);
      const text = ds.map((a) => {
        const d = a.data as { keyTag: number; algorithm: number; digestType: number; digest: Buffer };
        return `${d.keyTag} ${d.algorithm} ${d.digestType} ${d.digest.toString('hex').toUpperCase()}`;
      });
      done({ ds: text, ttl: ds.length ? Math.max(...ds.map((a) => a.ttl ?? 0)) : null });
    });
    sock.send(query, port, host, (err) => err && done({ error: err.message }));
  });
}

/**
 * Whether every server of `parent` holds what `wanted` says (`none`: no DS at all; else a DS
 * text that must be among the DS records), and the largest DS TTL seen; null when one does not
 * answer or answers otherwise.
 */
export async function parentHolds(parent: { host: string; port: number }[], zone: string, wanted: DsText | 'none'): Promise<{ held: boolean; ttl: number | null }> {
  const answers = await Promise.all(parent.map((p) => askDs(p.host, p.port, zone)));
  let held = answers.length > 0;
  let ttl: number | null = null;
  for (const a of answers) {
    if ('error' in a) {
      held = false;
      continue;
    }
    if (a.ttl !== null) ttl = Math.max(ttl ?? 0, a.ttl);
    if (wanted === 'none' ? a.ds.length > 0 : !a.ds.includes(wanted)) held = false;
  }
  return { held, ttl };
}
