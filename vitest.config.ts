import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Vite would give project files graphql's index.mjs while type-graphql and Apollo (loaded by
    // Node) get index.js: two graphql instances, and printSchema/instanceof checks fail with
    // "from another module or realm". One path for everyone.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    setupFiles: ['reflect-metadata'],
    testTimeout: 60_000,
    // Answers depend on recorded runs: tests never read a developer's own store (nor write to it).
    // A folder that does not exist means no runs; tests that record use their own folders.
    env: { TRAINPLAN_DATA_DIR: join(tmpdir(), `trainplan-tests-no-runs-${process.pid}`), DATABASE_URL: '' },
  },
});
