// One zoo model's corrected prediction at one configuration, as the interval and floor tests ask for
// it, and its P10-P90 as log factors on the estimate.
import { getGpu, loadEfficiency } from '../seeds/catalog.js';
import type { LearnedPredictor } from '../predictor/learned/model.js';
import { predictCorrected } from '../predictor/corrected.js';
import { getModel } from '../predictor/zoo/index.js';
import type { Precision } from '../predictor/types.js';

const eff = loadEfficiency();

export interface ZooConfiguration {
  model: string;
  gpu: string;
  precision: Precision;
  batchSizePerGpu: number;
  gpusPerNode?: number;
  nodes?: number;
  interNodeGbps?: number;
}

export function predictZoo(learned: LearnedPredictor, c: ZooConfiguration) {
  return predictCorrected(
    {
      model: getModel(c.model)!,
      gpu: getGpu(c.gpu)!,
      precision: c.precision,
      batchSizePerGpu: c.batchSizePerGpu,
      gpusPerNode: c.gpusPerNode ?? 1,
      nodes: c.nodes ?? 1,
      interNodeGbps: c.interNodeGbps ?? 400,
    },
    { predictor: learned, reason: '' },
    eff,
  );
}

/** log(P10 / estimate) and log(P90 / estimate): the interval the estimate got. */
export const logInterval = (p: { stepTimeMs: number; stepTimeMsP10: number; stepTimeMsP90: number }) => ({
  lo: Math.log(p.stepTimeMsP10 / p.stepTimeMs),
  hi: Math.log(p.stepTimeMsP90 / p.stepTimeMs),
});
