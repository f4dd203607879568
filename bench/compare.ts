// BENCH_COMPARE (bench/http.bench.ts, bench/databases.bench.ts): the modules an app under test is
// built from, from this tree or from a checkout of another commit (its own migrations, demo data
// and app), so both run in the same process and the same minutes.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchConfig, freshBenchStore } from './store.js';
import { buildApp } from '../src/app.js';
import { MemoryLimiter } from '../src/limits/limiter.js';
import { buildAdmin, type Admin } from '../src/admin/index.js';
import { serviceDeps } from '../src/resources/service-deps.js';
import { loadDemoData } from '../src/admin/demo.js';

export interface AppTree {
  freshBenchStore: typeof freshBenchStore;
  benchConfig: typeof benchConfig;
  buildApp: typeof buildApp;
  MemoryLimiter: typeof MemoryLimiter;
  /** The operator's services on `store` (a tree before 2026-11-27 has one AdminService class). */
  makeAdmin(store: Parameters<typeof serviceDeps>[0], config: Parameters<typeof serviceDeps>[1]): Admin | Promise<Admin>;
  loadDemoData: typeof loadDemoData;
}

export const THIS_APP_TREE: AppTree = {
  freshBenchStore, benchConfig, buildApp, MemoryLimiter, loadDemoData,
  makeAdmin: (store, config) => buildAdmin(serviceDeps(store, config)),
};

/** Imports `file` (a path relative to the checkout, e.g. 'src/app.ts') of the checkout in `dir`. */
export const checkoutModule = (dir: string) => (file: string) => import(pathToFileURL(path.join(dir, file)).href);

/** The app's modules of the checkout in `dir`. */
export async function loadAppTree(dir: string): Promise<AppTree> {
  const mod = checkoutModule(dir);
  const [store, app, limiter, demo] = await Promise.all([mod('bench/store.ts'), mod('src/app.ts'), mod('src/limits/limiter.ts'), mod('src/admin/demo.ts')]);
  const admin = await mod('src/admin/index.ts').catch(() => null);
  const makeAdmin: AppTree['makeAdmin'] = admin
    ? async (s, config) => admin.buildAdmin((await mod('src/resources/service-deps.ts')).serviceDeps(s, config))
    : await mod('src/admin/admin.service.ts').then((old) => (s: unknown, config: unknown) => new old.AdminService(s, config));
  return { freshBenchStore: store.freshBenchStore, benchConfig: store.benchConfig, buildApp: app.buildApp, MemoryLimiter: limiter.MemoryLimiter, makeAdmin, loadDemoData: demo.loadDemoData };
}
