import { defineConfig } from 'vitest/config';

// Four projects: `no-cluster` needs no cluster and no Docker (it still spawns real MCP servers
// from npm and builds Go test servers); `cluster` shares one real control plane, with a
// real node, that the global setup starts once (tests isolate themselves by namespace); `machine`
// starts and kills real nodes of its own, so it needs the machine to itself: `npm test` runs it
// on its own, before the others; `containers` needs a Docker engine and the images
// (test/images), which its global setup makes sure of.
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'no-cluster',
          include: ['test/**/*.test.ts'],
          exclude: [
            'test/**/*.cluster.test.ts',
            'test/**/*.machine.test.ts',
            'test/**/*.container.test.ts',
          ],
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
          globalSetup: ['test/cluster/machine-setup.ts'],
          fileParallelism: false,
          testTimeout: 240_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'containers',
          include: ['test/**/*.container.test.ts'],
          globalSetup: ['test/images/global-setup.ts'],
          // testcontainers' reaper (Ryuk) is an image no registry here serves; the tests remove
          // their own containers.
          env: { TESTCONTAINERS_RYUK_DISABLED: 'true' },
          testTimeout: 120_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
