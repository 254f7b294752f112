// Published LLM training runs (seeds/measurements/llm_train.csv) as predictions: each run's model is
// built from its architecture row (llm_models.csv) by the zoo's decoder builder, and predicted at the
// run's own layout (TP, PP, virtual stages, CP, FSDP, recomputation, micro- and global batch).
// Mixture-of-experts models are built with their experts (zoo/decoder.ts moe) and predicted at the
// run's expert parallelism, DeepSeek's with its multi-head latent attention; what a row leaves out
// and the model's own configuration states (gpt-oss's sliding window on every other layer and its
// biases) comes from measurements/llm_models_extra.json. Models whose architecture was not published
// are not modelled.
import { loadLlmModelExtra, loadLlmVocab, type LlmModelExtra } from '../seeds/tables.js';
import { getGpu, defaultInterNodeGbps } from '../seeds/catalog.js';
import type { LlmArchitecture, LlmRun } from '../seeds/llm.js';
import { predict, type Prediction } from './predict.js';
import type { Parallelism, ZeroStage } from './parallel.js';
import { runKeyOf, runRecipe, stageWithoutFsdp } from './llm-recipes.js';
import { frameworkMemory } from './memory.js';
import type { Efficiency } from './step.js';
import type { ModelDef, Precision } from './types.js';
import { modelFromZooEntry } from './zoo/index.js';
import type { LatentAttentionArch, MoeArch } from './zoo/decoder.js';
import type { SoftwareStack } from './software.js';

/** The vocabulary measurements/llm_vocab.json gives a model whose architecture row leaves it to the tokenizer. */
function tokenizerVocab(model: string): number | null {
  const e = loadLlmVocab()[model];
  return typeof e === 'object' ? e.vocab : null;
}

/** What measurements/llm_models_extra.json adds to a model's architecture row (nothing for most). */
function modelExtra(model: string): LlmModelExtra | null {
  const e = loadLlmModelExtra()[model];
  return typeof e === 'object' ? e : null;
}

/**
 * The sliding window a model's configuration states, and on how many of its layers: all but every
 * fullAttentionEvery-th (Megatron-Core's window_attn_skip_freq: layer numbers 1, 2, ... divisible by it
 * attend to the whole sequence), so it follows the layer count a proxy run trains.
 */
function attentionWindowOf(
  extra: LlmModelExtra | null,
  layers: number,
): { attentionWindow: number; windowedLayers?: number } | null {
  if (!extra?.attentionWindow) return null;
  const every = extra.fullAttentionEvery;
  return {
    attentionWindow: extra.attentionWindow,
    ...(every ? { windowedLayers: layers - Math.floor(layers / every) } : {}),
  };
}

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
 * Gated-MLP rows are Llama-style: RMSNorm, SwiGLU, rotary, no biases. The others keep LayerNorm and a
 * non-gated MLP (GELU; Nemotron's squared ReLU saves its input as GELU does) with their family's
 * positions and biases:
 * - NeMo's GPT-3 config classes (the row's source names `class GPTConfig...`) inherit GPTConfig's
 *   position_embedding_type = "learned_absolute" and Megatron-Core's add_bias_linear = True (the
 *   GPT-3 classes fuse bias + GELU: bias_activation_fusion = True), NVIDIA/NeMo
 *   nemo/collections/llm/gpt/model/base.py;
 * - Nemotron-4 uses rotary positions and no bias terms (Parmar et al. 2024, arXiv:2402.16819,
 *   section 2), as NeMo's Nemotron config classes set;
 * - a row whose `position` column says learned (MosaicML's MPT table) has learned positions.
 * A missing vocabulary (NeMo's configs leave it to the tokenizer) is the one
 * measurements/llm_vocab.json gives; a sliding attention window and biases on every linear layer
 * (gpt-oss: NeMo's GPTOSSConfig window_size, window_attn_skip_freq and add_bias_linear), the ones
 * measurements/llm_models_extra.json gives. Uncached: llmModel keeps what it builds, for the
 * published runs' few sequence lengths; a query's arbitrary one calls this.
 */
export function buildLlmModel(a: LlmArchitecture, seqLen: number): ModelDef | string {
  if (!a.layers || !a.hidden || !a.heads || !a.ffnHidden)
    return 'architecture not published (layers, hidden, heads or FFN size missing)';
  const latent = latentAttentionOf(a);
  if (typeof latent === 'string') return latent;
  const moe = moeOf(a);
  if (typeof moe === 'string') return moe;
  const vocab = a.vocab ?? tokenizerVocab(a.model);
  if (vocab === null) return 'vocabulary not published and not in measurements/llm_vocab.json';
  const gated = a.gatedMlp;
  const gptConfig = !gated && /class GPTConfig\d/.test(a.source);
  const extra = modelExtra(a.model);
  const window = attentionWindowOf(extra, a.layers);
  const learnedPositions = gptConfig || /^learned/i.test(a.position);
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
    source: `seeds/measurements/llm_models.csv (${a.source})`,
    arch: {
      layers: a.layers,
      hidden: a.hidden,
      heads: a.heads,
      kvHeads: a.kvHeads ?? a.heads,
      ...(a.headDim && a.headDim * a.heads !== a.hidden ? { headDim: a.headDim } : {}),
      ffn: a.ffnHidden,
      vocab,
      norm: gated ? 'rmsnorm' : 'layernorm',
      mlp: gated ? 'swiglu' : 'gelu',
      positions: learnedPositions ? 'learned' : 'rotary',
      ...(learnedPositions ? { maxPositions: seqLen } : {}),
      bias: gptConfig || !!extra?.linearBiases,
      tiedHead: a.tiedEmbeddings,
      dropout: false,
      ...(window ?? {}),
      ...(moe ? { moe } : {}),
      ...(latent ? { latentAttention: latent } : {}),
    },
  });
}

/**
 * Multi-head latent attention's sizes, from the row's attention column as NeMo's config gives them
 * ("MLA (q_lora_rank=1536, kv_lora_rank=512, qk_head_dim=128, qk_pos_emb_head_dim=64, v_head_dim=128)");
 * null for any other attention, or why they cannot be read.
 */
function latentAttentionOf(a: LlmArchitecture): LatentAttentionArch | null | string {
  if (!/^MLA\b/i.test(a.attention)) return null;
  const field = (name: string) => {
    const m = new RegExp(`\\b${name}\\s*=\\s*(\\d+)`).exec(a.attention);
    return m ? Number(m[1]) : null;
  };
  const sizes = {
    qLoraRank: field('q_lora_rank'),
    kvLoraRank: field('kv_lora_rank'),
    qkHeadDim: field('qk_head_dim'),
    qkRopeHeadDim: field('qk_pos_emb_head_dim'),
    vHeadDim: field('v_head_dim'),
  };
  if (Object.values(sizes).some((v) => v === null))
    return `multi-head latent attention without all of its sizes in "${a.attention}"`;
  return sizes as LatentAttentionArch;
}

/**
 * The experts an architecture row describes (null = dense), or why they cannot be built. Mixtral's
 * NeMo config has no separate expert width: its ffn_hidden is the expert's. moe_layer_freq is read
 * in the one form the rows use, "[0] * k + [1] * n" (the first k layers dense).
 */
function moeOf(a: LlmArchitecture): MoeArch | null | string {
  if ((a.experts ?? 1) <= 1) return null;
  if (!a.expertsTopK) return 'mixture of experts without a stated top-k';
  let denseLayers = 0;
  if (a.moeLayerFreq.trim() !== '') {
    const m = /^\s*\[0\]\s*\*\s*(\d+)\s*\+\s*\[1\]\s*\*\s*(\d+)\s*$/.exec(a.moeLayerFreq);
    if (!m || Number(m[1]) + Number(m[2]) !== a.layers)
      return `moe_layer_freq "${a.moeLayerFreq}" is not read (expected "[0] * k + [1] * n" over the layers)`;
    denseLayers = Number(m[1]);
  }
  return {
    experts: a.experts!,
    topK: a.expertsTopK,
    ffn: a.moeFfnHidden ?? a.ffnHidden!,
    ...(a.sharedExpertFfn ? { sharedFfn: a.sharedExpertFfn } : {}),
    ...(denseLayers > 0 ? { denseLayers } : {}),
  };
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
