import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs nothing but Node; `cluster` shares one real control plane that the
// global setup starts once (tests isolate themselves by namespace).
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
          exclude: ['test/**/*.cluster.test.ts'],
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
    ],
  },
});
