// The memory model against configurations that really ran: every row of measurements/train.csv (it
// fit, at its batch and precision), the LLM rows of measurements/llm_train.csv that give their layout,
// and the peak memory some of them publish. Used by `trainplan memory-check` (cli/) and the tests,
// so the figures in the note and the tests come from the same code.
import { getGpu, loadEfficiency, type Measurement } from '../seeds/catalog.js';
import { loadLlmArchitectures, loadLlmRuns, type LlmRun } from '../seeds/llm.js';
import { llmModel } from './llm.js';
import { recipeOf, runKeyOf, runRecipe, stageWithoutFsdp, statedRecompute } from './llm-recipes.js';
import { predictRow } from './measured.js';
import { costOf } from './predict.js';
import {
  layoutOfExecution,
  plainLayout,
  shardedMemoryPerGpu,
  fits,
  type MemoryBreakdown,
  type MemoryConstants,
  type MemoryLayout,
  frameworkMemory,
  stackMemory,
} from './memory.js';
import type { ZeroStage } from './parallel.js';
import type { GpuSpec, ModelDef, Precision } from './types.js';
import type { Efficiency } from '../seeds/types.js';

/** One configuration that ran, with what the memory model says about it. */
export interface FitCheck {
  id: string;
  source: string;
  model: string;
  gpu: string;
  batchSizePerGpu: number;
  precision: Precision;
  predictedGb: number;
  /** Of predictedGb: what the caching allocator hands out, and what lies outside it (context, NCCL). */
  allocatedGb: number;
  outsideAllocatorGb: number;
  capacityGb: number;
  fits: boolean;
}

function checkOf(
  what: Omit<FitCheck, 'predictedGb' | 'allocatedGb' | 'outsideAllocatorGb' | 'fits'>,
  memory: MemoryBreakdown,
  constants: MemoryConstants,
): FitCheck {
  const allocatedGb = (memory.totalGb - memory.frameworkGb) * (1 + constants.allocatorFragmentation);
  return {
    ...what,
    predictedGb: memory.totalGb,
    allocatedGb: memory.totalGb - memory.frameworkGb,
    outsideAllocatorGb: memory.totalGb - allocatedGb,
    fits: memory.totalGb + constants.defaultMemoryHeadroomGb <= what.capacityGb,
  };
}

/** Whether a check fits with another allocator fragmentation (everything else unchanged). */
export const fitsWithFragmentation = (c: FitCheck, fragmentation: number, headroomGb = 0) =>
  c.allocatedGb * (1 + fragmentation) + c.outsideAllocatorGb + headroomGb <= c.capacityGb;

/**
 * train.csv rows with a stated batch size that the predictor can cost, checked under `constants`.
 * Rows without a batch size are left out: the batch they ran at is unknown.
 */
export function trainFitChecks(rows: Measurement[], general: Efficiency): FitCheck[] {
  // As the default stack counts them (PYTORCH_EAGER: stock code, what these rows ran), so the
  // fragmentation fitted here is the one its plans are sized with (its rules do not depend on the
  // precision; MEGATRON's states do).
  const eff = stackMemory(undefined, 'FP32', general).eff;
  const constants = eff.memory;
  const checks: FitCheck[] = [];
  for (const row of rows) {
    if (row.batchSizePerGpu == null) continue;
    const p = predictRow(row, eff);
    if (!p.prediction || !p.model) continue;
    const exec = p.prediction.execution;
    const memory = shardedMemoryPerGpu(
      p.model,
      costOf(p.model),
      exec.precision,
      exec.batchSizePerGpu,
      layoutOfExecution(exec),
      eff,
    );
    checks.push(
      checkOf(
        {
          id: row.id,
          source: row.source,
          model: row.model,
          gpu: row.gpu,
          batchSizePerGpu: exec.batchSizePerGpu,
          precision: exec.precision,
          capacityGb: getGpu(row.gpu)!.usableMemoryGb,
        },
        memory,
        constants,
      ),
    );
  }
  return checks;
}

/** Per model: configurations checked, predicted to fit, and the misses. */
export interface ModelFitRate {
  model: string;
  checked: number;
  fit: number;
  misses: FitCheck[];
}

export function fitRatesByModel(checks: FitCheck[]): ModelFitRate[] {
  const by = new Map<string, ModelFitRate>();
  for (const c of checks) {
    const r = by.get(c.model) ?? { model: c.model, checked: 0, fit: 0, misses: [] };
    r.checked++;
    if (c.fits) r.fit++;
    else r.misses.push(c);
    by.set(c.model, r);
  }
  return [...by.values()].sort((a, b) => a.model.localeCompare(b.model));
}

export const fitRate = (checks: FitCheck[]) => checks.filter((c) => c.fits).length / checks.length;

/**
 * The GPUs constants are fitted on (every other GPU id in sorted order) and the held-out rest: a split
 * by whole GPU, so no configuration on a held-out GPU informs the fit.
 */
export function splitByGpu(checks: FitCheck[]): { fitting: FitCheck[]; heldOut: FitCheck[] } {
  const gpus = [...new Set(checks.map((c) => c.gpu))].sort();
  const fittingGpus = new Set(gpus.filter((_, i) => i % 2 === 0));
  return {
    fitting: checks.filter((c) => fittingGpus.has(c.gpu)),
    heldOut: checks.filter((c) => !fittingGpus.has(c.gpu)),
  };
}

/** Configurations of one model it takes for that model's own fit rate to count in the fit. */
const MODEL_ROWS = 20;

/**
 * The allocator fragmentation fitted as an upper bound: the largest fraction (in steps of 0.01, at
 * most 0.3) at which at least `target` of the configurations that ran are still predicted to fit,
 * and at least `perModel` of each model's where it has MODEL_ROWS or more: one constant for every
 * model should not be set by how many configurations of the others happen to be measured. Larger
 * would refuse plans people run; held-out data says whether it generalises.
 */
export function fitAllocatorFragmentation(
  checks: FitCheck[],
  target = 0.99,
  headroomGb = 0,
  perModel = 0.97,
): number {
  const byModel = new Map<string, FitCheck[]>();
  for (const c of checks) byModel.set(c.model, [...(byModel.get(c.model) ?? []), c]);
  const models = [...byModel.values()].filter((rows) => rows.length >= MODEL_ROWS);
  const rate = (rows: FitCheck[], f: number) =>
    rows.filter((c) => fitsWithFragmentation(c, f, headroomGb)).length / rows.length;
  let best = 0;
  for (let hundredths = 0; hundredths <= 30; hundredths++) {
    const f = hundredths / 100;
    if (rate(checks, f) >= target && models.every((rows) => rate(rows, f) >= perModel)) best = f;
  }
  return best;
}

// ------------------------------------------------------------------------------------ LLM rows

/** One llm_train.csv row with its layout, and the dense decoder it trains (null with the reason when it cannot be built). */
export interface LlmCase {
  id: string;
  /** The model has mixture-of-experts layers: checked apart from the dense decoders. */
  moe: boolean;
  source: string;
  /** The row's full source: repository@commit:file. */
  sourceFile: string;
  framework: string;
  /** The row's software column (framework release, container). */
  software: string;
  /** pretrain, sft, lora, ... */
  task: string;
  model: string;
  gpu: string;
  precision: Precision;
  microBatch: number;
  seqLen: number;
  layout: MemoryLayout;
  /** Published peak memory per GPU, GB, where the source gives one. */
  publishedPeakGb: number | null;
  /** The row's activation-checkpointing cell ('' = unstated: its scripts or framework family's configurations decide, llm-recipes.ts). */
  activationCheckpointing: string;
  decoder: ModelDef | null;
  skipped?: string;
}

/** GPU memory for a row: the catalog's, or the size the id itself states (Meta's 96 GB H100 variant is not in the catalog). */
export function capacityOf(gpuId: string): number | null {
  const gpu: GpuSpec | undefined = getGpu(gpuId);
  if (gpu) return gpu.usableMemoryGb;
  const stated = /-(\d+)GB/.exec(gpuId);
  return stated ? Number(stated[1]) : null;
}

/** The llm_train.csv rows that state TP, PP, micro-batch and sequence length, with their decoders (`moe`: with experts). */
export function llmCases(): LlmCase[] {
  const archs = new Map(loadLlmArchitectures().map((a) => [a.model, a]));
  const recipes = loadEfficiency().memory.sourceRecipes;
  const cases: LlmCase[] = [];
  for (const r of loadLlmRuns()) {
    const { microBatch, seqLen, contextParallel: cp } = r;
    // A row without TP and PP is checked only where its launch scripts state them.
    const scripted = r.layoutStated ? undefined : recipeOf(runKeyOf(r), recipes)?.layout;
    if (!(r.layoutStated || scripted) || microBatch === null || seqLen === null) continue;
    const tp = scripted?.tensorParallel ?? r.tensorParallel,
      pp = scripted?.pipelineParallel ?? r.pipelineParallel;
    if (r.precision !== 'BF16' && r.precision !== 'FP8') continue;
    const gpus = r.numGpus;
    // The replicas of the run itself: some rows keep the dp of a base configuration while
    // num_gpus scales, so the GPU count decides where it divides evenly.
    const replicas = gpus / (tp * pp * cp);
    const dataParallel = Number.isInteger(replicas) ? replicas : (r.dataParallel ?? replicas);
    if (!Number.isInteger(dataParallel) || dataParallel < 1) {
      cases.push(inconsistent(r, `${gpus} GPUs do not split into TP ${tp} x PP ${pp} x CP ${cp} replicas`));
      continue;
    }
    const { zeroStage, shardGroup } = shardingOf(r.zeroOrFsdp, r.framework, dataParallel * cp, cp);
    // torchtitan's micro_batch_size is the local batch of a data-parallel rank; its pipeline splits it
    // into PP micro-batches (parallelism.pipeline_parallel_microbatches defaults to the number of
    // stages). Elsewhere it is the pipeline's micro-batch.
    const pipelineSplit = /torchtitan/.test(r.framework) && pp > 1 ? pp : 1;
    const stepBatch = microBatch / pipelineSplit;
    const microBatches =
      r.globalBatch === null ? pp : Math.max(1, r.globalBatch / (stepBatch * dataParallel));
    const arch = archs.get(r.model);
    const decoder = arch ? llmModel(arch, seqLen, r.layers) : 'not in llm_models.csv';
    // What the row states; unstated, its scripts or family decide later (llm-recipes.ts runRecipe).
    const recompute = statedRecompute(r.activationCheckpointing, r.framework) ?? 'none';
    cases.push({
      id: r.id,
      moe: (arch?.experts ?? 1) > 1,
      source: r.source.split('@')[0],
      sourceFile: r.source,
      framework: r.framework,
      software: r.software,
      task: r.task,
      model: r.model,
      gpu: r.gpu,
      precision: r.precision,
      microBatch: stepBatch,
      seqLen,
      layout: {
        tensorParallel: tp,
        pipelineParallel: pp,
        contextParallel: cp,
        dataParallel,
        zeroStage,
        ...(shardGroup !== undefined ? { shardGroup } : {}),
        recompute,
        microBatches,
        ...(r.virtualPipeline > 1 ? { virtualStages: r.virtualPipeline } : {}),
        ...((r.expertParallel ?? 1) > 1 ? { expertParallel: r.expertParallel! } : {}),
        attention: 'fused',
        ...(r.task === 'lora' ? { frozenBase: true } : {}),
        ...(pipelineSplit > 1 && zeroStage === 3 ? { unshardedStage: true } : {}),
        ...(/torchtitan/.test(r.framework) && recompute === 'full' ? { transientWeightCopies: true } : {}),
        // torchtitan's tensor parallelism is PyTorch DTensor's (parallelize_llama.py apply_tp): its
        // column-parallel linears save their all-gathered inputs, and the loss runs under
        // loss_parallel (on whenever TP > 1 unless training.disable_loss_parallel; no row sets it).
        ...(/torchtitan/.test(r.framework) && tp > 1
          ? { gatheredColumnInputs: true, lossParallel: true }
          : {}),
        // torchtitan casts the logits to fp32 before its cross entropy (loss_fn: pred.float()).
        ...(/torchtitan/.test(r.framework) ? { fp32LossGradients: true } : {}),
      },
      publishedPeakGb: r.peakMemoryGb,
      activationCheckpointing: r.activationCheckpointing,
      decoder: typeof decoder === 'string' ? null : decoder,
      ...(typeof decoder === 'string' ? { skipped: decoder } : {}),
    });
  }
  return cases;
}

/** A row whose layout cannot be checked, with the reason. */
function inconsistent(r: LlmRun, why: string): LlmCase {
  return {
    id: r.id,
    moe: false,
    source: r.source.split('@')[0],
    sourceFile: r.source,
    framework: r.framework,
    software: r.software,
    task: r.task,
    model: r.model,
    gpu: r.gpu,
    precision: r.precision as Precision,
    microBatch: r.microBatch ?? 1,
    seqLen: r.seqLen ?? 1,
    layout: plainLayout(1),
    publishedPeakGb: null,
    activationCheckpointing: '',
    decoder: null,
    skipped: `layout: ${why}`,
  };
}

/**
 * ZeRO stage and shard group from the row's zero_or_fsdp cell. FSDP (torchtitan's FSDP2, Megatron-FSDP,
 * AutoModel) shards everything: ZeRO-3 over the stated degree. Megatron-Core without FSDP (empty
 * cell or "DDP") runs the distributed optimizer, NeMo's and Megatron-Bridge's default: ZeRO-1.
 */
function shardingOf(
  cell: string,
  framework: string,
  replicas: number,
  contextParallel: number,
): { zeroStage: ZeroStage; shardGroup?: number } {
  const degree = /(?:degree|FSDP=|size)\s*(\d+)/.exec(cell);
  const stated = degree ? Number(degree[1]) : null;
  // torchtitan's FSDP mesh is dp_shard x cp: the stated data-parallel shard degree times CP.
  const mesh = /torchtitan/.test(framework) ? contextParallel : 1;
  if (/FSDP/.test(cell) && stated !== 0) return { zeroStage: 3, shardGroup: (stated ?? replicas) * mesh };
  return { zeroStage: stageWithoutFsdp(framework) };
}

/** The memory model's answer for an LLM row (null when its decoder could not be built). */
export function llmMemory(
  c: LlmCase,
  eff: Efficiency,
  /** MemoryLayout.activationScale (bench/memory-calibration.ts); default 1. */
  activationScale = 1,
): MemoryBreakdown | null {
  if (!c.decoder) return null;
  // Megatron-Core (NeMo, Megatron-Bridge, Megatron-LM) fuses SwiGLU and keeps bf16 norm inputs;
  // torchtitan and AutoModel run eagerly. A source's own launch scripts (sourceRecipes) win over its
  // framework family's recipes.
  const megatron = /Megatron|NeMo \(|NeMo 2|NeMo Megatron/.test(c.framework);
  const { recipe, states, recompute, recomputeModules, virtualStages } = runRecipe(
    { ...c, virtualPipeline: c.layout.virtualStages ?? 1 },
    eff.memory,
  );
  const framework = frameworkMemory(eff, megatron ? 'megatron' : null, states, {
    precision: c.precision,
    model: c.model,
    recipe,
  });
  const layout: MemoryLayout = {
    ...c.layout,
    ...framework.layout,
    // What the row states wins over the script's settings; the scripts' win over the family's (a
    // source with no family, MaxText's, still has its scripts).
    ...(virtualStages > 1 ? { virtualStages } : {}),
    recompute,
    ...(recomputeModules ? { recomputeModules } : {}),
    ...(activationScale !== 1 ? { activationScale } : {}),
  };
  return shardedMemoryPerGpu(c.decoder, costOf(c.decoder), c.precision, c.microBatch, layout, framework.eff);
}

export function llmFitChecks(cases: LlmCase[], eff: Efficiency): FitCheck[] {
  // The constants llmMemory sizes the runs with: the LLM frameworks' fragmentation (frameworkMemory).
  const constants = frameworkMemory(eff, null, undefined).eff.memory;
  const checks: FitCheck[] = [];
  for (const c of cases) {
    const memory = llmMemory(c, eff);
    const capacityGb = capacityOf(c.gpu);
    if (!memory || capacityGb === null) continue;
    checks.push(
      checkOf(
        {
          id: c.id,
          source: c.source,
          model: c.model,
          gpu: c.gpu,
          batchSizePerGpu: c.microBatch,
          precision: c.precision,
          capacityGb,
        },
        memory,
        constants,
      ),
    );
  }
  return checks;
}

/**
 * Rows that publish their peak memory (torchtitan: the caching allocator's peak reserved memory, which
 * leaves out the CUDA context and NCCL's buffers), against the model's total less those.
 */
export function peakComparisons(
  cases: LlmCase[],
  eff: Efficiency,
): { id: string; model: string; publishedGb: number; predictedGb: number; ratio: number }[] {
  return cases.flatMap((c) => {
    const memory = llmMemory(c, eff);
    if (!memory || c.publishedPeakGb === null) return [];
    const predictedGb = memory.totalGb - eff.memory.cudaContextGb - eff.memory.ncclBuffersGb;
    return [
      {
        id: c.id,
        model: c.model,
        publishedGb: c.publishedPeakGb,
        predictedGb,
        ratio: predictedGb / c.publishedPeakGb,
      },
    ];
  });
}

/** The largest batch per GPU (up to `limit`) predicted to fit, plain data parallelism on one GPU. */
export function largestFittingBatch(
  model: ModelDef,
  gpu: GpuSpec,
  precision: Precision,
  eff: Efficiency,
  limit = 65536,
): number {
  const cost = costOf(model);
  const fitsAt = (batch: number) =>
    fits(
      shardedMemoryPerGpu(model, cost, precision, batch, plainLayout(1), eff),
      gpu,
      eff.memory.defaultMemoryHeadroomGb,
    );
  if (!fitsAt(1)) return 0;
  let lo = 1,
    hi = 2;
  while (hi <= limit && fitsAt(hi)) {
    lo = hi;
    hi *= 2;
  }
  hi = Math.min(hi, limit + 1);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fitsAt(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}
