// Published LLM training runs (seeds/measurements/llm_train.csv) as predictions: each run's model is
// built from its architecture row (llm_models.csv) by the zoo's decoder builder, and predicted at the
// run's own layout (TP, PP, virtual stages, CP, FSDP, recomputation, micro- and global batch).
// Mixture-of-experts models and models whose architecture was not published are not modelled.
import { loadLlmVocab } from '../seeds/tables.js';
import { getGpu, defaultInterNodeGbps } from '../seeds/catalog.js';
import type { LlmArchitecture, LlmRun } from '../seeds/llm.js';
import { predict, type Prediction } from './predict.js';
import type { Parallelism, Recompute, ZeroStage } from './parallel.js';
import type { Efficiency } from './step.js';
import type { ModelDef, Precision } from './types.js';
import { modelFromZooEntry } from './zoo/index.js';
import type { SoftwareStack } from './software.js';

/**
 * The decoder a published architecture describes, at a sequence length (built once per pair); or why
 * it cannot be built.
 * Gated-MLP models are Llama-style (RMSNorm, SwiGLU, rotary, no biases); the others GPT-3-style
 * (LayerNorm, GELU, learned positions, biases). A missing vocabulary (NeMo's configs leave it to the
 * tokenizer) is the one measurements/llm_vocab.json gives (shared with predictor/memory-check.ts).
 */
/** The vocabulary measurements/llm_vocab.json gives a model whose architecture row leaves it to the tokenizer. */
function tokenizerVocab(model: string): number | null {
  const e = loadLlmVocab()[model];
  return typeof e === 'object' ? e.vocab : null;
}

const built = new Map<string, ModelDef | string>();
export function llmModel(a: LlmArchitecture, seqLen: number): ModelDef | string {
  const key = `${a.model}|${seqLen}`;
  let m = built.get(key);
  if (m === undefined) built.set(key, (m = buildLlmModel(a, seqLen)));
  return m;
}

function buildLlmModel(a: LlmArchitecture, seqLen: number): ModelDef | string {
  if ((a.experts ?? 1) > 1) return `${a.model}: mixture-of-experts layers are not modelled`;
  if (!a.layers || !a.hidden || !a.heads || !a.ffnHidden)
    return `${a.model}: architecture not published (layers, hidden, heads or FFN size missing)`;
  const vocab = a.vocab ?? tokenizerVocab(a.model);
  if (vocab === null) return `${a.model}: vocabulary not published and not in measurements/llm_vocab.json`;
  const gated = a.gatedMlp;
  return modelFromZooEntry({
    id: a.model,
    name: a.model,
    family: 'decoder',
    batchElement: 'sequence',
    throughputUnit: 'tokens/s',
    unitsPerBatchElement: 'seqLen',
    seqLen,
    optimizer: 'adam',
    batchSizes: [1],
    source: a.source,
    arch: {
      layers: a.layers,
      hidden: a.hidden,
      heads: a.heads,
      kvHeads: a.kvHeads ?? a.heads,
      ...(a.headDim && a.headDim * a.heads !== a.hidden ? { headDim: a.headDim } : {}),
      ffn: a.ffnHidden,
      vocab: a.vocab ?? vocab,
      norm: gated ? 'rmsnorm' : 'layernorm',
      mlp: gated ? 'swiglu' : 'gelu',
      positions: gated ? 'rotary' : 'learned',
      maxPositions: seqLen,
      bias: !gated,
      tiedHead: a.tiedEmbeddings,
      dropout: false,
    },
  });
}

/** The run's FSDP/ZeRO wording -> ZeRO stage: FSDP = 3; Megatron/NeMo's default distributed optimizer = 1. */
export function zeroStageOf(run: LlmRun): ZeroStage {
  const z = run.zeroOrFsdp.toLowerCase();
  if (/fsdp2? (shard )?degree 1\b|fsdp=0|ddp/.test(z)) return 0;
  if (z.includes('fsdp')) return 3;
  return /megatron|nemo/i.test(run.framework) ? 1 : 0;
}

const recomputeOf = (run: LlmRun): Recompute => {
  const a = run.activationCheckpointing.toLowerCase();
  return a.startsWith('full') ? 'full' : a.startsWith('selective') ? 'selective' : 'none';
};

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
  const model = llmModel(arch, run.seqLen);
  if (typeof model === 'string') return { run, error: model };
  const parallelism: Parallelism = {
    tensorParallel: run.tensorParallel,
    pipelineParallel: run.pipelineParallel,
    contextParallel: run.contextParallel,
    virtualPipelineStages: run.virtualPipeline,
    zeroStage: zeroStageOf(run),
    recompute: recomputeOf(run),
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
      },
      eff,
    );
    return { run, prediction, model, tokensPerSecondPerGpu: prediction.throughput / run.numGpus };
  } catch (e) {
    return { run, error: e instanceof Error ? e.message : String(e) };
  }
}
