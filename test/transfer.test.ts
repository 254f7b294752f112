// Runs on a GPU with no shipped measurements, carried over from the GPUs that have them
// (predictor/learned/transfer.ts). On real rows: hold a GPU out of the shipped measurements,
// record 3 of its rows as a user's runs, and its other rows' error falls by at least what
// bench/calibration.ts measured there (less a margin for the draws). Through the API: predict and
// recommend on that GPU change with 3 runs of other models, and their evidence says where from.
import { describe, expect, it } from 'vitest';
import { runBenchmark } from '../bench/calibration.js';
import { examples } from '../predictor/learned/train.js';
import {
  NeighbourTransfer,
  ShippedConfigurations,
  type TransferConfiguration,
} from '../predictor/learned/transfer.js';
import { chipOf } from '../predictor/learned/gpu-twins.js';
import { loadEfficiency, loadMeasurements } from '../seeds/catalog.js';
import { loadCalibrationSettings } from '../seeds/calibration.js';
import { apolloForTests } from './graphql-client.js';
import { plansAtConfiguration } from './one-configuration.js';
import { throwawayStore } from './throwaway-store.js';

throwawayStore('trainplan-transfer-');
const run = apolloForTests();

const row = (
  gpu: string,
  model: string,
  logResidual: number,
  batchSizePerGpu = 32,
): TransferConfiguration => ({
  model,
  gpu,
  precision: 'AMP_FP16',
  seqOrImage: 224,
  batchSizePerGpu,
  gpus: 1,
  logResidual,
});

describe('neighbour transfer', () => {
  it('relates a new GPU to the shipped GPUs its runs agree with, and carries their measurement over', () => {
    // Neighbour A: the runs show the new GPU at A's residual + 0.2 on every model; neighbour B disagrees.
    const shipped = new ShippedConfigurations([
      row('A', 'm1', 0.1),
      row('A', 'm2', -0.1),
      row('A', 'm3', 0),
      row('A', 'm4', 0.3),
      row('B', 'm1', 0.5),
      row('B', 'm2', -0.6),
      row('B', 'm3', 0.2),
      row('B', 'm4', -0.4),
    ]);
    const settings = loadCalibrationSettings().transfer;
    const runs = [row('NEW', 'm1', 0.3), row('NEW', 'm2', 0.1), row('NEW', 'm3', 0.2)];
    const t = new NeighbourTransfer(shipped, runs, settings, new Map());
    const m4 = t.query({ ...row('NEW', 'm4', 0) })!;
    expect(m4.neighbour).toBe('A');
    expect(m4.distance).toBe(0);
    expect(m4.neighbours).toBe(2);
    // A explains the runs exactly (offset 0.2, no spread); B's offset spreads by ~0.45: A dominates.
    expect(m4.logResidual).toBeGreaterThan(0.45);
    expect(m4.logResidual).toBeLessThan(0.5);
    expect(m4.share).toBeGreaterThan(0);
    expect(m4.share).toBeLessThan(1);
    // Another batch size is matched to the nearest measured one, which counts less.
    const far = t.query({ ...row('NEW', 'm4', 0, 256) })!;
    expect(far.distance).toBeCloseTo(Math.log(8), 9);
    expect(far.share).toBeLessThan(m4.share);
    // A model the new GPU's own runs measured at this precision, at another batch size: left to the
    // calibration, which weighs those runs most; the transfer's share, growing with every run,
    // would otherwise let the neighbours outweigh them.
    expect(t.query({ ...row('NEW', 'm1', 0, 256) })).toBeUndefined();
    // Nine runs of one model relate no GPU (the relation varies by model: it waits for three
    // models); repeats of a model count once, at their mean.
    const oneModel = Array.from({ length: 9 }, (_, i) => row('NEW', 'm1', 0.3, 32 * (i + 1)));
    expect(new NeighbourTransfer(shipped, oneModel, settings, new Map()).covers('NEW')).toBe(false);
    const onlyA = new ShippedConfigurations([
      row('A', 'm1', 0.1),
      row('A', 'm2', -0.1),
      row('A', 'm3', 0),
      row('A', 'm4', 0.3),
    ]);
    const repeated = new NeighbourTransfer(
      onlyA,
      [...runs, row('NEW', 'm1', 0.5), row('NEW', 'm1', 0.5), row('NEW', 'm1', 0.5)],
      settings,
      new Map(),
    );
    // m1's four runs average 0.45, 0.35 above A; m2 and m3 are 0.2 above it: A's offset is the
    // mean over the three models, 0.25 (per run, six m1-heavy differences would say 0.3), and m4
    // is carried over at A's 0.3 plus it.
    expect(repeated.query({ ...row('NEW', 'm4', 0) })!.logResidual).toBeCloseTo(0.55, 9);
    // A model no neighbour measured, a GPU without runs, and runs on a shipped GPU: no transfer.
    expect(t.query({ ...row('NEW', 'm9', 0) })).toBeUndefined();
    expect(t.query({ ...row('OTHER', 'm4', 0) })).toBeUndefined();
    expect(new NeighbourTransfer(shipped, [row('A', 'm1', 1)], settings, new Map()).covers('A')).toBe(false);
  });

  it("reads AMP_BF16 as AMP_FP16, its twin: a user's AMP_BF16 runs relate to the shipped AMP_FP16 rows", () => {
    const shipped = new ShippedConfigurations([
      row('A', 'm1', 0.1),
      row('A', 'm2', -0.1),
      row('A', 'm4', 0.3),
    ]);
    const settings = { ...loadCalibrationSettings().transfer, minimumMatches: 1 };
    const bf16 = (gpu: string, model: string, logResidual: number) => ({
      ...row(gpu, model, logResidual),
      precision: 'AMP_BF16' as const,
    });
    const t = new NeighbourTransfer(
      shipped,
      [bf16('NEW', 'm1', 0.3), bf16('NEW', 'm2', 0.1)],
      settings,
      new Map(),
    );
    expect(t.covers('NEW')).toBe(true);
    const m4 = t.query(bf16('NEW', 'm4', 0))!;
    expect(m4.nearest.precision).toBe('AMP_FP16');
    expect(m4.logResidual).toBeCloseTo(0.5, 9);
    // FP32 has no twin: the shipped AMP_FP16 rows are not its measurements.
    expect(t.query({ ...row('NEW', 'm4', 0), precision: 'FP32' })).toBeUndefined();
  });

  it('knows a GPU by its die', () => {
    expect(chipOf('Ampere (GA102-850)')).toBe('GA102');
    expect(chipOf('Turing (TU104, laptop)')).toBe('TU104');
    expect(chipOf('TPU v4')).toBeUndefined();
  });
});

describe('held out of the shipped measurements, a GPU with 3 recorded runs (real rows)', () => {
  // bench/calibration.ts (20 draws, seed 5) measured on these GPUs, mean over them, with the shipped
  // correction gbdt-v5 (gbdt-v4's trees), the mean of four fits (whose nearest-GPU and trend
  // evidence already carry part of what the transfer adds), and the transfer asking for 3 matching
  // runs: 9.5% with the runs' calibration alone, 7.7% with the transfer (GTX-1080Ti 14.2% -> 11.5%,
  // H100-SXM5-80GB 8.2% -> 8.6%, RTX-2080-MaxQ 8.6% -> 5.5%, RTX-2080-Super-MaxQ 7.1% -> 5.2%; the
  // recorded models' other configurations left to the calibration, H100 8.8% before that); with
  // 2 matching runs 7.4%, with one fit 9.8% -> 7.5%, with gbdt-v3 10.3% -> 7.9%, with gbdt-v2 11.6%
  // -> 8.2%. GPUs where it helps, chosen to check that it does; on others it helps less or hurts
  // (the note's table).
  it('the transfer lowers the error on its other rows by what the benchmark measured', () => {
    const ex = examples(loadMeasurements(), loadEfficiency());
    const gpus = ['GTX-1080Ti', 'H100-SXM5-80GB', 'RTX-2080-MaxQ', 'RTX-2080-Super-MaxQ'];
    const results = runBenchmark(ex, loadCalibrationSettings(), undefined, [], gpus);
    expect(results.map((r) => r.gpu)).toEqual(gpus);
    const mean = (v: 'both (before transfer)' | 'both + neighbour transfer (shipped)') =>
      results.reduce((a, r) => a + r.mape[v], 0) / results.length;
    const before = mean('both (before transfer)'),
      after = mean('both + neighbour transfer (shipped)');
    expect(before).toBeGreaterThan(0.09);
    expect(after).toBeLessThan(0.08);
    expect(before - after).toBeGreaterThan(0.015);
  }, 120_000);
});

const PREDICT = `query($input: PredictInput!) { predict(input: $input) {
  stepTimeMs stepTimeMsP10 stepTimeMsP90 evidence evidenceLevel calibrationRuns } }`;
const RECORD = `mutation($runs: [MeasurementInput!]!) {
  recordMeasurements(runs: $runs) { stored rejected { index reason } } }`;

// A10: no shipped measurement. Runs of three models that GA102 GPUs (RTX-A6000, RTX-3090, A40...)
// measured at FP32; the query is a fourth model those GPUs measured at this very configuration.
// The runs are synthetic (stated multiples of the current prediction): what is checked is that
// the answers use them, not what an A10 measures.
const GPU = 'A10';
const query = {
  workload: { model: 'resnet50_v1.5', samples: 1_281_167 },
  gpu: GPU,
  batchSizePerGpu: 224,
  precision: 'FP32',
};
const runsOf = [
  { model: 'gnmt_v2', batch: 80, slower: 1.25 },
  { model: 'tacotron2', batch: 52, slower: 1.15 },
  { model: 'bert_base_squad', batch: 16, slower: 1.2 },
];

describe('predict and recommend with runs on a GPU no shipped measurement covers', () => {
  const predictNow = async (input: Record<string, unknown>) => {
    const r = await run(PREDICT, { input });
    expect(r.errors).toBeUndefined();
    return r.data!.predict as Record<string, any>;
  };

  it('take the shipped GPUs measurement of the configuration through the relation the runs show, and say so', async () => {
    const before = await predictNow(query);
    expect(before.evidence).not.toMatch(/transferred/);
    const runs = [];
    for (const r of runsOf) {
      const config = { ...query, workload: { model: r.model, samples: 1e5 }, batchSizePerGpu: r.batch };
      const p = await predictNow(config);
      runs.push({ ...config, stepTimeMs: p.stepTimeMs * r.slower, source: 'test' });
    }
    const recorded = await run(RECORD, { runs });
    expect(recorded.data!.recordMeasurements).toEqual({ stored: 3, rejected: [] });

    const after = await predictNow(query);
    expect(after.calibrationRuns).toBe(3);
    expect(after.evidenceLevel).toBe('GPU_MEASURED');
    const m =
      /transferred from (\S+)'s measurement of this configuration, related to A10 by your runs \((\d+) shipped GPUs? used, (\d+)% of the estimate\)/.exec(
        after.evidence,
      );
    expect(m, after.evidence).not.toBeNull();
    // The neighbour is a GPU that measured resnet50 at FP32, batch 224 on one GPU.
    const shipped = loadMeasurements().filter(
      (r) =>
        r.model === 'resnet50_v1.5' && r.precision === 'FP32' && r.batchSizePerGpu === 224 && r.numGpus === 1,
    );
    expect(shipped.map((r) => r.gpu)).toContain(m![1]);
    expect(Number(m![3])).toBeGreaterThan(0);
    expect(after.stepTimeMs).not.toBeCloseTo(before.stepTimeMs, 3);
    expect(after.stepTimeMsP10).toBeLessThan(after.stepTimeMs);
    expect(after.stepTimeMsP90).toBeGreaterThan(after.stepTimeMs);

    // A model no shipped GPU measured at this precision gets the runs' calibration only.
    const unmatched = await predictNow({ ...query, precision: 'BF16' });
    expect(unmatched.evidence).toMatch(/calibrated by 3 of your runs/);
    expect(unmatched.evidence).not.toMatch(/transferred/);
    // AMP_BF16, which no shipped row ran, is carried over from AMP_FP16's measurements, its twin.
    const twin = await predictNow({ ...query, precision: 'AMP_BF16' });
    expect(twin.evidence).toMatch(
      /transferred from \S+'s measurement of this (configuration|model) at AMP_FP16/,
    );

    // recommend answers the same configuration with the same estimate and evidence.
    const plans = await plansAtConfiguration(run, query.workload, GPU, 224);
    expect(plans[0].stepTimeMs).toBeCloseTo(after.stepTimeMs, 6);
    expect(plans[0].evidence).toMatch(/transferred from \S+'s measurement of this configuration/);
  });
});
