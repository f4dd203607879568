// knot.conf of a Knot secondary of hostplane's DNS server (decision 0018 "One command per node";
// decision 0013 for the secondaries): it learns the zones from hostplane's catalog zone (RFC 9432,
// catalog-role interpret), transfers them with its TSIG key from one address (the one it is
// registered with, hence `via`) and takes NOTIFY only when it is signed with that key.

export interface KnotFacts {
  /** Where knotd answers: `0.0.0.0@53` (every address), `127.0.0.1@5353`. */
  listen: string[];
  /** Run as this user:group (Debian's service: knot:knot); absent: as whoever starts knotd. */
  user?: string;
  rundir: string;
  /** Where the zones (journal, catalog, timers) are kept. */
  storage: string;
  /** `syslog` (the journal) or a file. */
  log: string;
  /** The control socket knotc talks to; absent: Knot's default in the rundir. */
  control?: string;
  key: { name: string; secret: string };
  primary: { host: string; port: number };
  /** The source address of transfers and SOA checks: the address registered with hostplane. */
  via: string;
  catalogZone: string;
  /** How long Knot waits at most before asking the primary again (a missed NOTIFY), and after a failure (s). */
  refreshMaxS: number;
  retryMaxS: number;
}

const q = (s: string) => JSON.stringify(s);

export function knotConf(k: KnotFacts): string {
  // Zones live only in the journal (no zone files): a restart serves them at once, without a transfer.
  const zoneStorage = `    storage: ${q(k.storage)}
    zonefile-sync: -1
    zonefile-load: none
    journal-content: all
    refresh-max-interval: ${k.refreshMaxS}
    retry-max-interval: ${k.retryMaxS}`;
  return `# Written by hostplane node setup: a secondary of hostplane's DNS server at ${k.primary.host}@${k.primary.port},
# serving every zone its catalog zone ${k.catalogZone} lists. Changes here are replaced on its next run.
server:
    rundir: ${q(k.rundir)}
${k.user ? `    user: ${k.user}\n` : ''}    listen: [ ${k.listen.join(', ')} ]
log:
  - target: ${k.log === 'syslog' ? 'syslog' : q(k.log)}
    any: info
database:
    storage: ${q(k.storage)}
${k.control ? `control:\n    listen: ${q(k.control)}\n` : ''}key:
  - id: ${k.key.name}
    algorithm: hmac-sha256
    secret: ${k.key.secret}
remote:
  - id: hostplane
    address: ${k.primary.host}@${k.primary.port}
    via: ${k.via}
    key: ${k.key.name}
# NOTIFY signed with the key, from any address: a primary with several addresses may send it from
# another than the one transfers go to, and a NOTIFY only makes Knot ask that one.
acl:
  - id: notify-from-hostplane
    key: ${k.key.name}
    action: notify
template:
  - id: default
${zoneStorage}
  - id: member
${zoneStorage}
    master: hostplane
    acl: notify-from-hostplane
zone:
  - domain: ${k.catalogZone}
    master: hostplane
    acl: notify-from-hostplane
    catalog-role: interpret
    catalog-template: member
`;
}
