// Base records of a presence domain (API guide "DNS records"): the
// plan's template (apex and www A/AAAA, MX by default) with the mail records added
// (dns-records.mail-records.ts: SPF, DMARC, SRV, autoconfig), tagged `base`, and the managed DKIM
// key TXT, written when the domain is created; a plan change resets the base records of each
// domain whose dns_update_lock is off (Admin.setPackagePlan).
//
// Template: the plan's `dns_template` (a JSON array of records with the API's attribute names,
// `[{"name":"","record_type":"A","data":"192.0.2.10","ttl":3600}, …]`, ttl optional) or, when it
// is null, the operator default built from DNS_BASE_IPV4 / DNS_BASE_IPV6 / DNS_BASE_MX.
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import { AppError } from '../../errors.js';
import type { Config } from '../../config.js';
import { fqdnOf } from '../../domain-name.js';
import type { DmarcPolicy } from '../../db/schema.js';
import type { DnsRecordsRepository } from './dns-records.repository.js';
import { DkimKeysRepository } from './dns-records.dkim.repository.js';
import { withMailRecords, type MailRecordSettings } from './dns-records.mail-records.js';
import { conflictAt, conflictInZone, normaliseRecord, type NormalisedRecord, type RecordInput } from './dns-records.rules.js';

/** Owner name of the managed DKIM key (selector `default`, RFC 6376 §3.6.2.1). */
export const DKIM_SELECTOR = 'default';
export const DKIM_NAME = `${DKIM_SELECTOR}._domainkey`;

export type DnsBaseSettings = Config['dnsBase'];

/** What a plan's base records are built from besides the plan: the settings and the mail servers. */
export interface TemplateSettings {
  base: DnsBaseSettings;
  defaultTtl: number;
  mail: MailRecordSettings;
}

/** The operator default template (settings DNS_BASE_*), without the mail records. */
export function defaultTemplate(base: DnsBaseSettings): RecordInput[] {
  const out: RecordInput[] = [];
  for (const name of ['', 'www']) {
    if (base.ipv4) out.push({ name, record_type: 'A', data: base.ipv4 });
    if (base.ipv6) out.push({ name, record_type: 'AAAA', data: base.ipv6 });
  }
  if (base.mx) out.push({ name: '', record_type: 'MX', data: `10 ${base.mx}` });
  return out;
}

const invalidTemplate = (where: string, detail: string) => new AppError('invalid_api_data', `${where}: ${detail}`);

/**
 * Checks a template (the plan's parsed JSON, or the default) by the rules of the API and returns
 * its records in stored form. `where` names the template in error messages ("plan 3's DNS template").
 */
export function checkTemplate(template: unknown, defaultTtl: number, where: string): NormalisedRecord[] {
  if (!Array.isArray(template)) throw invalidTemplate(where, 'must be a JSON array of records.');
  const out: NormalisedRecord[] = [];
  for (const [i, item] of template.entries()) {
    const at = `record ${i + 1}`;
    const r = item as Record<string, unknown>;
    const known = ['name', 'record_type', 'data', 'ttl'];
    if (
      typeof r !== 'object' || r === null || Array.isArray(r) ||
      Object.keys(r).some((k) => !known.includes(k)) ||
      typeof r.record_type !== 'string' || typeof r.data !== 'string' ||
      (r.name !== undefined && typeof r.name !== 'string') ||
      (r.ttl !== undefined && r.ttl !== null && typeof r.ttl !== 'number')
    ) {
      throw invalidTemplate(where, `${at} must be {"name":…,"record_type":…,"data":…,"ttl":…} (name and ttl optional).`);
    }
    const checked = normaliseRecord(r as unknown as RecordInput, defaultTtl);
    if ('problems' in checked) throw invalidTemplate(where, `${at}: ${checked.problems.map((p) => p.detail).join(' ')}`);
    const rec = checked.record;
    if (rec.name.ace === DKIM_NAME) throw invalidTemplate(where, `${at}: ${DKIM_NAME} is reserved for the managed DKIM key.`);
    const clash = conflictAt(out.filter((o) => o.name.ace === rec.name.ace), rec);
    if (clash) throw invalidTemplate(where, `${at}: ${clash.detail}`);
    out.push(rec);
  }
  return out;
}

/** What of a plan its base records depend on. */
export type TemplatePlan = { id: number; dns_template: string | null; dmarc_policy: DmarcPolicy };

/** The records of a plan's own template (`dns_template` JSON) or of the operator default, checked. */
export function ownTemplate(plan: Pick<TemplatePlan, 'id' | 'dns_template'>, base: DnsBaseSettings, defaultTtl: number): NormalisedRecord[] {
  const where = `plan ${plan.id}'s DNS template`;
  if (plan.dns_template === null) return checkTemplate(defaultTemplate(base), defaultTtl, 'the default DNS template (DNS_BASE_*)');
  let parsed: unknown;
  try {
    parsed = JSON.parse(plan.dns_template);
  } catch {
    throw invalidTemplate(where, 'is not JSON.');
  }
  return checkTemplate(parsed, defaultTtl, where);
}

/** The base records of a plan: its template with the mail records (docs/decisions/0022-mail-records-and-discovery.md). */
export function planTemplate(plan: TemplatePlan, s: TemplateSettings): NormalisedRecord[] {
  return withMailRecords(ownTemplate(plan, s.base, s.defaultTtl), plan.dmarc_policy, s.mail, s.defaultTtl);
}

export interface DkimKey {
  /** PKCS#8 PEM, kept in dkim_keys for signing. */
  privateKeyPem: string;
  /** The TXT data of `default._domainkey`: `v=DKIM1; k=rsa; p=<base64 SubjectPublicKeyInfo>` (RFC 6376 §3.6.1). */
  txt: string;
}

const generateKeyPair = promisify(crypto.generateKeyPair);

/** A fresh RSA 2048 DKIM key (generated off the event loop's thread). */
export async function generateDkimKey(): Promise<DkimKey> {
  const { publicKey, privateKey } = await generateKeyPair('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey as unknown as string, txt: `v=DKIM1; k=rsa; p=${(publicKey as unknown as Buffer).toString('base64')}` };
}

/**
 * Inserts template records as active `base` records of `domain`, leaving out those that would
 * clash with a record kept there (a custom CNAME at www wins over the template's www A).
 * Call it under the domain's lock, in the transaction that records the change.
 */
export async function insertBaseRecords(repo: DnsRecordsRepository, domain: string, template: NormalisedRecord[]) {
  let inserted = 0;
  let skipped = 0;
  for (const rec of template) {
    // The same rules as the API (same name, delegation cuts, answer size): a customer's NS cut or a
    // full name keeps its place and the template record is left out.
    const around = await repo.recordsAround(domain, rec.name.ace, rec.record_type === 'NS');
    const cand = { name: rec.name.ace, record_type: rec.record_type, data: rec.data };
    if (fqdnOf(rec.name.ace, domain).length > 253 || conflictInZone(around, cand)) {
      skipped++;
      continue;
    }
    await repo.insert({ domain, name: rec.name.ace, record_type: rec.record_type, data: rec.data, ttl: rec.ttl, tag: 'base', state: 'active' });
    inserted++;
  }
  return { inserted, skipped };
}

/**
 * The managed DKIM TXT record of a new presence domain (undeletable, API guide "DNS records") and
 * its key, signing from the start: the record is served with the new zone, before any mailbox can send.
 */
export async function insertDkimRecord(repo: DnsRecordsRepository, domain: string, key: DkimKey, ttl: number) {
  const recordId = await repo.insert({ domain, name: DKIM_NAME, record_type: 'TXT', data: key.txt, ttl, tag: 'managed', state: 'active' });
  await new DkimKeysRepository(repo.db).insert({ domain, selector: DKIM_SELECTOR, private_key: key.privateKeyPem, record_id: recordId, state: 'signing' });
}
