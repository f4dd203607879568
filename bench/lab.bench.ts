// The lab against the local stack (docs/performance.md "The lab"): for each of a webspace, a mailbox,
// a database and a DNS record, the time from the POST that creates it to the first moment a client uses it —
// a webspace's HTTPS answer (certificate verified; on the lab issued on demand by the lab's ACME CA),
// a mailbox's IMAP login (IMAPS on the lab, plain IMAP on the stack's loopback), a database login
// (from the web host on the lab, from this machine on the stack), a TXT record answered by every DNS
// server (on the lab hostplane's on the api host and the Knot secondary ns2) — in the same run on both.
//
//   npm run bench:lab                         # boots a lab (root) and a local stack, then removes both
//   BENCH_LAB_DIR=/tmp/lab npm run bench:lab  # a lab that is up already (hostplane lab up /tmp/lab)
//
// Settings: BENCH_LAB_N [5] samples of each kind and side, one at a time; BENCH_LAB_POLL_MS [50].
// The demo customer solo-demo.example does the POSTs on both sides (its plan allows 10 databases).
// On the lab the polls run in its client namespace (curl) and on the web host (node with mysql2).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../test/helpers/ports.js';
import { DOWN, ROOT, script, upOnFreePorts } from '../test/helpers/stack-scripts.js';
import { hostLeader, inHost } from '../src/lab/hosts.js';
import { readState } from '../src/lab/state.js';
import { benchHeader, fmt, markdownTable, pct, sleep } from './report.js';

const N = Number(process.env.BENCH_LAB_N ?? 5);
const POLL_MS = Number(process.env.BENCH_LAB_POLL_MS ?? 50);
const MAIN = path.join(ROOT, 'dist/main.js');
const exec = promisify(execFile);
const ok = (cmd: string, args: string[]) => exec(cmd, args, { timeout: 30_000 }).then(() => true, () => false);

interface Side {
  name: string;
  api(method: string, p: string, token: string, body?: unknown): Promise<{ status: number; body: any }>;
  webspaceAnswers(host: string): Promise<boolean>;
  imapLogin(user: string, password: string): Promise<boolean>;
  dbLogin(name: string, password: string): Promise<boolean>;
  /** Every DNS server of the side answers `value` for the TXT record `name`. */
  recordServed(name: string, value: string): Promise<boolean>;
  close(): Promise<void>;
}

/** curl as an API client (`prefix`: the command up to curl's own options); status and parsed body. */
async function curlApi(prefix: string[], url: string, method: string, token: string, body?: unknown) {
  const args = [...prefix, '-s', '-X', method, '-H', `Authorization: token ${token}`, '-w', '\n%{http_code}'];
  if (body !== undefined) args.push('-H', 'Content-Type: application/vnd.api+json', '--data-binary', JSON.stringify(body));
  const { stdout } = await exec(args[0], [...args.slice(1), url], { timeout: 30_000 });
  const lines = stdout.split('\n');
  const status = Number(lines.pop());
  return { status, body: lines.join('\n') ? JSON.parse(lines.join('\n')) : null };
}

async function labSide(dir: string): Promise<Side> {
  const j = JSON.parse(fs.readFileSync(path.join(dir, 'lab.json'), 'utf8'));
  const ns = ['ip', 'netns', 'exec', j.client_netns];
  const web = await hostLeader(readState(dir)!, 'web');
  const resolve = (host: string, port: number, address: string) => ['--resolve', `${host}:${port}:${address}`];
  return {
    name: 'lab',
    api: (method, p, token, body) => curlApi([...ns, 'curl', '--cacert', j.ca, ...resolve(new URL(j.api).hostname, 443, j.hosts.api)], `${j.api}${p}`, method, token, body),
    webspaceAnswers: (host) => ok(ns[0], [...ns.slice(1), 'curl', '-s', '-o', '/dev/null', '--max-time', '5', '--cacert', j.ca, ...resolve(host, 443, j.hosts.web), `https://${host}/`]),
    imapLogin: (user, password) => ok(ns[0], [...ns.slice(1), 'curl', '-s', '--max-time', '5', '--cacert', j.ca, ...resolve(j.mail.host, 993, j.hosts.mail), '--user', `${user}:${password}`, `imaps://${j.mail.host}/`]),
    dbLogin: async (name, password) => {
      const js = `require('/usr/local/lib/node_modules/hostplane/node_modules/mysql2/promise').createConnection({host:'${j.db.host}',user:'${name}',password:'${password}',database:'${name}'}).then(c=>c.end(),()=>process.exit(1))`;
      return (await inHost(web, ['node', '-e', js], { timeoutMs: 30_000 })).code === 0;
    },
    recordServed: async (name, value) => {
      for (const server of [j.dns, j.dns_secondary]) {
        const r = await exec(ns[0], [...ns.slice(1), 'dig', `@${server}`, name, 'TXT', '+short', '+time=1', '+tries=1'], { timeout: 10_000 }).catch(() => ({ stdout: '' }));
        if (r.stdout.trim() !== `"${value}"`) return false;
      }
      return true;
    },
    close: async () => {},
  };
}

async function localSide(root: string): Promise<Side> {
  const env = { ...process.env, DATABASE_URL: path.join(root, 'store.db'), DEMO_MARIADB_URL: 'mysql://root@127.0.0.1:3306', LOG_LEVEL: 'warn' };
  fs.writeFileSync(path.join(root, 'local-demo.json'), (await exec(process.execPath, [MAIN, 'demo', '--json'], { env })).stdout);
  const port = await freePort();
  const stackDir = path.join(root, 'stack');
  const up = await upOnFreePorts(stackDir, { DATABASE_URL: env.DATABASE_URL, PORT: String(port) });
  if (up.run.code !== 0) throw new Error(`up.sh failed: ${up.run.stderr}`);
  const stack = JSON.parse(fs.readFileSync(path.join(stackDir, 'stack.json'), 'utf8'));
  if (!stack.mail) throw new Error(`the local stack has no mail servers; up.sh said:\n${up.run.stdout}${up.run.stderr}`);
  const base = `http://127.0.0.1:${port}`;
  const dnsPort = await freePort();
  const serve = execFile(process.execPath, [MAIN, 'serve'], {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', DEMO_DATA: 'off', WEB_SERVER: 'local', WEB_TLS_ISSUER: 'internal', DNS_LISTEN: `127.0.0.1:${dnsPort}`, PUBLIC_BASE_URL: base, RATE_LIMIT_MAX: '100000' },
  });
  for (let i = 0; !(await ok('curl', ['-sf', '-o', '/dev/null', `${base}/readyz`])); i++) {
    if (i > 300) throw new Error(`hostplane serve did not answer at ${base}/readyz`);
    await sleep(100);
  }
  const [httpsHost, httpsPort] = [stack.web.https.split(':')[0], stack.web.https.split(':')[1]];
  const ca = path.join(stackDir, 'caddy/data/caddy/pki/authorities/local/root.crt');
  const [imapHost, imapPort] = stack.mail.imap.split(':');
  return {
    name: 'local stack',
    api: (method, p, token, body) => curlApi(['curl'], `${base}${p}`, method, token, body),
    webspaceAnswers: (host) => ok('curl', ['-s', '-o', '/dev/null', '--max-time', '5', '--cacert', ca, '--resolve', `${host}:${httpsPort}:${httpsHost}`, `https://${host}:${httpsPort}/`]),
    imapLogin: (user, password) => ok('curl', ['-s', '--max-time', '5', '--user', `${user}:${password}`, `imap://${imapHost}:${imapPort}/`]),
    dbLogin: (name, password) => ok('mariadb', ['--host=127.0.0.1', `--user=${name}`, `--password=${password}`, '-e', 'select 1', name]),
    recordServed: async (name, value) =>
      (await exec('dig', ['@127.0.0.1', '-p', String(dnsPort), name, 'TXT', '+short', '+time=1', '+tries=1'], { timeout: 10_000 }).catch(() => ({ stdout: '' }))).stdout.trim() === `"${value}"`,
    close: async () => {
      serve.kill('SIGTERM');
      await script(DOWN, [stackDir, '--purge'], {});
    },
  };
}

/** Polls `answers` until true: the milliseconds since `t0`. */
async function until(t0: number, answers: () => Promise<boolean>, what: string): Promise<number> {
  for (;;) {
    if (await answers()) return performance.now() - t0;
    if (performance.now() - t0 > 300_000) throw new Error(`${what}: not live after 300 s`);
    await sleep(POLL_MS);
  }
}

const KINDS = ['webspace', 'mailbox', 'database', 'dns record'] as const;
type Samples = Record<(typeof KINDS)[number], number[]>;

async function measure(side: Side, demo: { token: string; package_id: string; domain: string }, run: string): Promise<Samples> {
  const s: Samples = { webspace: [], mailbox: [], database: [], 'dns record': [] };
  const plans = await side.api('GET', '/plans', demo.token);
  const version: string = plans.body.data[0].attributes.database_versions.at(-1);
  const create = async (p: string, type: string, attributes: object) => {
    const t0 = performance.now();
    const r = await side.api('POST', p, demo.token, { data: { type, attributes } });
    if (r.status !== 202) throw new Error(`${side.name}: POST ${p} answered ${r.status}: ${JSON.stringify(r.body)}`);
    return { t0, data: r.body.data, links: { ...r.body.links, ...r.body.data.links } };
  };
  for (let i = 0; i < N; i++) {
    const sub = `bench-${run}-${i}`;
    // Live: its job done (the web server serves the webspace), then an HTTPS answer with a verified
    // certificate (on the lab the first handshake gets it from the ACME CA).
    const w = await create('/subdomains', 'subdomain', { subdomain_type: 'webspace', domain: demo.domain, subdomain: sub, webspace: { path: `/${sub}/`, php_version: null } });
    const job = String(w.links['queue-job']).replace(/^https?:\/\/[^/]+/, '');
    await until(w.t0, async () => (await side.api('GET', job, demo.token)).body?.data?.attributes?.status === 'done', 'webspace job');
    s.webspace.push(await until(w.t0, () => side.webspaceAnswers(`${sub}.${demo.domain}`), 'webspace'));
    const m = await create('/email-addresses', 'email-address', { address: `${sub}@${demo.domain}`, address_type: 'mailbox' });
    s.mailbox.push(await until(m.t0, () => side.imapLogin(`${sub}@${demo.domain}`, m.data.attributes.password), 'mailbox'));
    const d = await create('/databases', 'database', { package_id: demo.package_id, db_type: version.split('-')[0], version: version.split('-')[1] });
    s.database.push(await until(d.t0, () => side.dbLogin(d.data.attributes.name, d.data.attributes.password), 'database'));
    await side.api('DELETE', `/databases/${d.data.id}`, demo.token);
    const r = await create('/dns-records', 'dns-record', { record_type: 'TXT', name: sub, domain: demo.domain, data: `bench ${i}` });
    s['dns record'].push(await until(r.t0, () => side.recordServed(`${sub}.${demo.domain}`, `bench ${i}`), 'dns record'));
  }
  return s;
}

async function main() {
  console.log(benchHeader('lab'));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-bench-lab-'));
  // Dovecot's and Postfix's users enter the local stack's directory below it.
  fs.chmodSync(root, 0o755);
  const ownLab = !process.env.BENCH_LAB_DIR;
  const labDir = process.env.BENCH_LAB_DIR ?? path.join(root, 'lab');
  const sides: Side[] = [];
  try {
    if (ownLab) await exec(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts'), 'lab', 'up', labDir], { timeout: 1_800_000 });
    sides.push(await labSide(labDir));
    sides.push(await localSide(root));
    const demoOf = (file: string) => (JSON.parse(fs.readFileSync(file, 'utf8')).customers as { token: string; package_id: string; domain: string }[]).find((c) => c.domain === 'solo-demo.example')!;
    const run = Date.now().toString(36);
    const results: [string, Samples][] = [
      ['lab', await measure(sides[0], demoOf(path.join(labDir, 'demo.json')), run)],
      ['local stack', await measure(sides[1], demoOf(path.join(root, 'local-demo.json')), run)],
    ];
    const rows = results.flatMap(([name, s]) => KINDS.map((k) => [name, k, fmt(pct(s[k], 50)), fmt(pct(s[k], 95)), String(s[k].length)]));
    console.log(`\nPOST → first use, ms (N=${N} each):\n\n${markdownTable(['side', 'kind', 'p50', 'p95', 'n'], rows, 2)}`);
  } finally {
    for (const side of sides) await side.close().catch(() => {});
    if (ownLab && fs.existsSync(path.join(labDir, 'state.json'))) await exec(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts'), 'lab', 'down', labDir]).catch(() => {});
    fs.rmSync(root, { recursive: true, force: true });
  }
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
