// DNSSEC of a presence domain for operators (`hostplane admin domain dnssec …`; API guide "DNSSEC
// (extension)"; docs/decisions/0032-dnssec.md): turning it on or off is a change of the whole zone,
// which every DNS server applies by signing the zone or serving it unsigned again.
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import { DnssecRepository } from '../dns/dnssec.repository.js';
import { dnskeyText, dsText, publicKey } from '../dns/dnssec-keys.js';
import { AppError } from '../errors.js';
import type { ServiceDeps } from '../resources/service-deps.js';
import { DomainDnssec } from '../resources/domains/domains.dnssec.js';
import { found } from './operator-errors.js';

export interface DnssecStatus {
  domain: string;
  /** Whether the zone is signed: the domain's choice, else DNS_DNSSEC. */
  enabled: boolean;
  /** `on`, `off`, or `default` (DNS_DNSSEC decides). */
  choice: 'on' | 'off' | 'default';
  /** For the registry: `<key tag> <algorithm> 2 <SHA-256 digest>`. */
  ds_records: string[];
  /** Presentation form: `257 3 13 <base64>`. */
  dnskeys: string[];
}

export class DnssecAdminService {
  private readonly store: Store;
  private readonly config: Pick<Config, 'dns' | 'webhooks'>;
  /** The rule path the API's PATCH takes too. */
  private readonly dnssec: DomainDnssec;
  constructor(deps: ServiceDeps) {
    this.store = deps.store;
    this.config = deps.config;
    this.dnssec = new DomainDnssec(deps.config, deps.dns);
  }

  async status(name: string): Promise<DnssecStatus> {
    const d = await this.presenceDomain(name);
    const keys = await new DnssecRepository(this.store.db, this.config.webhooks.secretKeys).publicKeys(name);
    const pub = keys.map((k) => publicKey(k.flags, k.algorithm, k.public_key));
    const choice = d.dnssec === null ? 'default' : d.dnssec === 1 ? 'on' : 'off';
    const enabled = this.dnssec.signed(d.dnssec);
    return { domain: name, enabled, choice, ds_records: enabled ? pub.map((k) => dsText(name, k)) : [], dnskeys: enabled ? pub.map(dnskeyText) : [] };
  }

  /**
   * Signs the domain's zone (`on`) or serves it unsigned (`off`): the choice and, for `on`, its key
   * are stored with a change of the whole zone in one transaction; returns the change id, which
   * every DNS server has applied once it serves the zone so.
   */
  async set(name: string, on: boolean): Promise<{ status: DnssecStatus; changeId: number }> {
    await this.presenceDomain(name);
    // The operator's command always announces: running it again re-sends the zone as it is.
    const changeId = (await this.store.db.transaction().execute((trx) => this.dnssec.set(trx, name, on, { always: true })))!;
    return { status: await this.status(name), changeId };
  }

  private async presenceDomain(name: string) {
    const d = found(await this.store.db.selectFrom('domains').select(['name', 'has_presence', 'dnssec']).where('name', '=', name).executeTakeFirst(), `domain ${name}`);
    if (!d.has_presence) throw new AppError('invalid_state', `The domain ${name} is not used in a package: it has no zone to sign.`);
    return d;
  }
}
