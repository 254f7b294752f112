// The measurement store on both databases it supports: the embedded SQLite file and a real
// PostgreSQL server (a throw-away cluster), through the same typed query layer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { DATABASE_FILE, MeasurementStore, type StoreLocation } from '../store/store.js';
import { migrationProvider } from '../store/migrations.js';
import type { NewMeasurementRun } from '../store/schema.js';
import { startPostgres, type TestPostgres } from './postgres.js';
import { withStoreConfig } from './throwaway-store.js';
import { deleteRuns, listRuns, predictRequestOf, recordRuns, userEvidence } from '../service/measurements.js';
import { predict } from '../predictor/predict.js';
import { loadEfficiency } from '../seeds/catalog.js';
import { refitOwner } from '../service/refit.js';

const run = (over: Partial<NewMeasurementRun> = {}): NewMeasurementRun => ({
  owner: 'alice',
  recorded_at: '2026-12-01T12:00:00.000Z',
  model: 'resnet50_v1.5',
  gpu: 'A100-SXM4-80GB',
  precision: 'AMP_FP16',
  framework: 'PyTorch',
  nodes: 1,
  gpus_per_node: 1,
  batch_size_per_gpu: 256,
  grad_accum_steps: 1,
  configuration: '{}',
  step_time_ms: 180.5,
  peak_memory_gb: 21.3,
  gpu_memory_gb: null,
  source: 'harness',
  note: null,
  ...over,
});

function storeContract(name: string, location: () => StoreLocation) {
  describe(name, () => {
    it('keeps runs across a reopen, filters them, and deletes only an owner’s', async () => {
      let store = await MeasurementStore.open(location());
      expect(await store.version()).toEqual({ count: 0, maxId: 0 });
      const ids = await store.insert([
        run(),
        run({ gpu: 'H100-SXM5-80GB', step_time_ms: 95.25, gpu_memory_gb: 79.2 }),
        run({ owner: 'bob', model: 'bert_large_squad' }),
      ]);
      expect(ids).toHaveLength(3);
      await store.close();
      // A new process (a restart) opens the same database: migrations do not run twice, runs are there.
      store = await MeasurementStore.open(location());
      const all = await store.list();
      expect(all.map((r) => r.id)).toEqual(ids);
      expect(all[1]).toMatchObject({
        gpu: 'H100-SXM5-80GB',
        step_time_ms: 95.25,
        peak_memory_gb: 21.3,
        gpu_memory_gb: 79.2,
        note: null,
      });
      expect(all[0].gpu_memory_gb).toBeNull();
      expect((await store.list({ gpu: 'A100-SXM4-80GB' })).length).toBe(2);
      expect(
        (await store.list({ model: 'bert_large_squad', gpu: 'A100-SXM4-80GB' })).map((r) => r.owner),
      ).toEqual(['bob']);
      // A run re-filed under another model id (service/measurements.ts rekeyModels) is found by it.
      await store.setModels([{ id: ids[2], model: 'bert_large' }]);
      expect((await store.list({ model: 'bert_large' })).map((r) => r.id)).toEqual([ids[2]]);
      expect(await store.list({ model: 'bert_large_squad' })).toEqual([]);
      expect(await store.delete('alice', [ids[2]])).toBe(0); // bob's run is not alice's to delete
      expect(await store.delete('alice')).toBe(2);
      expect((await store.list()).map((r) => r.owner)).toEqual(['bob']);
      expect(await store.version()).toEqual({ count: 1, maxId: ids[2] });
      await store.close();
    });

    it('stores all of a batch or nothing of it', async () => {
      const store = await MeasurementStore.open(location());
      const before = await store.version();
      await expect(store.insert([run(), run({ step_time_ms: -1 })])).rejects.toThrow();
      expect(await store.version()).toEqual(before);
      await store.close();
    });
  });
}

describe('a store an earlier server wrote', () => {
  it('gains the GPU memory column when a newer server opens it; its runs say none', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'trainplan-store-001-'));
    dirs.push(dataDir);
    // The schema as it shipped first: migration 001 alone, one run in it.
    const sqlite = new Database(join(dataDir, DATABASE_FILE));
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: sqlite }) });
    const migrated = await new Migrator({ db, provider: migrationProvider('sqlite') }).migrateTo(
      '001_measurement_run',
    );
    expect(migrated.error).toBeUndefined();
    const { gpu_memory_gb: _, ...old } = run();
    await (db as Kysely<{ measurement_run: typeof old }>).insertInto('measurement_run').values(old).execute();
    await db.destroy();
    const store = await MeasurementStore.open({ dataDir });
    expect((await store.list()).map((r) => [r.step_time_ms, r.gpu_memory_gb])).toEqual([[180.5, null]]);
    await store.insert([run({ gpu_memory_gb: 79.25 })]);
    expect((await store.list()).map((r) => r.gpu_memory_gb)).toEqual([null, 79.25]);
    await store.close();
  });
});

const dirs: string[] = [];
const sqliteDir = mkdtempSync(join(tmpdir(), 'trainplan-store-'));
dirs.push(sqliteDir);
storeContract('SQLite (embedded, WAL)', () => ({ dataDir: sqliteDir }));

let pg: TestPostgres | undefined;
beforeAll(async () => {
  pg = await startPostgres();
}, 60_000);
afterAll(() => {
  pg?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
storeContract('PostgreSQL (DATABASE_URL)', () => ({ databaseUrl: pg!.url, dataDir: '/nonexistent' }));

describe('the service on PostgreSQL', () => {
  it('records, lists and calibrates from runs kept in PostgreSQL', async () => {
    await withStoreConfig({ databaseUrl: pg!.url, dataDir: '/nonexistent' }, async () => {
      const config = {
        workload: { model: 'bert_large_squad', samples: 1 },
        gpu: 'H200-SXM-141GB',
        nodes: 1,
        gpusPerNode: 8,
        batchSizePerGpu: 32,
        gradAccumSteps: 1,
        precision: 'AMP_BF16' as const,
        framework: 'PyTorch' as const,
        xla: false,
        fp32UsesTf32: true,
      };
      // Synthetic: 1.25x the roofline estimate.
      const stepTimeMs = predict(predictRequestOf(config), loadEfficiency()).stepTimeMs * 1.25;
      const r = await recordRuns([{ ...config, stepTimeMs, source: 'test' }], 'pg-user');
      expect(r).toMatchObject({ stored: 1, rejected: [] });
      const runs = await listRuns({ gpu: 'H200-SXM-141GB' });
      expect(runs.map((x) => [x.owner, x.model, x.step_time_ms])).toEqual([
        ['pg-user', 'bert_large_squad', stepTimeMs],
      ]);
      const ev = await userEvidence();
      expect(ev?.runs.hasModelOnGpu('bert_large_squad', 'H200-SXM-141GB')).toBe(true);
      expect(await deleteRuns('pg-user')).toBe(1);
      // (The contract tests above left another owner's runs in this database.)
      expect((await userEvidence())?.runs.hasModelOnGpu('bert_large_squad', 'H200-SXM-141GB')).toBeFalsy();
    });
  });

  it('refits on runs kept in PostgreSQL, writes the refit in the data dir, and goes stale when one is deleted', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'trainplan-pg-refit-'));
    dirs.push(dataDir);
    await withStoreConfig({ databaseUrl: pg!.url, dataDir }, async () => {
      const config = {
        workload: { model: 'resnet50_v1.5', samples: 1 },
        gpu: 'A10',
        nodes: 1,
        gpusPerNode: 1,
        batchSizePerGpu: 64,
        gradAccumSteps: 1,
        precision: 'AMP_FP16' as const,
        framework: 'PyTorch' as const,
        xla: false,
        fp32UsesTf32: true,
      };
      // Synthetic: 1.3x the roofline estimate, at two batch sizes.
      const step = (b: number) =>
        predict(predictRequestOf({ ...config, batchSizePerGpu: b }), loadEfficiency()).stepTimeMs * 1.3;
      const r = await recordRuns(
        [64, 128].map((b) => ({ ...config, batchSizePerGpu: b, stepTimeMs: step(b), source: 'test' })),
        'pg-refit',
      );
      expect(r).toMatchObject({ stored: 2, rejected: [] });
      const summary = await refitOwner('pg-refit');
      expect(summary.files.model).toBe(join(dataDir, 'refit-predictor.onnx'));
      const current = await userEvidence();
      expect(current?.learned.predictor?.name).toMatch(/-refit$/);
      expect(current?.note).toMatch(
        /^learned correction refitted on the shipped rows and 2 of your runs \(pg-refit, /,
      );
      await deleteRuns('pg-refit', [r.ids[1]]);
      const stale = await userEvidence();
      expect(stale?.learned.predictor?.name).not.toMatch(/-refit$/);
      expect(stale?.note).toMatch(/is stale: 0 of pg-refit's runs recorded and 1 deleted since/);
      await deleteRuns('pg-refit');
    });
  }, 60_000);
});
