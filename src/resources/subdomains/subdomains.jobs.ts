// Jobs of subdomains (API guide "Queue jobs", "Subdomains"; docs/decisions/0008-web-servers.md):
// ('subdomain', 'create' | 'update' | 'delete'), enqueued on the queue of the package's web server,
// so they run on that server's host (`hostplane worker --web-server`, or `serve` with WEB_SERVER).
//
// A run makes the subdomain's own directory and PHP pool, pushes the web server's whole desired
// configuration (every site of its packages; unchanged configs are not loaded again), and is done
// only when the web server answers the host as configured — the exact Location of a redirect, a
// marker file served from the webspace, 404 for an e-mail-only or deleted subdomain — and every
// live DNS server answers the change of its base records. Every step converges, so a run killed
// at any point and run again ends in the same state.
import crypto from 'node:crypto';
import { Type, type Static } from 'typebox';
import { fqdnOf } from '../../domain-name.js';
import { defineJob, DONE, objectIdOf, PermanentJobError, type JobContext, type JobResult } from '../job-contract.js';
import type { Store } from '../../db/index.js';
import { WebServersRepository, webServerConn, type WebServerRow } from '../../provisioning/web/servers.repository.js';
import type { SiteSpec, WebServerConn } from '../../provisioning/web/sites.js';
import { escapeTarget, httpsOrigin } from '../../provisioning/web/caddy-config.js';
import type { WebDriver } from '../../provisioning/web/driver.js';
import { WebspaceEscapeError } from '../../provisioning/web/webspace-dirs.js';
import { SubdomainsRepository, type SiteRow } from './subdomains.repository.js';
import { hasSite, phpChoices } from './subdomains.rules.js';

/** What every subdomain job carries: the DNS change of its base records to wait for (null: none). */
export const SubdomainJobPayload = Type.Object({ dnsChange: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]) });
export type SubdomainJobPayload = Static<typeof SubdomainJobPayload>;

/** How long a run waits for DNS servers that have not answered the change yet. */
const DNS_WAIT_MS = 50;

/** The effective PHP version of a webspace: its own, else the package default (null: no PHP). */
function phpVersionOf(site: SiteRow, server: WebServerConn): string | null {
  const choices = phpChoices(JSON.parse(site.php_versions) as string[], Object.keys(server.php));
  if (site.php_version && choices.includes(site.php_version)) return site.php_version;
  return choices[0] ?? null;
}

/** The host as the web server matches it, with IDN labels in ACE (Caddy matches ASCII). */
const hostOf = (site: { name: string; domain: string }) => fqdnOf(site.name, site.domain);

/** The target as it goes into a Location header: non-ASCII characters encoded the way a browser would. */
const asciiTarget = (target: string) => (/[^\x21-\x7e]/.test(target) ? new URL(target).href : target);

/** A subdomain as its web server serves it. */
function siteSpec(site: SiteRow, server: WebServerConn, web: WebDriver): SiteSpec {
  const base = { id: String(site.id), host: hostOf(site) };
  if (!hasSite(site)) return { ...base, kind: 'email' };
  if (site.kind === 'redirect') {
    return { ...base, kind: 'redirect', target: asciiTarget(site.redirect_target!), dynamic: site.redirect_dynamic === 1, https: site.redirect_https === 1 };
  }
  // Only a directory a job checked is served: a path through a symlink out of the home never is.
  if (site.webspace_root === null) return { ...base, kind: 'email' };
  const version = phpVersionOf(site, server);
  return {
    ...base,
    kind: 'webspace',
    root: site.webspace_root,
    phpSocket: version ? web.poolSocket(server, site.linux_user, version) : null,
    https: site.webspace_https === 1,
  };
}

/** The web server's whole desired state, from the store. */
async function desiredSites(store: Store, server: WebServerRow, conn: WebServerConn, web: WebDriver): Promise<SiteSpec[]> {
  return (await new SubdomainsRepository(store.db).sitesOn(server.name)).map((s) => siteSpec(s, conn, web));
}

/** What the web server must answer on plain HTTP for `/` (the probe), or null when it must know nothing of the host. */
function expectedLocation(spec: SiteSpec, server: WebServerConn): string | null {
  if (spec.kind === 'email') return null;
  if (spec.https) return `${httpsOrigin(server, spec.host)}/`;
  return spec.kind === 'redirect' ? escapeTarget(spec.target) : null;
}

/**
 * Whether the web server answers `spec`'s host as configured: a redirect's exact Location; a
 * webspace's marker file (plain HTTP, or HTTPS when plain HTTP redirects there); 404 for no site.
 */
async function answersAsConfigured(web: WebDriver, server: WebServerConn, spec: SiteSpec, dir: string | null): Promise<string | null> {
  const location = expectedLocation(spec, server);
  if (spec.kind === 'email') {
    const a = await web.probe(server, spec.host);
    return a.status === 404 ? null : `answers ${a.status} instead of 404`;
  }
  if (location !== null) {
    const a = await web.probe(server, spec.host, '/');
    if (a.status !== 301 || a.location !== location) return `answers ${a.status} ${a.location ?? ''} instead of 301 ${location}`;
    if (spec.kind === 'redirect') return null;
  }
  // A webspace: a marker served from its directory, over HTTPS when plain HTTP redirects there.
  const token = crypto.randomBytes(12).toString('hex');
  const urlPath = await web.writeMarker(dir!, token);
  try {
    const a = await web.probe(server, spec.host, urlPath, spec.https);
    return a.status === 200 && a.body === token ? null : `serves ${a.status} instead of the webspace's marker file`;
  } finally {
    await web.removeMarker(dir!, token);
  }
}

/** The run shared by create, update and delete. */
async function runSubdomainJob(ctx: JobContext<SubdomainJobPayload>): Promise<JobResult> {
  const id = objectIdOf(ctx.job);
  const repo = new SubdomainsRepository(ctx.store.db);
  const site = await repo.siteOf(id);
  if (!site) return DONE; // deleted by an earlier run
  const deleting = site.state === 'deleting';
  if (deleting && ctx.job.action !== 'delete') return DONE; // the delete queued behind wins
  const serverRow = site.web_server_name ? await new WebServersRepository(ctx.store.db).byName(site.web_server_name) : undefined;
  if (!serverRow) throw new PermanentJobError(`web server ${site.web_server_name} is not registered`);
  const server = webServerConn(serverRow);
  const web = ctx.drivers.web;

  // This subdomain's own directory and PHP pool (files stay when it changes kind or goes).
  let dir: string | null = null;
  if (!deleting && site.kind === 'webspace') {
    try {
      dir = await web.ensureDir(server, site.linux_user, site.webspace_path ?? '/');
    } catch (e) {
      if (e instanceof WebspaceEscapeError) {
        await repo.setServedRoot(site.id, null);
        throw new PermanentJobError(`webspace.path ${site.webspace_path} leads outside the home (a symbolic link)`);
      }
      throw e;
    }
    if (site.webspace_root !== dir) await repo.setServedRoot(site.id, dir);
    site.webspace_root = dir;
    const version = phpVersionOf(site, server);
    if (version) await web.ensurePool(server, site.linux_user, version);
  }
  const spec: SiteSpec = deleting ? { id: String(site.id), host: hostOf(site), kind: 'email' } : siteSpec(site, server, web);

  // The whole config, read once for all the jobs whose pushes coalesce with this one.
  await web.apply(server, () => desiredSites(ctx.store, serverRow, server, web));
  const problem = await answersAsConfigured(web, server, spec, dir);
  if (problem) throw new Error(`${spec.host} on ${server.name} ${problem}`);
  if (ctx.payload.dnsChange !== null && !(await ctx.drivers.dns.isApplied(ctx.payload.dnsChange))) return { status: 'wait', ms: DNS_WAIT_MS };

  if (deleting) await repo.delete(site.id);
  else await repo.transition(site.id, 'pending', 'live');
  return DONE;
}

const subdomainJob = (action: 'create' | 'update' | 'delete') =>
  defineJob({ type: 'subdomain', action, payload: SubdomainJobPayload, run: runSubdomainJob });

export const SUBDOMAIN_JOBS = [subdomainJob('create'), subdomainJob('update'), subdomainJob('delete')];

/**
 * The whole desired state of web server `name`, pushed again (the periodic check that catches a
 * Caddy that lost its config), and every webspace's PHP pool running: after a reboot of the web
 * host its PHP-FPM masters are gone with every other process.
 */
export async function reconcileWebServer(store: Store, web: WebDriver, name: string): Promise<boolean> {
  const row = await new WebServersRepository(store.db).byName(name);
  if (!row) return false;
  const conn = webServerConn(row);
  const sites = await new SubdomainsRepository(store.db).sitesOn(row.name);
  const loaded = await web.apply(conn, async () => sites.map((s) => siteSpec(s, conn, web)));
  const pools = new Map<string, [string, string]>();
  for (const site of sites) {
    const version = site.kind === 'webspace' ? phpVersionOf(site, conn) : null;
    if (version) pools.set(`${site.linux_user} ${version}`, [site.linux_user, version]);
  }
  for (const [user, version] of pools.values()) {
    if (!(await web.poolAnswers(conn, user, version))) await web.ensurePool(conn, user, version);
  }
  return loaded;
}
