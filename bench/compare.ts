// BENCH_COMPARE (bench/http.bench.ts, bench/databases.bench.ts): the modules an app under test is
// built from, from this tree or from a checkout of another commit (its own migrations, demo data
// and app), so both run in the same process and the same minutes.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchConfig, freshBenchStore } from './store.js';
import { buildApp } from '../src/app.js';
import { MemoryLimiter } from '../src/limits/limiter.js';
import { AdminService } from '../src/admin/admin.service.js';
import { loadDemoData } from '../src/admin/demo.js';

export interface AppTree {
  freshBenchStore: typeof freshBenchStore;
  benchConfig: typeof benchConfig;
  buildApp: typeof buildApp;
  MemoryLimiter: typeof MemoryLimiter;
  AdminService: typeof AdminService;
  loadDemoData: typeof loadDemoData;
}

export const THIS_APP_TREE: AppTree = { freshBenchStore, benchConfig, buildApp, MemoryLimiter, AdminService, loadDemoData };

/** Imports `file` (a path relative to the checkout, e.g. 'src/app.ts') of the checkout in `dir`. */
export const checkoutModule = (dir: string) => (file: string) => import(pathToFileURL(path.join(dir, file)).href);

/** The app's modules of the checkout in `dir`. */
export async function loadAppTree(dir: string): Promise<AppTree> {
  const mod = checkoutModule(dir);
  const [store, app, limiter, admin, demo] = await Promise.all([
    mod('bench/store.ts'), mod('src/app.ts'), mod('src/limits/limiter.ts'), mod('src/admin/admin.service.ts'), mod('src/admin/demo.ts'),
  ]);
  return { freshBenchStore: store.freshBenchStore, benchConfig: store.benchConfig, buildApp: app.buildApp, MemoryLimiter: limiter.MemoryLimiter, AdminService: admin.AdminService, loadDemoData: demo.loadDemoData };
}
