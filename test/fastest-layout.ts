// The exhaustive check behind recommend's parallelism search: every layout of a GPU count, timed by
// predict, the fastest per sample that fits. The search's own micro-batches: one without a pipeline,
// 4 per stage with one (parallel-search.ts MICRO_BATCHES_PER_STAGE).
import type { Parallelism, Recompute, ZeroStage } from '../predictor/parallel.js';
import type { Prediction } from '../predictor/predict.js';
import { pipelineSchedules } from '../optimizer/parallel-search.js';

export interface LayoutSpace {
  tensorParallel: readonly number[];
  pipelineParallel: readonly number[];
  recompute: readonly Recompute[];
  /** Expert-parallel degrees (mixture-of-experts models); default [1]. */
  expertParallel?: readonly number[];
  /**
   * On a stack that interleaves its pipeline, the model's transformer blocks: where PP divides them,
   * chunks of two blocks per stage are tried too (of one where a stage holds an odd number or two).
   * Absent: one chunk.
   */
  interleavedBlocks?: number;
  /** Only layouts whose global batch (micro-batch x micro-batches x DP) is at most the cap (recommend's maxGlobalBatch). */
  globalBatchCap?: { batchSizePerGpu: number; maxGlobalBatch: number };
}

/** Chunks per stage tried at PP `pp`: the search's own schedules (one place for the chunk rule). */
const chunksOf = (space: LayoutSpace, pp: number): number[] => {
  const blocks = space.interleavedBlocks;
  if (blocks === undefined) return [1];
  const chunks = pipelineSchedules({ tensorParallelizable: true, blocks }, true)
    .filter((s) => s.pp === pp)
    .map((s) => s.v);
  return chunks.length ? chunks : [1];
};

/** The least step time per sample over every layout of `gpus` GPUs that fits (Infinity: none fits). */
export function fastestFittingPerSample(
  gpus: number,
  space: LayoutSpace,
  predictAt: (gradAccumSteps: number, parallelism: Parallelism) => Prediction,
): number {
  let best = Infinity;
  for (const t of space.tensorParallel)
    for (const pp of space.pipelineParallel.filter((x) => gpus % (t * x) === 0))
      for (const v of chunksOf(space, pp))
        for (const recompute of space.recompute)
          for (const zeroStage of [0, 1, 2, 3] as ZeroStage[])
            for (const ep of (space.expertParallel ?? [1]).filter((e) => (gpus / pp) % e === 0)) {
              const dp = gpus / (t * pp);
              if (zeroStage > 0 && dp === 1) continue;
              if (pp > 1 && zeroStage === 2) continue; // no framework runs it: predict refuses it
              const m = pp === 1 ? 1 : 4 * pp;
              const cap = space.globalBatchCap;
              if (cap && cap.batchSizePerGpu * m * dp > cap.maxGlobalBatch) continue;
              const d = predictAt(m, {
                tensorParallel: t,
                pipelineParallel: pp,
                zeroStage,
                recompute,
                ...(v > 1 ? { virtualPipelineStages: v } : {}),
                ...(ep > 1 ? { expertParallel: ep } : {}),
              });
              if (d.fitsInMemory) best = Math.min(best, d.stepTimeMs / (m * dp));
            }
  return best;
}
