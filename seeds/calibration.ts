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

/** log(measured / calibrated step time) quantiles where the model has runs on the GPU (bench/calibration.ts, measured on half the GPUs). */
export interface CalibratedInterval {
  q10: number;
  q90: number;
  rows: number;
}

/** Neighbour transfer of runs on a GPU with no shipped measurements (predictor/learned/transfer.ts). */
export interface TransferSettings {
  /** Standard deviation (log) added to the runs' disagreement on a neighbour: how far agreeing runs are trusted. */
  consistencyFloor: number;
  /** How fast a neighbour's configuration counts less as it moves away (per unit of log batch/GPU-count difference, or another sequence length). */
  distancePenalty: number;
  /** Neighbour weight at which the transfer and the calibrated learned prediction count equally. */
  evidenceHalfWeight: number;
  /** Models whose runs must have a counterpart on a neighbour for it to be used (each model's runs count once). */
  minimumMatches: number;
  /** A neighbour built on the same die (e.g. GA102) counts this many times. */
  sameChipWeight: number;
}

/**
 * How the published LLM runs of a query's architecture on its GPU and stack calibrate it
 * (predictor/learned/published-calibration.ts), chosen by bench/published-calibration.ts.
 */
export interface PublishedCalibrationSettings {
  /** Weight of a run at another precision than the query's (a run at its precision counts 1). */
  otherPrecision: number;
  /** Runs' worth of "no correction" the weighted mean is shrunk towards. */
  prior: number;
  /** log(measured / calibrated step time) quantiles of runs held out of the calibration and the trees. */
  interval: CalibratedInterval;
  /** The same for a stack with enough held-out runs of its own, never narrower than `interval`. */
  byStack?: Partial<Record<string, CalibratedInterval>>;
}

/** Which recorded peaks calibrate a model's memory (predictor/memory-calibration.ts). */
export interface MemoryCalibrationSettings {
  /** A peak whose |log ratio| to the predicted one is within this agrees with it: a scale of 1 (the memory model's noise). */
  agreement: number;
  /** A run whose predicted activations are less than this share of its allocated memory cannot tell their scale. */
  minActivationShare: number;
  /** A scale outside [min, max] is not this configuration's peak (another process, a leak, a unit slip). */
  minScale: number;
  maxScale: number;
}

export interface CalibrationSettings {
  weights: CalibrationWeights;
  memory: MemoryCalibrationSettings;
  modelOnGpu: CalibratedInterval;
  /** log(measured / predicted step time) quantiles where the configuration itself has runs: how far train.csv's repeats of one configuration stray from each other (bench/calibration.ts repeatInterval). */
  sameConfiguration: CalibratedInterval;
  transfer: TransferSettings;
  published: PublishedCalibrationSettings;
}

let settings: CalibrationSettings | undefined;
export function loadCalibrationSettings(): CalibrationSettings {
  settings ??= JSON.parse(
    readFileSync(new URL('./calibration.json', import.meta.url), 'utf8'),
  ) as CalibrationSettings;
  return settings;
}
