// The settings of the DNS side-by-side bench (bench/dns-peers.ts says what each does) and the
// constants its parts share.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const num = (name: string, fallback: number) => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name}: not a number ≥ 0`);
  return v;
};
export const RECORDS = num('BENCH_PEERS_RECORDS', 1_000_000);
export const SECONDS = num('BENCH_PEERS_SECONDS', 5);
export const RUNS = Math.max(1, num('BENCH_PEERS_RUNS', 3));
export const WARMUP_S = num('BENCH_PEERS_WARMUP_S', 2);
export const RATE = num('BENCH_PEERS_RATE', 5000);
export const RATE_SECONDS = num('BENCH_PEERS_RATE_SECONDS', 5);
export const OUTSTANDING = num('BENCH_PEERS_OUTSTANDING', 100);
export const CHANGES = num('BENCH_PEERS_CHANGES', 100);
export const POLL_MS = num('BENCH_PEERS_POLL_MS', 2);
/** The peers to run; hostplane always runs (its zones and answers are the reference). */
export const SERVERS = new Set((process.env.BENCH_PEERS_SERVERS ?? 'nsd-secondary,nsd,powerdns,hostplane-dgram,knot').split(',').map((s) => s.trim()));
/** The signed round (bench/peers/signed.ts): `0` skips it. */
export const SIGNED = num('BENCH_PEERS_SIGNED', 1) > 0;
export const KEEP = process.env.BENCH_PEERS_KEEP === '1';
/** Seconds of load between the two RSS readings of the big store. */
export const RSS_LOAD_S = 5;

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const PORT_RANGE = [41000, 41199] as const;
export const SERVER_CORE = 0;
export const CLIENT_CORE = 1;
export const ZONE100 = 'zone100.example';
export const ZONE10K = 'zone10k.example';
export const MIX_LINES = 10_000;
/** Questions of each mix asked of every server one by one, and compared with hostplane's answers. */
export const CHECKED = 300;
export const PDNS_SCHEMAS = ['/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql', '/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql'];
