// Change → first answer in the DNS side-by-side bench: a record added through hostplane's API and
// through PowerDNS's REST API, each server then asked until it answers it.
import { performance } from 'node:perf_hooks';
import { DnsClient, txtOf } from '../dns-zones.js';
import { ACCEPT, JSONAPI, pct } from '../report.js';
import { PDNS_API_KEY, type Ctx } from './servers.js';
import { POLL_MS, ZONE10K } from './settings.js';

/**
 * POST /dns-records (TXT) as the zone's owner, then ask hostplane every POLL_MS until it answers;
 * `posts` gets the POST → 202 part of each.
 */
export async function hostplaneChanges(c: Ctx, n: number, label: string, posts: number[] = []): Promise<number[]> {
  const client = new DnsClient(c.ports.hpDns);
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const name = `${label}${i}`;
      const text = `hostplane-peers ${label} ${i}`;
      const t0 = performance.now();
      const res = await fetch(`http://127.0.0.1:${c.ports.hpHttp}/dns-records`, {
        method: 'POST',
        headers: { authorization: `token ${c.owner.token}`, accept: ACCEPT, 'content-type': JSONAPI },
        body: JSON.stringify({ data: { type: 'dns-record', attributes: { domain: ZONE10K, name, record_type: 'TXT', data: text } } }),
      });
      if (res.status !== 202) throw new Error(`POST /dns-records: ${res.status} ${(await res.text()).slice(0, 300)}`);
      posts.push(performance.now() - t0);
      await res.arrayBuffer().catch(() => {});
      await client.until(`${name}.${ZONE10K}`, 'TXT', (p) => txtOf(p).includes(text), POLL_MS, 10_000);
      out.push(performance.now() - t0);
    }
  } finally {
    client.close();
  }
  return out;
}


/**
 * A new TXT RRset through PowerDNS's REST API (PATCH of the zone's rrsets, its caches off: the
 * comparable path to hostplane's POST), then ask it every POLL_MS until it answers.
 */
export async function pdnsChanges(c: Ctx, n: number, label: string): Promise<number[]> {
  const client = new DnsClient(c.ports.pdns);
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const name = `${label}${i}.${ZONE10K}`;
      const text = `pdns-peers ${label} ${i}`;
      const t0 = performance.now();
      const res = await fetch(`http://127.0.0.1:${c.ports.pdnsApi}/api/v1/servers/localhost/zones/${ZONE10K}.`, {
        method: 'PATCH',
        headers: { 'x-api-key': PDNS_API_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ rrsets: [{ name: `${name}.`, type: 'TXT', ttl: 3600, changetype: 'REPLACE', records: [{ content: `"${text}"`, disabled: false }] }] }),
      });
      if (res.status !== 204) throw new Error(`PowerDNS PATCH ${ZONE10K}: ${res.status} ${(await res.text()).slice(0, 300)}`);
      await client.until(name, 'TXT', (p) => txtOf(p).includes(text), POLL_MS, 10_000);
      out.push(performance.now() - t0);
    }
  } finally {
    client.close();
  }
  return out;
}

export const changeSummary = (ms: number[]) => ({ n: ms.length, p50: pct(ms, 50), p99: pct(ms, 99), max: Math.max(...ms) });
