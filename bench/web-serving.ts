// The serving side of bench:subdomains (docs/performance.md "Subdomains"): requests per second and
// p99 of a static file and of a PHP "hello" from a webspace that hostplane set up (its Caddy route,
// its PHP-FPM pool), against Debian's nginx serving the same files through a PHP-FPM pool with the
// same settings (hostplane's own pool file, only the socket differs), in one run on this machine.
// The load comes from Debian's wrk, the same threads and connections for both; the runs are paired
// (Caddy, nginx, then nginx, Caddy, …) and each pair gives a ratio, so drift of a shared machine
// falls on both sides of a pair. nginx is a private one: its own config in a temp dir on a free
// loopback port, started and stopped by PID, never the system's service.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fmt, markdownTable, pct, sleep } from './report.js';
import { freePort } from '../test/helpers/ports.js';
import { masterConfig, poolFile, versionPaths } from '../src/provisioning/web/php-fpm-files.js';
import type { WebServerConn } from '../src/provisioning/web/sites.js';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const PAIRS = num('BENCH_WEB_SERVE_PAIRS', 5);
const SECONDS = num('BENCH_WEB_SERVE_SECONDS', 5);
const CONNECTIONS = num('BENCH_WEB_SERVE_CONNECTIONS', 16);
const THREADS = num('BENCH_WEB_SERVE_THREADS', 2);
/** Target: Caddy's req/s at least this share of nginx's, and its p99 at most nginx's divided by it. */
export const SERVE_TARGET = 0.9;
const STATIC_BYTES = 1024;

/** The webspace under test, as the bench's instance made it through the API. */
export interface ServingSite {
  web: WebServerConn;
  host: string;
  /** The webspace's directory. */
  dir: string;
  linuxUser: string;
  phpVersion: string;
  /** Caddy's pid file (its CPU time is read from /proc). */
  caddyPidFile: string;
  /** Throws when the bench was interrupted. */
  check(): void;
}

export interface WrkRun {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** CPU time per request (µs) of the web server's processes and of the PHP-FPM master and its workers, from /proc. */
  serverCpuUs: number;
  fpmCpuUs: number;
}

export interface ServingResult {
  target: 'static' | 'php';
  caddy: WrkRun[];
  nginx: WrkRun[];
  /** Per pair: Caddy's req/s / nginx's, Caddy's p99 / nginx's. */
  rpsRatio: number[];
  p99Ratio: number[];
}

/** Why the serving part cannot run here, or null: nginx and wrk are Debian packages. */
export function servingMissing(): string | null {
  const absent = [['nginx', 'nginx-light'], ['wrk', 'wrk']].filter(([bin]) => spawnSync('bash', ['-c', `PATH=$PATH:/usr/sbin command -v ${bin}`]).status !== 0);
  return absent.length ? `${absent.map(([b]) => b).join(', ')} not installed (Debian: ${absent.map(([, p]) => p).join(' ')})` : null;
}

const nginxBin = () => spawnSync('bash', ['-c', 'PATH=$PATH:/usr/sbin command -v nginx'], { encoding: 'utf8' }).stdout.trim();

/** The files both servers serve: STATIC_BYTES of HTML and a PHP hello. */
export function writeServingFiles(dir: string): void {
  fs.writeFileSync(path.join(dir, 'static.html'), `<!doctype html><title>bench</title><p>${'x'.repeat(STATIC_BYTES - 40)}</p>\n`.slice(0, STATIC_BYTES));
  fs.writeFileSync(path.join(dir, 'hello.php'), '<?php echo "hello\\n";');
}

/** One GET with `host`: status and body (to check both servers answer the same before loading them). */
function get(port: number, host: string, urlPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, headers: { host }, agent: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer on port ${port} for ${host}${urlPath}`)));
    req.on('error', reject);
    req.end();
  });
}

const MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };
const duration = (s: string) => {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(s);
  if (!m) throw new Error(`wrk printed a latency "${s}" this bench cannot read`);
  return Number(m[1]) * MS[m[2]];
};

/** wrk's report: req/s, p50 and p99 (--latency); throws on socket errors or an answer that is not 2xx/3xx. */
export function parseWrk(out: string): Omit<WrkRun, 'serverCpuUs' | 'fpmCpuUs'> {
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(out);
  const p50 = /^\s+50%\s+(\S+)/m.exec(out);
  const p99 = /^\s+99%\s+(\S+)/m.exec(out);
  const requests = /^\s+(\d+) requests in/m.exec(out);
  if (!rps || !p50 || !p99 || !requests) throw new Error(`wrk's output is not what this bench reads:\n${out}`);
  const bad = /Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)/.exec(out);
  if (bad) throw new Error(`wrk saw failures (${bad[0]}):\n${out}`);
  return { rps: Number(rps[1]), p50Ms: duration(p50[1]), p99Ms: duration(p99[1]), requests: Number(requests[1]) };
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU ms of `pid` and its children, the reaped ones included (utime, stime, cutime, cstime). */
function treeCpuMs(pid: number): number {
  const fields = (p: string) => {
    try {
      return fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
    } catch {
      return null;
    }
  };
  // After "pid (comm) ": state is [0], ppid [1], utime [11], stime [12], cutime [13], cstime [14].
  const cpu = (f: string[]) => (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS;
  let total = 0;
  for (const p of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    const f = fields(p);
    if (f && (Number(p) === pid || Number(f[1]) === pid)) total += cpu(f);
  }
  return total;
}

async function wrk(port: number, host: string, urlPath: string, seconds: number, pids: { server: number; fpm: number }): Promise<WrkRun> {
  const before = { server: treeCpuMs(pids.server), fpm: treeCpuMs(pids.fpm) };
  const { stdout } = await promisify(execFile)('wrk', [`-t${THREADS}`, `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-H', `Host: ${host}`, `http://127.0.0.1:${port}${urlPath}`]);
  const r = parseWrk(stdout);
  return { ...r, serverCpuUs: ((treeCpuMs(pids.server) - before.server) * 1000) / r.requests, fpmCpuUs: ((treeCpuMs(pids.fpm) - before.fpm) * 1000) / r.requests };
}

/** nginx's config: what Caddy's site does (files, index.php as the front controller, *.php to the pool), and nothing Caddy's config leaves out (no access log, no compression). */
export function nginxConfig(o: { dir: string; port: number; host: string; root: string; socket: string; user: string | null }): string {
  const t = (name: string) => path.join(o.dir, 'tmp', name);
  return `${o.user ? `user ${o.user};\n` : ''}worker_processes auto;
pid ${o.dir}/nginx.pid;
error_log ${o.dir}/error.log;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  sendfile on;
  tcp_nopush on;
  client_body_temp_path ${t('body')};
  fastcgi_temp_path ${t('fastcgi')};
  proxy_temp_path ${t('proxy')};
  uwsgi_temp_path ${t('uwsgi')};
  scgi_temp_path ${t('scgi')};
  server {
    listen 127.0.0.1:${o.port};
    server_name ${o.host};
    root ${o.root};
    index index.html index.php;
    # As hostplane's Caddy route (php_fastcgi's): a missing file goes to the directory's or the root's index.php.
    location / {
      try_files $uri $uri/ $uri/index.php /index.php$is_args$args;
    }
    location ~ \\.php$ {
      try_files $uri =404;
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
      fastcgi_pass unix:${o.socket};
    }
  }
}
`;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function stopPid(pid: number, signal: NodeJS.Signals): Promise<void> {
  if (!alive(pid)) return;
  process.kill(pid, signal);
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(100);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
}

/** nginx and its PHP-FPM master under `dir`, serving `site.dir` on a free port; stop() ends both by PID. */
async function startNginx(site: ServingSite, dir: string): Promise<{ port: number; pid: number; fpmPid: number; stop(): Promise<void> }> {
  fs.mkdirSync(path.join(dir, 'tmp'), { recursive: true });
  const user = process.getuid?.() === 0 ? os.userInfo().username : null;
  // The pool: hostplane's own pool file for this user and version, on a socket of its own.
  const hp = versionPaths(site.web.stateDir, site.phpVersion);
  const own = versionPaths(dir, site.phpVersion);
  fs.mkdirSync(own.pools, { recursive: true });
  const socket = path.join(own.dir, `${site.linuxUser}.sock`);
  const pool = fs.readFileSync(poolFile(hp, site.linuxUser), 'utf8').replace(/^listen = .*$/m, `listen = ${socket}`);
  fs.writeFileSync(poolFile(own, site.linuxUser), pool);
  fs.writeFileSync(own.conf, masterConfig('bench-nginx', site.phpVersion, own));
  await promisify(execFile)(site.web.php[site.phpVersion], ['--fpm-config', own.conf, ...(user ? ['-R'] : [])]);
  const fpmPid = Number(fs.readFileSync(own.pid, 'utf8'));
  let nginx: ChildProcess | null = null;
  const stop = async () => {
    if (nginx?.pid) await stopPid(nginx.pid, 'SIGQUIT');
    await stopPid(fpmPid, 'SIGQUIT');
  };
  try {
    const port = await freePort();
    const conf = path.join(dir, 'nginx.conf');
    fs.writeFileSync(conf, nginxConfig({ dir, port, host: site.host, root: site.dir, socket, user }));
    nginx = spawn(nginxBin(), ['-p', dir, '-e', path.join(dir, 'error.log'), '-c', conf, '-g', 'daemon off;'], { stdio: 'ignore' });
    for (let i = 0; ; i++) {
      if (await get(port, site.host, '/static.html').then(() => true, () => false)) break;
      if (i > 100 || nginx.exitCode !== null) throw new Error(`nginx did not answer on port ${port}: ${fs.readFileSync(path.join(dir, 'error.log'), 'utf8').slice(-2000)}`);
      await sleep(50);
    }
    return { port, pid: nginx.pid!, fpmPid, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Both servers answer the same, then per target (static, PHP) an untimed warm-up of each and
 * PAIRS pairs of wrk runs: `const results = await servingRun(site, dir, log)`.
 */
export async function servingRun(site: ServingSite, dir: string, log: (s: string) => void): Promise<ServingResult[]> {
  const nginx = await startNginx(site, dir);
  try {
    const caddyPort = Number(site.web.httpListen.slice(site.web.httpListen.lastIndexOf(':') + 1));
    const ports = { caddy: caddyPort, nginx: nginx.port };
    const pids = {
      caddy: { server: Number(fs.readFileSync(site.caddyPidFile, 'utf8')), fpm: Number(fs.readFileSync(versionPaths(site.web.stateDir, site.phpVersion).pid, 'utf8')) },
      nginx: { server: nginx.pid, fpm: nginx.fpmPid },
    };
    const targets = [['static', '/static.html'], ['php', '/hello.php']] as const;
    for (const [, p] of targets) {
      const [a, b] = [await get(ports.caddy, site.host, p), await get(ports.nginx, site.host, p)];
      if (a.status !== 200 || b.status !== 200 || a.body !== b.body) throw new Error(`Caddy and nginx answer ${p} differently: ${a.status} / ${b.status}`);
    }
    log(`serving: Caddy on ${ports.caddy}, nginx on ${ports.nginx} (pid file under ${dir}); wrk -t${THREADS} -c${CONNECTIONS}, ${PAIRS} pairs of ${SECONDS} s per target`);
    const results: ServingResult[] = [];
    for (const [target, p] of targets) {
      const r: ServingResult = { target, caddy: [], nginx: [], rpsRatio: [], p99Ratio: [] };
      for (const side of ['caddy', 'nginx'] as const) await wrk(ports[side], site.host, p, Math.min(2, SECONDS), pids[side]);
      for (let i = 0; i < PAIRS; i++) {
        site.check();
        const order = i % 2 === 0 ? (['caddy', 'nginx'] as const) : (['nginx', 'caddy'] as const);
        const pair: Partial<Record<'caddy' | 'nginx', WrkRun>> = {};
        for (const side of order) pair[side] = await wrk(ports[side], site.host, p, SECONDS, pids[side]);
        r.caddy.push(pair.caddy!);
        r.nginx.push(pair.nginx!);
        r.rpsRatio.push(pair.caddy!.rps / pair.nginx!.rps);
        r.p99Ratio.push(pair.caddy!.p99Ms / pair.nginx!.p99Ms);
        log(`  ${target} pair ${i + 1}: Caddy ${fmt(pair.caddy!.rps)} req/s p99 ${fmt(pair.caddy!.p99Ms, 2)} ms, nginx ${fmt(pair.nginx!.rps)} req/s p99 ${fmt(pair.nginx!.p99Ms, 2)} ms`);
      }
      results.push(r);
    }
    return results;
  } finally {
    await nginx.stop();
  }
}

const range = (xs: number[], digits: number) => `${fmt(pct(xs, 50), digits)} (${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)})`;

/** The serving table and the verdict against SERVE_TARGET. */
export function printServing(results: ServingResult[], nginxVersion: string): void {
  console.log(`5. Serving a webspace: hostplane's Caddy route + PHP-FPM pool vs nginx ${nginxVersion} + a pool with the same settings; wrk -t${THREADS} -c${CONNECTIONS}, keep-alive, ${PAIRS} pairs of ${SECONDS} s (median (min–max))`);
  console.log(
    markdownTable(
      ['target', 'Caddy req/s', 'nginx req/s', 'req/s Caddy / nginx', 'Caddy p99 ms', 'nginx p99 ms', 'p99 Caddy / nginx', 'CPU µs/req Caddy + FPM', 'CPU µs/req nginx + FPM'],
      results.map((r) => [
        r.target === 'static' ? `static file (${STATIC_BYTES} B)` : 'PHP hello',
        range(r.caddy.map((x) => x.rps), 0), range(r.nginx.map((x) => x.rps), 0), range(r.rpsRatio, 2),
        range(r.caddy.map((x) => x.p99Ms), 2), range(r.nginx.map((x) => x.p99Ms), 2), range(r.p99Ratio, 2),
        `${fmt(pct(r.caddy.map((x) => x.serverCpuUs), 50))} + ${fmt(pct(r.caddy.map((x) => x.fpmCpuUs), 50))}`,
        `${fmt(pct(r.nginx.map((x) => x.serverCpuUs), 50))} + ${fmt(pct(r.nginx.map((x) => x.fpmCpuUs), 50))}`,
      ]),
      1,
    ),
  );
  const missed = results.flatMap((r) => [
    ...(pct(r.rpsRatio, 50) < SERVE_TARGET ? [`${r.target} req/s ${fmt(pct(r.rpsRatio, 50), 2)} ×`] : []),
    ...(pct(r.p99Ratio, 50) > 1 / SERVE_TARGET ? [`${r.target} p99 ${fmt(pct(r.p99Ratio, 50), 2)} ×`] : []),
  ]);
  console.log(missed.length ? `serving target missed (≥ ${SERVE_TARGET} × nginx's req/s, p99 ≤ ${fmt(1 / SERVE_TARGET, 2)} × its): ${missed.join('; ')}` : `serving target met: ≥ ${SERVE_TARGET} × nginx's req/s and p99 ≤ ${fmt(1 / SERVE_TARGET, 2)} × its, static and PHP (medians of the pairs)`);
}

/**
 * The webspace under test, made as a customer makes it: POST /subdomains (a webspace with the
 * first installed PHP version) on `h`'s app, wait for its job, write the files.
 */
export async function servingSite(
  h: { base: string; token: string; web: WebServerConn; caddyPidFile: string; headers: Record<string, string>; check(): void },
  domain: string,
  linuxUser: string,
  jobDone: (jobUrl: string) => Promise<unknown>,
): Promise<ServingSite> {
  const phpVersion = Object.keys(h.web.php).sort()[0];
  if (!phpVersion) throw new Error('the stack registered no PHP version (Debian package php8.2-fpm)');
  const res = await fetch(`${h.base}/subdomains`, {
    method: 'POST',
    headers: h.headers,
    body: JSON.stringify({ data: { type: 'subdomain', attributes: { subdomain_type: 'webspace', domain, subdomain: 'serve', webspace: { path: '/serve/', php_version: phpVersion } } } }),
  });
  const body = (await res.json()) as { data?: { links: { 'queue-job': string } } };
  if (res.status !== 202 || !body.data) throw new Error(`POST /subdomains (webspace) answered ${res.status}: ${JSON.stringify(body)}`);
  await jobDone(body.data.links['queue-job']);
  const dir = path.join(h.web.homeRoot, linuxUser, 'serve');
  writeServingFiles(dir);
  return { web: h.web, host: `serve.${domain}`, dir, linuxUser, phpVersion, caddyPidFile: h.caddyPidFile, check: h.check };
}
