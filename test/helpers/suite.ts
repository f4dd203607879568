// Suite fixtures: hooks that build what the tests of one describe share. What they build is handed
// out at once, as objects the hooks fill in before the first test, so a suite destructures it:
// `const { t, x } = useSeededApp(engine);` and its tests read `t.app`, `x.end1.token`.
import { afterAll, beforeAll } from 'vitest';
import { createTestApp, type EngineName, type TestApp } from './app.js';
import { seedTenants, type Tenants } from './tenants.js';

/** An empty `T` that a beforeAll fills with `Object.assign(it, value)`; its members exist from then on. */
export const filledLater = <T extends object>(): T => ({}) as T;

/** An app on a fresh database of `engine` with the standard tenants, closed after the suite. */
export function useSeededApp(engine: EngineName, env: Record<string, string> = {}) {
  const t = filledLater<TestApp>();
  const x = filledLater<Tenants>();
  beforeAll(async () => {
    Object.assign(t, await createTestApp(engine, env));
    Object.assign(x, await seedTenants(t.admin));
  });
  afterAll(() => t.close?.());
  return { t, x };
}
