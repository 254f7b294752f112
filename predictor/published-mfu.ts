// The highest MFU a published training run reached in a math mode, counted as utilization.ts counts
// it at the run's measured throughput: what a plan's MFU is judged against. A plan that needs more
// than any published run got, tuned stacks on the GPUs they were tuned for included, rests on an
// estimate more likely too fast than too slow: recommend's notes and the evidence of a prediction
// and of every plan say so (aboveBestPublishedWords).
import { getGpu } from '../seeds/catalog.js';
import { loadCalibrationSettings } from '../seeds/calibration.js';
import { loadLlmArchitectures, loadLlmRuns, type LlmArchitecture, type LlmRun } from '../seeds/llm.js';
import { llmModel, llmSourceOf } from './llm.js';
import { costOf } from './predict.js';
import type { MathMode } from './types.js';
import { modelFlopsPerSample, utilization, type AttentionCount } from './utilization.js';

/** The math a published run's GEMMs ran in (the rows state BF16 or FP8). */
const RUN_MATH: Record<string, MathMode> = { BF16: 'bf16', FP8: 'fp8' };

/** A published run's model FLOPs as utilization.ts counts them, and its MFU at its measured throughput. */
export interface PublishedRunFlops {
  /** Model FLOPs per token, all keys counted and half of the causal ones (a LoRA run's frozen base as its step runs it). */
  perToken: Record<AttentionCount, number>;
  math: MathMode;
  /** At its measured tokens per second per GPU, against the GPU's peak in `math`; null without one. */
  mfu: number | null;
}

let archs: Map<string, LlmArchitecture> | undefined;

/**
 * `run`'s model FLOPs and MFU, where it is the latest version of a measured run in BF16 or FP8 on a
 * catalog GPU, of an architecture llm_models.csv gives; else undefined.
 */
export function publishedRunFlops(run: LlmRun): PublishedRunFlops | undefined {
  archs ??= new Map(loadLlmArchitectures().map((a) => [a.model, a]));
  const math = RUN_MATH[run.precision];
  const arch = archs.get(run.model);
  const gpu = getGpu(run.gpu);
  const tokensPerS = run.tokensPerSecondPerGpu;
  if (!run.isLatest || !math || !arch || !gpu || !run.seqLen || !tokensPerS) return undefined;
  const model = llmModel(arch, run.seqLen, run.layers);
  if (typeof model === 'string') return undefined;
  const per = (a: AttentionCount) => modelFlopsPerSample(costOf(model), run.task === 'lora', a) / run.seqLen!;
  const perToken = { ALL_KEYS: per('ALL_KEYS'), CAUSAL_HALF: per('CAUSAL_HALF') };
  // One GPU's second: its tokens' model FLOPs over 1,000 ms.
  const { mfu } = utilization(perToken.ALL_KEYS * tokensPerS, 1e3, 1, gpu, math);
  return { perToken, math, mfu };
}

export interface PublishedMfu {
  mfu: number;
  run: LlmRun;
}

let highest: Map<MathMode, PublishedMfu> | undefined;

/**
 * The published pre-training run of the highest MFU in `math` (publishedRunFlops' runs), or
 * undefined where no run measured that math. Pre-training only: the sources count fine-tuning and
 * LoRA steps otherwise (4-19% fewer FLOPs than this count: cli/evaluate-llm.ts modelFlopsChecks),
 * so their MFU here would not be theirs.
 */
export function highestPublishedMfu(math: MathMode): PublishedMfu | undefined {
  if (!highest) {
    highest = new Map();
    for (const run of loadLlmRuns()) {
      const f = run.task === 'pretrain' ? publishedRunFlops(run) : undefined;
      if (f?.mfu != null && f.mfu > (highest.get(f.math)?.mfu ?? 0)) highest.set(f.math, { mfu: f.mfu, run });
    }
  }
  return highest.get(math);
}

/**
 * The best published run in `math` where `mfu` is above its MFU by more than repeats of one
 * configuration differ (seeds/calibration.json sameConfiguration: a repeat's step 4.5% shorter than
 * their mean at the P10), else undefined: an estimate that needs more than any published run got.
 */
function aboveBestPublished(mfu: number, math: MathMode): PublishedMfu | undefined {
  const best = highestPublishedMfu(math);
  const fastestRepeat = Math.exp(-loadCalibrationSettings().sameConfiguration.q10);
  return best && mfu > best.mfu * fastestRepeat ? best : undefined;
}

/**
 * What an answer says of itself where its MFU is above the best published run's
 * (aboveBestPublished): "time assumes ..., above ...: ... more likely too short", to follow
 * "plan 1's" or "this"; undefined where it is not above.
 */
export function aboveBestPublishedWords(
  u: { mfu: number | null; modelTflopsPerGpu: number },
  gpuId: string,
  math: MathMode,
): string | undefined {
  const best = u.mfu === null ? undefined : aboveBestPublished(u.mfu, math);
  if (!best) return undefined;
  const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
  return `time assumes ${pct(u.mfu!)} MFU (${u.modelTflopsPerGpu.toFixed(0)} model TFLOPS per GPU of ${gpuId}'s ${math} peak), above the ${pct(best.mfu)} that the best published ${math} pre-training run reached (${best.run.model} on ${best.run.numGpus} ${best.run.gpu}, ${llmSourceOf(best.run)}) by more than repeats of one run differ: it is more likely too short than too long`;
}
