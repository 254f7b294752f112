// The published LLM runs of a query's own architecture, on its GPU and software stack, as a
// calibration of the learned correction (as a user's recorded runs are, calibration.ts). The trees
// fit every published run but read none of them as evidence (train.ts evidenceOf), so an answer for
// Llama 2 7B under Megatron on an H100 was as far off as the trees left it while 17 runs of that
// architecture on that GPU said by how much. Each run's error against the shipped prediction moves
// the query by a shrunk, weighted mean. Held out of the trees and the calibration
// (bench/published-calibration.ts) that took the runs' error from 5.4% to 3.4% a run at a time, and
// from 6.8% to 4.7% a whole layout at a time. Pure: the runs' errors are passed in.
import type { Precision } from '../types.js';
import type { SoftwareStack } from '../software.js';
import type { CalibratedInterval, PublishedCalibrationSettings } from '../../seeds/calibration.js';

export type { PublishedCalibrationSettings };

/** One published run of the architecture on the GPU and stack, against the uncalibrated prediction. */
export interface PublishedResidual {
  /** llm_train.csv's id. */
  id: string;
  /** The run's framework label (llm_train.csv): a stack is a family of them. */
  framework: string;
  /** A version its source later replaced (is_latest 0), which the trees never fitted. */
  superseded?: boolean;
  precision: Precision;
  /** log(measured step time / predicted step time): positive when the run was slower than predicted. */
  logError: number;
}

export interface PublishedCalibration {
  /** Multiplier on the predicted step time. */
  scale: number;
  runs: number;
  /** Of them, at the query's precision. */
  samePrecision: number;
  /** The frameworks they ran, sorted. */
  frameworks: string[];
  /** Of them, superseded in their source (their errors are held-out ones: no tree fitted them). */
  superseded: number;
  /** Weighted standard deviation of the runs' errors (0 with one run). */
  spread: number;
  /** P10/P90 of log(measured / calibrated step), never narrower than the runs' own disagreement. */
  interval: CalibratedInterval;
  /** The runs disagree more than the held-out errors do: the interval is their ±1.28 spread on a side. */
  widenedBySpread: boolean;
  /**
   * The GPU the runs ran on where it is not the query's: the query's GPU has none, and reads as this
   * one (gpu-twins.ts: the same die, SM count and clock, no more memory bandwidth). Set by the caller.
   */
  readAsGpu?: string;
}

export function calibrateOnPublished(
  precision: Precision,
  stack: SoftwareStack,
  residuals: readonly PublishedResidual[],
  s: PublishedCalibrationSettings,
): PublishedCalibration | undefined {
  if (!residuals.length) return undefined;
  let sw = 0,
    swx = 0;
  const weights = residuals.map((r) => (r.precision === precision ? 1 : s.otherPrecision));
  residuals.forEach((r, i) => {
    sw += weights[i];
    swx += weights[i] * r.logError;
  });
  const mean = swx / sw;
  const held = s.byStack?.[stack] ?? s.interval;
  const spread = Math.sqrt(residuals.reduce((a, r, i) => a + weights[i] * (r.logError - mean) ** 2, 0) / sw);
  // 1.28 standard deviations: the runs' own P10/P90 where they disagree more than the held-out errors.
  const own = 1.28 * spread;
  return {
    scale: Math.exp(swx / (sw + s.prior)),
    runs: residuals.length,
    samePrecision: residuals.filter((r) => r.precision === precision).length,
    frameworks: [...new Set(residuals.map((r) => r.framework))].sort(),
    superseded: residuals.filter((r) => r.superseded).length,
    spread,
    interval: { q10: Math.min(held.q10, -own), q90: Math.max(held.q90, own), rows: held.rows },
    widenedBySpread: -own < held.q10 || own > held.q90,
  };
}
