import { createRequire } from 'node:module';
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
  },
});
