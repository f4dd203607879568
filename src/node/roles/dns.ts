// The dns role (decision 0018 "One command per node"): hostplane's DNS server on port 53 of every
// address (hostplane-dns.service), reading the zones from the store. The API's own process
// serves no DNS on a node (DNS_LISTEN=off in hostplane.env); this unit's file says otherwise.
import { placeFile } from '../files.js';
import type { NodeContext } from '../context.js';
import { enableUnit, type Log } from '../system.js';

const DNS_ENV = '/etc/hostplane/dns.env';

export const dnsRole = {
  async apply(ctx: NodeContext, log: Log): Promise<void> {
    const env = await placeFile({
      path: DNS_ENV,
      text: '# Written by hostplane node setup (role dns); replaced on its next run. Settings of your own: hostplane.env.\nDNS_LISTEN=0.0.0.0:53\n',
      mode: 0o644,
    });
    await enableUnit('hostplane-dns.service', ctx.changed || env === 'written', log);
  },
};
