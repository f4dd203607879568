// Submission throughput, a part of `npm run bench:email` (docs/performance.md "E-mail addresses"):
// messages per second that a mailbox sends through the stack's submission service (STARTTLS, AUTH
// PLAIN through Dovecot, rspamd as milter checking and DKIM-signing, delivery over LMTP to another
// hosted mailbox), against the floor: a second rspamd, the same top file and local dir, but its
// three maps (antispam settings, DKIM signing table, DKIM key table) are local files with what
// hostplane served at the start. So the ratio is what hostplane's HTTP maps cost (rspamd polling
// them, hostplane answering), nothing else. Postfix switches between the two milters (main.cf's
// smtpd_milters, `postfix reload`, then a probe message until the chosen rspamd has scanned it).
//
// Per round, each side runs each mode for BENCH_SUBMIT_SECONDS with BENCH_SUBMIT_CLIENTS clients:
//   connection: one message per connection (connect … QUIT), as a mail program sends; the latency
//               is connect → 250 after DATA;
//   session:    one AUTH per client, then messages on it; the latency is MAIL → 250 after DATA
//               (Dovecot's bcrypt per AUTH taken out: the mail path's own cost).
// Sides alternate A/B, B/A, … (each round switches once; linear drift hits both alike). After each
// run, the target mailbox is watched until every accepted message is in it (delivered/s counts up to
// then), and its newest message must carry a DKIM-Signature of the domain; once per side the
// signature is verified (python3-dkim, the key the API publishes).
//
// Settings: BENCH_SUBMIT_ROUNDS [3] (0 skips the part), BENCH_SUBMIT_SECONDS [5],
// BENCH_SUBMIT_CLIENTS [4], BENCH_SUBMIT_WARMUP_S [2] (untimed, per side and mode),
// BENCH_SUBMIT_MODES [connection,session].
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ACCEPT, JSONAPI, fmt, jobFinishedAt, markdownTable, mean, pct, sleep } from './report.js';
import { SubmissionSession } from './submission-client.js';
import { postconf, reload, startFloor, switchMilter, treeCpu, type Milter } from './rspamd-floor.js';
import { ImapClient } from '../test/helpers/imap.js';
import { verifyDkim } from '../test/helpers/submission.js';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = num('BENCH_SUBMIT_ROUNDS', 3);
const SECONDS = num('BENCH_SUBMIT_SECONDS', 5);
const CLIENTS = num('BENCH_SUBMIT_CLIENTS', 4);
const WARMUP_S = num('BENCH_SUBMIT_WARMUP_S', 2);
type Mode = 'connection' | 'session';
const MODES = (process.env.BENCH_SUBMIT_MODES ?? 'connection,session').split(',').filter((m): m is Mode => m === 'connection' || m === 'session');
type Side = 'hostplane' | 'floor';
/** Longest wait for the accepted messages to be in the mailbox, and for a side to sign. */
const DRAIN_LIMIT_MS = 120_000;
const SIGN_LIMIT_MS = 90_000;

export interface SubmitRun {
  side: Side;
  mode: Mode;
  round: number;
  seconds: number;
  ok: number;
  failed: number;
  firstError: string | null;
  /** ms per accepted message (see the modes above). */
  latency: number[];
  /** ms from connect to AUTH's 235, per session opened. */
  opening: number[];
  /** From the end of the run until the last accepted message was in the mailbox. */
  drainMs: number;
  /** CPU seconds of the side's rspamd (master and workers) over the run and its drain. */
  rspamdCpu: number;
  /** d= and s= of the newest delivered message's DKIM-Signature, or null: unsigned. */
  signature: string | null;
}

export interface SubmitResult {
  runs: SubmitRun[];
  /** Per side: the DKIM check of its last delivered message. */
  verified: Record<Side, string>;
  /** Probe messages each switch of the milter needed until it took. */
  probes: number[];
  load: [number[], number[]];
}

/** What the part needs of the e-mail bench's instance. */
export interface SubmitContext {
  engine: string;
  stackDir: string;
  /** The app's base URL, a token of the customer, its presence domain (with its DKIM key). */
  api: string;
  token: string;
  domain: string;
  log: (s: string) => void;
  check: () => void;
  interrupted: () => boolean;
}

interface StackMail {
  imap: string;
  submission?: string;
  tls_ca?: string;
  rspamd?: { milter: string; controller: string };
}

export async function submissionBench(c: SubmitContext): Promise<SubmitResult | null> {
  if (ROUNDS <= 0 || SECONDS <= 0 || !MODES.length) return null;
  const mail = (JSON.parse(fs.readFileSync(path.join(c.stackDir, 'stack.json'), 'utf8')) as { mail?: StackMail }).mail;
  if (!mail?.rspamd || !mail.submission || !mail.tls_ca) {
    c.log(`  ${c.engine} submission: skipped (the stack runs ${mail?.rspamd ? 'no submission service' : 'no rspamd'})`);
    return null;
  }
  const ca = fs.readFileSync(mail.tls_ca);
  const sender = await createMailbox(c, `submit-from@${c.domain}`);
  const target = await createMailbox(c, `submit-to@${c.domain}`);
  const postfixDir = path.join(c.stackDir, 'mail', 'postfix');
  const original = postconf(postfixDir, 'smtpd_milters');
  if (original !== `inet:${mail.rspamd.milter}`) throw new Error(`Postfix's smtpd_milters is "${original}", not the stack's rspamd`);
  const sides: Record<Side, Milter> = {
    hostplane: { ...mail.rspamd, pid: Number(fs.readFileSync(path.join(c.stackDir, 'mail', 'rspamd', 'rspamd.pid'), 'utf8').trim()) },
    floor: { milter: '', controller: '', pid: 0 },
  };
  const floor = await startFloor(c.stackDir, mail.rspamd);
  sides.floor = floor;
  let inbox: ImapClient | null = null;
  const probes: number[] = [];
  const runs: SubmitRun[] = [];
  const last: Partial<Record<Side, string>> = {};
  const load0 = os.loadavg();
  try {
    const box = (inbox = await ImapClient.connect(mail.imap));
    if ((await box.login(target.address, target.password)).status !== 'OK') throw new Error(`IMAP LOGIN ${target.address} failed`);
    let exists = (await box.open('INBOX')).exists ?? 0;
    const send = (m: Mode, seconds: number, tag: string, to = target.address) =>
      load({ mode: m, seconds, addr: mail.submission!, ca, sender, to, tag, stop: c.interrupted });
    let current: Side = 'hostplane';
    const use = async (side: Side) => {
      if (side === current) return;
      probes.push(await switchMilter(postfixDir, sides, side, side === 'floor' ? 'hostplane' : 'floor', () => send('connection', 0, 'probe', sender.address).then((r) => r.ok === 1), c.check));
      current = side;
    };
    /** Waits until the mailbox has `expected` messages: ms it took. */
    const drain = async (expected: number) => {
      const t = performance.now();
      while (exists < expected) {
        if (performance.now() - t > DRAIN_LIMIT_MS) throw new Error(`${expected - exists} accepted messages not in ${target.address} after ${DRAIN_LIMIT_MS} ms`);
        await sleep(20);
        const r = await box.command('NOOP');
        for (const u of r.untagged) exists = Math.max(exists, Number(/^(\d+) EXISTS$/.exec(u)?.[1] ?? 0));
      }
      return performance.now() - t;
    };
    const newestSigned = async () => dkimTags((await box.fetchMessage(exists)) ?? '', c.domain);
    for (const side of ['hostplane', 'floor'] as Side[]) {
      await use(side);
      for (const m of MODES) {
        const r = await send(m, WARMUP_S, `warm-up ${side}`);
        if (!r.ok) throw new Error(`${side} ${m}: no message accepted in the warm-up (${r.firstError})`);
        await drain(exists + r.ok);
      }
      // Nothing is timed before this side signs: the stack's rspamd may not have fetched the tables
      // since the mailboxes were made (after a failed first request it asks again 20 to 40 s later).
      const t = performance.now();
      while (!(await newestSigned())) {
        if (performance.now() - t > SIGN_LIMIT_MS) throw new Error(`the ${side} rspamd did not DKIM-sign within ${SIGN_LIMIT_MS / 1000} s`);
        c.check();
        await sleep(1000);
        await drain(exists + (await send('connection', 0, `sign-check ${side}`)).ok);
      }
      c.log(`  ${c.engine} submission: the ${side} rspamd signs (${fmt((performance.now() - t) / 1000, 1)} s after its warm-up)`);
    }
    c.log(`  ${c.engine} submission: ${sender.address} → ${target.address} over ${mail.submission}; floor rspamd milter ${floor.milter}`);
    for (let round = 1; round <= ROUNDS; round++) {
      const order: Side[] = round % 2 ? ['floor', 'hostplane'] : ['hostplane', 'floor'];
      for (const side of order) {
        await use(side);
        for (const m of MODES) {
          c.check();
          const tag = `${side} ${m} r${round}`;
          const cpu0 = treeCpu(sides[side].pid);
          const r = await send(m, SECONDS, tag);
          const drainMs = await drain(exists + r.ok);
          const rspamdCpu = treeCpu(sides[side].pid) - cpu0;
          // The newest message is this run's: every earlier one was in the mailbox before it began.
          const text = (await box.fetchMessage(exists)) ?? '';
          if (!text.includes(`Subject: bench ${tag} `)) throw new Error(`the newest message of ${target.address} is not from the run "${tag}"`);
          const signature = dkimTags(text, c.domain);
          last[side] = text;
          runs.push({ side, mode: m, round, ...r, drainMs, rspamdCpu, signature });
          c.log(`  ${c.engine} submission round ${round} ${side} ${m}: ${fmt(r.ok / r.seconds, 1)} msgs/s, p50 ${fmt(pct(r.latency, 50), 1)} ms, drained ${fmt(drainMs)} ms, ${signature ? `DKIM ${signature}` : 'UNSIGNED'}${r.failed ? `, ${r.failed} failed (${r.firstError})` : ''}`);
        }
      }
    }
  } finally {
    await inbox?.logout().catch(() => undefined);
    try {
      postconf(postfixDir, 'smtpd_milters', original);
      reload(postfixDir);
    } catch (e) {
      c.log(`  ${c.engine} submission: Postfix not pointed back at the stack's rspamd: ${(e as Error).message}`);
    }
    await floor.stop();
  }
  const keys = await publishedKeys(c);
  const verified = {} as Record<Side, string>;
  for (const side of ['hostplane', 'floor'] as Side[]) {
    verified[side] = await verifyDkim(last[side] ?? '', keys).then(
      (v) => (v.verified ? `verified (${v.signatures.map((x) => `d=${x.d} s=${x.s}`).join(', ')})` : `NOT verified (${JSON.stringify(v.signatures)})`),
      (e: Error) => `not checked: ${e.message}`,
    );
  }
  return { runs, verified, probes, load: [load0, os.loadavg()] };
}

// ---- the load ----------------------------------------------------------------------------------

interface LoadOptions {
  mode: Mode;
  /** 0: one message by one client (a probe). */
  seconds: number;
  addr: string;
  ca: Buffer;
  sender: { address: string; password: string };
  to: string;
  tag: string;
  stop: () => boolean;
}

let seq = 0;
/** A small plain-text mail (≈ 1.3 KB), its Subject naming the run. */
const BODY = Array.from({ length: 16 }, (_, i) => `Line ${i + 1} of a short message, as people send them to each other every day.`).join('\r\n');
const message = (from: string, to: string, tag: string) => {
  const n = ++seq;
  return `From: ${from}\r\nTo: ${to}\r\nSubject: bench ${tag} #${n}\r\nDate: ${new Date().toUTCString()}\r\nMessage-ID: <bench-${process.pid}-${n}@client.bench.example>\r\n` +
    `MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${BODY}\r\n`;
};

/** CLIENTS loops for `seconds`: accepted messages, failures, latencies (see the modes above). */
async function load(o: LoadOptions): Promise<{ seconds: number; ok: number; failed: number; firstError: string | null; latency: number[]; opening: number[] }> {
  let ok = 0;
  let failed = 0;
  let firstError: string | null = null;
  const latency: number[] = [];
  const opening: number[] = [];
  const fail = (e: unknown) => {
    failed++;
    firstError ??= (e as Error).message;
  };
  const open = async () => {
    const t = performance.now();
    const s = await SubmissionSession.open(o.addr, o.ca, o.sender.address, o.sender.password);
    opening.push(performance.now() - t);
    return s;
  };
  const t0 = performance.now();
  const end = t0 + o.seconds * 1000;
  const more = (sent: number) => (o.seconds ? performance.now() < end && !o.stop() : sent === 0);
  const perConnection = async () => {
    for (let sent = 0; more(sent); sent++) {
      const t = performance.now();
      let s: SubmissionSession | null = null;
      try {
        s = await open();
        await s.send(o.sender.address, o.to, message(o.sender.address, o.to, o.tag));
        latency.push(performance.now() - t);
        ok++;
        await s.quit();
      } catch (e) {
        fail(e);
        s?.close();
      }
    }
  };
  const perSession = async () => {
    let s: SubmissionSession | null = null;
    for (let sent = 0; more(sent); sent++) {
      try {
        s ??= await open();
        const t = performance.now();
        await s.send(o.sender.address, o.to, message(o.sender.address, o.to, o.tag));
        latency.push(performance.now() - t);
        ok++;
      } catch (e) {
        fail(e);
        s?.close();
        s = null;
      }
    }
    await s?.quit();
  };
  await Promise.all(Array.from({ length: o.seconds ? CLIENTS : 1 }, o.mode === 'session' ? perSession : perConnection));
  return { seconds: (performance.now() - t0) / 1000, ok, failed, firstError, latency, opening };
}

// ---- the mailboxes and the DKIM check ------------------------------------------------------------

const apiHeaders = (c: SubmitContext, body = false): Record<string, string> => ({
  authorization: `token ${c.token}`,
  accept: ACCEPT,
  ...(body ? { 'content-type': JSONAPI } : {}),
});

/** A mailbox by the API, its job done: address and password. */
async function createMailbox(c: SubmitContext, address: string): Promise<{ address: string; password: string }> {
  const res = await fetch(`${c.api}/email-addresses`, {
    method: 'POST',
    headers: apiHeaders(c, true),
    body: JSON.stringify({ data: { type: 'email-address', attributes: { address, address_type: 'mailbox' } } }),
  });
  const body = (await res.json()) as { data?: { attributes: { address_ace: string; password: string } } };
  const job = res.headers.get('content-location');
  if (res.status !== 202 || !body.data || !job) throw new Error(`POST /email-addresses ${address}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  await jobFinishedAt(job, apiHeaders(c), { limitMs: 60_000, pollMs: 50, check: c.check });
  return { address: body.data.attributes.address_ace, password: body.data.attributes.password };
}

/** `d=<domain> s=<selector>` of the message's DKIM-Signature for `domain`, or null. */
function dkimTags(text: string, domain: string): string | null {
  const header = /^DKIM-Signature:(.*(?:\r?\n[ \t].*)*)/im.exec(text)?.[1].replace(/\s+/g, '') ?? '';
  const tags = Object.fromEntries(header.split(';').map((t) => t.split('=', 2)));
  return tags.d === domain ? `d=${tags.d} s=${tags.s}` : null;
}

/** The TXT records at *._domainkey of the domain, as the API lists them (what its DNS server serves). */
async function publishedKeys(c: SubmitContext): Promise<Record<string, string>> {
  const r = await fetch(`${c.api}/dns-records?filter[domain]=${c.domain}`, { headers: apiHeaders(c) });
  const data = ((await r.json()) as { data: Array<{ attributes: { name: string; data: string } }> }).data;
  return Object.fromEntries(data.filter((d) => d.attributes.name.endsWith('._domainkey')).map((d) => [`${d.attributes.name}.${c.domain}`, d.attributes.data]));
}

// ---- output --------------------------------------------------------------------------------------

/** The part's tables for the engines that ran it. */
export function submissionReport(results: Array<{ engine: string; submission: SubmitResult | null }>): string {
  const done = results.filter((r): r is { engine: string; submission: SubmitResult } => r.submission !== null);
  if (!done.length) return '';
  const rows: string[][] = [];
  const ratios: string[][] = [];
  for (const { engine, submission: s } of done) {
    for (const m of MODES) {
      const of = (side: Side) => s.runs.filter((r) => r.mode === m && r.side === side);
      const rate = (rs: SubmitRun[]) => rs.reduce((a, r) => a + r.ok, 0) / rs.reduce((a, r) => a + r.seconds, 0);
      const delivered = (rs: SubmitRun[]) => rs.reduce((a, r) => a + r.ok, 0) / rs.reduce((a, r) => a + r.seconds + r.drainMs / 1000, 0);
      for (const side of ['hostplane', 'floor'] as Side[]) {
        const rs = of(side);
        const lat = rs.flatMap((r) => r.latency);
        const ok = rs.reduce((a, r) => a + r.ok, 0);
        const signed = rs.filter((r) => r.signature).length;
        rows.push([engine, m, side, String(rs.length), String(ok), fmt(rate(rs), 1), fmt(delivered(rs), 1), fmt(pct(lat, 50), 1), fmt(pct(lat, 95), 1), fmt(pct(rs.flatMap((r) => r.opening), 50), 1),
          String(rs.reduce((a, r) => a + r.failed, 0)), fmt((rs.reduce((a, r) => a + r.rspamdCpu, 0) / ok) * 1000, 2), `${signed}/${rs.length}`]);
      }
      const hp = of('hostplane');
      const fl = of('floor');
      const perRound = hp.map((h) => (h.ok / h.seconds) / (fl.find((f) => f.round === h.round)!.ok / fl.find((f) => f.round === h.round)!.seconds));
      const p50 = (rs: SubmitRun[]) => pct(rs.flatMap((r) => r.latency), 50);
      ratios.push([engine, m, fmt(rate(hp) / rate(fl), 2), perRound.map((x) => fmt(x, 2)).join(', '), fmt(mean(perRound), 2), fmt(p50(hp) / p50(fl), 2)]);
    }
  }
  const notes = done.map(({ engine, submission: s }) =>
    `   ${engine}: hostplane's last message ${s.verified.hostplane}; the floor's ${s.verified.floor}; probes per switch ${s.probes.join(', ')}; load average ${s.load[0].map((x) => x.toFixed(2)).join(' ')} → ${s.load[1].map((x) => x.toFixed(2)).join(' ')}`);
  return [
    `5. Submission (STARTTLS, AUTH PLAIN, DKIM-signed by rspamd, delivered to a hosted mailbox): ${CLIENTS} clients × ${SECONDS} s per side, mode and round, ${ROUNDS} rounds, sides alternating`,
    markdownTable(['engine', 'mode', 'side', 'runs', 'accepted', 'msgs/s', 'delivered/s', 'p50 ms', 'p95 ms', 'connect → AUTH 235 p50 ms', 'failed', 'rspamd CPU ms / msg', 'DKIM-signed runs'], rows, 3),
    '   hostplane: rspamd reads its settings, signing and key tables from hostplane over HTTP (map_watch_interval 1 s, the stack\'s setting); floor: the same rspamd with those maps as local files;',
    '   connection: connect … QUIT per message, ms connect → 250 after DATA; session: one AUTH per client, ms MAIL → 250 after DATA; delivered/s: up to the last one in the mailbox',
    '',
    markdownTable(['engine', 'mode', 'hostplane ÷ floor msgs/s', 'per round', 'mean of rounds', 'p50 latency ÷ floor'], ratios, 2),
    ...notes,
  ].join('\n');
}
