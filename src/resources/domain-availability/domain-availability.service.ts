// Rules of the availability check (API guide "Domain availability"): at most 10 distinct
// names; the service's own domain registry answers first, RDAP (when configured) for the rest,
// all lookups in parallel under one timeout; a failed lookup is `available: null` with a reason.
import { AppError, AppErrors } from '../../errors.js';
import { aceOf, notADomainName } from '../../domain-name.js';
import { DomainAvailabilityRepository } from './domain-availability.repository.js';
import { RdapClient } from './domain-availability.rdap.js';
import { MAX_NAMES, type Availability } from './domain-availability.schema.js';
import type { ServiceDeps } from '../service-deps.js';

// One wording for every taken name, wherever the answer came from: whether a name is registered
// or hosted with this service is nobody else's business (no existence leaks: API guide
// "Authentication").
export const TAKEN = 'Registered.';
export const REGISTRY_REASONS = { registered: TAKEN, presence: TAKEN } as const;

/** Where problems of the lookups are logged (Fastify's request.log fits). */
export interface LookupLog {
  warn(obj: Record<string, unknown>, msg: string): void;
}

const PARAMETER = 'domains';
const invalidList = (detail: string) => new AppError('invalid_api_data', detail, { parameter: PARAMETER });

export class DomainAvailabilityService {
  private readonly repo: DomainAvailabilityRepository;
  private readonly rdap: RdapClient;
  constructor(deps: ServiceDeps) {
    this.repo = new DomainAvailabilityRepository(deps.store.db);
    this.rdap = new RdapClient(deps.config.rdap);
  }

  /**
   * The distinct ACE names of a comma-separated list in request order (`"Bücher.de,xn--bcher-kva.de"`
   * → `["xn--bcher-kva.de"]`), or 422 invalid_api_data: no name, more than 10 distinct names, or
   * one error per name that is no domain name.
   */
  parseNames(list: string): string[] {
    const raw = list.split(',').map((s) => s.trim());
    if (raw.every((s) => s === '')) throw invalidList('No domain name given.');
    const names: string[] = [];
    const seen = new Set<string>();
    const bad: AppError[] = [];
    for (const name of raw) {
      const ace = name === '' ? null : aceOf(name);
      // Invalid names count too (by their spelling), so an oversized list gets one error, not dozens.
      const key = ace ?? `\0${name.toLowerCase()}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (ace !== null) names.push(ace);
      else bad.push(invalidList(name === '' ? 'Empty domain name in the list.' : notADomainName(name)));
    }
    if (seen.size > MAX_NAMES) {
      throw invalidList(`At most ${MAX_NAMES} domain names per request; ${seen.size} given.`);
    }
    if (bad.length) throw new AppErrors(bad);
    return names;
  }

  /** One answer per name, in the order given. Never throws for a lookup problem. */
  async check(names: string[], log?: LookupLog): Promise<Availability[]> {
    const known = new Map((await this.repo.known(names)).map((r) => [r.name, r.is_registered === 1]));
    const remote = names.filter((n) => !known.has(n));
    // One timer for the whole request: parallel lookups finish (or give up) together.
    const signal = remote.length ? AbortSignal.timeout(this.rdap.timeoutMs) : null;
    return Promise.all(
      names.map(async (domain): Promise<Availability> => {
        const registered = known.get(domain);
        if (registered !== undefined) {
          return { domain, available: false, reason: registered ? REGISTRY_REASONS.registered : REGISTRY_REASONS.presence };
        }
        const { available, reason, problem } = await this.rdap.lookup(domain, signal!);
        if (problem) log?.warn({ domain, problem }, 'RDAP lookup failed');
        return { domain, available, reason };
      }),
    );
  }
}
