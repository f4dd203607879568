// The mail records of a presence domain's base records (API guide "DNS records";
// docs/decisions/0022-mail-records-and-discovery.md): SPF, DMARC with the plan's policy, the
// RFC 6186 SRV records of the mail server and the `autoconfig` name mail clients ask. They are
// added to every plan's template, the default and a plan's own, where the template has none of
// its own at that name; pure functions of the template and the settings.
import net from 'node:net';
import type { DmarcPolicy } from '../../db/schema.js';
import { parseHostPort } from '../../host-port.js';
import { conflictAt, normaliseRecord, type NormalisedRecord, type RecordInput } from './dns-records.rules.js';

export interface MailRecordSettings {
  /** Host names of the registered mail servers' SMTP services: SPF names each as `a:<host>`. */
  sendingHosts: string[];
  /** Where `autoconfig` points (CNAME): the API's public host name; null leaves it out. */
  autoconfigTarget: string | null;
}

/** `mx` and the `a:` hosts stay within SPF's 10 DNS lookups (RFC 7208 §4.6.4). */
export const SPF_MAX_HOSTS = 9;
export const DMARC_NAME = '_dmarc';
export const AUTOCONFIG_NAME = 'autoconfig';

/** RFC 6186 (with RFC 8314 §5.1: implicit TLS first): where mail clients find the mail server. */
export const MAIL_SRV = [
  { name: '_submission._tcp', priority: 0, port: 587 },
  { name: '_imaps._tcp', priority: 0, port: 993 },
  { name: '_imap._tcp', priority: 10, port: 143 },
] as const;

export const isSpf = (data: string) => /^v=spf1(\s|$)/i.test(data);
export const isDmarc = (data: string) => /^v=DMARC1\s*(;|$)/i.test(data);

/**
 * The SPF hosts of registered mail servers (their `smtp` host:port): host names only (an address
 * or a single label such as localhost cannot be a:), lower case, each once, sorted, at most
 * SPF_MAX_HOSTS. `spfHosts(['mx2.example.net:25', '127.0.0.1:2525'])` → `['mx2.example.net']`.
 */
export function spfHosts(smtp: string[]): string[] {
  const hosts = new Set<string>();
  for (const s of smtp) {
    const host = parseHostPort(s)?.host.toLowerCase();
    if (host && net.isIP(host) === 0 && host.includes('.')) hosts.add(host);
  }
  return [...hosts].sort().slice(0, SPF_MAX_HOSTS);
}

/** `v=spf1 mx a:mx1.example.net -all`: the domain's MX hosts and the mail servers send, nobody else. */
export const spfRecord = (hosts: string[]) => ['v=spf1', 'mx', ...hosts.map((h) => `a:${h}`), '-all'].join(' ');

/**
 * A DMARC record with `policy` as its `p=`: `v=DMARC1; p=<policy>`, or `own` (a template's own
 * record, e.g. with `rua=`) with its `p=` replaced; `p` follows `v` (RFC 7489 §6.4).
 */
export function dmarcRecord(policy: DmarcPolicy, own?: string): string {
  const tags = (own ?? '').split(';').map((t) => t.trim()).filter((t) => t && !/^(v|p)\s*=/i.test(t));
  return ['v=DMARC1', `p=${policy}`, ...tags].join('; ');
}

/** The host of the template's apex MX with the lowest preference (not a null MX), or null. */
export function mailHostOf(template: NormalisedRecord[]): string | null {
  const mx = template
    .filter((r) => r.name.ace === '' && r.record_type === 'MX')
    .map((r) => r.data.split(' '))
    .filter(([, host]) => host !== '.')
    .sort((a, b) => Number(a[0]) - Number(b[0]));
  return mx[0]?.[1] ?? null;
}

function checked(input: RecordInput, ttl: number): NormalisedRecord {
  const r = normaliseRecord({ ...input, ttl }, ttl);
  if ('problems' in r) throw new Error(`mail record ${input.name} ${input.record_type}: ${r.problems.map((p) => p.detail).join(' ')}`);
  return r.record;
}

/**
 * `own` (a checked template) with the mail records: its own DMARC records get the plan's policy;
 * SPF, DMARC, the SRV records and `autoconfig` are added where the template has nothing of that
 * kind (SPF: no `v=spf1` TXT at the apex; the others: no record at their name that would clash);
 * SRV and `autoconfig` only when the template has an MX, whose host they name.
 */
export function withMailRecords(own: NormalisedRecord[], policy: DmarcPolicy, mail: MailRecordSettings, ttl: number): NormalisedRecord[] {
  const out = own.map((r) => (r.name.ace === DMARC_NAME && r.record_type === 'TXT' && isDmarc(r.data) ? { ...r, data: dmarcRecord(policy, r.data) } : r));
  const at = (name: string) => out.filter((r) => r.name.ace === name);
  const add = (input: RecordInput, free: boolean) => {
    const rec = checked(input, ttl);
    if (free && !conflictAt(at(rec.name.ace), rec)) out.push(rec);
  };
  add({ name: '', record_type: 'TXT', data: spfRecord(mail.sendingHosts) }, !at('').some((r) => r.record_type === 'TXT' && isSpf(r.data)));
  add({ name: DMARC_NAME, record_type: 'TXT', data: dmarcRecord(policy) }, !at(DMARC_NAME).some((r) => r.record_type === 'TXT' && isDmarc(r.data)));
  const host = mailHostOf(own);
  if (host) {
    for (const s of MAIL_SRV) add({ name: s.name, record_type: 'SRV', data: `${s.priority} 1 ${s.port} ${host}` }, !at(s.name).length);
    if (mail.autoconfigTarget) add({ name: AUTOCONFIG_NAME, record_type: 'CNAME', data: mail.autoconfigTarget }, !at(AUTOCONFIG_NAME).length);
  }
  return out;
}
