// How a user's runs calibrate one query (predictor/learned/calibration.ts calibrate): pure, on
// stated runs and weights, so each rule is checked by its arithmetic.
import { describe, expect, it } from 'vitest';
import {
  calibrate,
  type CalibrationQuery,
  type CalibrationWeights,
  type RecordedEvidence,
} from '../predictor/learned/calibration.js';

const w: CalibrationWeights = {
  sameConfiguration: 20,
  sameModelSamePrecision: 8,
  sameModelSameGpu: 0.5,
  sameGpu: 0.1,
  sameMath: 2,
  sameModelOtherGpu: 0.25,
  prior: 1,
};
const query: CalibrationQuery = {
  model: 'resnet50',
  gpu: 'NEW',
  precision: 'AMP_BF16',
  framework: 'PyTorch',
  configuration: 'resnet50|NEW|b256',
};
// Each run its own configuration (another batch size) unless it says otherwise.
let batch = 0;
const run = (over: Partial<RecordedEvidence> & { logError: number }): RecordedEvidence => ({
  model: query.model,
  gpu: query.gpu,
  precision: query.precision,
  framework: query.framework,
  configuration: `${over.model ?? query.model}|${over.gpu ?? query.gpu}|b${++batch}`,
  ...over,
});
const offset = (runs: RecordedEvidence[]) => Math.log(calibrate(query, runs, w).scale);

describe('calibrate', () => {
  it('moves towards the runs of the configuration asked about, however many runs of others there are', () => {
    const others = Array.from({ length: 40 }, () => run({ logError: 0.3 }));
    const own = Array.from({ length: 5 }, () => run({ configuration: query.configuration, logError: 0 }));
    // The others alone: 40 x 8 against a prior of 1.
    const fromOthers = (40 * 8 * 0.3) / (40 * 8 + 1);
    expect(offset(others)).toBeCloseTo(fromOthers, 12);
    // The five move that towards their mean (0) by 100/101; one weighted mean gave (40 x 8 x 0.3) / 421 = 0.23.
    expect(offset([...others, ...own])).toBeCloseTo(fromOthers * (1 - 100 / 101), 12);
    const c = calibrate(query, [...others, ...own], w);
    expect(c.sameConfigurationRuns).toBe(5);
    expect(c.runs).toBe(45);
    expect(c.spread).toBe(0); // the configuration's own runs agree
    // A lone run of the configuration: 20/21 of the way to it, as one mean always said.
    expect(offset([run({ configuration: query.configuration, logError: 0.3 })])).toBeCloseTo(
      (20 / 21) * 0.3,
      12,
    );
  });

  it('counts the runs of another model on this GPU once per model, and of this model on another GPU once per GPU', () => {
    // Nine runs of one other model (0.3 off) and one of another (on time), same math: 0.1 x 2 each model.
    const nine = Array.from({ length: 9 }, () => run({ model: 'bert', logError: 0.3 }));
    const oneMore = run({ model: 'gnmt', logError: 0 });
    expect(offset([...nine, oneMore])).toBeCloseTo((0.2 * 0.3 + 0.2 * 0) / (0.4 + 1), 12);
    // Counted per run it would have been (9 x 0.2 x 0.3) / (10 x 0.2 + 1) = 0.18.
    expect(offset(nine)).toBeCloseTo((0.2 * 0.3) / (0.2 + 1), 12);
    // This model timed on another GPU at three batch sizes: one GPU's worth (0.25).
    const elsewhere = Array.from({ length: 3 }, () => run({ gpu: 'OTHER', logError: 0.4 }));
    expect(offset(elsewhere)).toBeCloseTo((0.25 * 0.4) / (0.25 + 1), 12);
    // This model on this GPU at other batch sizes is direct evidence: each run counts (8 each).
    const direct = Array.from({ length: 3 }, () => run({ logError: 0.4 }));
    expect(offset(direct)).toBeCloseTo((24 * 0.4) / 25, 12);
  });

  it("counts a run at the query's precision twin as at its precision (AMP_BF16 for AMP_FP16), not as another precision", () => {
    const twin = { ...query, precision: 'AMP_FP16' as const, configuration: 'resnet50|NEW|b256|fp16' };
    const bf16 = Array.from({ length: 2 }, () => run({ logError: 0.3 }));
    // 8 each, as runs at AMP_FP16 itself would count; another precision counts 0.5 x 2 (same math).
    expect(Math.log(calibrate(twin, bf16, w).scale)).toBeCloseTo((16 * 0.3) / 17, 12);
    const fp32 = { ...query, precision: 'FP32' as const, configuration: 'resnet50|NEW|b256|fp32' };
    expect(Math.log(calibrate(fp32, bf16, w).scale)).toBeCloseTo((1 * 0.3) / 2, 12);
  });
});
