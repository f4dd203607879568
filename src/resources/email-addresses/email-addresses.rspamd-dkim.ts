// The DKIM maps a mail server's rspamd signs with (API guide "Sending mail"; decision 0021):
// OpenDKIM-style tables, served as every map of a mail server is (email-addresses.mail-server-map.ts).
// - /internal/rspamd-dkim-signing: `*@<address domain> <zone>` — which mail is signed, with whose key;
// - /internal/rspamd-dkim-keys: `<zone> <zone>:<selector>:<key>` — selector and key in one line,
//   so rspamd never pairs a new selector with an old key (the two maps are fetched apart).
// The key is the base64 of its PKCS#8 DER: a secret, sent only to the server of the domain's package.
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../db/index.js';
import type { VersionedMaps } from '../../provisioning/mail/versioned-map.js';
import { DkimKeysRepository, type SigningKey } from '../dns-records/dns-records.dkim.repository.js';
import { mailServerMap } from './email-addresses.mail-server-map.js';

/** rspamd takes a map without lines as no change at all: a comment says "none" instead. */
const lines = (rows: string[]) => (rows.length ? `${rows.join('\n')}\n` : '# none\n');

/** The DER of a PKCS#8 PEM as one base64 line. */
const der64 = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');

export function dkimSigningTable(keys: SigningKey[]): string {
  return lines(keys.map((k) => `*@${k.addressDomain} ${k.zone}`));
}

export function dkimKeyTable(keys: SigningKey[]): string {
  const zones = new Map(keys.map((k) => [k.zone, k]));
  return lines([...zones.values()].map((k) => `${k.zone} ${k.zone}:${k.selector}:${der64(k.privateKey)}`));
}

export function rspamdDkimRoutes(app: FastifyInstance, store: Store, maps: VersionedMaps): void {
  mailServerMap(app, store, maps, '/internal/rspamd-dkim-signing', 'dkim-signing', async (db, server) => dkimSigningTable(await new DkimKeysRepository(db).signingKeysOn(server)));
  mailServerMap(app, store, maps, '/internal/rspamd-dkim-keys', 'dkim-keys', async (db, server) => dkimKeyTable(await new DkimKeysRepository(db).signingKeysOn(server)));
}
