// The dns role (decision 0018 "One command per node"): hostplane's DNS server on port 53 of every
// address (hostplane-dns.service) reading the zones from the store, or, on a host of its own, Knot
// as a secondary of that server (--dns-server knot): it follows the catalog zone, transfers with a
// TSIG key of its own and is registered as `admin dns-secondary add` does, so DNS jobs are done
// only once it serves a change too. The API's own process serves no DNS on a node (DNS_LISTEN=off).
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { DnsSecondariesService } from '../../admin/dns-secondaries.service.js';
import { parseBindKey } from '../../dns/tsig.js';
import { hostPort } from '../../host-port.js';
import { commandCheck, placeFile } from '../files.js';
import { knotConf } from '../render/knot.js';
import { withStore, type NodeContext } from '../context.js';
import { enableUnit, type Log } from '../system.js';

const DNS_ENV = '/etc/hostplane/dns.env';
const KNOT_CONF = '/etc/knot/knot.conf';
const TSIG_KEY = '/etc/hostplane/dns-tsig.key';

/** The node's TSIG key (a BIND key file, root only): made on the first run with a name of its own, the same on every later one. */
async function keptTsigKey(shortName: string): Promise<{ name: string; secret: string; text: string }> {
  const kept = await fs.readFile(TSIG_KEY, 'utf8').catch(() => '');
  try {
    return { ...parseBindKey(kept), text: kept };
  } catch {
    // A new key gets a new name: the store's registration under the old name then shows as stale.
    const name = `${shortName}-${crypto.randomBytes(4).toString('hex')}`;
    const secret = crypto.randomBytes(32).toString('base64');
    const text = `key "${name}" {\n\talgorithm hmac-sha256;\n\tsecret "${secret}";\n};\n`;
    await placeFile({ path: TSIG_KEY, mode: 0o600, text });
    return { name, secret, text };
  }
}

/** Registers this secondary, or registers it again when its address or key changed; what was done. */
async function register(ctx: NodeContext, address: string, key: { name: string; text: string }): Promise<string> {
  return withStore(ctx, async (store) => {
    const secondaries = new DnsSecondariesService(store.db);
    const now = (await secondaries.list()).find((s) => s.name === ctx.shortName);
    if (now && now.address === address && now.tsig_key === key.name) return `DNS secondary ${ctx.shortName} is registered already`;
    if (now) await secondaries.remove(ctx.shortName);
    await secondaries.add({ name: ctx.shortName, address, keyFileText: key.text });
    return `${now ? 'registered again' : 'registered'} DNS secondary ${ctx.shortName} (${address}, TSIG key ${key.name})`;
  });
}

async function knotSecondary(ctx: NodeContext, knot: Extract<NodeContext['dns'], { server: 'knot' }>, log: Log): Promise<void> {
  const key = await keptTsigKey(ctx.shortName);
  const via = ctx.addresses.find((a) => a.includes(':') === knot.primary.host.includes(':')) ?? ctx.addresses[0];
  const text = knotConf({
    listen: ['0.0.0.0@53', '::@53'],
    user: 'knot:knot',
    rundir: '/run/knot',
    storage: '/var/lib/knot',
    log: 'syslog',
    key,
    primary: knot.primary,
    via,
    catalogZone: knot.catalogZone,
    refreshMaxS: 600,
    retryMaxS: 60,
  });
  // knotd reads its file as knot; the key in it is for nobody else.
  const conf = await placeFile({ path: KNOT_CONF, text, mode: 0o640, group: 'knot', check: commandCheck('knotc', ['-c', '{}', 'conf-check']) });
  // Registered before Knot starts: hostplane's server answers its first transfer only then.
  log(await register(ctx, hostPort(via, 53), key));
  await enableUnit('knot.service', conf === 'written', log);
}

export const dnsRole = {
  async apply(ctx: NodeContext, log: Log): Promise<void> {
    if (ctx.dns.server === 'knot') return knotSecondary(ctx, ctx.dns, log);
    const env = await placeFile({
      path: DNS_ENV,
      text: '# Written by hostplane node setup (role dns); replaced on its next run. Settings of your own: hostplane.env.\nDNS_LISTEN=0.0.0.0:53\n',
      mode: 0o644,
    });
    await enableUnit('hostplane-dns.service', ctx.changed || env === 'written', log);
  },
};
