// A node's own certificates from ACME through Debian's lego (decision 0018 "TLS from ACME"): for
// PostgreSQL, Dovecot, Postfix and MariaDB, which have no ACME client of their own. `node setup`
// and the renewal timer (hostplane-certs.timer → `hostplane node certs`) run the same code: get a
// certificate when there is none, renew it when it has 30 days left, copy it where the daemons
// read it, and reload them when it changed.
import fs from 'node:fs/promises';
import path from 'node:path';
import { NODE_ACME_WEBROOT } from '../provisioning/web/caddy-config.js';
import { placeFile } from './files.js';
import { isActive, run, type Log } from './system.js';

export const ACME_STATE = '/var/lib/hostplane-acme';
/** What the timer renews: written by `node setup`. */
export const ACME_PLAN = '/etc/hostplane/acme.json';
export const TLS_DIR = '/etc/hostplane/tls';
export const LETS_ENCRYPT = 'https://acme-v02.api.letsencrypt.org/directory';

export interface AcmePlan {
  directory: string;
  email: string;
  /** HTTP-01 through Caddy's file server of the webroot (Caddy holds port 80), or lego's own listener on port 80. */
  method: 'webroot' | 'standalone';
  names: string[];
  /** Units reloaded when a certificate changed. */
  reload: string[];
}

/** Where the daemons read `name`'s certificate: key readable by root and the group ssl-cert (postgres is in it). */
export const certFiles = (name: string) => ({ cert: path.join(TLS_DIR, `${name}.crt`), key: path.join(TLS_DIR, `${name}.key`) });

function legoArgs(plan: AcmePlan, name: string): string[] {
  const challenge = plan.method === 'webroot' ? ['--http', '--http.webroot', NODE_ACME_WEBROOT] : ['--http', '--http.port', ':80'];
  return ['--accept-tos', '--server', plan.directory, '--email', plan.email, '--path', path.join(ACME_STATE, 'lego'), '--domains', name, ...challenge];
}

/** Gets or renews every certificate of `plan` (`force`: renews whatever is left); the names whose certificate changed. */
export async function ensureCertificates(plan: AcmePlan, log: Log, o: { force?: boolean } = {}): Promise<string[]> {
  await fs.mkdir(NODE_ACME_WEBROOT, { recursive: true, mode: 0o755 });
  await fs.chmod(ACME_STATE, 0o755);
  const changed: string[] = [];
  for (const name of plan.names) {
    const issued = path.join(ACME_STATE, 'lego/certificates', `${name}.crt`);
    const have = await fs.stat(issued).then(() => true, () => false);
    if (!have) log(`getting a certificate for ${name} from ${plan.directory}`);
    // 30 days left: lego renews; forced, any certificate has fewer days left than that.
    const days = o.force ? '100000' : '30';
    await run('lego', [...legoArgs(plan, name), ...(have ? ['renew', '--days', days, '--no-random-sleep'] : ['run'])]);
    const files = certFiles(name);
    const cert = await fs.readFile(issued, 'utf8');
    const key = await fs.readFile(path.join(ACME_STATE, 'lego/certificates', `${name}.key`), 'utf8');
    const wrote = [
      await placeFile({ path: files.cert, text: cert, mode: 0o644 }),
      await placeFile({ path: files.key, text: key, mode: 0o640, group: 'ssl-cert' }),
    ];
    if (wrote.includes('written')) changed.push(name);
  }
  if (changed.length) {
    for (const unit of plan.reload) {
      if (await isActive(unit)) await run('systemctl', ['reload-or-restart', unit]);
    }
  }
  return changed;
}

/** Keeps the plan for the timer (with the units of roles an earlier run set up) and runs it now. */
export async function certificatesFor(given: AcmePlan, log: Log): Promise<string[]> {
  const kept = JSON.parse(await fs.readFile(ACME_PLAN, 'utf8').catch(() => 'null')) as AcmePlan | null;
  const plan = { ...given, reload: [...new Set([...(kept?.reload ?? []), ...given.reload])] };
  await placeFile({ path: ACME_PLAN, text: `${JSON.stringify(plan, null, 2)}\n`, mode: 0o600 });
  const changed = await ensureCertificates(plan, log);
  await run('systemctl', ['enable', '--now', '--quiet', 'hostplane-certs.timer']);
  return changed;
}

/** What the timer runs: the kept plan, or nothing when this node has none. */
export async function renewFromPlan(log: Log, o: { force?: boolean } = {}): Promise<string[]> {
  const text = await fs.readFile(ACME_PLAN, 'utf8').catch(() => null);
  if (text === null) return [];
  return ensureCertificates(JSON.parse(text) as AcmePlan, log, o);
}

/**
 * A private CA's root (`--acme-ca-root`, one or more PEM certificates) made trusted by the node's
 * system store, which Caddy, lego and libpq read, and NODE_EXTRA_CA_CERTS points Node at.
 */
export async function trustRoots(pemFile: string, log: Log): Promise<void> {
  const pems = (await fs.readFile(pemFile, 'utf8')).match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  let changed = false;
  for (const [i, pem] of pems.entries()) {
    const placed = await placeFile({ path: `/usr/local/share/ca-certificates/hostplane-acme-root-${i + 1}.crt`, text: `${pem}\n`, mode: 0o644 });
    if (placed === 'written') changed = true;
  }
  if (changed) {
    log(`trusting the ${pems.length} certificate(s) of ${pemFile}`);
    await run('update-ca-certificates', []);
  }
}
