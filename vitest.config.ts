import { configDefaults, defineConfig } from 'vitest/config';

// Most files wait on daemons, browsers and databases rather than compute, so more files run at
// once than there are cores (vitest's default is one less than the cores: one file at a time on
// two). TEST_WORKERS sets it for a slower or larger machine.
const workers = Number(process.env.TEST_WORKERS) || 4;

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each test file builds its own apps on fresh databases (a new SQLite file or a new
    // PostgreSQL schema), so files can run in parallel.
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'main', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/lab/**'], maxWorkers: workers } },
      // The lab's files boot five Debian hosts each: after the others, two at a time, so their
      // containers start on a machine that is not busy with everything else.
      { extends: true, test: { name: 'lab', include: ['test/lab/**/*.test.ts'], maxWorkers: 2, sequence: { groupOrder: 1 } } },
    ],
  },
});
