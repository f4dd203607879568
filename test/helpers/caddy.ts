// Caddy for the web driver tests (docs/decisions/0008-web-servers.md): a private `caddy run` in a
// temp dir with its admin API, HTTP and HTTPS on free loopback ports (never the machine's own web
// server), stopped by its PID; the `ask` endpoint of on-demand TLS as a tiny HTTP server; and a
// counting proxy in front of the admin API, so a test sees how often a config was loaded.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import { openSync, closeSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { sameJson } from '../../src/provisioning/web/caddy-client.js';
import type { WebServerConn } from '../../src/provisioning/web/sites.js';
import { freePort } from './ports.js';
import { requirable } from './required.js';

function findBinary(bin: string): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin']) {
    const candidate = path.join(dir, bin);
    if (spawnSync('test', ['-x', candidate]).status === 0) return candidate;
  }
  return null;
}

/** Why a private caddy cannot run here, or null. */
export function caddyMissing(): string | null {
  return findBinary('caddy') ? null : 'caddy is not installed (Debian package caddy)';
}

/** `requireCaddy()('suite', () => …)`: skips without caddy, fails so under CI_REQUIRE_ALL=1. */
export function requireCaddy(): ReturnType<typeof requirable> {
  return requirable(caddyMissing());
}

export interface PrivateCaddy {
  /** The web server as the driver sees it: admin, HTTP and HTTPS on loopback, homes under `dir/www`. */
  server: WebServerConn;
  /** The temp dir: config, Caddy's data (its internal CA), logs, `www/`. */
  dir: string;
  pid(): number | null;
  /** Kills it by its PID (SIGKILL: as a crash, nothing saved). */
  kill(): Promise<void>;
  /** Starts it again on the same ports with only the admin config, as a restart without `--resume`. */
  restart(): Promise<void>;
  /** Stops it (SIGTERM, then SIGKILL) and removes the temp dir. */
  stop(): Promise<void>;
}

/**
 * A private caddy: `const caddy = await startPrivateCaddy()` … `await caddy.stop()`. It starts
 * holding its three ports (admin, an empty HTTP server, an empty server on the HTTPS port), so a
 * port another process took between freePort() and the start shows up here: caddy exits
 * "address already in use" and new ports are tried. Later loads keep the ports (Caddy hands its
 * listeners over from config to config).
 */
export async function startPrivateCaddy(): Promise<PrivateCaddy> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-caddy-'));
  await fs.mkdir(path.join(dir, 'www'));
  await fs.mkdir(path.join(dir, 'state'));
  let child: ChildProcess | null = null;
  let server: WebServerConn | null = null;
  let runs = 0;

  const env = {
    ...process.env,
    HOME: dir,
    XDG_DATA_HOME: path.join(dir, 'data'),
    XDG_CONFIG_HOME: path.join(dir, 'config'),
  };

  /** Runs caddy on `config`; resolves once its admin API reports exactly that config. */
  const run = async (config: object): Promise<void> => {
    runs++;
    const configFile = path.join(dir, `config-${runs}.json`);
    const logFile = path.join(dir, `caddy-${runs}.log`);
    await fs.writeFile(configFile, JSON.stringify(config));
    const log = openSync(logFile, 'w');
    const c = spawn(findBinary('caddy') ?? 'caddy', ['run', '--config', configFile], { stdio: ['ignore', log, log], env, cwd: dir });
    closeSync(log);
    child = c;
    const adminUrl = `http://${(config as { admin: { listen: string } }).admin.listen}`;
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (c.exitCode !== null || c.signalCode !== null) {
        const text = await fs.readFile(logFile, 'utf8').catch(() => '');
        throw new Error(`caddy exited with ${c.exitCode ?? c.signalCode}: ${text.slice(-2000)}`);
      }
      const answer = await getConfig(adminUrl).catch(() => null);
      // Another process may answer on that port: only our own config counts.
      if (answer !== null && sameJson(answer, config)) return;
      if (Date.now() > deadline) {
        await killChild(c, 'SIGKILL');
        throw new Error(`caddy did not answer at ${adminUrl} within 20 s`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  for (let attempt = 1; ; attempt++) {
    const [admin, httpPort, httpsPort] = [await freePort(), await freePort(), await freePort()];
    server = {
      name: 'test',
      caddyAdmin: `http://127.0.0.1:${admin}`,
      httpListen: `127.0.0.1:${httpPort}`,
      httpsListen: `127.0.0.1:${httpsPort}`,
      homeRoot: path.join(dir, 'www'),
      stateDir: path.join(dir, 'state'),
      php: {},
    };
    // The storage root names our temp dir: no other caddy reports this config.
    const boot = {
      admin: { listen: `127.0.0.1:${admin}` },
      storage: { module: 'file_system', root: path.join(dir, 'data', 'caddy') },
      apps: {
        http: {
          servers: {
            boot: { listen: [server.httpListen, server.httpsListen], automatic_https: { disable: true } },
          },
        },
      },
    };
    try {
      await run(boot);
      break;
    } catch (err) {
      if (attempt < 5 && /address already in use/i.test((err as Error).message)) continue;
      await fs.rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  const conn = server;
  return {
    server: conn,
    dir,
    pid: () => child?.pid ?? null,
    kill: async () => {
      if (child) await killChild(child, 'SIGKILL');
    },
    restart: async () => {
      if (child) await killChild(child, 'SIGKILL');
      await run({ admin: { listen: new URL(conn.caddyAdmin).host } });
    },
    stop: async () => {
      if (child) await killChild(child, 'SIGTERM');
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/** Signals the child by its PID and waits for its exit (SIGKILL after 10 s). */
async function killChild(c: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
  c.kill(signal);
  const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** GET /config/, parsed (one connection, 2-s timeout). */
function getConfig(adminUrl: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${adminUrl}/config/`, { agent: false, timeout: 2_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))) : reject(new Error(`status ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** A loopback HTTP server on a free port: `listenOnFreePort(server)` → its port (retries on EADDRINUSE). */
async function listenOnFreePort(server: http.Server): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
      return port;
    } catch (err) {
      if (attempt < 5 && (err as NodeJS.ErrnoException).code === 'EADDRINUSE') continue;
      throw err;
    }
  }
}

export interface AskServer {
  /** http://127.0.0.1:<port>/tls-allowed — on-demand TLS appends `?domain=<host>`. */
  url: string;
  /** Every `domain` asked, in order. */
  asked: string[];
  close(): Promise<void>;
}

/** The `ask` endpoint: 200 for the `allowed` hosts, 403 for any other (`startAskServer(['a.example'])`). */
export async function startAskServer(allowed: string[]): Promise<AskServer> {
  const asked: string[] = [];
  const srv = http.createServer((req, res) => {
    const domain = new URL(req.url ?? '/', 'http://ask').searchParams.get('domain') ?? '';
    asked.push(domain);
    res.statusCode = allowed.includes(domain) ? 200 : 403;
    res.end();
  });
  const port = await listenOnFreePort(srv);
  return {
    url: `http://127.0.0.1:${port}/tls-allowed`,
    asked,
    close: () => new Promise<void>((resolve) => srv.close(() => resolve())),
  };
}

export interface CountingProxy {
  /** http://127.0.0.1:<port>: give this to a CaddyClient instead of the admin URL. */
  url: string;
  /** Requests passed on, as 'GET /config/' or 'POST /load'. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * Passes every request on to Caddy's admin API at `adminUrl` and notes it: how many `POST /load`
 * a burst of ensure() calls made. The Host header is set to the admin's own (Caddy checks it).
 */
export async function startCountingProxy(adminUrl: string): Promise<CountingProxy> {
  const target = new URL(adminUrl);
  const requests: string[] = [];
  const srv = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, agent: false, headers: { ...req.headers, host: target.host } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      res.statusCode = 502;
      res.end(String(err));
    });
    req.pipe(upstream);
  });
  const port = await listenOnFreePort(srv);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => srv.close(() => resolve())),
  };
}

/**
 * The TLS handshake a browser trusting `ca` makes with `listen` for `servername`: resolves with
 * the certificate's names (`'DNS:shop.example.com'`) and issuer CN, rejects when the handshake
 * or the verification fails.
 */
export function tlsHandshake(listen: string, servername: string, ca: string): Promise<{ subjectaltname: string; issuer: string }> {
  const [, host, port] = /^(.*):(\d+)$/.exec(listen)!;
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host, port: Number(port), servername, ca, rejectUnauthorized: true, timeout: 10_000 }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve({ subjectaltname: cert.subjectaltname ?? '', issuer: String(cert.issuer?.CN ?? '') });
    });
    socket.on('timeout', () => socket.destroy(new Error('no handshake within 10 s')));
    socket.on('error', reject);
  });
}
