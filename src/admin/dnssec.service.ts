// DNSSEC of a presence domain for operators (`hostplane admin domain dnssec …`; API guide "DNSSEC
// (extension)"; docs/decisions/0032-dnssec.md): turning it on or off (the API's rule path), a key
// rollover, the parent's DS confirmed by hand (`ds-seen`, as Knot's `zone-ksk-submitted`), and a
// status that says what the zone's lifecycle waits for.
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import { DnssecPhaseRepository } from '../dns/dnssec-phase.repository.js';
import { DnssecLifecycle, type DnssecAwaiting } from '../dns/dnssec-lifecycle.js';
import { AppError } from '../errors.js';
import type { ServiceDeps } from '../resources/service-deps.js';
import { DomainDnssec } from '../resources/domains/domains.dnssec.js';
import type { DnssecState } from '../resources/domains/domains.repository.js';
import { found } from './operator-errors.js';

export interface DnssecStatus {
  domain: string;
  /** Whether the zone is to be signed: the domain's choice, else DNS_DNSSEC. */
  enabled: boolean;
  /** `on`, `off`, or `default` (DNS_DNSSEC decides). */
  choice: 'on' | 'off' | 'default';
  /** What the DNS servers serve: unsigned, signed, rolling, disabling. */
  state: DnssecState;
  /** For the registry (what CDS publishes): `<key tag> <algorithm> 2 <SHA-256 digest>`. */
  ds_records: string[];
  /** Presentation form: `257 3 13 <base64>`, every key served. */
  dnskeys: string[];
  /** What the lifecycle waits for: the parent's DS (`none`: no DS) or a time; null when steady. */
  awaiting: DnssecAwaiting;
}

export class DnssecAdminService {
  private readonly store: Store;
  private readonly config: Pick<Config, 'dns' | 'webhooks'>;
  /** The rule path the API's PATCH takes too. */
  private readonly dnssec: DomainDnssec;
  private readonly lifecycle: DnssecLifecycle;
  constructor(deps: ServiceDeps) {
    this.store = deps.store;
    this.config = deps.config;
    this.dnssec = new DomainDnssec(deps.config, deps.dns);
    this.lifecycle = new DnssecLifecycle(deps.store, deps.config);
  }

  async status(name: string): Promise<DnssecStatus> {
    const d = await this.presenceDomain(name);
    const db = this.store.db;
    const view = (await this.dnssec.views(db, [d])).get(name)!;
    const choice = d.dnssec === null ? 'default' : d.dnssec === 1 ? 'on' : 'off';
    return { domain: name, enabled: view.enabled, choice, state: view.state, ds_records: view.ds_records, dnskeys: view.dnskeys, awaiting: await this.lifecycle.awaited(db, d) };
  }

  /**
   * Signs the domain's zone (`on`) or turns DNSSEC off (`off`: the zone goes `disabling` and is
   * served unsigned once the parent has dropped its DS); returns the change id, which every DNS
   * server has applied once it serves the zone so.
   */
  async set(name: string, on: boolean): Promise<{ status: DnssecStatus; changeId: number }> {
    await this.presenceDomain(name);
    // The operator's command always announces: running it again re-sends the zone as it is.
    const changeId = (await this.store.db.transaction().execute((trx) => this.dnssec.set(trx, name, on, { always: true })))!;
    return { status: await this.status(name), changeId };
  }

  /** Starts a key rollover (RFC 7583 double signature); refused unless the zone is signed and steady. */
  async rollover(name: string): Promise<{ status: DnssecStatus; changeId: number }> {
    const d = await this.presenceDomain(name);
    const changeId = await this.store.db.transaction().execute((trx) => this.lifecycle.startRollover(trx, name, this.dnssec.signed(d.dnssec)));
    if (changeId === null) throw new AppError('invalid_state', `The zone of ${name} is ${(await this.status(name)).state}: only a signed zone that is not rolling or disabling can roll its key over.`);
    return { status: await this.status(name), changeId };
  }

  /** The parent holds what the zone's CDS asks (Knot's `zone-ksk-submitted`): the lifecycle's wait for the DS TTL starts. */
  async dsSeen(name: string): Promise<DnssecStatus> {
    await this.presenceDomain(name);
    // Only a step that waits for the parent takes it (not a rollover's first step, which waits for time).
    if ((await this.status(name)).awaiting?.kind !== 'parent' || !(await this.lifecycle.parentSeen(name))) {
      throw new AppError('invalid_state', `The zone of ${name} does not wait for its parent's DS (see status).`);
    }
    return this.status(name);
  }

  private async presenceDomain(name: string) {
    const d = found(await new DnssecPhaseRepository(this.store.db).phaseOf(name), `domain ${name}`);
    if (!d.has_presence) throw new AppError('invalid_state', `The domain ${name} is not used in a package: it has no zone to sign.`);
    return d;
  }
}
