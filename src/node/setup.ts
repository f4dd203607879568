// `hostplane node setup`: checks the host, installs what the roles need and applies each role
// (docs/decisions/0018-nodes-on-debian.md "One command per node"). Every step converges, so a second
// run changes nothing that is right.
import { lookup } from 'node:dns/promises';
import fs from 'node:fs/promises';
import { loadConfig } from '../config.js';
import { apiRole } from './roles/api.js';
import { dbRole } from './roles/db.js';
import { dnsRole } from './roles/dns.js';
import { CERT_USERS, needsOf, type Role } from './roles.js';
import { parseDnsPrimary, preflightProblems, readHost, type SetupOptions } from './preflight.js';
import { certificatesFor, certFiles, LETS_ENCRYPT, trustRoots } from './certs.js';
import { ENV_FILE, mergeEnv, parseSets, readEnv, settingsProblems } from './env-file.js';
import { placeFile } from './files.js';
import { installUnits } from './units.js';
import { storeUrls } from './postgres.js';
import { API_UPSTREAM } from './caddy.js';
import { webRole } from './roles/web.js';
import { mailRole } from './roles/mail.js';
import { ensurePackages, type Log } from './system.js';
import type { NodeContext } from './context.js';

interface RoleSteps {
  /** Runs after the role's packages (roles.ts), hostplane's units and settings are in place. */
  apply(ctx: NodeContext, log: Log): Promise<void>;
}

/** Each role's steps, applied in the order of ROLES (api first: the others may need its store). */
const STEPS: Record<Role, RoleSteps> = { api: apiRole, dns: dnsRole, web: webRole, mail: mailRole, db: dbRole };

/** The setup could not start; nothing was changed. */
export class SetupRefused extends Error {
  constructor(readonly problems: string[]) {
    super(`nothing was changed:\n  - ${problems.join('\n  - ')}`);
  }
}

/** The settings `node setup` owns in hostplane.env (the rest of the file is the operator's). */
function ownedSettings(o: SetupOptions, storeUrl: string): Record<string, string> {
  const api = o.roles.includes('api');
  return {
    DATABASE_URL: storeUrl,
    // A node without the api role reaches the API where it reaches the store.
    PUBLIC_BASE_URL: `https://${api ? o.name : new URL(o.store!).hostname}`,
    ACME_DIRECTORY: o.acmeDirectory ?? LETS_ENCRYPT,
    // Node's own list of CAs lacks a private root the system trusts (--acme-ca-root).
    NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt',
    ...(api ? { HOST: '127.0.0.1', PORT: API_UPSTREAM.split(':')[1], TRUST_PROXY: '127.0.0.1', REDIS_URL: 'redis://127.0.0.1:6379', DNS_LISTEN: 'off' } : {}),
    ...(api && o.roles.includes('web') ? { WEB_API_UPSTREAM: API_UPSTREAM } : {}),
    ...(o.roles.includes('web') ? { WEB_CREATE_USERS: 'on', WEB_SFTP_LOG: 'journal' } : {}),
  };
}

/** The dns role's server; Knot's primary and catalog zone are settled before anything changes, or the reason they cannot be. */
async function dnsPlan(o: SetupOptions, settings: Record<string, string>): Promise<NodeContext['dns'] | string> {
  if (o.dnsServer !== 'knot') return { server: 'hostplane' };
  const catalogZone = settingsProblems(settings).length ? null : loadConfig(settings).dns.catalogZone;
  if (!catalogZone) return "Knot learns the zones from hostplane's catalog zone: DNS_CATALOG_ZONE must name it as on the api node (it is off or invalid here)";
  if (o.dnsPrimary) return { server: 'knot', primary: parseDnsPrimary(o.dnsPrimary)!, catalogZone };
  const host = new URL(o.store!).hostname;
  const found = await lookup(host, { all: true }).catch(() => []);
  const primary = found.find((a) => a.family === 4) ?? found[0];
  if (!primary || /^(127\.|::1$)/.test(primary.address)) {
    return `the --store host ${host} ${primary ? `is this host (${primary.address})` : 'has no address here'}: give --dns-primary, the address of hostplane's DNS server Knot follows`;
  }
  return { server: 'knot', primary: { host: primary.address, port: 53 }, catalogZone };
}

export async function nodeSetup(o: SetupOptions, log: Log): Promise<void> {
  const sets = parseSets(o.set ?? []);
  const host = await readHost();
  const problems = [
    ...preflightProblems(host, o),
    ...sets.problems,
  ];
  if (o.acmeCaRoot && !(await fs.readFile(o.acmeCaRoot, 'utf8').then((t) => t.includes('-----BEGIN CERTIFICATE-----'), () => false))) {
    problems.push(`--acme-ca-root ${o.acmeCaRoot}: not a readable file of PEM certificates`);
  }
  if (!problems.length) problems.push(...settingsProblems({ ...ownedSettings(o, o.store ?? 'postgres://preview@localhost/hostplane'), ...sets.set }).map((p) => `the settings would not start hostplane: ${p}`));
  if (problems.length) throw new SetupRefused(problems);
  const existing = await fs.readFile(ENV_FILE, 'utf8').catch(() => '');
  const dns = await dnsPlan(o, { ...readEnv(existing), ...ownedSettings(o, o.store ?? ''), ...sets.set });
  if (typeof dns === 'string') throw new SetupRefused([dns]);

  const certUsers = o.roles.filter((r) => CERT_USERS[r]);
  await ensurePackages([...new Set([...o.roles.flatMap((r) => needsOf(r, o.dnsServer).packages), ...(certUsers.length ? ['lego', 'ssl-cert'] : [])])], log);
  if (o.acmeCaRoot) await trustRoots(o.acmeCaRoot, log);
  const unitsChanged = await installUnits();
  const storeUrl = o.roles.includes('api') ? (await storeUrls(o.name)).local : o.store!;
  const owned = ownedSettings(o, storeUrl);
  const env = await placeFile({ path: ENV_FILE, text: mergeEnv(existing, owned, sets.set), mode: 0o600 });

  let certificate: Promise<{ cert: string; key: string }> | null = null;
  const acme = { directory: o.acmeDirectory ?? LETS_ENCRYPT, email: o.acmeEmail ?? `hostmaster@${o.name.split('.').slice(1).join('.')}` };
  const ctx: NodeContext = {
    roles: o.roles,
    name: o.name,
    shortName: o.name.split('.')[0],
    addresses: o.addresses?.length ? o.addresses : host.addresses,
    store: storeUrl,
    publicBaseUrl: owned.PUBLIC_BASE_URL,
    acme,
    dns,
    changed: unitsChanged || env === 'written',
    certificate: () =>
      (certificate ??= certificatesFor(
        {
          ...acme,
          // Where Caddy holds port 80 it serves lego's files; elsewhere lego listens itself.
          method: o.roles.includes('api') || o.roles.includes('web') ? 'webroot' : 'standalone',
          names: [o.name],
          reload: certUsers.flatMap((r) => CERT_USERS[r]!),
        },
        log,
      ).then(() => certFiles(o.name))),
  };
  for (const role of o.roles) {
    log(`role ${role}`);
    await STEPS[role].apply(ctx, log);
  }
  log(`${o.name} is set up as ${o.roles.join(', ')}`);
}
