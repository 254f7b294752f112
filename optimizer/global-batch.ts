// How large a global batch a model is usually trained with. Without a fixed global batch, every
// GPU added multiplies the global batch, which changes the training recipe (learning-rate schedule,
// convergence), not only its speed; the search therefore caps it at the model's usual range.
import { loadMeasurements } from '../seeds/catalog.js';
import type { ModelDef } from '../predictor/types.js';

/**
 * GPUs at the model's largest default per-GPU batch that bound the global batch of a model with no
 * measured runs: a default policy (a single 8-GPU node x 8), not a measurement; `maxGlobalBatch`
 * overrides it.
 */
export const UNMEASURED_GLOBAL_BATCH_GPUS = 64;

let measuredMax: Map<string, number> | undefined;
/** Largest global batch (batch elements) any measured run of each model used (seeds/measurements). */
function measuredGlobalBatches(): Map<string, number> {
  if (measuredMax) return measuredMax;
  measuredMax = new Map();
  for (const m of loadMeasurements()) {
    const global =
      m.globalBatchSize ??
      (m.batchSizePerGpu === null ? null : m.batchSizePerGpu * m.numGpus * (m.gradAccumSteps ?? 1));
    if (global !== null && Number.isFinite(global))
      measuredMax.set(m.model, Math.max(measuredMax.get(m.model) ?? 0, global));
  }
  return measuredMax;
}

/**
 * The largest global batch the model is usually trained with: the largest its measured runs used,
 * or UNMEASURED_GLOBAL_BATCH_GPUS x its largest default per-GPU batch when it has none.
 */
export function usualGlobalBatch(model: ModelDef): number {
  return (
    measuredGlobalBatches().get(model.id) ?? UNMEASURED_GLOBAL_BATCH_GPUS * Math.max(1, ...model.batchSizes)
  );
}
