// The JSON tables the predictor interprets (achievable kernel rates, software stacks, LLM vocabularies),
// loaded once per process. Like catalog.ts, this only reads data: what the figures mean is the
// predictor's (predictor/achievable.ts, software.ts, llm.ts).
import { readFileSync } from 'node:fs';
import type { MathMode, OpClass } from './types.js';

const here = (file: string) => new URL(file, import.meta.url);

/** [ideal microseconds, measured microseconds] of single GEMM kernels, ascending. */
export type Curve = [number, number][];

export interface AchievableFile {
  gemm: Record<string, Partial<Record<MathMode, { points: Curve; samples: number; source: string[] }>>>;
  memory: Record<string, { triadGbps: number; fractionOfDatasheet: number; source: string }>;
  /** FlashAttention-2 measured per GPU (derive.py says how), and its fraction of the dense 16-bit tensor peak. */
  attention: Record<
    string,
    {
      implementation: string;
      tflops: number;
      fractionOf16BitPeak: number;
      headDim: number;
      batch: number;
      seqLen: number;
      causal: boolean;
      source: string;
    }
  >;
  allReduce: Record<string, CollectiveCurve>;
  /** All-to-all on 8-GPU hosts: [tensor bytes per GPU, bytes each GPU sends / runtime / per-direction link]. */
  allToAll: Record<string, CollectiveCurve>;
}

/** A collective's measured bandwidth by size, as a fraction of the GPU's per-direction link. */
export interface CollectiveCurve {
  gpu: string;
  linkGbpsPerDirection: number;
  points: [number, number][];
  gpusInGroup: number;
  source: string;
}

let achievable: AchievableFile | undefined;
/** seeds/achievable/achievable.json (derived by seeds/achievable/derive.py). */
export function loadAchievable(): AchievableFile {
  return (achievable ??= JSON.parse(
    readFileSync(here('./achievable/achievable.json'), 'utf8'),
  ) as AchievableFile);
}

export const SOFTWARE_STACKS = ['PYTORCH_EAGER', 'TORCH_COMPILE', 'MEGATRON', 'TUNED'] as const;
export type SoftwareStack = (typeof SOFTWARE_STACKS)[number];
export const DEFAULT_STACK: SoftwareStack = 'PYTORCH_EAGER';

/**
 * ZeRO stage 1 as a stack's framework runs it: PyTorch's ZeroRedundancyOptimizer over DDP (the
 * gradients all-reduced, each rank's updated shard broadcast after the step) or Megatron-Core's
 * distributed optimizer and DeepSpeed's stage 1 (reduce-scattered, then all-gathered).
 */
export const ZERO_STAGE1 = ['ZERO_REDUNDANCY_OPTIMIZER', 'DISTRIBUTED_OPTIMIZER'] as const;
export type ZeroStage1 = (typeof ZERO_STAGE1)[number];

/**
 * ZeRO stage 2 as a stack's framework runs it: PyTorch FSDP's SHARD_GRAD_OP (weights sharded between
 * micro-batches, gathered before each forward behind it) or DeepSpeed's (weights whole on every GPU,
 * the updated shards gathered after the optimizer step, exposed).
 */
export const ZERO_STAGE2 = ['SHARD_GRAD_OP', 'REPLICATED_WEIGHTS'] as const;
export type ZeroStage2 = (typeof ZERO_STAGE2)[number];

export interface StackEffects {
  description: string;
  /** Attention cores (scores, mask, softmax, dropout, context) run as one fused kernel that keeps the scores on chip. */
  flashAttention: boolean;
  /** Fraction of the elementwise and normalization layers' memory traffic left after fusion. */
  pointwiseBytesFactor: number;
  /** Fraction of the measured GEMM kernel rate reached; null = the fitted constant (efficiency.json). */
  matmulEfficiency: number | null;
  /** Fraction of the per-kernel CPU launch cost left. */
  kernelOverheadFactor: number;
  /**
   * Convolution activations are stored channels-last (NHWC), the layout tensor-core convolution
   * kernels read. false: NCHW, PyTorch's default memory format, which cuDNN transposes to NHWC and
   * back around every 16-bit convolution or runs slower NCHW kernels (predictor/step.ts slowNchwConv).
   */
  channelsLast: boolean;
  /**
   * Fraction of the compute that hides data-parallel / ZeRO communication (prefetched FSDP gathers,
   * overlapped distributed-optimizer all-gathers); null = the fitted constant (efficiency.json).
   */
  commOverlap: number | null;
  /** How ZeRO stages 1 and 2 run (ZERO_STAGE1, ZERO_STAGE2; software.json's _about says what each does and whose code it follows). */
  zeroStage1: ZeroStage1;
  zeroStage2: ZeroStage2;
  /**
   * Coefficient of variation of one GPU's step (the wait for the slowest GPU, predictor/step.ts
   * synchronizationWaitMs) and the fraction of hidden communication that still slows compute; absent =
   * the fitted constants (efficiency.json, fitted on the eager benchmark rows' scaling).
   */
  stragglerCv?: number;
  overlapInterference?: number;
  /**
   * FSDP's (ZeRO 2-3) wait for the slowest GPU and interference where they differ from the two above
   * (fitted on DDP's scaling, one all-reduce behind backward); absent = the same. `why` says what
   * measured it.
   */
  fullyShardedSync?: { stragglerCv: number; overlapInterference: number; why: string };
  /**
   * P10/P90 of log(predicted / measured throughput) of this stack's published LLM runs, each predicted
   * with effects fitted on other model families: the interval of an estimate on this stack.
   */
  heldOutLogError?: { q10: number; q90: number; rows: number };
  /**
   * Effects `evaluate --llm --fit` does not choose on the grid for this stack (cli/evaluate-llm.ts
   * fitStack keeps them at these values in the fit and in every held-out fold), because evidence the
   * fitted runs do not hold decides them; `why` says which.
   */
  heldInFit?: { commOverlap?: number; why: string };
  /** Fraction of tensor-parallel and context-parallel collectives hidden behind the GEMMs they feed (Megatron's TP comm overlap); 0 = none. */
  tensorParallelOverlap: number;
  /**
   * The stack's pipeline engine runs the interleaved 1F1B schedule (model chunks per stage), so
   * recommend searches it (optimizer/parallel-search.ts pipelineSchedules); `predict` costs any
   * virtualPipelineStages given on every stack.
   */
  interleavedPipeline: boolean;
  /**
   * Fraction of their roofline rate a mixture-of-experts layer's expert GEMMs reach (small grouped
   * GEMMs, routing imbalance, the token dispatcher's work the layer list does not itemise); fitted on
   * the stack's published MoE runs; absent = 1 (no MoE run of this stack). The all-to-alls are not
   * scaled: they run at NCCL's measured all-to-all rate (seeds/achievable), which is what the runs fit.
   */
  expertGemmEfficiency?: number;
  /** As heldOutLogError, for the stack's published mixture-of-experts runs, each model held out of the expertGemmEfficiency fit. */
  moeHeldOutLogError?: { q10: number; q90: number; rows: number };
  /**
   * Layers this stack's code runs as several kernels where the roofline charges one (keyed as
   * seeds/memory.json's rules: `type.kind`), counted from the code: kernels and passes over the
   * layer's elements, forward and backward, in the activations' type of an op class.
   */
  compositeOps?: Record<string, CompositeOp>;
}

/** One composite layer's kernels and memory passes (StackEffects.compositeOps). */
export interface CompositeOp {
  forwardKernels: number;
  backwardKernels: number;
  /** Elements read plus written, as multiples of the layer's larger side (its output, or a loss's logits). */
  forwardPasses: number;
  backwardPasses: number;
  /** The op class whose activation type the passes move (under autocast, float32-list ops run in fp32: reduction). */
  opClass: OpClass;
  why: string;
}

export interface SoftwareFile {
  stacks: Record<SoftwareStack, StackEffects>;
}
export const SOFTWARE_FILE = here('./software.json');
let software: SoftwareFile | undefined;
/** seeds/software.json: the stacks' effects (fitted by `trainplan evaluate --llm --fit --write`). */
export function loadSoftware(): SoftwareFile {
  return (software ??= JSON.parse(readFileSync(SOFTWARE_FILE, 'utf8')) as SoftwareFile);
}

/** measurements/llm_vocab.json: model -> vocabulary size, for the architecture rows that leave it to the tokenizer. */
export type LlmVocabFile = Record<string, { vocab: number; source: string } | string>;
let llmVocab: LlmVocabFile | undefined;
export function loadLlmVocab(): LlmVocabFile {
  return (llmVocab ??= JSON.parse(
    readFileSync(here('./measurements/llm_vocab.json'), 'utf8'),
  ) as LlmVocabFile);
}

/**
 * measurements/llm_models_extra.json: what a model's llm_models.csv row leaves out and its own
 * configuration states (a sliding attention window on some layers, biases on the linear layers).
 */
export interface LlmModelExtra {
  /** Keys each query attends to in a windowed layer, itself included. */
  attentionWindow?: number;
  /** Every this-many-th layer attends to the whole sequence, the others to the window; absent: every layer windowed. */
  fullAttentionEvery?: number;
  /** Every linear layer but the router has a bias (Megatron-Core's add_bias_linear). */
  linearBiases?: boolean;
  source: string;
  derivation: string;
}
export type LlmModelExtraFile = Record<string, LlmModelExtra | string>;
let llmModelExtra: LlmModelExtraFile | undefined;
export function loadLlmModelExtra(): LlmModelExtraFile {
  return (llmModelExtra ??= JSON.parse(
    readFileSync(here('./measurements/llm_models_extra.json'), 'utf8'),
  ) as LlmModelExtraFile);
}
