// Published LLM training runs (seeds/measurements/llm_train.csv) as predictions: each run's model is
// built from its architecture row (llm_models.csv) by the zoo's decoder builder, and predicted at the
// run's own layout (TP, PP, virtual stages, CP, FSDP, recomputation, micro- and global batch).
// Mixture-of-experts models are built with their experts (zoo/decoder.ts moe) and predicted at the
// run's expert parallelism, DeepSeek's with its multi-head latent attention; what a row leaves out
// and the model's own configuration states (gpt-oss's sliding window on every other layer and its
// biases) comes from measurements/llm_models_extra.json. Models whose architecture was not published
// are not modelled.
import { getGpu, defaultInterNodeGbps } from '../seeds/catalog.js';
import type { LlmArchitecture, LlmRun } from '../seeds/llm.js';
import { predict, type Prediction } from './predict.js';
import type { Parallelism, ZeroStage } from './parallel.js';
import { runKeyOf, runRecipe, stageWithoutFsdp } from './llm-recipes.js';
import { frameworkMemory } from './memory.js';
import type { Efficiency } from './step.js';
import type { ModelDef, Precision } from './types.js';
import { modelFromZooEntry } from './zoo/index.js';
import { publishedZooEntry } from './zoo/published.js';
import type { SoftwareStack } from './software.js';

const built = new Map<string, ModelDef | string>();
/**
 * The decoder a published architecture (llm_models.csv) describes, at a sequence length (built once
 * per pair), or why it cannot be built; `layers` where a run trained fewer layers than the
 * architecture has (a proxy configuration). The one builder of LLM decoders: the run predictions
 * below and the memory checks (predictor/memory-check.ts) both use it.
 */
export function llmModel(a: LlmArchitecture, seqLen: number, layers?: number | null): ModelDef | string {
  const arch = layers && layers !== a.layers ? { ...a, layers } : a;
  const key = `${arch.model}|${arch.layers}|${seqLen}`;
  let m = built.get(key);
  if (m === undefined) built.set(key, (m = buildLlmModel(arch, seqLen)));
  return m;
}

/**
 * The decoder a published architecture row describes (predictor/zoo/published.ts reads the row), or
 * why it cannot be built. Uncached: llmModel keeps what it builds, for the published runs' few
 * sequence lengths; a query's arbitrary one calls this.
 */
export function buildLlmModel(a: LlmArchitecture, seqLen: number): ModelDef | string {
  const entry = publishedZooEntry(a, seqLen);
  return typeof entry === 'string' ? entry : modelFromZooEntry(entry);
}

/**
 * The run's FSDP/ZeRO wording -> ZeRO stage: FSDP = 3 (over one GPU it shards nothing: 0); without
 * FSDP, what its framework's data parallelism shards (llm-recipes.ts stageWithoutFsdp, as the memory
 * check reads it).
 */
export function zeroStageOf(run: LlmRun): ZeroStage {
  const z = run.zeroOrFsdp.toLowerCase();
  if (/fsdp2? (shard )?degree 1\b/.test(z)) return 0;
  if (z.includes('fsdp') && !/fsdp=0/.test(z)) return 3;
  return stageWithoutFsdp(run.framework);
}

export interface LlmRunPrediction {
  run: LlmRun;
  prediction?: Prediction;
  /** The decoder the run's architecture describes. */
  model?: ModelDef;
  /** Predicted tokens/s per GPU. */
  tokensPerSecondPerGpu?: number;
  error?: string;
}

/** A model's family: its name without the size ("Llama-3.1-70B" -> "Llama-3.1"). */
export const familyOf = (model: string) => model.replace(/[-_ ]?[\d.]+[BTM]\b.*$/i, '');

/** A run's publisher: its source repository (or page) without the commit and path. */
export const llmSourceOf = (r: LlmRun) => r.source.replace(/@.*$/, '').replace(/ \(.*$/, '');

/** One published run predicted at its own layout under a software stack. */
export function predictLlmRun(
  run: LlmRun,
  archs: Map<string, LlmArchitecture>,
  stack: SoftwareStack,
  eff: Efficiency,
  /** Predict at this precision instead of the run's (the precision-unaware ablation predicts FP32). */
  precisionOverride?: Precision,
): LlmRunPrediction {
  const gpu = getGpu(run.gpu);
  if (!gpu) return { run, error: `GPU ${run.gpu} is not in the catalog` };
  const arch = archs.get(run.model);
  if (!arch) return { run, error: `no architecture for ${run.model}` };
  if (!run.seqLen || !run.microBatch || !run.globalBatch)
    return { run, error: 'sequence length, micro-batch or global batch not published' };
  if (run.precision !== 'BF16' && run.precision !== 'FP8')
    return { run, error: `precision "${run.precision}" not stated` };
  const model = llmModel(arch, run.seqLen, run.layers);
  if (typeof model === 'string') return { run, error: `${arch.model}: ${model}` };
  // What the row leaves unstated, its launch scripts or framework family's configurations say (the
  // memory check reads the same: llm-recipes.ts).
  if (arch.experts && arch.experts > 1 && run.expertParallel === null)
    return { run, error: 'expert parallelism not stated' };
  const { recipe, states, recompute, recomputeModules, virtualStages } = runRecipe(
    { ...runKeyOf(run), ...run },
    eff.memory,
  );
  // How its recipes kept the optimizer's state (the memory check reads the same: memory.ts
  // frameworkMemory): stated where it differs from fp32 master weights and fp32 moments. Not under a
  // precision override: those are the run's mode's states (FP32 keeps no master copy).
  const { masterWeights, optimizerState } =
    precisionOverride === undefined
      ? frameworkMemory(eff, null, states, {
          precision: run.precision as Precision,
          model: run.model,
          recipe,
        }).layout
      : {};
  const parallelism: Parallelism = {
    tensorParallel: run.tensorParallel,
    pipelineParallel: run.pipelineParallel,
    contextParallel: run.contextParallel,
    virtualPipelineStages: virtualStages,
    zeroStage: zeroStageOf(run),
    recompute,
    ...(recomputeModules ? { recomputeModules } : {}),
    ...((run.expertParallel ?? 1) > 1 ? { expertParallel: run.expertParallel! } : {}),
    ...(masterWeights && masterWeights !== 'fp32' ? { masterWeights } : {}),
    ...(optimizerState && optimizerState !== 'fp32' ? { optimizerState } : {}),
  };
  const dp = run.numGpus / (run.tensorParallel * run.pipelineParallel * run.contextParallel);
  const accum = Math.max(1, Math.round(run.globalBatch / (run.microBatch * dp)));
  const gpusPerNode = Math.min(run.gpusPerNode, run.numGpus);
  try {
    const prediction = predict(
      {
        model,
        gpu,
        precision: precisionOverride ?? (run.precision as Precision),
        batchSizePerGpu: run.microBatch,
        gpusPerNode,
        nodes: run.numGpus / gpusPerNode,
        gradAccumSteps: accum,
        interNodeGbps: defaultInterNodeGbps(gpu.id),
        parallelism,
        stack,
        // LoRA rows train adapters on a frozen base: no weight gradients, optimizer step or gradient reduction for it.
        ...(run.task === 'lora' ? { frozenBase: true } : {}),
      },
      eff,
    );
    return { run, prediction, model, tokensPerSecondPerGpu: prediction.throughput / run.numGpus };
  } catch (e) {
    return { run, error: e instanceof Error ? e.message : String(e) };
  }
}
