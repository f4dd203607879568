// The registry of DNS secondaries (docs/decisions/0013-dns-secondaries.md):
// operator data, written by `hostplane admin dns-secondary …`. A secondary transfers every zone
// from hostplane's DNS server with its TSIG key, from the host of its address only, and gets a
// NOTIFY at every change; DNS jobs are done once it serves the change's serial. The secret never
// leaves this module: every answer is a `DnsSecondaryView`.
import net from 'node:net';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { isUniqueViolation } from '../db/dialect.js';
import { AppError } from '../errors.js';
import { hostPort, parseHostPort } from '../host-port.js';
import { SecondariesRepository, type SecondaryRow } from '../provisioning/dns/secondaries.repository.js';
import { parseBindKey } from '../dns/tsig.js';

/** What is shown of a secondary (list, --json): never the TSIG secret. */
export type DnsSecondaryView = { id: string; name: string; address: string; tsig_key: string; algorithm: string; created_at: string };

const NAME = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;
const invalid = (detail: string) => new AppError('invalid_api_data', detail);

export const dnsSecondaryView = (r: SecondaryRow): DnsSecondaryView => ({
  id: String(r.id),
  name: r.name,
  address: r.address,
  tsig_key: r.tsig_key_name,
  algorithm: r.tsig_algorithm,
  created_at: r.created_at,
});

export class DnsSecondariesService {
  constructor(private readonly db: Kysely<Database>) {}

  /** `add({ name: 'ns2', address: '192.0.2.53:53', keyFileText })`: the key file as `tsig-keygen` writes it. */
  async add(v: { name: string; address: string; keyFileText: string }): Promise<DnsSecondaryView> {
    if (!NAME.test(v.name)) throw invalid(`"${v.name}" is not a secondary name: 1 to 32 of a-z, 0-9 and "-", starting and ending with a letter or digit, e.g. ns2.`);
    const hp = parseHostPort(v.address);
    // An IP address, not a name: transfers are accepted only from this address (the ACL), and
    // the source of a TCP connection is an address.
    if (!hp || !net.isIP(hp.host)) throw invalid(`--address must be ip:port of the secondary, e.g. 192.0.2.53:53 or [2001:db8::53]:53; got "${v.address}".`);
    let key: ReturnType<typeof parseBindKey>;
    try {
      key = parseBindKey(v.keyFileText);
    } catch (e) {
      throw invalid(`--tsig-key-file: ${(e as Error).message}.`);
    }
    try {
      const row = await new SecondariesRepository(this.db).insert({
        name: v.name, address: hostPort(hp.host, hp.port), tsig_key_name: key.name, tsig_algorithm: key.algorithm, tsig_secret: key.secret,
      });
      return dnsSecondaryView(row);
    } catch (e) {
      if (isUniqueViolation(e)) throw new AppError('conflict', `A DNS secondary named "${v.name}" exists already.`);
      throw e;
    }
  }

  async list(): Promise<DnsSecondaryView[]> {
    return (await new SecondariesRepository(this.db).list()).map(dnsSecondaryView);
  }

  /** Unregisters a secondary: no more NOTIFY, transfers with its key refused, jobs no longer wait for it. */
  async remove(name: string): Promise<void> {
    if (!(await new SecondariesRepository(this.db).remove(name))) throw new AppError('resource_not_found', `No DNS secondary is named "${name}".`);
  }
}
