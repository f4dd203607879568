// E-mail benchmark (docs/performance.md "E-mail addresses"), on SQLite and,
// when BENCH_DATABASE_URL or TEST_DATABASE_URL is set, on PostgreSQL, against the local stack's
// Dovecot (deploy/local/up.sh: private Caddy, Dovecot and Postfix on loopback ports, started and
// stopped by this bench; the mail part needs root):
//
//   1. POST /email-addresses (a mailbox, password generated) → the first successful IMAP LOGIN with
//      the returned password, tried every BENCH_MAIL_POLL_MS from the 202 on: ms from sending the
//      POST; also the 202, the job's doveadm lookup and its `done`. Baselines in the same run, one
//      of each per create (A/B/C, so drift of the machine hits all three):
//        existing: a LOGIN (new connection) of a mailbox that exists and was logged in to before:
//                  what Dovecot's SQL lookup and bcrypt verify cost, the floor of any login;
//        row:      a {BLF-CRYPT} hash made here (bcryptjs cost 10, as the API does), the directory
//                  row INSERTed directly, then the first LOGIN: what writing the row by hand costs.
//   2. IMAP logins per second (BENCH_MAIL_CLIENTS concurrent clients, each doing connect, LOGIN,
//      LOGOUT in a loop for BENCH_MAIL_SECONDS over BENCH_MAIL_SAMPLE addresses) with
//      BENCH_MAIL_SMALL mailboxes in the directory, then BENCH_MAIL_DIRECTORY, then SMALL again
//      (A/B/A): the ratio shows what the directory's size costs (Dovecot asks by primary key).
//      The bulk rows are INSERTed straight into mail_users and mail_domains, all with ONE shared
//      bcrypt hash: hashing 100,000 passwords at cost 10 would take over an hour. Every address
//      logged in to was logged in to once before (its mail home exists). Then the small directory
//      with a cheap scheme ({SHA512-CRYPT} from `openssl passwd -6`, and {PLAIN}): bcrypt's share.
//      Beside logins/s, which a busy machine shakes, the CPU Dovecot's processes used per login
//      (/proc: its master's reaped children and the live ones), how busy its single auth process
//      was, the CPU of PostgreSQL's server processes for the mail servers' connections, and the
//      passdb query alone, timed from this process at each size, with its plan.
//   Part 2 runs first, so part 1 sees a directory of BENCH_MAIL_SMALL mailboxes plus its own.
//   3. Submission with DKIM signing against rspamd on static maps, last (bench/email-submission.ts).
//
// Each engine gets its own instance: a fresh store, a fresh stack registered in it (its mail server
// `local` is the default), an app listening on the port Dovecot reports logins to (HOSTPLANE_URL)
// with the worker as `serve` runs it, one customer with a package on a plan with room for every
// create and a presence domain. The stacks are stopped with down.sh --purge at the end, also after
// an error or Ctrl-C; on PostgreSQL the read-only role up.sh made goes too.
//
//   npm run bench:email
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:email
//
// Settings (environment): BENCH_MAIL_CREATES [50], BENCH_MAIL_WARMUP [3] (untimed runs of each
// first), BENCH_MAIL_POLL_MS [5], BENCH_MAIL_SMALL [100], BENCH_MAIL_DIRECTORY [100000],
// BENCH_MAIL_CLIENTS [8,16], BENCH_MAIL_SECONDS [5], BENCH_MAIL_SAMPLE [50], BENCH_MAIL_CHEAP [1]
// (0 skips the cheap-scheme runs), BENCH_LOG_LEVEL [info], BENCH_JSON=1 prints the samples as JSON
// as well. Needs root, caddy, dovecot, postfix, setpriv, curl, jq (psql on PostgreSQL) as up.sh
// does; the stacks and the SQLite store go under TMPDIR, whose directories the users mail, dovecot
// and postfix must be able to enter.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fmt, markdownTable, pct, mean, benchHeader, loadAverage, runBench, LOG_LEVEL, PG_URL } from './report.js';
import { workerSettings } from '../src/queue/worker.js';
import { blfCrypt } from '../src/resources/email-addresses/email-addresses.service.js';
import { MailDirectoryRepository } from '../src/resources/email-addresses/email-addresses.mail-directory.repository.js';
import { submissionBench, submissionReport, type SubmitResult } from './email-submission.js';
import { CREATES, WARMUP, POLL_MS, SMALL, DIRECTORY, CLIENTS, SECONDS, SAMPLE, LOOKUPS, DOMAIN, QUOTA_BYTES, BATCH, type EngineName, stacks, checkInterrupted } from './email/settings.js';
import { login, firstLogin, type LoadRun } from './email/imap.js';
import { startInstance } from './email/instance.js';
import { type ProductRun, type RowRun, productRun, rowRun, existingRun } from './email/creates.js';
import { STACK_SERVER, mailboxCount, type DirectoryResult, directoryRuns } from './email/directory.js';

// ---- an engine ---------------------------------------------------------------------------------

interface EngineResult {
  engine: EngineName;
  product: ProductRun[];
  row: RowRun[];
  existing: number[];
  directory: DirectoryResult;
  /** Mailboxes in the directory at the first timed create. */
  createMailboxes: number;
  createS: number;
  loadBefore: number[];
  loadMiddle: number[];
  loadAfter: number[];
  submission: SubmitResult | null;
}

async function engineRun(engine: EngineName, root: string, log: (s: string) => void): Promise<EngineResult> {
  const h = await startInstance(engine, root);
  try {
    const w = workerSettings(h.config);
    log(`${engine}: app on ${h.base}, IMAP ${h.imap}; worker concurrency ${w.concurrency}, poll ${w.pollMs} ms`);
    const loadBefore = os.loadavg();
    const directory = await directoryRuns(h, log);
    const loadMiddle = os.loadavg();

    // The existing mailbox: a row of its own, logged in to once before the timed logins.
    const existingUser = `existing@${DOMAIN}`;
    const existingPassword = crypto.randomBytes(15).toString('base64url');
    await new MailDirectoryRepository(h.store.db).addDomain(DOMAIN, STACK_SERVER);
    await new MailDirectoryRepository(h.store.db).addUser({ address: existingUser, domain: DOMAIN, passwordHash: await blfCrypt(existingPassword), quotaBytes: QUOTA_BYTES, recipientsPerHour: 500, server: STACK_SERVER });
    await firstLogin(h.imap, existingUser, existingPassword);
    for (let i = 0; i < WARMUP; i++) {
      await existingRun(h, existingUser, existingPassword);
      await rowRun(h);
      await productRun(h);
    }
    const createMailboxes = await mailboxCount(h.store);
    const out = { product: [] as ProductRun[], row: [] as RowRun[], existing: [] as number[] };
    const started = performance.now();
    for (let i = 0; i < CREATES; i++) {
      out.existing.push(await existingRun(h, existingUser, existingPassword));
      out.row.push(await rowRun(h));
      out.product.push(await productRun(h));
    }
    const createS = (performance.now() - started) / 1000;
    const loadAfter = os.loadavg();
    const submission = await submissionBench({
      engine, stackDir: path.join(root, engine), api: h.base, token: h.token, domain: DOMAIN, log, check: checkInterrupted, interrupted: () => stacks.interrupted,
    });
    return { engine, ...out, directory, createMailboxes, createS, loadBefore, loadMiddle, loadAfter, submission };
  } finally {
    await h.close();
  }
}

// ---- output ------------------------------------------------------------------------------------

function createRows(results: EngineResult[]): string[][] {
  return results.flatMap((r) => {
    const existing = pct(r.existing, 50);
    const row = pct(r.row.map((x) => x.login), 50);
    const line = (what: string, xs: number[], attempts: string) => [
      r.engine, what, String(xs.length), fmt(pct(xs, 50), 1), fmt(pct(xs, 99), 1), fmt(Math.max(...xs), 1), fmt(mean(xs), 1),
      fmt(pct(xs, 50) / existing, 2), fmt(pct(xs, 50) / row, 2), attempts,
    ];
    return [
      line('existing: LOGIN of a mailbox logged in to before', r.existing, '1'),
      line('row: bcrypt hash + INSERT → first LOGIN', r.row.map((x) => x.login), fmt(pct(r.row.map((x) => x.attempts), 50))),
      line('POST /email-addresses → first LOGIN', r.product.map((x) => x.login), fmt(pct(r.product.map((x) => x.attempts), 50))),
    ];
  });
}

function stepRows(results: EngineResult[]): string[][] {
  return results.flatMap((r) => {
    const steps: [string, number[]][] = [
      ['202 received (directory row committed)', r.product.map((p) => p.post)],
      ['first LOGIN OK', r.product.map((p) => p.login)],
      ['  of which the LOGIN after the 202', r.product.map((p) => p.login - p.post)],
      ['job: doveadm lookup found the mailbox', r.product.map((p) => p.found)],
      ['job done (finished_at, 1 ms resolution)', r.product.map((p) => p.done)],
      ['row: bcrypt hash made (bcryptjs, cost 10)', r.row.map((x) => x.hash)],
      ['row: INSERT committed', r.row.map((x) => x.row)],
      ['row: first LOGIN OK', r.row.map((x) => x.login)],
    ];
    return steps.map(([s, xs]) => [r.engine, s, fmt(pct(xs, 50), 1), fmt(pct(xs, 99), 1)]);
  });
}

function loadRows(results: EngineResult[]): string[][] {
  return results.flatMap((r) => {
    const runs = r.directory.runs;
    const perS = (x: LoadRun) => x.ok / x.seconds;
    // The baseline of a run: the mean logins/s of the small-directory BLF-CRYPT runs (A1, A2) with as many clients.
    const cpuPerLogin = (x: LoadRun) => (x.dovecotCpu / x.ok) * 1000;
    const baseline = (clients: number, f: (x: LoadRun) => number) => mean(runs.filter((x) => x.clients === clients && (x.phase === 'A1' || x.phase === 'A2')).map(f));
    return runs.map((x) => [
      r.engine, x.phase, String(x.mailboxes), x.scheme, String(x.clients), fmt(x.seconds, 1), String(x.ok), fmt(perS(x), 1), fmt(perS(x) / baseline(x.clients, perS), 2),
      fmt(pct(x.latency, 50), 1), fmt(pct(x.latency, 99), 1), String(x.failed), fmt(cpuPerLogin(x), 1), fmt(cpuPerLogin(x) / baseline(x.clients, cpuPerLogin), 2),
      `${fmt((x.authCpu / x.seconds) * 100)}%`, fmt((x.dbCpu / x.ok) * 1000, 2), `${fmt(x.elu * 100)}%`,
    ]);
  });
}

async function main() {
  const started = Date.now();
  console.log(`${benchHeader('e-mail')}, load average ${loadAverage()}, LOG_LEVEL=${LOG_LEVEL}`);
  if (process.getuid?.() !== 0) throw new Error('the bench runs the local stack\'s Dovecot and Postfix (deploy/local/up.sh), which need root');
  const dovecot = spawnSync('dovecot', ['--version'], { encoding: 'utf8' });
  if (dovecot.status !== 0) throw new Error('dovecot is not installed (Debian: dovecot-imapd dovecot-lmtpd dovecot-pgsql dovecot-sqlite; and postfix postfix-pgsql postfix-sqlite)');
  console.log(
    `Dovecot ${dovecot.stdout.trim().split(' ')[0]}; 1: ${CREATES} creates of each after ${WARMUP} untimed, LOGIN tried every ${POLL_MS} ms; ` +
      `2: ${SMALL} / ${DIRECTORY} mailboxes, ${CLIENTS.join(' and ')} clients × ${SECONDS} s over ${SAMPLE} addresses`,
  );
  if (!PG_URL) console.log('(PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL)');
  const log = (s: string) => console.log(s);
  // The users mail, dovecot and postfix must be able to enter the stacks' dir (as in production).
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-bench-mail-')));
  fs.chmodSync(root, 0o755);
  const results: EngineResult[] = [];
  await stacks.guard(root, log, async () => {
    for (const engine of (PG_URL ? ['sqlite', 'postgres'] : ['sqlite']) as EngineName[]) results.push(await engineRun(engine, root, log));
  });

  console.log();
  console.log(`1. Time to the first successful IMAP LOGIN of a new mailbox (ms), ${CREATES} sequential creates each, the three alternating`);
  console.log(
    markdownTable(['engine', 'what', 'n', 'p50', 'p99', 'max', 'mean', '× existing p50', '× row p50', 'LOGIN attempts p50'], createRows(results), 2),
  );
  console.log(`   p99 of ${CREATES} samples is the ${Math.ceil(0.99 * CREATES)}th smallest (nearest rank); directory: ${results.map((r) => `${r.engine} ${r.createMailboxes}`).join(', ')} mailboxes at the first timed create`);
  console.log();
  console.log('2. Where a create\'s time goes (ms from sending the POST; row: from hashing)');
  console.log(markdownTable(['engine', 'step', 'p50', 'p99'], stepRows(results), 2));
  console.log();
  console.log(`3. IMAP logins per second (connect, LOGIN, LOGOUT in a loop per client, ${SECONDS} s each) over ${SAMPLE} addresses, each logged in to once before`);
  console.log(
    markdownTable(
      ['engine', 'run', 'mailboxes', 'scheme', 'clients', 's', 'logins', 'logins/s', '× small dir', 'LOGIN p50 ms', 'LOGIN p99 ms', 'failed', 'Dovecot CPU ms / login', '× small dir', 'auth process busy', 'PostgreSQL CPU ms / login', 'this process busy'],
      loadRows(results),
      4,
    ),
  );
  console.log(`   A1, B, A2 in this order: ${SMALL} mailboxes, ${DIRECTORY} (the bulk rows INSERTed between), ${SMALL} again (bulk rows DELETEd); × small dir: the column before over its mean in A1 and A2 with as many clients;`);
  console.log('   every bulk row has the same {BLF-CRYPT} hash (cost 10): hashing each would take over an hour, and Dovecot verifies each login alike;');
  console.log('   B logs in to addresses spread over the whole bulk; cheap: the small directory\'s rows with another scheme (bcrypt\'s share of a login);');
  console.log('   LOGIN ms: connect → tagged OK; Dovecot CPU: all its processes (imap-login, imap, auth, auth workers, …) from /proc, per successful login;');
  console.log('   auth process busy: CPU of Dovecot\'s single auth process over the run\'s time (100% = one core: the passdb, and with it bcrypt, runs there unless its SQL driver blocks);');
  console.log('   PostgreSQL CPU: the server processes of the mail servers\' connections (the role up.sh made), per login; this process busy: event-loop');
  console.log('   utilisation of this process (the clients and the app Dovecot reports logins to)');
  console.log();
  console.log(`4. The passdb query alone (password_query of src/node/render, by primary key), ${LOOKUPS} times one after the other from this process over the same addresses, µs with the round trip`);
  console.log(
    markdownTable(
      ['engine', 'run', 'mailboxes', 'p50 µs', 'p99 µs', '× small dir p50', 'plan'],
      results.flatMap((r) => {
        const ls = r.directory.lookups;
        const base = mean(ls.filter((l) => l.phase !== 'B').map((l) => pct(l.us, 50)));
        return ls.map((l) => [r.engine, l.phase, String(l.mailboxes), fmt(pct(l.us, 50)), fmt(pct(l.us, 99)), fmt(pct(l.us, 50) / base, 2), l.plan]);
      }),
      3,
    ),
  );
  console.log();
  for (const r of results) {
    const d = r.directory;
    console.log(
      `   ${r.engine}: ${d.bulkRows} bulk rows INSERTed in ${fmt(d.insertS, 1)} s (batches of ${BATCH}), DELETEd in ${fmt(d.deleteS, 1)} s; first logins of the sampled addresses ${fmt(d.warmS, 1)} s; ` +
        `${CREATES} × 3 creates in ${fmt(r.createS, 1)} s; load average ${loadAverage(r.loadBefore)} → ${loadAverage(r.loadMiddle)} (after part 2) → ${loadAverage(r.loadAfter)}`,
    );
  }
  const submission = submissionReport(results);
  if (submission) console.log(`\n${submission}`);
  if (process.env.BENCH_JSON) console.log(JSON.stringify(results, null, 1));
  console.log(`total ${fmt((Date.now() - started) / 1000, 1)} s`);
}

runBench(main, () => stacks.interrupted);
