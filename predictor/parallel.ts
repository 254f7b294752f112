// How a model is spread over GPUs beyond plain data parallelism, and what its layer list says about
// that. The execution's side (`Parallelism`) is what a plan chooses: tensor parallelism (TP) inside a
// node, pipeline parallelism (PP) across stages, ZeRO/FSDP sharding over the data-parallel (DP) group,
// activation recomputation. The model's side (`parallelStructure`) is read off the layer list the way
// Megatron-LM splits a transformer (Shoeybi et al. 2019, arXiv:1909.08053; Narayanan et al. 2021,
// arXiv:2104.04473; Korthikanti et al. 2022, arXiv:2205.05198):
//   - linears come in pairs: a column-parallel one (its output features split over the TP ranks: QKV,
//     MLP up/gate) feeds per-rank work (attention heads, the activation) and then a row-parallel one
//     (its input features split: attention output, MLP down), whose partial outputs are summed by one
//     all-reduce per pass; that sum is TP's communication;
//   - with sequence parallelism (assumed whenever TP > 1, as Megatron runs it) the norms, dropouts and
//     residual adds between the pairs are split over the ranks too, so every layer's work and
//     activations divide by TP except convolutions, pooling and RNNs, which Megatron does not split;
//   - the attention core (scores, softmax, dropout, context) is what selective recomputation redoes;
//   - transformer blocks are what pipeline stages and full-recomputation checkpoints are counted in.
// step.ts turns this into time and memory.ts into bytes; nothing here knows about a GPU.
import { InputError } from './input-error.js';
import {
  MASTER_WEIGHTS,
  RECOMPUTE,
  RECOMPUTE_MODULES,
  type MasterWeights,
  type OptimizerState,
  type Recompute,
  type RecomputeModule,
} from '../seeds/types.js';
import type { ZeroStage1, ZeroStage2 } from '../seeds/tables.js';
import { POLICIES } from './precision.js';
import { PRECISIONS, type Layer, type LayerCost, type ModelCost, type Precision } from './types.js';

export {
  MASTER_WEIGHTS,
  OPTIMIZER_STATES,
  RECOMPUTE,
  RECOMPUTE_MODULES,
  type MasterWeights,
  type OptimizerState,
  type Recompute,
  type RecomputeModule,
} from '../seeds/types.js';

/** The recompute modes that checkpoint every block: keep its input (and the outputs each names), rerun the rest. */
export const BLOCK_CHECKPOINTS = ['selective_op', 'save_qkv_out_proj', 'save_qkv_proj', 'full'] as const;
export type BlockCheckpoint = (typeof BLOCK_CHECKPOINTS)[number];
export const checkpointsBlocks = (r: Recompute): r is BlockCheckpoint =>
  (BLOCK_CHECKPOINTS as readonly string[]).includes(r);
/**
 * Whether a block checkpoint's rerun repeats the attention core (and so CP's K/V exchange) and the
 * collectives between layers (TP's all-reduces, EP's all-to-alls). torchtitan's op-level policy keeps
 * the fused attention's output and the reduce-scatters' (its _save_list), not the all-to-alls'.
 */
export function rerunOf(r: Recompute): Rerun {
  if (r === 'selective_op') return OP_RERUN;
  return checkpointsBlocks(r) ? BLOCK_RERUN : NO_RERUN;
}
interface Rerun {
  attention: boolean;
  tensorParallel: boolean;
  expertAllToAll: boolean;
}
// Constants: computeTime asks for every candidate a search times.
const OP_RERUN: Rerun = Object.freeze({ attention: false, tensorParallel: false, expertAllToAll: true });
const BLOCK_RERUN: Rerun = Object.freeze({ attention: true, tensorParallel: true, expertAllToAll: true });
const NO_RERUN: Rerun = Object.freeze({ attention: false, tensorParallel: false, expertAllToAll: false });
export type ZeroStage = 0 | 1 | 2 | 3;

/**
 * Whether a framework runs ZeRO stage z over a pipeline of pp stages. Stage 2 does not: DeepSpeed's
 * pipeline engine refuses ZeRO-2 and -3 ("ZeRO-2 and ZeRO-3 are incompatible with pipeline
 * parallelism", deepspeed/runtime/pipe/engine.py), Megatron's distributed optimizer is stage 1, and
 * FSDP under a pipeline (torchtitan, below) keeps the stage's gradients whole until the last
 * micro-batch, which is stage 3 as step.ts and memory.ts cost it. Stage 3 under a pipeline is
 * torchtitan's: FSDP2 without resharding after forward, so each stage's weights are gathered once a
 * step and its gradients reduce-scattered once (MemoryLayout.unshardedStage).
 */
export const zeroRunsWithPipeline = (z: number, pp: number): boolean => pp === 1 || z !== 2;

/**
 * Whether a plan's stages keep their weights gathered through the step and reduce-scatter their
 * gradients once, after the last micro-batch (memory.ts MemoryLayout.unshardedStage, step.ts
 * reduction): ZeRO-3 under a pipeline, as torchtitan runs it (its fsdp_reshard_after_forward
 * "default": "For PP, by default do not reshard after forward to avoid per-microbatch all-gathers";
 * torch.distributed.pipelining turns gradient sync off until the last backward, stage.py).
 */
export const unshardedStageOf = (pp: number, z: number): boolean => pp > 1 && z === 3;

/** How a stack's framework runs ZeRO stages 1 and 2 (seeds/software.json zeroStage1, zeroStage2). */
export interface ZeroImplementation {
  zeroStage1: ZeroStage1;
  zeroStage2: ZeroStage2;
}

/**
 * Whether the weights are sharded between micro-batches and gathered for each one (FSDP): ZeRO-3,
 * and ZeRO-2 where the stack runs it as FSDP's SHARD_GRAD_OP. step.ts costs the gathers (one unit a
 * collective, each rank casting its shard) and memory.ts holds what is gathered. DeepSpeed's stage 2
 * (REPLICATED_WEIGHTS), or no implementation named, keeps the weights whole on every GPU.
 */
export const shardsWeightsOf = (z: number, impl?: ZeroImplementation): boolean =>
  z >= 3 || (z === 2 && impl?.zeroStage2 === 'SHARD_GRAD_OP');

/**
 * Whether the gradients are all-reduced as DDP all-reduces them, through DDP's bucket copy: without
 * ZeRO, and under ZeRO-1 as PyTorch's ZeroRedundancyOptimizer, which runs over DDP (the other
 * stacks' ZeRO-1 reduce-scatters them).
 */
export const allReducesGradientsOf = (z: number, impl?: ZeroImplementation): boolean =>
  z === 0 || (z === 1 && impl?.zeroStage1 === 'ZERO_REDUNDANCY_OPTIMIZER');

/** How one model replica is split, and what is sharded over the data-parallel group. */
export interface Parallelism {
  /** GPUs one layer is split over (Megatron tensor parallelism); inside one node. */
  tensorParallel: number;
  /** Pipeline stages the layers are split into. */
  pipelineParallel: number;
  /**
   * ZeRO stage over the data-parallel group (Rajbhandari et al. 2020, arXiv:1910.02054):
   * 1 shards optimizer state and master weights, 2 also gradients, 3 also the weights (= FSDP full shard).
   */
  zeroStage: ZeroStage;
  recompute: Recompute;
  /**
   * Under selective recomputation, what it reruns: Megatron-Core's recompute_modules (seeds/types.ts
   * RECOMPUTE_MODULES). Default ['core_attn'], the attention core, Megatron's default and what
   * 'selective' alone means. The same list drives the memory kept (memory.ts) and the forward work
   * rerun (step.ts).
   */
  recomputeModules?: readonly RecomputeModule[];
  /**
   * Micro-batches per optimizer step in flight through the pipeline. Default: the execution's
   * gradAccumSteps (each accumulation step is one micro-batch, as Megatron schedules them).
   */
  microBatches?: number;
  /** Storage of the optimizer's moments; default: the precision mode's (fp32, fp16 for FP16_PURE). */
  optimizerState?: OptimizerState;
  /**
   * How the optimizer keeps the master weights (seeds/types.ts MASTER_WEIGHTS), in the precision modes
   * that keep a master copy (FP16, BF16, FP8, FP4); default: whole in fp32 (or the stack's recipes').
   */
  masterWeights?: MasterWeights;
  /**
   * Interleaved 1F1B (Narayanan et al. 2021): model chunks per GPU, each stage holding `v` chunks of
   * blocks/(PP x v) blocks. The bubble shrinks by v; pipeline sends grow by v. Default 1 (plain 1F1B).
   */
  virtualPipelineStages?: number;
  /**
   * Context parallelism (ring attention, as Megatron-Core/Transformer Engine run it): GPUs one sequence
   * is split over. Each does 1/CP of the sequence's work and exchanges K/V chunks around the ring behind
   * its attention compute; CP ranks hold the same weights and join the gradient reduction. Default 1.
   */
  contextParallel?: number;
  /**
   * Expert parallelism (mixture-of-experts models): GPUs a layer's experts are spread over, E / EP whole
   * experts each (no tensor split of an expert: Megatron-Core's expert_tensor_parallel_size = 1, what
   * its MoE recipes set). Every token goes to its experts' GPUs and back by all-to-all, forward and
   * backward. The EP ranks are carved out of the TP x CP x DP GPUs of a stage; each expert's gradients
   * are reduced over the (TP x CP x DP) / EP GPUs that hold it. Default 1 (every GPU holds every expert).
   */
  expertParallel?: number;
}

/** The modules selective recomputation reruns: the stated ones, else the attention core; none under other modes. */
export const selectiveModules = (
  recompute: Recompute,
  modules: readonly RecomputeModule[] | undefined,
): readonly RecomputeModule[] => (recompute === 'selective' ? (modules ?? DEFAULT_SELECTIVE) : NO_MODULES);
const DEFAULT_SELECTIVE: readonly RecomputeModule[] = Object.freeze(['core_attn'] as RecomputeModule[]);
// (One frozen empty list: step.ts asks this for every step a search times.)
const NO_MODULES: readonly RecomputeModule[] = Object.freeze([]);

/** Plain data parallelism: what every execution without `parallelism` runs. */
export const PLAIN: Readonly<Parallelism> = Object.freeze({
  tensorParallel: 1,
  pipelineParallel: 1,
  zeroStage: 0,
  recompute: 'none',
});

/** True when the execution is plain data parallelism (so the original formulas apply unchanged). */
export function isPlain(p: Parallelism | undefined): boolean {
  return (
    p === undefined ||
    (p.tensorParallel === 1 &&
      p.pipelineParallel === 1 &&
      p.zeroStage === 0 &&
      p.recompute === 'none' &&
      p.optimizerState === undefined &&
      p.masterWeights === undefined &&
      (p.virtualPipelineStages ?? 1) === 1 &&
      (p.contextParallel ?? 1) === 1 &&
      (p.expertParallel ?? 1) === 1)
  );
}

/** Model replicas training side by side: GPUs / (TP x PP x CP). */
export function dataParallelOf(gpus: number, p: Parallelism | undefined): number {
  return p ? gpus / (p.tensorParallel * p.pipelineParallel * (p.contextParallel ?? 1)) : gpus;
}

/** What the layer list says about splitting the model. Arrays run parallel to ModelCost.layers. */
export interface ParallelStructure {
  /** The layer's work, weights and activations divide by the TP degree (false: every TP rank repeats it). */
  tpSplit: boolean[];
  /** Row-parallel linear: its output is all-reduced over the TP ranks once per pass. */
  rowParallel: boolean[];
  /** Column-parallel linear: reads the whole (under sequence parallelism: all-gathered) input, writes its share of the outputs. */
  columnParallel: boolean[];
  /** Inside an attention core: outputs selective recomputation discards. */
  attentionCore: boolean[];
  /** Some layer is in an attention core: the model has attention to fuse, recompute or split sequences over. */
  hasAttention: boolean;
  /** Rerun by selective recomputation: the core and its context matmul. */
  selectiveRecompute: boolean[];
  /** Between the first split linear pair and the last: the transformer blocks full recomputation reruns. */
  inBlocks: boolean[];
  /** The selective-recomputation module whose rerun repeats this layer's forward (null: none does). */
  recomputeModule: (RecomputeModule | null)[];
  /** A linear reading a block norm's output, which `layernorm` recomputation discards after forward (its saved input). */
  readsBlockNorm: boolean[];
  /** An expert linear reading the experts' activation (their second GEMM), whose saved input `moe_act` recomputation discards. */
  readsExpertActivation: boolean[];
  /** The first layer of a dense MLP `mlp` recomputation checkpoints: it keeps only that MLP's input. */
  mlpStart: boolean[];
  /** The first layer of an attention core fed by latent up-projections, whose q, k, v `mla_up_proj` recomputation discards. */
  latentCore: boolean[];
  /**
   * Per block checkpoint (BLOCK_CHECKPOINTS), per layer: the share of the layer's output it keeps
   * for backward beyond the block's input, and the share of its forward it reruns (a fused QKV
   * projection, of which torchtitan's op-level policy keeps q and v, reruns for k alone).
   */
  blockCheckpoint: Record<BlockCheckpoint, { kept: number[]; rerun: number[] }>;
  /** Attention layers (each counted `count` times); for attention-free stacks, row-parallel linears. */
  blocks: number;
  /** Per sample: the residual stream (tokens x hidden) crossing a pipeline boundary or kept as a checkpoint. */
  residualElements: number;
  /** Per sample and pass: elements TP all-reduces (sum of row-parallel outputs). */
  tpReduceElements: number;
  /** All-reduce calls per pass (one per row-parallel linear instance). */
  tpCollectives: number;
  /** Parameters split by TP, and those every TP rank holds in full (expert weights apart). */
  splitParameters: number;
  replicatedParameters: number;
  /** Mixture-of-experts weights: split over the EP ranks, whole on each (Layer linear `experts`). */
  expertParameters: number;
  /** Fewest experts of any expert layer (EP must divide it); null without experts. */
  experts: number | null;
  /** Per sample and pass: hidden-state elements dispatched to the experts (tokens x top-k x hidden, every MoE layer); combining them back moves as many. */
  expertDispatchElements: number;
  /** MoE layers (router + experts), each counted `count` times: two all-to-alls each per pass. */
  moeLayers: number;
  /** Largest single layer's parameters (what ZeRO-3 gathers at once). */
  largestLayerParameters: number;
  /** At least one column/row pair: tensor parallelism applies. */
  tensorParallelizable: boolean;
  /** Fewest attention heads of any attention core (TP must divide it); null when there is none or the layers are unknown. */
  heads: number | null;
}

const NOT_TP_SPLIT = new Set<LayerCost['type']>(['conv2d', 'conv1d', 'pool', 'rnn']);

const structures = new WeakMap<ModelCost, ParallelStructure>();

/** The structure of a model's costed layers, computed once per ModelCost. `layers` (the same list) adds head counts. */
export function parallelStructure(cost: ModelCost, layers?: readonly Layer[]): ParallelStructure {
  let s = structures.get(cost);
  if (!s) {
    s = analyse(cost.layers);
    structures.set(cost, s);
  }
  if (layers && s.heads === null) s.heads = headsOf(layers);
  return s;
}

function headsOf(layers: readonly Layer[]): number | null {
  let heads: number | null = null;
  for (const l of layers)
    if (l.type === 'matmul' && (l.batches ?? 1) > 1) heads = Math.min(heads ?? Infinity, l.batches ?? 1);
  return heads;
}

function analyse(layers: readonly LayerCost[]): ParallelStructure {
  const n = layers.length;
  const role: ('column' | 'row' | 'replicated' | 'other')[] = new Array(n).fill('other');
  const attentionCore = new Array<boolean>(n).fill(false);
  const selectiveRecompute = new Array<boolean>(n).fill(false);

  // Column/row pairs: a linear reading unsplit data opens a pair (column); further linears before any
  // per-rank work are parallel branches on the same input (K and V next to Q, up next to gate); the
  // first linear after per-rank work (a weightless matmul, softmax or activation) closes it (row).
  // A norm, convolution, pooling, RNN or embedding before the close means the pair never was one:
  // its linears stay whole on every rank. The loss closes a vocabulary-parallel head (Megatron splits
  // the LM head and the cross-entropy by vocabulary).
  let pending: number[] = [];
  let open = false,
    mixed = false;
  const settle = (as: 'column' | 'replicated') => {
    for (const i of pending) role[i] = as;
    pending = [];
    open = false;
  };
  // Routers and experts take no part in TP's pairs: the router's weight is whole on every TP rank and
  // each expert whole on its EP rank (their tokens split as the block's are); nothing all-reduces them.
  const moe = (l: LayerCost) => l.router === true || (l.experts ?? 1) > 1;
  layers.forEach((l, i) => {
    switch (l.type) {
      case 'linear':
        if (moe(l)) break;
        if (!open) {
          open = true;
          mixed = false;
          pending.push(i);
        } else if (!mixed) pending.push(i);
        else {
          role[i] = 'row';
          settle('column');
        }
        break;
      case 'matmul':
      case 'softmax':
      case 'activation':
        if (open) mixed = true;
        break;
      case 'loss':
        if (open) settle('column');
        break;
      case 'norm':
      case 'conv2d':
      case 'conv1d':
      case 'pool':
      case 'rnn':
      case 'embedding':
        if (open) settle('replicated');
        break;
      default:
        break;
    }
  });
  if (open) settle('replicated');

  // Attention cores: from a weightless matmul (scores) through a softmax to the next weightless matmul (context).
  let coreStart = -1,
    sawSoftmax = false,
    attention = 0;
  const heads: number | null = null;
  layers.forEach((l, i) => {
    if (l.type === 'matmul') {
      if (coreStart >= 0 && sawSoftmax) {
        for (let j = coreStart; j < i; j++) attentionCore[j] = true;
        for (let j = coreStart; j <= i; j++) selectiveRecompute[j] = true;
        attention += layers[coreStart].count;
        coreStart = -1;
        sawSoftmax = false;
      } else {
        coreStart = i;
        sawSoftmax = false;
      }
    } else if (l.type === 'softmax' && coreStart >= 0) sawSoftmax = true;
  });

  const rows = role.flatMap((r, i) => (r === 'row' ? [i] : []));
  const columns = role.flatMap((r, i) => (r === 'column' ? [i] : []));
  // The blocks run from the first split linear to the last, widened over the norms and elementwise
  // layers around them that repeat as often as they do (a pre-norm block's first norm, its last
  // dropout and residual add; a post-norm block's last norm).
  let first = columns.length ? Math.min(...columns) : -1;
  // A mixture-of-experts FFN (router and experts, no TP pair) is part of its block too.
  const moeLayerIndices = layers.flatMap((l, i) => (moe(l) ? [i] : []));
  let last = rows.length ? Math.max(...rows, ...moeLayerIndices) : -1;
  const edge = (i: number, of: number) =>
    (layers[i].type === 'norm' || layers[i].type === 'elementwise') && layers[i].count === layers[of].count;
  if (first >= 0 && last >= 0) {
    const f = first,
      l = last;
    while (first > 0 && edge(first - 1, f)) first--;
    while (last < n - 1 && edge(last + 1, l)) last++;
  }
  const inBlocks = layers.map((_, i) => first >= 0 && i >= first && i <= last);
  let tpReduceElements = 0,
    tpCollectives = 0,
    residualElements = 0;
  for (const i of rows) {
    tpReduceElements += layers[i].outputElements * layers[i].count;
    tpCollectives += layers[i].count;
    residualElements = Math.max(residualElements, layers[i].outputElements);
  }
  if (residualElements === 0 && n)
    residualElements =
      layers.reduce((s, l) => s + l.outputElements * l.count, 0) / layers.reduce((s, l) => s + l.count, 0);
  const tpSplit = layers.map((l, i) => !NOT_TP_SPLIT.has(l.type) && role[i] !== 'replicated');
  let splitParameters = 0,
    replicatedParameters = 0,
    expertParameters = 0,
    largestLayerParameters = 0,
    experts: number | null = null,
    expertDispatchElements = 0,
    moeLayers = 0,
    routed = false;
  layers.forEach((l, i) => {
    const spread = weightSpreadOf(l, tpSplit[i]);
    if (spread === 'experts') {
      expertParameters += l.parameters * l.count;
      experts = Math.min(experts ?? Infinity, l.experts!);
      // The first expert layer after a router reads the dispatched tokens (its input).
      if (routed) {
        expertDispatchElements += l.inputElements * l.count;
        moeLayers += l.count;
        routed = false;
      }
      return;
    }
    if (l.router) routed = true;
    if (spread === 'tensor') splitParameters += l.parameters * l.count;
    else replicatedParameters += l.parameters * l.count;
    // (An expert layer's weights are gathered by ZeRO-3 over its own expert group, 1/EP of them per GPU.)
    largestLayerParameters = Math.max(largestLayerParameters, l.parameters);
  });
  const modules = recomputeModulesOf(layers, selectiveRecompute, residualElements, last);
  return {
    ...modules,
    blockCheckpoint: blockCheckpointsOf(layers, inBlocks, selectiveRecompute),
    tpSplit,
    rowParallel: role.map((r) => r === 'row'),
    columnParallel: role.map((r) => r === 'column'),
    attentionCore,
    hasAttention: attentionCore.some(Boolean),
    selectiveRecompute,
    inBlocks,
    blocks: attention > 0 ? attention : tpCollectives,
    residualElements,
    tpReduceElements,
    tpCollectives,
    splitParameters,
    replicatedParameters,
    expertParameters,
    experts,
    expertDispatchElements,
    moeLayers,
    largestLayerParameters,
    tensorParallelizable: rows.length > 0,
    heads,
  };
}

/**
 * What each block checkpoint keeps and reruns, layer by layer (inside the blocks; nothing outside):
 *   full               keeps nothing, reruns everything;
 *   save_qkv_proj      keeps the outputs of the linears feeding an attention core (a fused QKV, or
 *                      MLA's up-projections; rotary between), reruns the rest, the core included;
 *   save_qkv_out_proj  also keeps the first linear after the core (the output projection);
 *   selective_op       keeps the attention core's output (its fused kernel is not rerun) and every
 *                      other matmul's output counting the block's matmuls in order, a fused QKV as
 *                      its three (torchtitan's policy: to_save = mm in _save_list and not every
 *                      second mm; for a Llama block wq, wv, w1, w2 kept, wk, wo, w3 rerun).
 */
function blockCheckpointsOf(
  layers: readonly LayerCost[],
  inBlocks: readonly boolean[],
  core: readonly boolean[],
): Record<BlockCheckpoint, { kept: number[]; rerun: number[] }> {
  const n = layers.length;
  const plan = (keep: (i: number) => number, rerun: (i: number) => number) => ({
    kept: layers.map((_, i) => (inBlocks[i] ? keep(i) : 0)),
    rerun: layers.map((_, i) => (inBlocks[i] ? rerun(i) : 0)),
  });
  const coreStart = (i: number) => core[i] && (i === 0 || !core[i - 1]);
  const coreEnd = (i: number) => core[i] && (i === n - 1 || !core[i + 1]);
  // The linears feeding each core (walking back over rotary and other elementwise layers), and the
  // output projection (the first linear after it).
  const feedsCore = new Array<boolean>(n).fill(false);
  const outProjection = new Array<boolean>(n).fill(false);
  layers.forEach((l, i) => {
    if (coreStart(i)) {
      let j = i - 1;
      while (j >= 0 && layers[j].type === 'elementwise') j--;
      while (j >= 0 && layers[j].type === 'linear' && layers[j].count === l.count) feedsCore[j--] = true;
    }
    if (coreEnd(i) && i + 1 < n && layers[i + 1].type === 'linear') outProjection[i + 1] = true;
  });
  // torchtitan: the block's matmuls counted in order; the odd-numbered ones kept.
  const opKept = new Array<number>(n).fill(0);
  let matmuls = 0;
  const count = () => ++matmuls % 2 === 1;
  layers.forEach((l, i) => {
    if (!inBlocks[i]) return;
    if (core[i]) {
      opKept[i] = coreEnd(i) ? 1 : 0;
      return;
    }
    if (l.type !== 'linear') return;
    let next = i + 1;
    while (next < n && layers[next].type === 'elementwise') next++;
    if (next < n && coreStart(next)) {
      // A fused QKV projection: q is as wide as the attention output, k and v share the rest.
      let end = next;
      while (!coreEnd(end)) end++;
      const q = Math.min(layers[end].outputElements, l.outputElements) / l.outputElements;
      const parts = [q, (1 - q) / 2, (1 - q) / 2];
      opKept[i] = parts.reduce((sum, part) => sum + (count() ? part : 0), 0);
    } else opKept[i] = count() ? 1 : 0;
  });
  return {
    full: plan(
      () => 0,
      () => 1,
    ),
    save_qkv_proj: plan(
      (i) => (feedsCore[i] ? 1 : 0),
      (i) => (feedsCore[i] ? 0 : 1),
    ),
    save_qkv_out_proj: plan(
      (i) => (feedsCore[i] || outProjection[i] ? 1 : 0),
      (i) => (feedsCore[i] || outProjection[i] ? 0 : 1),
    ),
    selective_op: plan(
      (i) => opKept[i],
      (i) => (core[i] ? 0 : layers[i].type === 'linear' ? 1 - opKept[i] : 1),
    ),
  };
}

/**
 * Which layers each of Megatron-Core's selective-recomputation modules reruns, read off the layer list
 * (megatron/core/transformer/transformer_layer.py, moe/experts.py, multi_latent_attention.py):
 *   core_attn    the attention core (selectiveRecompute);
 *   layernorm    the residual-width norms before and inside the blocks (input_layernorm,
 *                pre_mlp_layernorm; not the final norm, nor MLA's q/kv norms); output-discarding: the
 *                linears reading the norm's output (Q/K/V or MLA's down-projections, the router) lose
 *                their saved copy of it;
 *   mlp          a dense MLP (from after a residual-width norm to the residual add, no attention core,
 *                router or experts): normal checkpointing keeps only its input;
 *   moe_act      the experts' activation and gating product; output-discarding: the second expert
 *                GEMM loses its saved input;
 *   mla_up_proj  the up-projections (linears reading fewer elements than the residual stream) and
 *                rotary embedding just before an attention core; output-discarding: the core loses q,
 *                k and v.
 */
function recomputeModulesOf(
  layers: readonly LayerCost[],
  selectiveRecompute: readonly boolean[],
  residualElements: number,
  lastBlockLayer: number,
): Pick<
  ParallelStructure,
  'recomputeModule' | 'readsBlockNorm' | 'readsExpertActivation' | 'mlpStart' | 'latentCore'
> {
  const n = layers.length;
  const recomputeModule = new Array<RecomputeModule | null>(n).fill(null);
  const readsBlockNorm = new Array<boolean>(n).fill(false);
  const readsExpertActivation = new Array<boolean>(n).fill(false);
  const mlpStart = new Array<boolean>(n).fill(false);
  const latentCore = new Array<boolean>(n).fill(false);
  const isExpert = (l: LayerCost) => (l.experts ?? 1) > 1;
  layers.forEach((l, i) => {
    if (selectiveRecompute[i]) recomputeModule[i] = 'core_attn';
    if (l.type !== 'norm' || l.outputElements !== residualElements || i > lastBlockLayer) return;
    recomputeModule[i] = 'layernorm';
    // The norm's readers: linears of its width before anything transforms its output (a norm of
    // another width, a softmax and a permutation copy in between do not).
    for (let j = i + 1; j < n; j++) {
      const r = layers[j];
      const passes =
        r.type === 'linear' ||
        r.type === 'norm' ||
        r.type === 'softmax' ||
        (r.type === 'elementwise' && (r.kind === 'rotary' || r.kind === 'copy'));
      if (!passes) break;
      if (r.type === 'linear' && !isExpert(r) && r.inputElements === l.outputElements && r.count === l.count)
        readsBlockNorm[j] = true;
    }
    // A dense MLP: every layer up to the residual add, with no attention, router or experts.
    let end = i + 1;
    while (end < n && !(layers[end].type === 'elementwise' && layers[end].kind === 'add')) end++;
    const body = layers.slice(i + 1, end);
    if (
      end < n &&
      body.some((b) => b.type === 'linear') &&
      !body.some((b) => b.type === 'matmul' || b.router === true || isExpert(b))
    ) {
      mlpStart[i + 1] = true;
      for (let j = i + 1; j < end; j++) recomputeModule[j] = 'mlp';
    }
  });
  layers.forEach((l, i) => {
    // The experts' second GEMM and the activation (and gating product) between the two.
    if (isExpert(l) && l.type === 'linear' && i > 0 && !isExpert(layers[i - 1])) {
      let j = i - 1;
      while (j >= 0 && (layers[j].type === 'activation' || layers[j].type === 'elementwise')) j--;
      if (j >= 0 && j < i - 1 && isExpert(layers[j])) {
        readsExpertActivation[i] = true;
        for (let k = j + 1; k < i; k++) recomputeModule[k] = 'moe_act';
      }
    }
    // A core fed by latent up-projections: the linears just before it (rotary between) read less
    // than the residual stream.
    if (selectiveRecompute[i] && (i === 0 || !selectiveRecompute[i - 1])) {
      let j = i - 1;
      const rotary: number[] = [];
      while (j >= 0 && layers[j].type === 'elementwise') rotary.push(j--);
      const up: number[] = [];
      while (j >= 0 && layers[j].type === 'linear' && layers[j].count === l.count) {
        if (layers[j].inputElements < residualElements) up.push(j);
        j--;
      }
      if (up.length > 0) {
        latentCore[i] = true;
        for (const k of [...up, ...rotary]) recomputeModule[k] = 'mla_up_proj';
      }
    }
  });
  return { recomputeModule, readsBlockNorm, readsExpertActivation, mlpStart, latentCore };
}

/**
 * How a layer's weights are spread over a stage's GPUs: an expert layer's over the EP ranks, a TP-split
 * layer's over the TP ranks (a router's stays whole on each, though its tokens split), else whole on
 * every GPU. The one rule parametersPerGpu and memory.ts's pipeline regions both follow.
 */
export const weightSpreadOf = (l: LayerCost, tpSplit: boolean): 'experts' | 'tensor' | 'whole' =>
  (l.experts ?? 1) > 1 ? 'experts' : tpSplit && !l.router ? 'tensor' : 'whole';

/** Parameters one GPU holds before ZeRO sharding: its TP share of its pipeline stage (stages assumed balanced), its EP share of the experts. */
export function parametersPerGpu(cost: ModelCost, s: ParallelStructure, p: Parallelism | undefined): number {
  if (!p || (p.tensorParallel === 1 && p.pipelineParallel === 1 && (p.expertParallel ?? 1) === 1))
    return cost.parameters;
  return denseParametersPerGpu(s, p) + expertParametersPerGpu(s, p);
}

/** Of parametersPerGpu: the weights every expert-parallel rank holds (all but the experts). */
export const denseParametersPerGpu = (s: ParallelStructure, p: Parallelism | undefined): number =>
  (s.splitParameters / (p?.tensorParallel ?? 1) + s.replicatedParameters) / (p?.pipelineParallel ?? 1);

/** Of parametersPerGpu: this GPU's experts (1/EP of each expert layer, 1/PP of the layers). */
export const expertParametersPerGpu = (s: ParallelStructure, p: Parallelism | undefined): number =>
  s.expertParameters / (p?.expertParallel ?? 1) / (p?.pipelineParallel ?? 1);

/**
 * GPUs holding the same experts, over which their gradients are reduced and ZeRO shards them:
 * (TP x CP x DP) / EP of a stage's GPUs (Megatron-Core's expert data-parallel group with ETP = 1).
 * `gradientGroup` is the dense weights' group (DP x CP, the TP ranks holding different shards).
 */
export const expertGradientGroup = (gradientGroup: number, p: Parallelism | undefined): number =>
  (gradientGroup * (p?.tensorParallel ?? 1)) / (p?.expertParallel ?? 1);

/** Pipeline micro-batches per optimizer step. */
export const microBatchesOf = (p: Parallelism | undefined, gradAccumSteps: number): number =>
  p?.microBatches ?? gradAccumSteps;

/**
 * Why a parallel layout cannot run this model on these GPUs, as an InputError naming the field; null
 * when it can. TP must stay within a node and divide the attention heads; PP needs at least as many
 * transformer blocks as stages; the GPUs must hold whole TP x PP replicas.
 */
export function checkParallelism(
  p: Parallelism,
  s: ParallelStructure,
  layout: { gpusPerNode: number; nodes: number; precision?: Precision },
  field = 'parallelism',
): InputError | null {
  const t = p.tensorParallel,
    pp = p.pipelineParallel,
    gpus = layout.gpusPerNode * layout.nodes;
  const bad = (f: string, m: string) => new InputError(`${field}.${f}`, m);
  if (!Number.isInteger(t) || t < 1 || t > 64)
    return bad('tensorParallel', `must be an integer from 1 to 64 (got ${t})`);
  if (!Number.isInteger(pp) || pp < 1 || pp > 1024)
    return bad('pipelineParallel', `must be an integer from 1 to 1024 (got ${pp})`);
  if (![0, 1, 2, 3].includes(p.zeroStage))
    return bad('zeroStage', `must be 0, 1, 2 or 3 (got ${p.zeroStage})`);
  if (!zeroRunsWithPipeline(p.zeroStage, pp))
    return bad(
      'zeroStage',
      `must be 0, 1 or 3 with pipelineParallel ${pp} (got 2): no framework shards a pipeline's gradients per micro-batch (DeepSpeed refuses ZeRO-2 under a pipeline); FSDP under one, as torchtitan runs it, is zeroStage 3`,
    );
  if (!RECOMPUTE.includes(p.recompute))
    return bad('recompute', `must be one of ${RECOMPUTE.join(', ')} (got ${p.recompute})`);
  if (p.recomputeModules !== undefined) {
    if (p.recompute !== 'selective')
      return bad('recomputeModules', `apply to selective recomputation only (recompute is ${p.recompute})`);
    const unknown = p.recomputeModules.find((m) => !RECOMPUTE_MODULES.includes(m));
    if (unknown !== undefined)
      return bad('recomputeModules', `must each be one of ${RECOMPUTE_MODULES.join(', ')} (got ${unknown})`);
    // A repeated module would be rerun (and timed) twice; an empty list would silently mean 'none'.
    const repeated = p.recomputeModules.find((m, i) => p.recomputeModules!.indexOf(m) !== i);
    if (repeated !== undefined)
      return bad('recomputeModules', `must name each module once (${repeated} is given twice)`);
    if (p.recomputeModules.length === 0)
      return bad(
        'recomputeModules',
        `name at least one of ${RECOMPUTE_MODULES.join(', ')}, or leave it out for the attention core (core_attn); recompute none recomputes nothing`,
      );
  }
  if (p.masterWeights !== undefined) {
    if (!MASTER_WEIGHTS.includes(p.masterWeights))
      return bad('masterWeights', `must be one of ${MASTER_WEIGHTS.join(', ')} (got ${p.masterWeights})`);
    const policy = layout.precision && POLICIES[layout.precision];
    const keeping = PRECISIONS.filter((m) => POLICIES[m].masterWeights);
    if (policy && !policy.masterWeights)
      return bad(
        'masterWeights',
        `${policy.precision} keeps no master copy of the weights (its optimizer updates the weights it trains); the modes with one are ${keeping.join(', ')}`,
      );
    // The remainders complete bf16 weights to fp32; fp16 weights have other high-order bits.
    if (policy && p.masterWeights === 'remainders' && policy.weights !== 'bf16')
      return bad(
        'masterWeights',
        `remainders complete bf16 weights to fp32, and ${policy.precision} keeps its weights in ${policy.weights}; the modes with bf16 weights are ${keeping.filter((m) => POLICIES[m].weights === 'bf16').join(', ')}`,
      );
  }
  if (p.microBatches !== undefined && (!Number.isInteger(p.microBatches) || p.microBatches < 1))
    return bad('microBatches', `must be a positive integer (got ${p.microBatches})`);
  const v = p.virtualPipelineStages ?? 1,
    cp = p.contextParallel ?? 1;
  if (!Number.isInteger(v) || v < 1 || v > 64)
    return bad('virtualPipelineStages', `must be an integer from 1 to 64 (got ${v})`);
  if (v > 1 && pp === 1)
    return bad('virtualPipelineStages', `${v} chunks per GPU need a pipeline (pipelineParallel > 1)`);
  if (v > 1 && pp * v > s.blocks)
    return bad(
      'virtualPipelineStages',
      `${pp} stages x ${v} chunks = ${pp * v} model chunks for ${s.blocks} transformer block(s): every chunk needs at least one`,
    );
  if (!Number.isInteger(cp) || cp < 1 || cp > 64)
    return bad('contextParallel', `must be an integer from 1 to 64 (got ${cp})`);
  if (cp > 1 && s.blocks === 0)
    return bad('contextParallel', 'context parallelism splits attention sequences, and this model has none');
  if (t > layout.gpusPerNode || layout.gpusPerNode % t !== 0)
    return bad(
      'tensorParallel',
      `${t} must divide gpusPerNode (${layout.gpusPerNode}): tensor parallelism all-reduces every layer and stays on one node's link`,
    );
  if (t > 1 && !s.tensorParallelizable)
    return bad(
      'tensorParallel',
      'this model has no pair of linear layers to split (tensor parallelism splits transformer-style linear pairs)',
    );
  if (t > 1 && s.heads !== null && s.heads % t !== 0)
    return bad('tensorParallel', `${t} does not divide the ${s.heads} attention heads`);
  if (pp > 1 && pp > s.blocks)
    return bad(
      'pipelineParallel',
      `${pp} stages for ${s.blocks} transformer block(s): every stage needs at least one`,
    );
  if (gpus % (t * pp) !== 0)
    return bad(
      'pipelineParallel',
      `the ${gpus} GPUs do not split into whole replicas of tensorParallel x pipelineParallel = ${t * pp}`,
    );
  if (gpus % (t * pp * cp) !== 0)
    return bad(
      'contextParallel',
      `the ${gpus} GPUs do not split into whole replicas of tensorParallel x pipelineParallel x contextParallel = ${t * pp * cp}`,
    );
  const ep = p.expertParallel ?? 1;
  if (!Number.isInteger(ep) || ep < 1 || ep > 1024)
    return bad('expertParallel', `must be an integer from 1 to 1024 (got ${ep})`);
  if (ep > 1 && s.experts === null)
    return bad(
      'expertParallel',
      'expert parallelism spreads mixture-of-experts layers, and this model has none',
    );
  if (ep > 1 && s.experts! % ep !== 0)
    return bad('expertParallel', `${ep} does not divide the ${s.experts} experts of a layer`);
  if (ep > 1 && (gpus / pp) % ep !== 0)
    return bad(
      'expertParallel',
      `the ${gpus / pp} GPUs of a pipeline stage do not split into groups of ${ep} expert-parallel ranks`,
    );
  if (checkpointsBlocks(p.recompute) && s.blocks === 0)
    return bad(
      'recompute',
      `${p.recompute} checkpoints transformer blocks, and this model has none; use selective or none`,
    );
  // Without attention there are no q, k, v or output projections to keep: the policy would be full
  // recomputation under another name.
  if ((p.recompute === 'save_qkv_proj' || p.recompute === 'save_qkv_out_proj') && !s.hasAttention)
    return bad(
      'recompute',
      `${p.recompute} keeps attention's projections, and this model has no attention; use full`,
    );
  return null;
}

/** What a plan reports about its layout: plain data parallelism is dataParallel = GPUs and the rest 1 or 0. */
export interface PlanParallelism {
  dataParallel: number;
  tensorParallel: number;
  pipelineParallel: number;
  contextParallel: number;
  virtualPipelineStages: number;
  expertParallel: number;
  zeroStage: ZeroStage;
  recompute: Recompute;
  /** Under selective recomputation, the modules it reruns (the default filled in); absent under none or full. */
  recomputeModules?: readonly RecomputeModule[];
  /** Micro-batches per optimizer step (the gradient accumulation steps). */
  microBatches: number;
}

export function planParallelism(
  gpus: number,
  p: Parallelism | undefined,
  gradAccumSteps: number,
): PlanParallelism {
  const q = p ?? PLAIN;
  return {
    dataParallel: dataParallelOf(gpus, q),
    tensorParallel: q.tensorParallel,
    pipelineParallel: q.pipelineParallel,
    contextParallel: q.contextParallel ?? 1,
    virtualPipelineStages: q.virtualPipelineStages ?? 1,
    expertParallel: q.expertParallel ?? 1,
    zeroStage: q.zeroStage,
    recompute: q.recompute,
    ...(q.recompute === 'selective'
      ? { recomputeModules: selectiveModules(q.recompute, q.recomputeModules) }
      : {}),
    microBatches: microBatchesOf(q, gradAccumSteps),
  };
}
