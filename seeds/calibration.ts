// seeds/calibration.json: how recorded runs move predictions (weights, and the interval of a
// calibrated prediction), read once and passed to the predictor.
import { readFileSync } from 'node:fs';

/**
 * How much a run of each kind counts, relative to one run of another model on the same GPU, and
 * how many runs' worth of "no correction" the mean is shrunk towards. The values live in
 * seeds/calibration.json (chosen on the leave-one-GPU-out benchmark, bench/calibration.ts) and are
 * passed in.
 */
export interface CalibrationWeights {
  sameConfiguration: number;
  /** The same model on the same GPU at the same precision (another batch size or layout). */
  sameModelSamePrecision: number;
  sameModelSameGpu: number;
  sameGpu: number;
  /** Multiplies a same-GPU run whose matmuls run in the query's math (fp32 vs tensor cores). */
  sameMath: number;
  sameModelOtherGpu: number;
  prior: number;
}

/** log(measured / calibrated step time) quantiles where the model has runs on the GPU (bench/calibration.ts). */
export interface CalibratedInterval {
  q10: number;
  q90: number;
  rows: number;
}

export interface CalibrationSettings {
  weights: CalibrationWeights;
  modelOnGpu: CalibratedInterval;
}

let settings: CalibrationSettings | undefined;
export function loadCalibrationSettings(): CalibrationSettings {
  settings ??= JSON.parse(
    readFileSync(new URL('./calibration.json', import.meta.url), 'utf8'),
  ) as CalibrationSettings;
  return settings;
}
