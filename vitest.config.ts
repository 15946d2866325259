import { defineConfig } from 'vitest/config';

// Three projects: `unit` needs nothing but Node; `cluster` shares one real control plane, with a
// real node, that the global setup starts once (tests isolate themselves by namespace); `machine`
// starts and kills real nodes of its own, so it needs the machine to itself: `npm test` runs it
// on its own, before the other two.
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.cluster.test.ts', 'test/**/*.machine.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster',
          include: ['test/**/*.cluster.test.ts'],
          globalSetup: ['test/cluster/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'machine',
          include: ['test/**/*.machine.test.ts'],
          fileParallelism: false,
          testTimeout: 240_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
