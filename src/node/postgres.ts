// The store on the api node (decision 0018 "One command per node"): Debian's PostgreSQL with the
// database `hostplane` owned by the role `hostplane`, reachable from the other nodes over TLS only
// (a certificate from ACME once the node has one), on loopback for the api node's own processes.
// The role may create roles: a mail node makes its own read-only one (roles/mail.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { certFiles } from './certs.js';
import { keptSecret, placeFile } from './files.js';
import { enableUnit, run, type Log } from './system.js';

export const STORE_SECRET = '/etc/hostplane/store.password';
const ROLE = 'hostplane';
const DATABASE = 'hostplane';

/** Debian's cluster directory (/etc/postgresql/17/main): the newest installed version's. */
async function clusterDir(): Promise<string> {
  const versions = (await fs.readdir('/etc/postgresql')).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(a) - Number(b));
  if (!versions.length) throw new Error('PostgreSQL is installed but has no cluster under /etc/postgresql (pg_createcluster)');
  return path.join('/etc/postgresql', versions[versions.length - 1], 'main');
}

/** Only these lines: the nodes reach the store database over TLS with a password, nothing else does. */
const HBA = `# Written by hostplane node setup (role api); replaced on its next run.
# TYPE  DATABASE  USER  ADDRESS    METHOD
local   all       all              peer
host    all       all   127.0.0.1/32 scram-sha-256
host    all       all   ::1/128    scram-sha-256
hostssl ${DATABASE} all   0.0.0.0/0  scram-sha-256
hostssl ${DATABASE} all   ::/0       scram-sha-256
`;

export interface StoreUrls {
  /** For the api node's own processes, over loopback. */
  local: string;
  /** What the other nodes take as --store: over TLS, the certificate checked against the name. */
  nodes: string;
}

export async function storeUrls(name: string): Promise<StoreUrls> {
  const password = await keptSecret(STORE_SECRET);
  return {
    local: `postgres://${ROLE}:${password}@127.0.0.1:5432/${DATABASE}`,
    // The system's roots (with a private CA's, --acme-ca-root): libpq and node-postgres both read the file.
    nodes: `postgres://${ROLE}:${password}@${name}:5432/${DATABASE}?sslmode=verify-full&sslrootcert=/etc/ssl/certs/ca-certificates.crt`,
  };
}

/** Makes the cluster listen for the nodes and the role and database exist; `tlsFor`: the name whose ACME certificate PostgreSQL serves, once there is one. */
export async function ensureStore(o: { tlsFor: string | null }, log: Log): Promise<void> {
  const dir = await clusterDir();
  const tls = o.tlsFor ? certFiles(o.tlsFor) : null;
  const conf = [
    '# Written by hostplane node setup (role api); replaced on its next run.',
    "listen_addresses = '*'",
    `hba_file = '${path.join(dir, 'hostplane_hba.conf')}'`,
    'ssl = on',
    ...(tls ? [`ssl_cert_file = '${tls.cert}'`, `ssl_key_file = '${tls.key}'`] : []),
    "ssl_min_protocol_version = 'TLSv1.2'",
    '',
  ].join('\n');
  const changed = [
    await placeFile({ path: path.join(dir, 'hostplane_hba.conf'), text: HBA, mode: 0o640, owner: 'postgres', group: 'postgres' }),
    await placeFile({ path: path.join(dir, 'conf.d/60-hostplane.conf'), text: conf, mode: 0o644, owner: 'postgres', group: 'postgres' }),
  ].includes('written');
  await enableUnit('postgresql.service', changed, log);
  const password = (await keptSecret(STORE_SECRET)).replaceAll("'", "''");
  // As postgres over its socket; \gexec runs the CREATE only when the object is missing.
  await run('runuser', ['-u', 'postgres', '--', 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1'], {
    input:
      `SELECT 'CREATE ROLE ${ROLE} LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${ROLE}') \\gexec\n` +
      `ALTER ROLE ${ROLE} LOGIN CREATEROLE PASSWORD '${password}';\n` +
      `SELECT 'CREATE DATABASE ${DATABASE} OWNER ${ROLE}' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '${DATABASE}') \\gexec\n`,
  });
}
