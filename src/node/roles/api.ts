// The api role (decision 0018 "One command per node"): the store (PostgreSQL) and the shared
// limiter (Redis) on this host, the schema migrated, `hostplane serve` on loopback behind Caddy,
// which gets the API's certificate from ACME; PostgreSQL then serves the node's own ACME
// certificate to the other nodes. Prints the --store URL they take.
import fs from 'node:fs/promises';
import { migrate } from '../../db/migrate.js';
import { certFiles } from '../certs.js';
import { caddyFacts, ensureCaddy } from '../caddy.js';
import { withStore, type NodeContext } from '../context.js';
import { ensureStore, storeUrls } from '../postgres.js';
import { enableUnit, type Log } from '../system.js';

export const apiRole = {
  async apply(ctx: NodeContext, log: Log): Promise<void> {
    // A node set up before already has its certificate: PostgreSQL keeps serving it (no restart
    // without TLS and another with it on every run).
    const hadCertificate = await fs.access(certFiles(ctx.name).cert).then(() => true, () => false);
    await ensureStore({ tlsFor: hadCertificate ? ctx.name : null }, log);
    const applied = await withStore(ctx, (store) => migrate(store));
    if (applied.length) log(`migrated the store: ${applied.join(', ')}`);
    await enableUnit('redis-server.service', false, log);
    await enableUnit('hostplane-serve.service', ctx.changed, log);
    await ensureCaddy(caddyFacts(ctx), log);
    // Caddy serves lego's HTTP-01 files: the certificate comes after Caddy, PostgreSQL's TLS after it.
    await ctx.certificate();
    await ensureStore({ tlsFor: ctx.name }, log);
    log(`the other nodes take: --store '${(await storeUrls(ctx.name)).nodes}'`);
  },
};
