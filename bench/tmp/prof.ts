import { benchConfig, freshBenchStore } from '../store.js';
import { discard } from '../report.js';
import { buildApp } from '../../src/app.js';
import { MemoryLimiter } from '../../src/limits/limiter.js';
import { buildAdmin } from '../../src/admin/index.js';
import { serviceDeps } from '../../src/resources/service-deps.js';
import { loadDemoData } from '../../src/admin/demo.js';
import { IdempotencyRepository } from '../../src/http/idempotency.repository.js';

if (process.env.NOSTMT) { (IdempotencyRepository.prototype as any).claim = async () => true; (IdempotencyRepository.prototype as any).answer = async () => []; }
const engine = (process.argv[2] ?? 'sqlite') as 'sqlite' | 'postgres';
const { store, databaseUrl, drop } = await freshBenchStore(engine, 'postgres://postgres@127.0.0.1:5432/test');
const config = benchConfig(databaseUrl, 'https://api.example.com', { AUDIT_LOG: process.env.AUDIT ?? 'on' });
const { data } = await loadDemoData(buildAdmin(serviceDeps(store, config)), config.publicBaseUrl);
const limiter = new MemoryLimiter(config);
const app = await buildApp(config, { store, limiter, logStream: discard() });
await app.ready();
const shop = data.customers.find((c) => c.role === 'end-customer')!;
let n = 0;
const post = async (key: boolean) => {
  n++;
  const headers: Record<string, string> = { authorization: `token ${shop.token}`, 'content-type': 'application/vnd.api+json', accept: 'application/vnd.api+json' };
  if (key) headers['idempotency-key'] = `k${n}-${Math.random()}`;
  const r = await app.inject({ method: 'POST', url: '/dns-records', headers, payload: JSON.stringify({ data: { type: 'dns-record', attributes: { domain: shop.domain, name: `t${n}`, record_type: 'TXT', data: 'x' } } }) });
  if (r.statusCode !== 202) throw new Error(r.body);
};
const time = async (key: boolean, count: number) => { const t = process.cpuUsage(); for (let i = 0; i < count; i++) await post(key); const d = process.cpuUsage(t); return (d.user + d.system) / count; };
for (let i = 0; i < 300; i++) { await post(true); await post(false); }
const on: number[] = [], off: number[] = [];
for (let r = 0; r < 20; r++) { on.push(await time(true, 100)); off.push(await time(false, 100)); }
on.sort((a, b) => a - b); off.sort((a, b) => a - b);
console.log(engine, 'cpu us/request: key', on[10].toFixed(0), 'no key', off[10].toFixed(0), 'diff', (on[10] - off[10]).toFixed(0));
await app.close(); await limiter.close(); await drop();
