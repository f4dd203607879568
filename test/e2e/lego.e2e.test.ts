// Existing clients, unchanged (API guide "Compatibility with existing clients", "Queue jobs"):
// Debian's `lego`, with its `variomedia` DNS provider, obtains a certificate from Debian's `pebble`
// ACME test server for shop-demo.example and www.shop-demo.example of the demo dataset; pebble
// validates DNS-01 against hostplane's own DNS server. test/fixtures/e2e/client-e2e.sh does the run
// in a private mount and network namespace (api.variomedia.de → 127.0.0.1, HTTPS with a throwaway
// CA) and collects the evidence; this file judges it. lego exits 0 even when its clean-up fails, so
// the HTTP exchanges (recorded by the TLS front) and the state afterwards are checked, not only the
// exit code.
//
// Needs root, util-linux `unshare`, iproute2, openssl, curl and the Debian packages lego, pebble
// and dnsutils (.ci/run installs them); without them the suite is skipped and says why. On
// PostgreSQL the app reaches the server over its Unix socket (E2E_PG_SOCKET_DIR, default
// /var/run/postgresql), as the namespace has no route to the host's 127.0.0.1.
// A run's work directory (logs, exchanges.jsonl) is kept when a test fails, or always with E2E_KEEP=1.
// Each engine runs twice: with the demo customer's own token, and with a token the operator made for
// ACME clients (`--acme-challenge --domain shop-demo.example`, API guide "Scoped tokens"), which
// must get the certificate all the same and be refused everything else.
import { requirable } from '../helpers/required.js';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { EnvSchema } from '../../src/config.js';
import { openStore } from '../../src/db/index.js';
import { ENGINES, type EngineName } from '../helpers/app.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUNNER = path.join(ROOT, 'test/fixtures/e2e/client-e2e.sh');
const BASE_URL = 'https://api.variomedia.de';
const ZONE = 'shop-demo.example';
/** DNS-01 record names lego creates (relative to the zone) for the two certificate names. */
const CHALLENGES = [
  { domain: `www.${ZONE}`, name: '_acme-challenge.www' },
  { domain: ZONE, name: '_acme-challenge' },
];
const RUN_TIMEOUT_MS = 300_000;

/** Why the suite cannot run here, or null. */
function unavailable(): string | null {
  if (process.platform !== 'linux') return 'needs Linux namespaces';
  if (process.getuid?.() !== 0) return 'needs root (mount and network namespaces, port 443 and 53)';
  const tools = ['lego', 'pebble', 'dig', 'unshare', 'ip', 'openssl', 'curl', 'mount'];
  const missing = tools.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
  if (missing.length) return `missing ${missing.join(', ')} (apt-get install lego pebble dnsutils iproute2 curl)`;
  const probe = spawnSync('unshare', ['--mount', '--net', 'true']);
  if (probe.status !== 0) return `unshare --mount --net is not permitted here: ${String(probe.stderr).trim()}`;
  return null;
}

/** DATABASE_URL of a new PostgreSQL schema reached over the Unix socket, or why not. */
function postgresUrl(schema: string): { url: string } | { skip: string } {
  const u = new URL(process.env.TEST_DATABASE_URL!);
  const dir = process.env.E2E_PG_SOCKET_DIR ?? '/var/run/postgresql';
  const socket = path.join(dir, `.s.PGSQL.${u.port || '5432'}`);
  if (!fs.existsSync(socket)) return { skip: `no PostgreSQL socket ${socket} (set E2E_PG_SOCKET_DIR)` };
  const auth = u.username ? `${u.username}${u.password ? `:${u.password}` : ''}@` : '';
  return { url: `postgres://${auth}localhost${u.pathname}?host=${encodeURIComponent(dir)}&schema=${schema}` };
}

interface Exchange {
  seq: number;
  method: string;
  url: string;
  request_headers: Record<string, string>;
  request_body: string;
  status: number;
  response_headers: Record<string, string>;
  response_body: string;
}

interface Evidence {
  dir: string;
  code: number | null;
  output: string;
  file(name: string): string;
  exchanges: Exchange[];
}

/** The harness's log files, for failure messages. */
function diagnostics(ev: Evidence): string {
  const tail = (name: string, lines = 40) => ev.file(name).split('\n').slice(-lines).join('\n');
  return [
    `work dir: ${ev.dir} (runner exit ${ev.code})`,
    `--- runner output\n${ev.output.slice(-2000)}`,
    `--- steps.log\n${ev.file('steps.log')}`,
    `--- lego.log (tail)\n${tail('lego.log')}`,
    `--- hostplane.log (tail)\n${tail('hostplane.log', 20)}`,
  ].join('\n');
}

function runHarness(dir: string, db: string, tokenKind: TokenKind): Promise<Evidence> {
  // None of the test process's hostplane settings (REDIS_URL, DNS_LISTEN, …) leak into the run.
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(EnvSchema.properties)) delete env[key];
  return new Promise((resolve) => {
    const child = spawn('bash', [RUNNER, dir, db, 'lego', tokenKind], { cwd: ROOT, env });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGTERM'), RUN_TIMEOUT_MS - 5_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const file = (name: string) => {
        try {
          return fs.readFileSync(path.join(dir, name), 'utf8');
        } catch {
          return '';
        }
      };
      // A run cut off by the timeout may leave a partial last line.
      const exchanges = file('exchanges.jsonl')
        .split('\n')
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as Exchange];
          } catch {
            return [];
          }
        });
      resolve({ dir, code, output, file, exchanges });
    });
  });
}

const skip = unavailable();

/** The client's token: the demo customer's own, or one limited to ACME challenges. */
type TokenKind = 'full' | 'acme-challenge';

/** One run per engine and token kind; the PostgreSQL ones need the server's Unix socket. */
interface EngineRun {
  engine: EngineName;
  tokenKind: TokenKind;
  skip: string | null;
  db: string;
  schema: string | null;
  dir?: string;
  evidence?: Promise<Evidence>;
  /** A test failed: keep the work directory for reading its logs. */
  failed?: boolean;
}
const runs: EngineRun[] = ENGINES.flatMap((engine) =>
  (['full', 'acme-challenge'] as const).map((tokenKind): EngineRun => {
    if (engine === 'sqlite') return { engine, tokenKind, skip: null, db: 'sqlite', schema: null };
    const schema = `e2e_${crypto.randomBytes(6).toString('hex')}`;
    const pg = postgresUrl(schema);
    return 'skip' in pg ? { engine, tokenKind, skip: pg.skip, db: '', schema: null } : { engine, tokenKind, skip: null, db: pg.url, schema };
  }),
);

requirable(skip)('lego (variomedia provider) + pebble against hostplane', () => {
  beforeAll(() => {
    // The engines run at once: each run has its own network namespace, so the harness's fixed
    // ports never collide, and the suite takes the time of one run.
    for (const r of runs.filter((r) => !r.skip)) {
      r.dir = fs.mkdtempSync(path.join(os.tmpdir(), `hostplane-e2e-${r.engine}-${r.tokenKind}-`));
      r.evidence = runHarness(r.dir, r.db, r.tokenKind);
    }
  });

  afterAll(async () => {
    for (const r of runs) {
      if (!r.evidence) continue;
      const ev = await r.evidence;
      if (r.schema) {
        const store = await openStore(process.env.TEST_DATABASE_URL!);
        await sql`drop schema if exists ${sql.id(r.schema)} cascade`.execute(store.db).catch(() => {});
        await store.close();
      }
      if (r.failed || process.env.E2E_KEEP) process.stderr.write(`lego e2e (${r.engine}, ${r.tokenKind} token): work directory kept: ${ev.dir}\n`);
      else fs.rmSync(ev.dir, { recursive: true, force: true });
    }
  }, RUN_TIMEOUT_MS);

  describe.each(runs)('$engine, $tokenKind token', (r) => {
    if (r.skip) {
      if (process.env.CI_REQUIRE_ALL === '1') it('runs in CI (CI_REQUIRE_ALL=1)', () => expect.fail(`required in CI but cannot run: ${r.skip}`));
      else it.skip(`skipped: ${r.skip}`, () => {});
      return;
    }
    let ev: Evidence;
    beforeAll(async () => {
      ev = await r.evidence!;
    }, RUN_TIMEOUT_MS);
    beforeEach(({ onTestFailed }) => onTestFailed(() => void (r.failed = true)));

    /** lego's own requests to the API (the harness's curl requests are not lego's). */
    const lego = () => ev.exchanges.filter((x) => x.request_headers['user-agent']?.startsWith('Go-http-client/'));
    const body = (s: string) => JSON.parse(s) as { data: any; links?: Record<string, string> };

    it('lego exits 0 and writes a certificate naming both domains', () => {
      expect(ev.code, diagnostics(ev)).toBe(0);
      const san = ev.file('cert-san.txt');
      expect(san, diagnostics(ev)).toMatch(new RegExp(`DNS:${ZONE.replace('.', '\\.')}(,|$)`, 'm'));
      expect(san).toContain(`DNS:www.${ZONE}`);
      expect(JSON.parse(ev.file(`lego/certificates/${ZONE}.json`))).toMatchObject({ domain: ZONE });
    });

    it('pebble validated both DNS-01 challenges through our DNS server', () => {
      const log = ev.file('pebble.log');
      expect(log).toContain('Using custom DNS resolver for ACME challenges: 127.0.0.1:53');
      expect(log.match(/set VALID by completed challenge/g) ?? [], diagnostics(ev)).toHaveLength(2);
      expect(log).not.toMatch(/set INVALID|ALWAYS_VALID/i);
    });

    it("each TXT record was answered by every NS at lego's first check after its job was done (docs/decisions/0003-dns-propagation.md)", () => {
      // lego checks 1 s after the job is done, asking the zone's NS hosts (all 127.0.0.1:53 here)
      // without recursion; a miss would log "Waiting for DNS record propagation" and retry.
      const log = ev.file('lego.log');
      expect(log.match(/Checking DNS record propagation/g) ?? [], diagnostics(ev)).toHaveLength(2);
      expect(log).not.toContain('Waiting for DNS record propagation');
    });

    it('lego spoke only POST /dns-records, GET /queue-jobs/{id} and DELETE /dns-records/{id}, all answered 2xx', () => {
      const xs = lego();
      expect(xs.length, diagnostics(ev)).toBeGreaterThanOrEqual(8);
      for (const x of xs) {
        expect(`${x.method} ${x.url} ${x.status}`).toMatch(
          /^(POST \/dns-records 202|GET \/queue-jobs\/[1-9][0-9]* 200|DELETE \/dns-records\/[1-9][0-9]* 202)$/,
        );
        // What lego sends (its internal/client.go): vendor Accept, token auth, JSON:API Content-Type
        // even on GET and DELETE without a body (API guide "Compatibility with existing clients").
        expect(x.request_headers).toMatchObject({
          accept: 'application/vnd.variomedia.v1+json',
          authorization: 'token <redacted>',
          'content-type': 'application/vnd.api+json',
        });
        // The request named JSON:API / vendor types (API guide "Versioning and content types").
        expect(x.response_headers['content-type']).toMatch(/^application\/vnd\.api\+json(;|$)/);
      }
    });

    it.each(CHALLENGES)('$domain: POST 202 → job polled to done → DELETE 202 → job polled to done (API guide "Compatibility with existing clients")', ({ name }) => {
      const xs = lego();
      // The create: lego's body as its types.go encodes it, our 202 queue-job document.
      const posts = xs.filter((x) => x.method === 'POST' && JSON.parse(x.request_body).data.attributes.name === name);
      expect(posts, diagnostics(ev)).toHaveLength(1);
      const post = posts[0];
      const sent = JSON.parse(post.request_body);
      expect(sent).toEqual({
        data: { type: 'dns-record', attributes: { record_type: 'TXT', name, domain: ZONE, data: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), ttl: 300 } },
      });
      const created = body(post.response_body);
      expect(created.data).toMatchObject({ type: 'queue-job', id: expect.stringMatching(/^[1-9][0-9]*$/), attributes: { job_type: 'dns-record', status: 'pending' } });
      const recordLink: string = created.data.links['dns-record'];
      expect(recordLink).toMatch(new RegExp(`^${BASE_URL}/dns-records/[1-9][0-9]*$`));
      expect(created.data.links['queue-job']).toBe(`${BASE_URL}/queue-jobs/${created.data.id}`);
      expect(post.response_headers['content-location']).toBe(created.data.links['queue-job']);
      // lego's record id: the link with `https://api.variomedia.de/dns-records/` stripped.
      const recordId = recordLink.slice(`${BASE_URL}/dns-records/`.length);

      const polls = (jobId: string, after: number) =>
        xs.filter((x) => x.method === 'GET' && x.url === `/queue-jobs/${jobId}` && x.seq > after);
      const expectPolledToDone = (jobId: string, after: number) => {
        const ps = polls(jobId, after);
        expect(ps.length, diagnostics(ev)).toBeGreaterThanOrEqual(1);
        const statuses = ps.map((p) => body(p.response_body).data.attributes.status);
        // Polled while pending, stopped at done.
        expect(statuses.at(-1)).toBe('done');
        expect(statuses.slice(0, -1).every((s) => s === 'pending')).toBe(true);
        for (const p of ps) {
          expect(body(p.response_body).data).toMatchObject({ type: 'queue-job', id: jobId, attributes: { job_type: 'dns-record' } });
        }
        return ps.at(-1)!.seq;
      };
      const createDone = expectPolledToDone(created.data.id, post.seq);

      // The clean-up: DELETE of exactly that record after its create job was done.
      const deletes = xs.filter((x) => x.method === 'DELETE' && x.url === `/dns-records/${recordId}`);
      expect(deletes, diagnostics(ev)).toHaveLength(1);
      const del = deletes[0];
      expect(del.seq).toBeGreaterThan(createDone);
      expect(del.request_body).toBe('');
      const deleted = body(del.response_body);
      expect(deleted.data).toMatchObject({ type: 'queue-job', id: expect.stringMatching(/^[1-9][0-9]*$/), attributes: { job_type: 'dns-record', status: 'pending' } });
      expect(deleted.data.links['dns-record']).toBe(recordLink);
      expect(del.response_headers['content-location']).toBe(deleted.data.links['queue-job']);
      expectPolledToDone(deleted.data.id, del.seq);
    });

    it("hostplane's request log saw every exchange lego had, with the same status", () => {
      const lines = ev
        .file('hostplane.log')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg?: string; method?: string; url?: string; status?: number })
        .filter((l) => l.msg === 'request')
        .map((l) => `${l.method} ${l.url} ${l.status}`);
      for (const x of lego()) expect(lines).toContain(`${x.method} ${x.url} ${x.status}`);
    });

    it('afterwards the challenge records are gone: from the list and from DNS', () => {
      const raw = ev.file('records-after.json');
      expect(raw, diagnostics(ev)).toMatch(/^\{"links":\{"self":"https:\/\/api\.variomedia\.de\/dns-records\?filter\[domain\]=shop-demo\.example"\},"data":\[/);
      const list = JSON.parse(raw) as { data: Array<{ attributes: { record_type: string; name: string } }> };
      const left = list.data.filter((r) => r.attributes.record_type === 'TXT' && r.attributes.name.startsWith('_acme-challenge'));
      expect(left).toEqual([]);
      for (const { name } of CHALLENGES) {
        const dig = ev.file(`dig-after-${name}.${ZONE}.txt`);
        // NXDOMAIN, or NODATA (NOERROR without answers); authoritative either way.
        expect(dig, dig).toMatch(/status: (NXDOMAIN|NOERROR),/);
        expect(dig).toMatch(/flags: qr aa[ ;]/);
        expect(dig).toMatch(/ANSWER: 0,/);
      }
    });

    it.runIf(r.tokenKind === 'acme-challenge')('lego worked with the ACME-challenge token, which is refused everything but DNS-01 records (API guide "Scoped tokens")', async () => {
      const issued = JSON.parse(ev.file('acme-token.json') || '{}') as { id?: string; scope?: string };
      expect(issued.scope, diagnostics(ev)).toBe(`acme-challenge; domains ${ZONE}`);
      // Every DNS-01 job lego's requests made carries that token.
      const store = await openStore(r.engine === 'sqlite' ? path.join(ev.dir, 'hostplane.db') : r.db);
      try {
        const jobs = await store.db.selectFrom('queue_jobs').select(['token_id']).where('job_type', '=', 'dns-record').execute();
        expect(jobs.length).toBe(4);
        expect(new Set(jobs.map((j) => String(j.token_id)))).toEqual(new Set([issued.id]));
      } finally {
        await store.close();
      }
      const probe = (name: string) => {
        const [status, ...rest] = ev.file(`probe-${name}.txt`).split('\n');
        return { status: Number(status), body: JSON.parse(rest.join('\n') || '{}') };
      };
      const acmeOnly = `This token may only change TXT records named _acme-challenge or _acme-challenge.<subdomain> of the domains ${ZONE}.`;
      for (const name of ['a-record', 'txt-elsewhere', 'customers', 'databases']) {
        expect(probe(name), name).toMatchObject({ status: 403, body: { errors: [{ id: 'token_scope', status: '403', detail: acmeOnly }] } });
      }
      // Another record of the zone is not found for it: it sees only _acme-challenge TXT records.
      expect(probe('delete-a')).toMatchObject({ status: 404, body: { errors: [{ id: 'resource_not_found' }] } });
    });
  });
});
