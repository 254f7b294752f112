// The highest MFU a published training run reached in a math mode, counted as utilization.ts counts
// it at the run's measured throughput: what a plan's MFU is judged against. A plan that needs more
// than any published run got, tuned stacks on the GPUs they were tuned for included, rests on an
// estimate more likely too fast than too slow (optimizer/recommend.ts says so in its notes).
import { getGpu } from '../seeds/catalog.js';
import { loadCalibrationSettings } from '../seeds/calibration.js';
import { loadLlmArchitectures, loadLlmRuns, type LlmRun } from '../seeds/llm.js';
import { llmModel } from './llm.js';
import { costOf } from './predict.js';
import type { MathMode } from './types.js';
import { modelFlopsPerSample, utilization } from './utilization.js';

export interface PublishedMfu {
  mfu: number;
  run: LlmRun;
}

/** The math a published run's GEMMs ran in (the rows state BF16 or FP8). */
const RUN_MATH: Record<string, MathMode> = { BF16: 'bf16', FP8: 'fp8' };

let highest: Map<MathMode, PublishedMfu> | undefined;

/**
 * The published pre-training run of the highest MFU in `math` (the latest version of each, on a
 * catalog GPU, of an architecture llm_models.csv gives), or undefined where no run measured that
 * math. Pre-training only: the sources count fine-tuning and LoRA steps otherwise (4-19% fewer FLOPs
 * than this count: cli/evaluate-llm.ts modelFlopsChecks), so their MFU here would not be theirs.
 */
export function highestPublishedMfu(math: MathMode): PublishedMfu | undefined {
  if (!highest) {
    highest = new Map();
    const archs = new Map(loadLlmArchitectures().map((a) => [a.model, a]));
    for (const run of loadLlmRuns()) {
      const runMath = RUN_MATH[run.precision];
      const arch = archs.get(run.model);
      const gpu = getGpu(run.gpu);
      if (
        !run.isLatest ||
        run.task !== 'pretrain' ||
        !runMath ||
        !arch ||
        !gpu ||
        !run.seqLen ||
        !run.tokensPerSecondPerGpu
      )
        continue;
      const model = llmModel(arch, run.seqLen, run.layers);
      if (typeof model === 'string') continue;
      const perToken = modelFlopsPerSample(costOf(model)) / run.seqLen;
      // One GPU's second: its tokens' model FLOPs over 1,000 ms.
      const { mfu } = utilization(perToken * run.tokensPerSecondPerGpu, 1e3, 1, gpu, runMath);
      if (mfu !== null && mfu > (highest.get(runMath)?.mfu ?? 0)) highest.set(runMath, { mfu, run });
    }
  }
  return highest.get(math);
}

/**
 * The best published run in `math` where `mfu` is above its MFU by more than repeats of one
 * configuration differ (seeds/calibration.json sameConfiguration: a repeat's step 4.5% shorter than
 * their mean at the P10), else undefined: an estimate that needs more than any published run got.
 */
export function aboveBestPublished(mfu: number, math: MathMode): PublishedMfu | undefined {
  const best = highestPublishedMfu(math);
  const fastestRepeat = Math.exp(-loadCalibrationSettings().sameConfiguration.q10);
  return best && mfu > best.mfu * fastestRepeat ? best : undefined;
}
