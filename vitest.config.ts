import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each test file builds its own apps on fresh databases (a new SQLite file or a new
    // PostgreSQL schema), so files can run in parallel.
    pool: 'forks',
    // Most files wait on daemons, browsers and databases rather than compute, so more files run at
    // once than there are cores (vitest's default is one less than the cores: one file at a time on
    // two). TEST_WORKERS sets it for a slower or larger machine.
    maxWorkers: Number(process.env.TEST_WORKERS) || 4,
  },
});
