// `hostplane dns`: the authoritative DNS server alone, without the API
// (docs/decisions/0003-dns-propagation.md; docs/operator-guide.md "The DNS server"). Run one per
// address that answers for the zones; every one follows the same store, and jobs wait until all
// live ones answer a change (docs/decisions/0003-dns-propagation.md). A clean stop removes its
// dns_servers row so jobs stop waiting for it.
import { DnsServer } from '../dns/server.js';
import { dnsListenFailure } from './listen.js';
import { CliError } from './context.js';
import { runDaemon } from './daemon.js';

/** Loaded on demand by src/main.ts, like serve. */
export function runDns(env: Record<string, string | undefined> = process.env): Promise<void> {
  return runDaemon(
    'dns',
    env,
    async ({ config, store, log }) => {
      const dns = await DnsServer.start({ store, config, log }).catch((err) => {
        throw dnsListenFailure(err, config.dnsListen, false);
      });
      return { stop: () => dns.stop() };
    },
    (config) => {
      if (config.dnsListen === 'off') throw new CliError('DNS_LISTEN is off: set it to host:port to run the DNS server.');
    },
  );
}
