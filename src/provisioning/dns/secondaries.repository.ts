// The registered secondaries (migration 010; docs/decisions/0013-dns-secondaries.md): SQL only.
// Rows carry the TSIG secret; callers that show a secondary go through the admin service's view.
import type { Kysely, Selectable } from 'kysely';
import type { Database, DnsSecondariesTable } from '../../db/schema.js';
import { nowIso } from '../../db/time.js';
import { parseHostPort } from '../../host-port.js';
import { TSIG_ALGORITHM as ALGORITHM, type TsigKey } from '../../dns-wire.js';

export type SecondaryRow = Selectable<DnsSecondariesTable>;

/** A secondary as the DNS server and the DNS driver use it: where it is and its key. */
export interface Secondary {
  name: string;
  host: string;
  port: number;
  key: TsigKey;
}

/** The row in the form the DNS server uses (rows that do not parse are left out by the caller). */
export function toSecondary(row: SecondaryRow): Secondary | null {
  const hp = parseHostPort(row.address);
  if (!hp || row.tsig_algorithm !== ALGORITHM) return null;
  return { name: row.name, host: hp.host, port: hp.port, key: { name: row.tsig_key_name, algorithm: ALGORITHM, secret: Buffer.from(row.tsig_secret, 'base64') } };
}

export class SecondariesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  list(): Promise<SecondaryRow[]> {
    return this.db.selectFrom('dns_secondaries').selectAll().orderBy('name').execute();
  }

  /** Every secondary in usable form. */
  async all(): Promise<Secondary[]> {
    return (await this.list()).map(toSecondary).filter((s): s is Secondary => s !== null);
  }

  async insert(v: { name: string; address: string; tsig_key_name: string; tsig_algorithm: string; tsig_secret: string }): Promise<SecondaryRow> {
    return this.db.insertInto('dns_secondaries').values({ ...v, created_at: nowIso() }).returningAll().executeTakeFirstOrThrow();
  }

  async remove(name: string): Promise<boolean> {
    const r = await this.db.deleteFrom('dns_secondaries').where('name', '=', name).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
