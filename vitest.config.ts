import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each test file builds its own apps on fresh databases (a new SQLite file or a new
    // PostgreSQL schema), so files can run in parallel.
    pool: 'forks',
  },
});
