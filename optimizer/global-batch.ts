// How large a global batch a model is usually trained with. Without a fixed global batch, every
// GPU added multiplies the global batch, which changes the training recipe (learning-rate schedule,
// convergence), not only its speed; the search therefore caps it at the model's usual range.
import { loadMeasurements } from '../seeds/catalog.js';
import { loadLlmCampaigns, loadLlmRuns } from '../seeds/llm.js';
import { publishedArchitecturesOf } from '../predictor/published-runs.js';
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
 * Largest global batch, in tokens, that a published LLM architecture (llm_models.csv names) was run or
 * trained with: its published runs (llm_train.csv, global batch x sequence length, with or without a
 * measured throughput: each is a configuration its publisher ran) and its pre-training campaign's
 * recipe (llm_campaign_gpu_hours.csv, whose "4M" is read as the largest count that rounds to it,
 * 4.5M: Llama 2's 1,024 sequences of 4,096 are 4.19M tokens). Undefined where none states one.
 */
function publishedGlobalBatchTokens(names: readonly string[]): number | undefined {
  const tokens = [
    ...loadLlmRuns()
      .filter((r) => names.includes(r.model) && r.globalBatch !== null && r.seqLen !== null)
      .map((r) => r.globalBatch! * r.seqLen!),
    ...loadLlmCampaigns()
      .filter((c) => names.includes(c.model) && c.globalBatchTokens !== null)
      .map((c) => c.globalBatchTokens!.high),
  ];
  return tokens.length ? Math.max(...tokens) : undefined;
}

/** A usual global batch and what it rests on, in words a note can quote. */
export interface UsualGlobalBatch {
  batch: number;
  /** "the largest it was measured with", ... */
  basis: string;
}

/**
 * The largest global batch the model is usually trained with: the largest its measured runs used
 * (a published LLM architecture's in tokens, as sequences of the model's length), or
 * UNMEASURED_GLOBAL_BATCH_GPUS x its largest default per-GPU batch when it has none; with what it
 * rests on, since a default policy must not read as a recipe.
 */
export function usualGlobalBatchOf(model: ModelDef): UsualGlobalBatch {
  const measured = measuredGlobalBatches().get(model.id);
  if (measured !== undefined) return { batch: measured, basis: 'the largest it was measured with' };
  const tokens = publishedGlobalBatchTokens(publishedArchitecturesOf(model));
  if (tokens !== undefined && model.seqLen)
    return {
      batch: Math.floor(tokens / model.seqLen),
      basis: 'the largest its published runs or pre-training recipe used',
    };
  const perGpu = Math.max(1, ...model.batchSizes);
  return {
    batch: UNMEASURED_GLOBAL_BATCH_GPUS * perGpu,
    basis: `${UNMEASURED_GLOBAL_BATCH_GPUS} GPUs at its largest listed batch, ${perGpu}, as no run or recipe of it states one`,
  };
}

/** usualGlobalBatchOf's batch. */
export function usualGlobalBatch(model: ModelDef): number {
  return usualGlobalBatchOf(model).batch;
}
