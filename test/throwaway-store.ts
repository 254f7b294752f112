// A test file's own recorded-runs store: an embedded SQLite file in a fresh directory, configured
// before the file's server is built and removed (store closed, configuration restored) after it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { runtimeConfig, setRuntimeConfig, type ServerConfig } from '../service/config.js';
import { closeMeasurementStore } from '../service/measurements.js';

/** Call at a test file's top level, before apolloForTests(); returns the store's directory. */
export function throwawayStore(prefix: string): string {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const original = runtimeConfig();
  setRuntimeConfig({ ...original, dataDir, databaseUrl: undefined });
  afterAll(async () => {
    await closeMeasurementStore();
    setRuntimeConfig(original);
    rmSync(dataDir, { recursive: true, force: true });
  });
  return dataDir;
}

/**
 * Runs `body` with the runtime configuration pointing at another store (`over`), then closes the
 * store it opened and restores the configuration, whether or not `body` threw.
 */
export async function withStoreConfig<T>(over: Partial<ServerConfig>, body: () => Promise<T>): Promise<T> {
  const original = runtimeConfig();
  setRuntimeConfig({ ...original, ...over });
  try {
    return await body();
  } finally {
    await closeMeasurementStore();
    setRuntimeConfig(original);
  }
}
