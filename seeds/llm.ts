// The large-language-model measurements (measurements/llm_*.csv, copied from shared/data with their
// provenance columns): published training runs with their full parallel layout, the architectures of
// their models, and whole pre-training campaigns. Figures are taken as they stand; an empty cell is null.
import { readFileSync } from 'node:fs';
import { parseCsv } from './catalog.js';

const here = (file: string) => new URL(file, import.meta.url);
const num = (s: string | undefined): number | null => {
  if (s === undefined || s.trim() === '') return null;
  const v = Number(s);
  return Number.isFinite(v) ? v : null;
};

/** One architecture of llm_models.csv. */
export interface LlmArchitecture {
  model: string;
  layers: number | null;
  hidden: number | null;
  heads: number | null;
  kvHeads: number | null;
  headDim: number | null;
  ffnHidden: number | null;
  vocab: number | null;
  /** Mixture of experts: experts per MoE layer (null = dense). */
  experts: number | null;
  /** Experts each token is routed to (num_experts' companion; null = dense or unstated). */
  expertsTopK: number | null;
  /** One expert's FFN width (null: the row's ffn_hidden is the expert's, as Mixtral's config has it). */
  moeFfnHidden: number | null;
  /** The shared expert's FFN width (null = none). */
  sharedExpertFfn: number | null;
  /** Megatron's moe_layer_freq as the row gives it ('' = every layer an MoE layer), e.g. "[0] * 3 + [1] * 58". */
  moeLayerFreq: string;
  attention: string;
  gatedMlp: boolean;
  tiedEmbeddings: boolean;
  /** The row's position-encoding wording ('' = not stated). */
  position: string;
  source: string;
}

/** One published run of llm_train.csv. Throughput is PER GPU, unlike train.csv. */
export interface LlmRun {
  id: string;
  source: string;
  framework: string;
  model: string;
  gpu: string;
  numGpus: number;
  gpusPerNode: number;
  seqLen: number | null;
  microBatch: number | null;
  globalBatch: number | null;
  precision: string;
  /** Whether the row states its tensor- and pipeline-parallel degrees (the defaults of 1 below are otherwise assumed). */
  layoutStated: boolean;
  tensorParallel: number;
  pipelineParallel: number;
  contextParallel: number;
  virtualPipeline: number;
  /** Expert parallelism the row states (null = not stated). */
  expertParallel: number | null;
  /** The data-parallel degree the source states (null = not stated; some rows keep a base configuration's). */
  dataParallel: number | null;
  /** The source's FSDP/ZeRO wording ('' = none stated). */
  zeroOrFsdp: string;
  /** '' = none stated; 'full' / 'selective ...'. */
  activationCheckpointing: string;
  tokensPerSecondPerGpu: number | null;
  /**
   * Model TFLOPS per GPU as the source published it (null = not published): each source's own count
   * of a step's FLOPs, so it says how the source counts (bench/model-flops.ts compares it with ours).
   */
  tflopsPerGpu: number | null;
  /** Model FLOPs utilization as published, a fraction (null = not published): against each source's own peak. */
  mfu: number | null;
  /**
   * Transformer layers the run trained where its config table states them ("Layers=N (config table)"
   * in the notes): dgxc-benchmarking's proxy configurations train the model with fewer layers to fit
   * fewer GPUs (quality_flag proxy_model_reduced_layers); null = the architecture's own.
   */
  layers: number | null;
  /** Peak memory per GPU the source publishes, GB (null = not published). */
  peakMemoryGb: number | null;
  /** 'pretrain', 'sft' or 'lora'. */
  task: string;
  software: string;
  isLatest: boolean;
  qualityFlag: string;
}

/** True when a run's model has mixture-of-experts layers (its architecture row gives more than one expert). */
export function isMoeRun(run: Pick<LlmRun, 'model'>): boolean {
  return (loadLlmArchitectures().find((a) => a.model === run.model)?.experts ?? 1) > 1;
}

/**
 * The runs the LLM fits use (stack effects, the learned correction): the latest published version of
 * each measured run of a dense model. Mixture-of-experts runs are kept apart (moeLlmRuns): no feature
 * of the correction describes experts, so they are a check that nothing was fitted on.
 */
export const fittedLlmRuns = () =>
  loadLlmRuns().filter((r) => r.isLatest && r.tokensPerSecondPerGpu !== null && !isMoeRun(r));

/** The latest measured mixture-of-experts runs. */
export const moeLlmRuns = () =>
  loadLlmRuns().filter((r) => r.isLatest && r.tokensPerSecondPerGpu !== null && isMoeRun(r));

/** One campaign of llm_campaign_gpu_hours.csv. */
export interface LlmCampaign {
  model: string;
  gpu: string;
  gpuHours: number | null;
  tokensTrained: number | null;
  seqLen: number | null;
  /**
   * The global batch in tokens as published, rounded ("4M"): the smallest and largest token counts
   * that round to it (3.5M and 4.5M), null where it is not published.
   */
  globalBatchTokens: { low: number; high: number } | null;
  source: string;
}

let archCache: LlmArchitecture[] | undefined;
export function loadLlmArchitectures(): LlmArchitecture[] {
  return (archCache ??= parseCsv(readFileSync(here('./measurements/llm_models.csv'), 'utf8')).map((r) => ({
    model: r.model,
    layers: num(r.layers),
    hidden: num(r.hidden),
    heads: num(r.heads),
    kvHeads: num(r.kv_heads),
    headDim: num(r.head_dim),
    ffnHidden: num(r.ffn_hidden),
    vocab: num(r.vocab),
    experts: num(r.num_experts),
    expertsTopK: num(r.experts_topk),
    moeFfnHidden: num(r.moe_ffn_hidden),
    sharedExpertFfn: num(r.shared_expert_ffn),
    moeLayerFreq: r.moe_layer_freq ?? '',
    attention: r.attention,
    gatedMlp: r.gated_mlp === 'True',
    tiedEmbeddings: r.tied_embeddings === 'True',
    position: r.position,
    source: r.source,
  })));
}

let runCache: LlmRun[] | undefined;
export function loadLlmRuns(): LlmRun[] {
  return (runCache ??= parseCsv(readFileSync(here('./measurements/llm_train.csv'), 'utf8')).map((r) => ({
    id: r.id,
    source: r.source,
    framework: r.framework,
    model: r.model,
    gpu: r.gpu,
    numGpus: num(r.num_gpus) ?? 1,
    gpusPerNode: num(r.gpus_per_node) ?? 8,
    seqLen: num(r.seq_len),
    microBatch: num(r.micro_batch_size),
    globalBatch: num(r.global_batch_size),
    precision: r.precision,
    layoutStated: num(r.tp) !== null && num(r.pp) !== null,
    tensorParallel: num(r.tp) ?? 1,
    pipelineParallel: num(r.pp) ?? 1,
    contextParallel: num(r.cp) ?? 1,
    virtualPipeline: num(r.vp) ?? 1,
    expertParallel: num(r.ep),
    dataParallel: num(r.dp),
    zeroOrFsdp: r.zero_or_fsdp,
    activationCheckpointing: r.activation_checkpointing,
    tokensPerSecondPerGpu: num(r.tokens_per_s_per_gpu),
    tflopsPerGpu: num(r.tflops_per_gpu),
    mfu: num(r.mfu),
    layers: num(/Layers=(\d+) \(config table\)/.exec(r.notes)?.[1]),
    peakMemoryGb: num(r.peak_memory_gb),
    task: r.task,
    software: r.software,
    isLatest: r.is_latest === '1',
    qualityFlag: r.quality_flag,
  })));
}

const SUFFIX: Record<string, number> = { '': 1, K: 1e3, M: 1e6, B: 1e9, T: 1e12 };
/**
 * A count published rounded ("4M", "2.5K", "1024"): the interval of counts that round to it, half a
 * unit of its last digit either side. Null for an empty cell or another form.
 */
export function roundedCount(s: string | undefined): { low: number; high: number } | null {
  const m = /^\s*(\d+)(?:\.(\d+))?\s*([KMBT]?)\s*$/i.exec(s ?? '');
  if (!m) return null;
  const unit = SUFFIX[m[3].toUpperCase()];
  const value = Number(`${m[1]}.${m[2] ?? '0'}`) * unit;
  const half = (0.5 * unit) / 10 ** (m[2]?.length ?? 0);
  return { low: value - half, high: value + half };
}

let campaignCache: LlmCampaign[] | undefined;
export function loadLlmCampaigns(): LlmCampaign[] {
  return (campaignCache ??= parseCsv(
    readFileSync(here('./measurements/llm_campaign_gpu_hours.csv'), 'utf8'),
  ).map((r) => ({
    model: r.model,
    gpu: r.gpu,
    gpuHours: num(r.gpu_hours),
    tokensTrained: num(r.tokens_trained),
    seqLen: num(r.seq_len),
    globalBatchTokens: roundedCount(r.global_batch_tokens),
    source: r.source,
  })));
}
