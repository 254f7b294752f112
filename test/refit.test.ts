// `trainplan calibrate refit`: the learned correction refitted on the shipped rows plus an owner's
// recorded runs. A refit with three runs on a GPU no shipped row measured writes a model that loads
// and that the next predict and recommend use (their evidence says so); it is deterministic; a new
// server process reading the same data dir uses it; a run recorded or deleted since makes it stale
// (evidence says so, the shipped correction answers, exactly as with no refit); an owner with no runs
// gets a clear refusal. The runs are synthetic (stated multiples of the current prediction): what is
// checked is how the refit is used, not what an A10 measures.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apolloForTests } from './graphql-client.js';
import { plansAtConfiguration } from './one-configuration.js';
import { ROOT, spawnServer } from './spawn-server.js';
import { throwawayStore } from './throwaway-store.js';
import { refitOwner } from '../service/refit.js';
import { refitFiles } from '../service/learned-choice.js';
import { LearnedPredictor } from '../predictor/learned/model.js';
import { featureNames } from '../predictor/learned/features.js';
import { sha256 } from '../predictor/learned/refit.js';

const dataDir = throwawayStore('trainplan-refit-');
const run = apolloForTests();

const PREDICT = `query($input: PredictInput!) { predict(input: $input) {
  stepTimeMs stepTimeMsP10 stepTimeMsP90 evidence calibrationRuns } }`;
const RECORD = `mutation($runs: [MeasurementInput!]!, $owner: String) {
  recordMeasurements(runs: $runs, owner: $owner) { stored ids rejected { index reason } } }`;
const DELETE = `mutation($owner: String!, $ids: [Int!]) { deleteMeasurements(owner: $owner, ids: $ids) }`;

// A10: no shipped measurement. Three runs of three models at FP32, each 1.3x the current prediction.
const GPU = 'A10';
const query = {
  workload: { model: 'gnmt_v2', samples: 1e5 },
  gpu: GPU,
  batchSizePerGpu: 80,
  precision: 'FP32',
};
const runsOf = [
  { model: 'gnmt_v2', batch: 80 },
  { model: 'tacotron2', batch: 52 },
  { model: 'bert_base_squad', batch: 16 },
];
const SLOWER = 1.3;
const REFITTED =
  /learned correction refitted on the shipped rows and 3 of your runs \(lab, \d{4}-\d\d-\d\d \d\d:\d\d UTC\)/;

const predictNow = async (input: Record<string, unknown> = query) => {
  const r = await run(PREDICT, { input });
  expect(r.errors).toBeUndefined();
  return r.data!.predict as Record<string, any>;
};

describe('calibrate refit', () => {
  it('refuses an owner with no recorded runs, naming the owner and what to do', async () => {
    await expect(refitOwner('nobody')).rejects.toThrow(
      /no recorded runs of "nobody" in .*: record runs first \(trainplan calibrate import FILE --owner nobody\)/,
    );
    expect(existsSync(refitFiles(dataDir).model)).toBe(false);
  });

  it('a refit on 3 runs loads, answers predict and recommend, is deterministic, and goes stale when runs change', async () => {
    const before = await predictNow();
    const runs = [];
    for (const r of runsOf) {
      const config = { ...query, workload: { model: r.model, samples: 1e5 }, batchSizePerGpu: r.batch };
      runs.push({ ...config, stepTimeMs: (await predictNow(config)).stepTimeMs * SLOWER, source: 'test' });
    }
    const recorded = await run(RECORD, { runs, owner: 'lab' });
    expect(recorded.data!.recordMeasurements).toMatchObject({ stored: 3, rejected: [] });
    const ids = recorded.data!.recordMeasurements.ids as number[];
    const calibratedOnly = await predictNow();
    expect(calibratedOnly.evidence).not.toMatch(/refitted/);

    const summary = await refitOwner('lab', { now: new Date('2026-12-02T00:30:00Z') });
    expect(summary).toMatchObject({ owner: 'lab', runs: 3, skipped: [] });
    expect(summary.shippedRows).toBeGreaterThan(3000);
    const files = refitFiles(dataDir);
    const bytes = readFileSync(files.model);
    // It loads as a learned correction of this code's features, trained on the shipped rows plus the runs.
    const loaded = await LearnedPredictor.load(files.model, files.meta);
    expect(loaded.featureCount).toBe(featureNames(true).length);
    expect(loaded.meta.trainedRows).toBe(summary.shippedRows + 3);
    expect(loaded.meta.refit!.runs.map((r) => r.id)).toEqual(ids);

    const refitted = await predictNow();
    expect(refitted.evidence).toMatch(REFITTED);
    expect(refitted.evidence).toMatch(/calibrated by 3 of your runs/);
    expect(refitted.calibrationRuns).toBe(3);
    // The recorded configuration's answer moves toward the run (1.3x the no-run prediction).
    const measured = before.stepTimeMs * SLOWER;
    expect(refitted.stepTimeMs).toBeGreaterThan(before.stepTimeMs);
    expect(Math.abs(refitted.stepTimeMs - measured)).toBeLessThan(Math.abs(before.stepTimeMs - measured));
    expect(refitted.stepTimeMs).not.toBe(calibratedOnly.stepTimeMs); // another model answered
    const plans = await plansAtConfiguration(run, query.workload, GPU, 80);
    expect(plans[0].evidence).toMatch(REFITTED);
    expect(plans[0].stepTimeMs).toBeCloseTo(refitted.stepTimeMs, 6);

    // Deterministic: the same runs give the same model bytes.
    await refitOwner('lab', { now: new Date('2026-12-02T00:30:00Z') });
    expect(sha256(readFileSync(files.model))).toBe(sha256(bytes));

    // A new server process reading the same data dir uses the refit.
    const server = await spawnServer({ env: { TRAINPLAN_DATA_DIR: dataDir } });
    try {
      const res = await fetch(`${server.base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: PREDICT, variables: { input: query } }),
      });
      const again = ((await res.json()) as { data: Record<string, any> }).data.predict;
      expect(again.evidence).toMatch(REFITTED);
      expect(again.stepTimeMs).toBeCloseTo(refitted.stepTimeMs, 6);
    } finally {
      await server.stop('SIGTERM');
    }

    // A run recorded since: stale, said in the evidence; the shipped correction answers.
    const extra = await run(RECORD, { runs: [runs[0]], owner: 'lab' });
    const extraId = extra.data!.recordMeasurements.ids[0] as number;
    const stale = await predictNow();
    expect(stale.evidence).not.toMatch(REFITTED);
    expect(stale.evidence).toMatch(
      /the learned correction refitted on 3 of lab's runs \(2026-12-02 00:30 UTC\) is stale: 1 of lab's runs recorded and 0 deleted since; the shipped correction is used/,
    );
    expect(stale.evidence).toMatch(/calibrated by 4 of your runs/);
    // Deleted again: the runs are the ones it trained on, so it answers again.
    await run(DELETE, { owner: 'lab', ids: [extraId] });
    expect((await predictNow()).stepTimeMs).toBeCloseTo(refitted.stepTimeMs, 9);

    // A trained-on run deleted: stale, and the answer is exactly the shipped correction's with the
    // two runs left (as if there were no refit file): the deleted run's model is not used.
    await run(DELETE, { owner: 'lab', ids: [ids[1]] });
    const afterDelete = await predictNow();
    expect(afterDelete.evidence).toMatch(/is stale: 0 of lab's runs recorded and 1 deleted since/);
    expect(afterDelete.calibrationRuns).toBe(2);
    const meta = readFileSync(files.meta);
    rmSync(files.meta);
    const noRefit = await predictNow();
    expect(noRefit.evidence).not.toMatch(/refit/);
    expect(afterDelete.stepTimeMs).toBe(noRefit.stepTimeMs);
    // A damaged refit file never breaks a request: the shipped correction answers and says why.
    writeFileSync(files.meta, '{ not json');
    const damaged = await predictNow();
    expect(damaged.evidence).toMatch(/the refit in .*refit-predictor\.json could not be read/);
    expect(damaged.stepTimeMs).toBe(noRefit.stepTimeMs);
    writeFileSync(files.meta, meta);
  }, 180_000);

  it('trainplan calibrate refit: writes the refit in the data dir, or says why not (exit 1)', () => {
    const dir = join(dataDir, 'cli');
    const tsx = (args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], {
        cwd: ROOT,
        encoding: 'utf8',
      });
    const none = tsx(['calibrate', 'refit', '--data-dir', dir, '--owner', 'ci']);
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(
      /trainplan calibrate refit: no recorded runs of "ci" in .*cli: record runs first/,
    );
    const csv = join(dataDir, 'runs.csv');
    // Synthetic: 1.2x the roofline's step is plausible for this configuration; what is checked is the CLI path.
    writeFileSync(
      csv,
      `model,gpu,batch_size_per_gpu,precision,step_time_ms,source\nresnet50_v1.5,A10,64,AMP_FP16,140,test\n`,
    );
    const imported = tsx(['calibrate', 'import', csv, '--data-dir', dir, '--owner', 'ci']);
    expect(imported.stdout).toMatch(/stored 1 of 1 runs/);
    const refit = tsx(['calibrate', 'refit', '--data-dir', dir, '--owner', 'ci']);
    expect(refit.stderr).toBe('');
    expect(refit.status).toBe(0);
    expect(refit.stdout).toMatch(
      /refitted the learned correction on \d+ shipped rows and 1 of ci's runs; wrote .*cli\/refit-predictor\.onnx and .*cli\/refit-predictor\.json/,
    );
    expect(existsSync(join(dir, 'refit-predictor.onnx'))).toBe(true);
    const help = tsx(['calibrate', 'refit', '--help']);
    expect(help.stdout).toMatch(/refit-predictor\.onnx/);
  }, 120_000);
});
