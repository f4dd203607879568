// Caddy on an api or web node (decision 0018 "One Caddy per host"): Debian's caddy.service started
// with hostplane's JSON config instead of the Caddyfile. It is the same config the web worker
// holds Caddy to (caddyConfig), with no sites yet: the API's site when the node has the api role,
// on-demand TLS for the sites when it has the web role, the admin API on loopback.
import { caddyConfig, NODE_ACME_WEBROOT, type ApiFront } from '../provisioning/web/caddy-config.js';
import type { NodeContext } from './context.js';
import { tlsAskUrl } from '../provisioning/drivers.js';
import { commandCheck, placeFile } from './files.js';
import { placeDropIn } from './units.js';
import { enableUnit, type Log } from './system.js';

export const CADDY_CONFIG = '/etc/caddy/hostplane.json';
export const CADDY_ADMIN = 'http://127.0.0.1:2019';
export const CADDY_LISTEN = { http: ':80', https: ':443' };

const DROP_IN = `# Written by hostplane node setup: Caddy runs hostplane's JSON config (the web worker loads the sites).
[Service]
ExecStart=
ExecStart=/usr/bin/caddy run --environ --config ${CADDY_CONFIG}
ExecReload=
ExecReload=/usr/bin/caddy reload --config ${CADDY_CONFIG} --force
`;

export interface CaddyFacts {
  name: string;
  publicBaseUrl: string;
  acmeDirectory: string;
  apiFront: ApiFront | null;
}

/** Where the API listens on an api node (HOST and PORT of its hostplane.env); 8080 is a mail node's doveadm API. */
export const API_UPSTREAM = '127.0.0.1:8081';

/** The same facts for the api and the web role of a node, so one Caddy config serves both. */
export function caddyFacts(ctx: NodeContext): CaddyFacts {
  const apiFront = ctx.roles.includes('api') ? { host: ctx.name, upstream: API_UPSTREAM, acmeWebroot: NODE_ACME_WEBROOT } : null;
  return { name: ctx.shortName, publicBaseUrl: ctx.publicBaseUrl, acmeDirectory: ctx.acme.directory, apiFront };
}

export function caddyInitialConfig(f: CaddyFacts): object {
  const server = { name: f.name, caddyAdmin: CADDY_ADMIN, httpListen: CADDY_LISTEN.http, httpsListen: CADDY_LISTEN.https, homeRoot: '/srv/www', stateDir: '/srv/www/.hostplane', php: {} };
  return caddyConfig(server, [], { askUrl: tlsAskUrl(f.publicBaseUrl), tls: 'acme', acmeDirectory: f.acmeDirectory, apiFront: f.apiFront });
}

export async function ensureCaddy(f: CaddyFacts, log: Log): Promise<void> {
  const text = `${JSON.stringify(caddyInitialConfig(f), null, 2)}\n`;
  const config = await placeFile({ path: CADDY_CONFIG, text, mode: 0o644, check: commandCheck('caddy', ['validate', '--config', '{}']) });
  const dropIn = await placeDropIn('caddy.service', DROP_IN);
  await enableUnit('caddy.service', config === 'written' || dropIn, log);
}
