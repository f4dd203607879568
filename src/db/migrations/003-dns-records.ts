// The DKIM signing key of a presence domain (API guide "DNS records"): its public half is published
// as the managed TXT record `default._domainkey`; the private half (PKCS#8 PEM) stays here for the
// mail service to sign with. Null for domains without presence.
import type { Kysely } from 'kysely';
import type { Engine } from '../dialect.js';

export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema.alterTable('domains').addColumn('dkim_private_key', 'text').execute();
}
