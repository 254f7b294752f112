// GPU memory per GPU, as the frameworks really hold it at the peak of a training step (the start of
// backward), in visible parts:
//
//   weights      working weights (/ DP under ZeRO-3) + the low-precision copies forward makes and
//                backward reuses (autocast's cast cache, Transformer Engine's FP8 weight + transpose)
//   gradients    one per parameter in the mode's gradient type (/ DP under ZeRO >= 2)
//   optimizer    fp32 master copy where the mode has one + the optimizer's moments (/ DP under ZeRO >= 1)
//   activations  what each layer saves for backward (seeds/memory.json `savedForBackward`: in-place
//                ReLU, the input a norm or GEMM keeps, dropout's 1-byte mask, ...), attention as one
//                fused kernel unless eager attention is asked for, x micro-batch, / TP (sequence
//                parallelism) / CP, x min(micro-batches, PP) / PP in flight (1F1B), reduced by recompute
//   workspace    cuBLAS and cuDNN workspaces, the gradients alive during backward, DDP's bucket copy
//                of the gradients or ZeRO's buckets, ZeRO-3's gathered layers
//   framework    the CUDA context, NCCL's buffers on multi-GPU runs, and the caching allocator's
//                fragmentation as a fraction of everything above
//
// Model-state accounting is Megatron-LM's and DeepSpeed's (Rajbhandari et al. 2020, §5: ZeRO stages);
// per-layer activations reproduce Korthikanti et al. 2022 (arXiv:2205.05198) Table 2 when read with
// Megatron's choices (test/parallel.test.ts). Every constant is in seeds/memory.json with its source
// and is passed in (as `eff.memory`, loaded with the fitted constants by seeds/catalog.ts
// loadEfficiency); bytes per element come from the precision table (precision.ts), so a new
// precision mode only needs its row there.
import {
  BYTES,
  fsdpGatherType,
  masterBytesOf,
  quantizedGemm,
  stateBytesPerParam,
  storagePolicy,
  POLICIES,
  type PrecisionPolicy,
} from './precision.js';
import {
  checkpointsBlocks,
  type BlockCheckpoint,
  parallelStructure,
  selectiveModules,
  expertParametersPerGpu,
  parametersPerGpu,
  weightSpreadOf,
  type Parallelism,
  type Recompute,
  type RecomputeModule,
  type ZeroStage,
  unshardedStageOf,
  shardsWeightsOf,
  allReducesGradientsOf,
  type ZeroImplementation,
} from './parallel.js';
import type {
  AttentionImplementation,
  Efficiency,
  FrameworkStates,
  MasterWeights,
  MemoryConstants,
  OptimizerState,
  SavedRule,
  SavedTensorType,
  SourceRecipe,
} from '../seeds/types.js';
import { isStockLoop, stackEffects, type SoftwareStack } from './software.js';
import type { Execution } from './step.js';
import type { DType, GpuSpec, LayerCost, ModelCost, ModelDef, OpClass, Precision } from './types.js';

const GIB = 2 ** 30;

export { ATTENTION_IMPLEMENTATIONS } from '../seeds/types.js';
export type { AttentionImplementation, MemoryConstants, SavedRule } from '../seeds/types.js';

const byFramework = new WeakMap<MemoryConstants, Map<string, MemoryConstants>>();
/** The constants with a framework family's rules (frameworkRules) in place of the general ones. */
export function withFrameworkRules(constants: MemoryConstants, framework: string): MemoryConstants {
  const overrides = constants.frameworkRules[framework];
  if (!overrides) throw new Error(`seeds/memory.json has no frameworkRules.${framework}`);
  let cache = byFramework.get(constants);
  if (!cache) {
    cache = new Map();
    byFramework.set(constants, cache);
  }
  let merged = cache.get(framework);
  if (!merged) {
    merged = { ...constants, savedForBackward: { ...constants.savedForBackward, ...overrides } };
    cache.set(framework, merged);
  }
  return merged;
}

/** Per GPU, GB (GiB). totalGb = weights + gradients + optimizer + activations + workspace + framework. */
export interface MemoryBreakdown {
  /** Working weights plus the low-precision copies forward keeps for backward. */
  weightsGb: number;
  gradientsGb: number;
  /** Master weights plus optimizer state. */
  optimizerGb: number;
  /** Of optimizerGb: the fp32 master copy. */
  masterWeightsGb: number;
  /** Of optimizerGb: the optimizer's moments (Adam's m and v, SGD's momentum). */
  optimizerStateGb: number;
  /** Tensors saved for backward, for the micro-batches in flight. */
  activationsGb: number;
  /** cuBLAS/cuDNN workspaces, gradients alive during backward, DDP/ZeRO buckets, ZeRO-3 gathered layers. */
  workspaceGb: number;
  /** CUDA context, NCCL buffers, caching-allocator fragmentation. */
  frameworkGb: number;
  totalGb: number;
}

const ruleOf = (c: MemoryConstants, l: LayerCost): SavedRule =>
  (l.kind !== undefined ? c.savedForBackward[`${l.type}.${l.kind}`] : undefined) ??
  c.savedForBackward[l.type] ??
  {};

/**
 * A saved tensor's element type; `gemm` is the GEMM input the layer keeps (an FP8/FP4 mode keeps its
 * quantized copy only for the GEMMs it quantizes: a convolution keeps its bf16 input). `outsideBlocks`:
 * a linear outside the transformer blocks (the output layer) is not quantized either: Megatron-Core's
 * output_layer is its own tensor_parallel.ColumnParallelLinear, not a Transformer Engine module, and
 * torchtitan converts every nn.Linear to float8 but the output layer (torchtitan/float8.py:
 * module_filter_fn = fqn != "output"), as the weight copies (`blockLinearsOnly`) already assume.
 */
const typeOf = (policy: PrecisionPolicy, t: SavedTensorType, l?: LayerCost, outsideBlocks = false): DType =>
  t === 'gemm'
    ? policy.scaledGemmInput && l && (!quantizedGemm(l) || outsideBlocks)
      ? policy.activation.matmul
      : policy.savedGemmInput
    : t in BYTES
      ? (t as DType)
      : policy.activation[t as OpClass];

/**
 * Bytes ONE instance of each layer saves for backward per sample, parallel to cost.layers. Attention
 * cores (parallel.ts `selectiveRecompute`: scores through context) under fused attention, or under
 * selective recomputation of core_attn, keep what the fused kernel keeps: q, k, v, the output and the
 * softmax statistics, all on the core's first layer. A tensor saved as one layer's output and the next
 * layer's input, in the same type, is counted once, on the first. A layer on a path beside others
 * (Layer.sameInputAs: a projection shortcut, an Inception branch, a gated MLP's up projection beside
 * its gate) adds nothing where a layer on an earlier path keeps the tensor they all read in the same
 * type, or where both are one GEMM (expert gate and up as one grouped GEMM; Megatron-Core's fused
 * linear_fc1). `recomputed`: the selective-recomputation modules in effect (parallel.ts
 * recomputeModulesOf says what each discards).
 */
export function savedBytesPerLayer(
  cost: ModelCost,
  policy: PrecisionPolicy,
  attention: AttentionImplementation,
  recomputed: readonly RecomputeModule[],
  c: MemoryConstants,
): number[] {
  const s = parallelStructure(cost);
  const layers = cost.layers;
  const has = (m: RecomputeModule) => recomputed.includes(m);
  const bytes = new Array<number>(layers.length).fill(0);
  const keptInput = new Array<DType | null>(layers.length).fill(null);
  let previous: SavedOutput = { elements: 0, type: null, count: 0 };
  for (let i = 0; i < layers.length; i++) {
    const l = layers[i];
    if (has('mlp') && s.recomputeModule[i] === 'mlp') {
      // A checkpointed dense MLP keeps only its input (the norm's output, in the activations' type).
      bytes[i] = s.mlpStart[i] ? l.inputElements * BYTES[policy.activation.matmul] : 0;
      previous = { elements: 0, type: null, count: 0 };
      continue;
    }
    if (s.selectiveRecompute[i] && (attention === 'fused' || has('core_attn'))) {
      // The core is [scores, ..., context]: scores' inputs are q and k, context's are probabilities and v.
      if (i === 0 || !s.selectiveRecompute[i - 1]) {
        let end = i;
        while (end + 1 < layers.length && s.selectiveRecompute[end + 1]) end++;
        const scores = layers[i],
          context = layers[end];
        // q, k and v are what the projections just before the core wrote (QKV, or Q and KV for
        // cross-attention; grouped-query attention's K and V are narrower than the heads the scores
        // broadcast them to). Without such projections (an imported graph), as the scores read them,
        // k and v at most as large as q.
        // Scores are heads x q x keys, the output heads x q x headDim and v heads x keys x headDim.
        const values = context.inputElements - scores.outputElements;
        const projected = projectionsBefore(layers, i);
        const qkv =
          projected > 0
            ? projected
            : Math.min(scores.inputElements, 2 * context.outputElements) +
              Math.min(values, context.outputElements);
        const headsTimesQueries = Math.sqrt(
          (scores.outputElements * context.outputElements) / Math.max(values, 1),
        );
        const kept = policy.activation.matmul;
        // mla_up_proj frees q, k and v once the core has run and recomputes them before its backward.
        const keptQkv = has('mla_up_proj') && s.latentCore[i] ? 0 : qkv;
        bytes[i] =
          (keptQkv + context.outputElements) * BYTES[kept] +
          (attention === 'fused' ? headsTimesQueries * c.softmaxStatsBytes : 0);
        previous = { elements: context.outputElements, type: kept, count: context.count };
      }
      continue;
    }
    if (l.frozen) {
      previous = { elements: 0, type: null, count: 0 };
      continue;
    }
    const rule = ruleOf(c, l);
    let b = 0;
    // Output-discarding recomputation frees the tensor this layer would keep as its input.
    const inputDiscarded =
      (has('layernorm') && s.readsBlockNorm[i]) || (has('moe_act') && s.readsExpertActivation[i]);
    const type = rule.input && typeOf(policy, rule.input, l, s.blocks > 0 && !s.inBlocks[i]);
    // A layer on a path beside others (a shortcut, an Inception branch, a gated MLP's up projection
    // beside its gate) reads their input, not the previous layer's output: nothing to add when a
    // layer on an earlier path keeps it in this type, or when both are one GEMM.
    const besideEarlierPath = l.sameInputAs !== undefined;
    const keptByEarlierPath =
      type &&
      besideEarlierPath &&
      (oneGemmWithEarlier(layers, keptInput, i, rule) ||
        keptAsInputBefore(layers, keptInput, i, type, policy));
    if (type && !inputDiscarded) keptInput[i] = type;
    if (type && !inputDiscarded && !keptByEarlierPath) {
      // The same tensor the previous layer saved as its output (an in-place ReLU before a
      // convolution). The first layer of a repeated group follows the layer before the group once,
      // and the group's own last layer in its other repeats.
      // A tensor every repeat reads is saved once: 1/count of it per repeat.
      // Separate projections (q, k, v) that each cast the input keep a copy each: attention's projections
      // read a norm's output, which autocast leaves in the reduction class's type.
      const copies =
        rule.castPerProjection && type !== policy.activation.reduction ? (l.projections ?? 1) : 1;
      const input =
        (l.inputElements - (l.sharedInputElements ?? 0) * (1 - 1 / l.count)) *
        (rule.inputShare ?? 1) *
        copies;
      const shared = (p: SavedOutput) =>
        p.type === type && !besideEarlierPath ? Math.min(input, p.elements) : 0;
      const groupEnd = l.count > 1 && previous.count !== l.count ? lastOfGroup(layers, i) : -1;
      const overlap =
        groupEnd < 0
          ? shared(previous)
          : (shared(previous) * Math.min(previous.count, 1) +
              shared(savedOutputOf(layers[groupEnd], policy, c)) * (l.count - 1)) /
            l.count;
      b += (input - overlap) * BYTES[type];
    }
    if (rule.output) b += l.outputElements * BYTES[typeOf(policy, rule.output, l)];
    // Recomputing the norm (layernorm module) keeps only its input: its inner tensors are rebuilt.
    if (rule.beforeWeight && !(has('layernorm') && s.recomputeModule[i] === 'layernorm'))
      b += l.outputElements * BYTES[typeOf(policy, rule.beforeWeight, l)];
    for (const t of rule.intermediates ?? []) b += l.outputElements * BYTES[typeOf(policy, t, l)];
    b += (rule.maskBytesPerElement ?? 0) * l.outputElements;
    b +=
      (rule.indexBytesPerInput ?? 0) * l.inputElements + (rule.indexBytesPerOutput ?? 0) * l.outputElements;
    bytes[i] = b;
    previous = savedOutputOf(l, policy, c);
  }
  return bytes;
}

/**
 * Layer i is a linear computed in one GEMM with the linear it reads the same tensor as
 * (Layer.sameInputAs), which keeps that tensor: expert GEMMs always (an expert layer's gate and up are
 * one grouped GEMM over both weights side by side: Megatron-Core's TEGroupedMLP linear_fc1, Hugging
 * Face's gate_up_proj), dense ones of equal width where the framework fuses the pair
 * (`gatedPairFused`: Megatron-Core's linear_fc1). The one GEMM keeps one copy of its input, cast or
 * not; separate modules each keep their own cast copy.
 */
function oneGemmWithEarlier(
  layers: readonly LayerCost[],
  keptInput: readonly (DType | null)[],
  i: number,
  rule: SavedRule,
): boolean {
  const l = layers[i],
    j = i - l.sameInputAs!;
  const p = layers[j];
  if (j < 0 || l.type !== 'linear' || p.type !== 'linear' || p.count !== l.count || keptInput[j] === null)
    return false;
  const experts = (l.experts ?? 1) > 1;
  if (experts !== (p.experts ?? 1) > 1) return false;
  return experts || (rule.gatedPairFused === true && p.outputElements === l.outputElements);
}

/**
 * Whether a layer on an earlier path that reads the tensor layer i reads (following Layer.sameInputAs
 * back) keeps it for backward in `type` (`keptInput`: the type each layer keeps its input in, null
 * where it keeps none), repeated as often as layer i, as it arrives: where each reader casts it
 * (autocast does not share casts of activations) each keeps its own copy.
 */
function keptAsInputBefore(
  layers: readonly LayerCost[],
  keptInput: readonly (DType | null)[],
  i: number,
  type: DType,
  policy: PrecisionPolicy,
): boolean {
  let first = i;
  while (layers[first].sameInputAs !== undefined && first - layers[first].sameInputAs! >= 0)
    first -= layers[first].sameInputAs!;
  // The tensor as the layer before the first path wrote it.
  if (first === 0 || policy.activation[layers[first - 1].opClass] !== type) return false;
  for (let j = i - (layers[i].sameInputAs ?? i + 1); j >= 0; j -= layers[j].sameInputAs ?? j + 1) {
    if (layers[j].count !== layers[i].count) return false;
    if (keptInput[j] === type) return true;
  }
  return false;
}

/** Output elements of the run of linear layers just before layer i (elementwise ones like rotary skipped): an attention core's q, k, v. */
function projectionsBefore(layers: readonly LayerCost[], i: number): number {
  let j = i - 1;
  while (j >= 0 && layers[j].type === 'elementwise') j--;
  let elements = 0;
  while (j >= 0 && layers[j].type === 'linear' && layers[j].count === layers[i].count) {
    elements += layers[j].outputElements;
    j--;
  }
  return elements;
}

/** The output a layer saves for backward (elements per instance and type), if any. */
interface SavedOutput {
  elements: number;
  type: DType | null;
  count: number;
}

function savedOutputOf(l: LayerCost, policy: PrecisionPolicy, c: MemoryConstants): SavedOutput {
  const rule = ruleOf(c, l);
  return rule.output
    ? { elements: l.outputElements, type: typeOf(policy, rule.output, l), count: l.count }
    : { elements: 0, type: null, count: l.count };
}

/** Index of the last layer of the run of layers repeated as often as layers[i] (a block `repeat` made). */
function lastOfGroup(layers: readonly LayerCost[], i: number): number {
  let j = i;
  while (j + 1 < layers.length && layers[j + 1].count === layers[i].count) j++;
  return j;
}

/** Per sample on one GPU: what the layers save for backward, and what backward adds on top at its peak. */
export interface ActivationProfile {
  /** Bytes saved for backward (all alive when backward starts). */
  savedBytes: number;
  /**
   * Bytes the backward pass needs beyond the saved tensors at its peak: at each layer, the gradient
   * of its output and of its input (`backwardGradientTensors`) and a convolution's cuDNN workspace,
   * while the saved tensors of the layers before it are still alive (those after it are freed).
   */
  backwardExtraBytes: number;
  /** Of savedBytes, what the layers before the transformer blocks save (the embeddings): a pipeline's first stage holds them. */
  savedBeforeBlocksBytes: number;
  /** Of savedBytes, what the layers after the blocks save (final norm, output layer, loss): the last stage holds them. */
  savedAfterBlocksBytes: number;
  /** backwardExtraBytes over the layers up to the end of the blocks: a pipeline's first stage never runs the output layer's backward. */
  firstStageExtraBytes: number;
}

/**
 * Activation bytes one sample keeps on one GPU for a TP degree and recompute mode (before the
 * pipeline's in-flight factor and context parallelism):
 *   none:      every layer's saved tensors, / TP for the layers TP splits;
 *   selective: the attention cores keep only q, k, v and their output (Korthikanti et al.'s 34 sbh);
 *   full:      layers outside the transformer blocks as before, plus one checkpoint of the residual
 *              stream per block (Korthikanti et al.'s 2sbh per layer, / TP under sequence parallelism),
 *              plus one block's activations while it is recomputed.
 */
export function activationBytesPerSampleOn(
  cost: ModelCost,
  precision: Precision,
  tensorParallel: number,
  recompute: Recompute,
  constants: MemoryConstants,
  attention: AttentionImplementation = constants.defaultAttention,
): number {
  return activationProfile(cost, precision, tensorParallel, recompute, constants, attention).savedBytes;
}

/**
 * How a framework holds activations where it differs from the default accounting (Megatron-Core's
 * tensor parallelism: a column-parallel linear under sequence parallelism saves its sequence shard and
 * gathers it again in backward; the loss's backward holds `backwardGradientTensors` tensors of the
 * local logits in the mode's reduction type).
 */
export interface FrameworkActivations {
  /**
   * The column-parallel linears save the input as they receive it, all-gathered over the TP ranks
   * (the whole sequence), one tensor for the branches that read it (K and V beside Q, up beside
   * gate): PyTorch DTensor tensor parallelism as torchtitan applies it (parallelize_llama.py apply_tp:
   * PrepareModuleInput / PrepareFloat8ModuleInput redistribute the attention's and the feed-forward's
   * input from Shard(1) to Replicate before wq/wk/wv and w1/w3, and the output layer is
   * ColwiseParallel with input_layouts Shard(1)); autograd saves that redistributed tensor.
   */
  gatheredColumnInputs?: boolean;
  /**
   * The cross entropy runs under DTensor's loss_parallel (torchtitan's default with TP: loss parallel
   * unless training.disable_loss_parallel): its backward holds `lossParallelBackwardTensors` fp32
   * tensors of the local logits beside the saved log-probabilities.
   */
  lossParallel?: boolean;
  /**
   * The loss's backward tensors are fp32 whatever the mode's reduction type: the logits are cast
   * to fp32 before the cross entropy (torchtitan's loss function is
   * F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))), so the log-softmax's
   * gradients are fp32, as its saved output already is (savedForBackward.loss).
   */
  fp32LossGradients?: boolean;
  /** Under selective recomputation, what it reruns (parallel.ts Parallelism.recomputeModules; default the attention core). */
  recomputeModules?: readonly RecomputeModule[];
}

/** Saved bytes and backward's extra at its peak, per sample (cached: searches ask for the same few many times). */
export function activationProfile(
  cost: ModelCost,
  precision: Precision,
  tensorParallel: number,
  recompute: Recompute,
  constants: MemoryConstants,
  attention: AttentionImplementation = constants.defaultAttention,
  style: FrameworkActivations = {},
): ActivationProfile {
  // Under TP 1 nothing is gathered or split by vocabulary.
  const gathered = tensorParallel > 1 && style.gatheredColumnInputs === true;
  const lossParallel = tensorParallel > 1 && style.lossParallel === true;
  const fp32LossGradients = style.fp32LossGradients === true;
  const last = lastProfile;
  if (
    last !== undefined &&
    last.cost === cost &&
    last.constants === constants &&
    last.precision === precision &&
    last.tensorParallel === tensorParallel &&
    last.recompute === recompute &&
    last.attention === attention &&
    last.recomputeModules === style.recomputeModules &&
    last.gathered === gathered &&
    last.lossParallel === lossParallel &&
    last.fp32LossGradients === fp32LossGradients
  )
    return last.profile;
  let byConstants = activationCache.get(cost);
  if (!byConstants) {
    byConstants = new WeakMap();
    activationCache.set(cost, byConstants);
  }
  let cache = byConstants.get(constants);
  if (!cache) {
    cache = new Map();
    byConstants.set(constants, cache);
  }
  const modules = selectiveModules(recompute, style.recomputeModules);
  const key = `${precision}/${tensorParallel}/${recompute}/${modules.join('+')}/${attention}/${gathered}/${lossParallel}/${fp32LossGradients}`;
  let profile = cache.get(key);
  if (profile === undefined) {
    profile = profileOf(cost, POLICIES[precision], tensorParallel, recompute, attention, constants, {
      gatheredColumnInputs: gathered,
      lossParallel,
      fp32LossGradients,
      recomputeModules: modules,
    });
    cache.set(key, profile);
  }
  lastProfile = {
    cost,
    constants,
    precision,
    tensorParallel,
    recompute,
    attention,
    recomputeModules: style.recomputeModules,
    gathered,
    lossParallel,
    fp32LossGradients,
    profile,
  };
  return profile;
}

const activationCache = new WeakMap<ModelCost, WeakMap<MemoryConstants, Map<string, ActivationProfile>>>();
/**
 * The last profile returned and everything it was asked with: a parallel search asks for one (TP,
 * recomputation) many times in a row (its ZeRO stages, EP degrees and widths), and building the
 * cache's key string cost more than the memory figure it serves.
 */
let lastProfile:
  | {
      cost: ModelCost;
      constants: MemoryConstants;
      precision: Precision;
      tensorParallel: number;
      recompute: Recompute;
      attention: AttentionImplementation;
      recomputeModules: FrameworkActivations['recomputeModules'];
      gathered: boolean;
      lossParallel: boolean;
      fp32LossGradients: boolean;
      profile: ActivationProfile;
    }
  | undefined;

function profileOf(
  cost: ModelCost,
  policy: PrecisionPolicy,
  tensorParallel: number,
  recompute: Recompute,
  attention: AttentionImplementation,
  constants: MemoryConstants,
  style: FrameworkActivations,
): ActivationProfile {
  const s = parallelStructure(cost);
  const recomputed = selectiveModules(recompute, style.recomputeModules);
  const saved = savedBytesPerLayer(cost, policy, attention, recomputed, constants);
  const split = (i: number) => (s.tpSplit[i] ? tensorParallel : 1);
  // A column-parallel linear that saves its gathered input keeps it whole; a branch beside it (the
  // linear before it read the same input) saves the same tensor.
  const gathered = (i: number) => style.gatheredColumnInputs === true && s.columnParallel[i];
  const sameInputAsPrevious = (i: number) =>
    i > 0 &&
    s.columnParallel[i - 1] &&
    cost.layers[i - 1].type === 'linear' &&
    cost.layers[i - 1].inputElements === cost.layers[i].inputElements &&
    cost.layers[i - 1].count === cost.layers[i].count;
  const savedOn = (i: number) =>
    gathered(i)
      ? sameInputAsPrevious(i)
        ? 0
        : cost.layers[i].count * saved[i]
      : (cost.layers[i].count * saved[i]) / split(i);
  // Backward's own tensors at each layer: its output and input gradients (one step of an RNN or
  // decoder loop at a time) and, for a convolution, the workspace of its algorithm.
  const fusedCores = attention === 'fused' || recomputed.includes('core_attn');
  const transient = cost.layers.map((l, i) => {
    // A fused attention kernel never materialises the scores, forward or backward; the linears
    // around it carry the gradients of q, k, v and its output.
    if (fusedCores && s.selectiveRecompute[i]) return 0;
    const perStep = (elements: number) => elements / (l.steps ?? 1);
    // DTensor's loss_parallel backward (torch/distributed/tensor/parallel/loss.py
    // _nll_loss_and_log_softmax_backward): grad_input = zeros_like(x), then
    // (grad_input + torch.exp(x)) * grad_output: the zeros, the exponentials and their sum (then the
    // product) alive together, each as large as the fp32 log-probabilities x it reads.
    const gradients =
      l.type === 'loss' && style.lossParallel
        ? constants.lossParallelBackwardTensors * l.inputElements * BYTES.fp32
        : constants.backwardGradientTensors *
          perStep(Math.max(l.inputElements, l.outputElements)) *
          BYTES[l.type === 'loss' && style.fp32LossGradients ? 'fp32' : policy.activation[l.opClass]];
    const workspace =
      l.type === 'conv2d' || l.type === 'conv1d'
        ? constants.convWorkspaceFactor *
          perStep(l.inputElements + l.outputElements) *
          BYTES[policy.activation.matmul]
        : 0;
    return (gradients + workspace) / split(i);
  });
  let kept = 0,
    blockBytes = 0,
    beforeBlocks = 0,
    afterBlocks = 0;
  const firstBlock = s.inBlocks.indexOf(true);
  const after = (i: number) => firstBlock >= 0 && !s.inBlocks[i] && i > firstBlock;
  cost.layers.forEach((l, i) => {
    const bytes = savedOn(i);
    if (checkpointsBlocks(recompute) && s.inBlocks[i]) blockBytes += bytes;
    else kept += bytes;
    if (firstBlock >= 0 && !s.inBlocks[i]) {
      if (after(i)) afterBlocks += bytes;
      else beforeBlocks += bytes;
    }
  });
  const firstStageTransient = Math.max(0, ...transient.filter((_, i) => !after(i)));
  const regions = { savedBeforeBlocksBytes: beforeBlocks, savedAfterBlocksBytes: afterBlocks };
  if (checkpointsBlocks(recompute) && s.blocks > 0) {
    // Checkpoints (and what the policy keeps inside each block), then one block recomputed at a
    // time, its backward running with all of it alive. Under sequence parallelism (assumed whenever
    // TP > 1) the hidden states between blocks are split along the sequence over the TP ranks, and so
    // is each block's checkpointed input.
    const checkpoints = (s.blocks * s.residualElements * BYTES[policy.activation.matmul]) / tensorParallel;
    const ops = keptInBlocksBytes(cost, policy, tensorParallel, constants, recompute);
    return {
      savedBytes: kept + checkpoints + ops + blockBytes / s.blocks,
      backwardExtraBytes: Math.max(0, ...transient),
      firstStageExtraBytes: firstStageTransient,
      ...regions,
    };
  }
  // Walking backward from the last layer, the layers before layer i (and every repeat of i's own
  // group, interleaved with it) still hold their saved tensors; the peak is the largest sum.
  let extra = 0,
    before = 0,
    i = 0;
  while (i < cost.layers.length) {
    const end = cost.layers[i].count > 1 ? lastOfGroup(cost.layers, i) : i;
    let group = 0;
    for (let j = i; j <= end; j++) group += savedOn(j);
    for (let j = i; j <= end; j++) extra = Math.max(extra, before + group + transient[j] - kept);
    before += group;
    i = end + 1;
  }
  return {
    savedBytes: kept,
    backwardExtraBytes: extra,
    firstStageExtraBytes: Math.min(extra, firstStageTransient),
    ...regions,
  };
}

/**
 * Per sample, what a block checkpoint keeps inside the blocks beyond their inputs (parallel.ts
 * blockCheckpointsOf says which outputs): torchtitan's op-level policy also keeps each fused
 * attention's softmax statistics beside its output, as its saved SDPA kernel does.
 */
function keptInBlocksBytes(
  cost: ModelCost,
  policy: PrecisionPolicy,
  tensorParallel: number,
  constants: MemoryConstants,
  recompute: BlockCheckpoint,
): number {
  const s = parallelStructure(cost);
  const layers = cost.layers;
  const { kept } = s.blockCheckpoint[recompute];
  let bytes = 0;
  layers.forEach((l, i) => {
    if (kept[i] === 0) return;
    bytes += kept[i] * l.outputElements * l.count * BYTES[policy.activation.matmul];
    if (recompute === 'selective_op' && s.selectiveRecompute[i]) {
      // The core's last layer (the context matmul): its queries x heads rows of statistics.
      let start = i;
      while (start > 0 && s.selectiveRecompute[start - 1]) start--;
      const values = l.inputElements - layers[start].outputElements;
      const headsTimesQueries = Math.sqrt(
        (layers[start].outputElements * l.outputElements) / Math.max(values, 1),
      );
      bytes += headsTimesQueries * l.count * constants.softmaxStatsBytes;
    }
  });
  // Split layers divide by TP under sequence/tensor parallelism, as the rest of the block does.
  return bytes / tensorParallel;
}

/** What memory depends on beyond the model, precision and micro-batch. */
export interface MemoryLayout {
  tensorParallel: number;
  pipelineParallel: number;
  /** Model replicas; ZeRO shards over them, and without ZeRO their all-reduce needs a bucket copy. */
  dataParallel: number;
  /** Context parallelism: each GPU holds 1/CP of every sequence's activations; ZeRO shards over DP x CP. Default 1. */
  contextParallel?: number;
  zeroStage: ZeroStage;
  /** GPUs ZeRO/FSDP shards over, when fewer than DP x CP (hybrid sharding: FSDP2's shard degree). */
  shardGroup?: number;
  /** Expert parallelism (parallel.ts Parallelism.expertParallel): each GPU holds 1/EP of the experts, sharded over (TP x shards) / EP GPUs. Default 1. */
  expertParallel?: number;
  recompute: Recompute;
  /** Under selective recomputation, the modules it reruns (parallel.ts Parallelism.recomputeModules). */
  recomputeModules?: readonly RecomputeModule[];
  /** Micro-batches per step (the pipeline holds min(micro-batches, stages) of them at once). */
  microBatches: number;
  /**
   * Model chunks per pipeline stage (Megatron's interleaved schedule): the first stage holds
   * 1 + (PP - 1) / (PP x chunks) times the activations of the plain 1F1B schedule (Korthikanti et al. 2022, §4.2.3).
   */
  virtualStages?: number;
  optimizerState?: OptimizerState;
  /** Storage of the gradients where the framework differs from the precision mode (Megatron's grad_reduce_in_fp32). */
  gradients?: 'fp32' | 'bf16';
  /**
   * The weights the mode copies to FP8 exist only in FP8 (with their transpose): Megatron-Core's
   * fp8_param_gather (Transformer Engine's fp8_model_init), no bf16 working copy of them.
   */
  fp8Parameters?: boolean;
  /** How the optimizer keeps the master weights (seeds/types.ts MASTER_WEIGHTS); default whole, fp32. */
  masterWeights?: MasterWeights;
  /**
   * LoRA: the base model's weights are frozen, so they have no gradients, master copy or optimizer
   * state (the adapters' own, well under 1% of the parameters, are left out).
   */
  frozenBase?: boolean;
  /**
   * ZeRO-3 under pipeline parallelism keeping each stage's weights gathered from forward to backward
   * and accumulating its unsharded gradients in fp32 until the last micro-batch: torchtitan's
   * apply_fsdp sets reshard_after_forward = False when PP is on (torchtitan/parallelisms/
   * parallelize_llama.py), torch.distributed.pipelining turns gradient sync off until the last
   * backward (stage.py set_requires_gradient_sync(last_backward)), and FSDP2 then accumulates the
   * unsharded gradient in the reduce dtype (_fsdp_param.py to_accumulated_grad_if_needed;
   * torchtitan's mixed_precision_reduce defaults to float32). A plan's ZeRO-3 under a pipeline is
   * this (unshardedStageOf); a published run's, its framework's (memory-check.ts).
   */
  unshardedStage?: boolean;
  /**
   * The mode's low-precision weight copies live only while a block runs, not across the step:
   * torchao's float8 training (torchtitan) casts each weight in forward and saves the cast for that
   * layer's backward (torchao/float8/float8_linear.py), so under full recomputation only the block
   * being recomputed holds them.
   */
  transientWeightCopies?: boolean;
  /** Default: the constants' defaultAttention (fused). */
  attention?: AttentionImplementation;
  /**
   * A stock PyTorch loop stores the mode (precision.ts storagePolicy): FP8 and FP4 keep the model in
   * fp32 with no master copy. Set by stackMemory for PYTORCH_EAGER.
   */
  stockLoop?: boolean;
  /**
   * How the stack runs ZeRO stages 1 and 2 (seeds/software.json zeroStage1, zeroStage2; set by
   * stackMemory): PyTorch's ZeroRedundancyOptimizer keeps DDP's bucket copy of the gradients; FSDP's
   * SHARD_GRAD_OP shards the weights at rest and holds them gathered (under AMP, in the compute type)
   * from forward to the end of backward. Absent: the distributed optimizer and DeepSpeed's stage 2.
   */
  zeroImplementation?: ZeroImplementation;
  /** DTensor tensor parallelism's saved inputs (FrameworkActivations.gatheredColumnInputs). */
  gatheredColumnInputs?: boolean;
  /** DTensor's vocabulary-parallel cross entropy (FrameworkActivations.lossParallel). */
  lossParallel?: boolean;
  /** The loss's backward tensors are fp32 (FrameworkActivations.fp32LossGradients). */
  fp32LossGradients?: boolean;
  /**
   * The activations a user's own runs of this model measured, over what the rules above count
   * (predictor/memory-calibration.ts: their peaks against the predicted peaks); default 1.
   */
  activationScale?: number;
}

/** Plain data parallelism over `gpus` GPUs (1 = a single GPU). */
export const plainLayout = (gpus: number, attention?: AttentionImplementation): MemoryLayout => ({
  tensorParallel: 1,
  pipelineParallel: 1,
  // Without ZeRO only whether there is a data-parallel all-reduce matters, not how wide it is.
  dataParallel: gpus > 1 ? 2 : 1,
  zeroStage: 0,
  recompute: 'none',
  microBatches: 1,
  ...(attention ? { attention } : {}),
});

/**
 * What a software stack changes in memory. MEGATRON is Megatron-Core as NeMo 2 and Megatron-Bridge
 * configure it: its fused kernels' saved tensors (seeds/memory.json frameworkRules.megatron) and, in
 * the modes its recipes train (BF16, FP8, FP4 on bf16 weights), the states they store
 * (frameworkStates.megatron: bf16 gradient buffers, FP8-copied block weights kept only in FP8, fp32
 * master weights). These are the settings under which `trainplan memory-check` predicts the published
 * Megatron runs; a MEGATRON prediction used the general rules before, and put half of the published
 * Megatron runs over their GPUs' memory. TUNED takes MEGATRON's, as its time effects do (an
 * assumption: no tuned run is in the data). PYTORCH_EAGER (stock code, as Hugging Face transformers
 * writes it) keeps more where its ops are composite or its projections separate (frameworkRules.eager).
 * TORCH_COMPILE: the general rules (inductor fuses the norm). States: the precision mode's.
 */
export function stackMemory(
  stack: SoftwareStack | undefined,
  precision: Precision,
  eff: Efficiency,
): FrameworkMemory {
  const fx = stackEffects(stack);
  const zeroImplementation = { zeroStage1: fx.zeroStage1, zeroStage2: fx.zeroStage2 };
  // Stock eager code (the default stack): composite ops that save more than fused kernels.
  if (isStockLoop(stack)) {
    const eager = frameworkMemory(eff, 'eager', undefined);
    return { ...eager, layout: { ...eager.layout, stockLoop: true, zeroImplementation } };
  }
  const trainsIn = precision === 'BF16' || precision === 'FP8' || precision === 'FP4';
  const framework =
    stack !== 'MEGATRON' && stack !== 'TUNED'
      ? frameworkMemory(eff, null, undefined)
      : frameworkMemory(eff, 'megatron', trainsIn ? eff.memory.frameworkStates.megatron : undefined);
  return { ...framework, layout: { ...framework.layout, zeroImplementation } };
}

/** The memory constants and layout fields a framework's kernels and recipes change. */
export interface FrameworkMemory {
  eff: Efficiency;
  layout: Pick<
    MemoryLayout,
    'gradients' | 'fp8Parameters' | 'masterWeights' | 'optimizerState' | 'stockLoop' | 'zeroImplementation'
  >;
}

/**
 * One place for what a framework changes in memory, for a plan on a stack (stackMemory) and for a
 * published run (memory-check.ts llmMemory): the saved-tensor rules of its fused kernels
 * (frameworkRules; null: the general ones), the model states its recipes store (frameworkStates;
 * undefined: the precision mode's), and a source's own launch scripts over those (sourceRecipes),
 * for a named model where the recipes name models (masterRemaindersFor).
 */
export function frameworkMemory(
  eff: Efficiency,
  rules: 'megatron' | 'eager' | null,
  states: FrameworkStates | undefined,
  run?: { precision: Precision; model: string; recipe: SourceRecipe | undefined },
): FrameworkMemory {
  const withRules = effWithRules(eff, rules);
  if (!states) return { eff: withRules, layout: {} };
  const recipe = run?.recipe;
  return {
    eff: withRules,
    layout: {
      gradients: states.gradients,
      fp8Parameters: recipe?.fp8Parameters ?? states.fp8Parameters,
      masterWeights:
        (run && recipe?.masterWeights?.[run.precision]) ??
        (run && states.masterRemaindersFor.includes(run.model) ? 'remainders' : states.masterWeights),
      ...(recipe?.optimizerState ? { optimizerState: recipe.optimizerState } : {}),
    },
  };
}

/**
 * The constants with a framework's saved-tensor rules (null: the general ones) and its allocator
 * fragmentation. Asked for every candidate a search sizes (the default stack's among them): one copy
 * per constants and framework, not one per call.
 */
function effWithRules(eff: Efficiency, rules: 'megatron' | 'eager' | null): Efficiency {
  let byRules = rulesCopies.get(eff);
  if (!byRules) rulesCopies.set(eff, (byRules = new Map()));
  let copy = byRules.get(rules);
  if (!copy) {
    const memory = rules ? withFrameworkRules(eff.memory, rules) : eff.memory;
    // Stock eager code keeps the fragmentation fitted on the measurements stock code ran; the LLM
    // frameworks' own (seeds/memory.json frameworkAllocatorFragmentation) elsewhere.
    const fragmentation =
      rules === 'eager' ? memory.allocatorFragmentation : memory.frameworkAllocatorFragmentation;
    byRules.set(rules, (copy = { ...eff, memory: { ...memory, allocatorFragmentation: fragmentation } }));
  }
  return copy;
}
const rulesCopies = new WeakMap<Efficiency, Map<'megatron' | 'eager' | null, Efficiency>>();

/** What besides the model, precision and batch sizes the memory of plain data parallelism. */
export interface PlainMemoryOptions {
  attention?: AttentionImplementation;
  /** LoRA: the base weights are frozen (no gradients, master copy or optimizer state). */
  frozenBase?: boolean;
  stack?: SoftwareStack;
  /** MemoryLayout.activationScale (default 1). */
  activationScale?: number;
}

/** GB here are GiB, as GPU memory sizes are labelled (an "80GB" GPU holds 80 GiB). */
export function memoryPerGpu(
  model: Pick<ModelDef, 'optimizer'>,
  cost: ModelCost,
  precision: Precision,
  batchSizePerGpu: number,
  multiGpu: boolean,
  eff: Efficiency,
  { attention, frozenBase = false, stack, activationScale = 1 }: PlainMemoryOptions = {},
): MemoryBreakdown {
  const s = stackMemory(stack, precision, eff);
  return shardedMemoryPerGpu(
    model,
    cost,
    precision,
    batchSizePerGpu,
    {
      ...plainLayout(multiGpu ? 2 : 1, attention),
      ...(frozenBase ? { frozenBase: true } : {}),
      ...(activationScale !== 1 ? { activationScale } : {}),
      ...s.layout,
    },
    s.eff,
  );
}

const NO_FRAMEWORK_STYLE: FrameworkActivations = Object.freeze({});

/** Memory per GPU for any layout; plain data parallelism is TP = PP = CP = 1, ZeRO 0, no recomputation. */
export function shardedMemoryPerGpu(
  model: Pick<ModelDef, 'optimizer'>,
  cost: ModelCost,
  precision: Precision,
  batchSizePerGpu: number,
  layout: MemoryLayout,
  eff: Efficiency,
): MemoryBreakdown {
  const constants = eff.memory;
  const t = layout.tensorParallel,
    pp = layout.pipelineParallel,
    cp = layout.contextParallel ?? 1,
    z = layout.zeroStage;
  // ZeRO (Megatron's distributed optimizer, FSDP) shards over every replica of the same weights.
  const shards = layout.shardGroup ?? layout.dataParallel * cp;
  const ep = layout.expertParallel ?? 1;
  // The experts are sharded over the GPUs holding the same experts (parallel.ts expertGradientGroup).
  const expertShards = Math.max(1, (shards * t) / ep);
  const policy = storagePolicy(precision, layout.stockLoop === true, layout.masterWeights);
  const s = parallelStructure(cost);
  const per = stateBytesPerParam(policy, model.optimizer);
  const copy = layout.transientWeightCopies ? null : policy.forwardWeightCopy;
  const attention = layout.attention ?? constants.defaultAttention;
  // (One shared empty style where the layout names none, rather than a spread literal per call.)
  const style: FrameworkActivations =
    layout.recomputeModules || layout.gatheredColumnInputs || layout.lossParallel || layout.fp32LossGradients
      ? {
          ...(layout.recomputeModules ? { recomputeModules: layout.recomputeModules } : {}),
          ...(layout.gatheredColumnInputs ? { gatheredColumnInputs: true } : {}),
          ...(layout.lossParallel ? { lossParallel: true } : {}),
          ...(layout.fp32LossGradients ? { fp32LossGradients: true } : {}),
        }
      : NO_FRAMEWORK_STYLE;
  const profile = activationProfile(cost, precision, t, layout.recompute, constants, attention, style);
  if (pp === 1) {
    const par = {
      tensorParallel: t,
      pipelineParallel: 1,
      zeroStage: z,
      recompute: 'none' as const,
      expertParallel: ep,
    };
    const P = parametersPerGpu(cost, s, par);
    return stageMemory(
      {
        parameters: P,
        experts: expertParametersPerGpu(s, par),
        copied: copy?.blockLinearsOnly ? P * blockLinearShare(cost) : P,
      },
      profile.savedBytes,
      profile.backwardExtraBytes,
    );
  }
  // Pipeline stages hold 1/PP of the blocks each; the first also holds the embeddings, the last the
  // final norm, the output layer and the loss (Megatron-Core's default split). Under 1F1B the first
  // stage holds PP micro-batches in flight and the last one; the interleaved schedule's first stage
  // 1 + (PP - 1) / (PP x chunks) times more (Korthikanti et al. 2022, §4.2.3), its last
  // ((chunks - 1) x PP + 1) / chunks (Megatron-Core's warm-up of (chunks - 1) x PP chunks plus the one
  // running). Whichever stage needs more is the answer.
  const regions = regionParameters(cost, t, ep);
  const chunks = layout.virtualStages ?? 1;
  // When the stages (or chunks) do not divide the blocks, the split is uneven (Megatron-Core's
  // decoder_first/last_pipeline_num_layers, or account_for_embedding/loss_in_pipeline_split): the
  // heaviest stage holds chunks x ceil(blocks / (PP x chunks)) of them, and both stages below are
  // sized so, which errs toward not fitting (DeepSeek-V3's 61 blocks at PP 8: 8, not 7.6).
  const stageShare =
    s.blocks > 0 && s.blocks % (pp * chunks) !== 0
      ? (chunks * Math.ceil(s.blocks / (pp * chunks))) / s.blocks
      : 1 / pp;
  const m = layout.microBatches;
  const firstHeld = chunks > 1 ? pp * (1 + (pp - 1) / (pp * chunks)) : pp;
  const lastHeld = chunks > 1 ? ((chunks - 1) * pp + 1) / chunks : 1;
  // (Micro-batches in flight are at most the step's. No closures here: tsx names each one it creates,
  // and searches ask this function for memory some hundred thousand times per request.)
  const firstInFlight = Math.min(firstHeld, m),
    lastInFlight = Math.min(lastHeld, m);
  const blocksPerSample = profile.savedBytes - profile.savedBeforeBlocksBytes - profile.savedAfterBlocksBytes;
  const first = stageMemory(
    {
      parameters: regions.before + regions.blocks * stageShare,
      experts: regions.blockExperts * stageShare,
      copied: regions.blockLinears * stageShare,
    },
    blocksPerSample * stageShare * firstInFlight + profile.savedBeforeBlocksBytes * firstInFlight,
    profile.firstStageExtraBytes,
  );
  const last = stageMemory(
    {
      parameters: regions.after + regions.blocks * stageShare,
      experts: regions.blockExperts * stageShare,
      copied: regions.blockLinears * stageShare,
    },
    blocksPerSample * stageShare * lastInFlight + profile.savedAfterBlocksBytes,
    profile.backwardExtraBytes,
  );
  return first.totalGb >= last.totalGb ? first : last;

  /** One GPU's memory given the parameters its stage holds and the activations it keeps (per sample). */
  function stageMemory(
    stage: { parameters: number; experts: number; copied: number },
    savedBytesPerSample: number,
    backwardExtraBytes: number,
  ): MemoryBreakdown {
    const P = stage.parameters;
    // This GPU's share of its stage's parameters when a state is sharded (P when it is not): the
    // experts (Pe of P) over their own group, the rest over the data-parallel one.
    const Pe = stage.experts;
    const shardedShare = (P - Pe) / shards + Pe / expertShards;
    const optimizerBytes = layout.optimizerState
      ? (per.optimizer / BYTES[policy.optimizerState]) * BYTES[layout.optimizerState]
      : per.optimizer;
    const copyBytes = copy ? copy.copies * BYTES[copy.dtype] : 0;
    // The parameters that have the copies: all, or the block linears.
    const copied = copy ? stage.copied : 0;
    const largestLayer = s.largestLayerParameters / t;
    // Under ZeRO-3 the copies exist only for the gathered layers (counted in the workspace below);
    // with FP8 parameters the copied weights have no working copy besides their FP8 ones. ZeRO-2 as
    // FSDP runs it (SHARD_GRAD_OP, seeds/software.json zeroStage2) holds the gathered weights from
    // forward to the end of backward besides their shard at rest. Under AMP FSDP gathers the 16-bit
    // copy (its mixed precision; precision.ts fsdpGatherType), which autocast then uses as it is: the
    // fp32 weights are only the shard. (Otherwise the shard at rest is the master copy, or 1/DP of
    // the weights, left out.)
    const replicated = shards > 1;
    const fsdp2 = z === 2 && shardsWeightsOf(z, layout.zeroImplementation) && replicated;
    const gatherType = fsdpGatherType(policy);
    const ampGather = gatherType !== policy.weights;
    // Bytes per parameter of a gathered layer while it runs: the 16-bit copy, or the weights and the mode's copies.
    const liveBytes = ampGather ? BYTES[gatherType] : per.weights + copyBytes;
    const stored = layout.fp8Parameters ? P - copied : P;
    const weightsGb =
      z >= 3
        ? (shardedShare * per.weights) / GIB
        : fsdp2 && ampGather
          ? (shardedShare * per.weights + P * liveBytes) / GIB
          : (stored * per.weights + copied * copyBytes) / GIB;
    const trained = layout.frozenBase ? 0 : 1;
    const gradientBytes = layout.gradients ? BYTES[layout.gradients] : per.gradients;
    const gradientsGb = (trained * (z >= 2 ? shardedShare : P) * gradientBytes) / GIB;
    const masterBytes = masterBytesOf(policy, layout.masterWeights);
    const masterWeightsGb = (trained * (z >= 1 ? shardedShare : P) * masterBytes) / GIB;
    const optimizerStateGb = (trained * (z >= 1 ? shardedShare : P) * optimizerBytes) / GIB;
    const activationsGb =
      ((batchSizePerGpu * savedBytesPerSample) / cp / GIB) * (layout.activationScale ?? 1);
    // DDP keeps a flat copy of the gradients in its buckets (so does PyTorch's ZeroRedundancyOptimizer,
    // which runs over DDP). ZeRO reduce-scatters through two buckets
    // instead, and ZeRO-3 gathers the full weights (and their forward copies) of the layer in use and of
    // the one prefetched, and holds one layer's full gradient before reducing it (as FSDP's ZeRO-2 does).
    const ddp = allReducesGradientsOf(z, layout.zeroImplementation);
    const buckets = !replicated ? 0 : ddp ? gradientsGb : (2 * eff.bucketMb * 1e6) / GIB;
    const gathered = !replicated
      ? 0
      : z >= 3
        ? layout.unshardedStage
          ? (P * (liveBytes + BYTES.fp32)) / GIB
          : (largestLayer * (2 * liveBytes + per.gradients)) / GIB
        : fsdp2
          ? (largestLayer * per.gradients) / GIB
          : 0;
    const transient = (batchSizePerGpu * backwardExtraBytes) / cp / GIB;
    const workspaceGb = constants.cublasWorkspaceGb + buckets + gathered + transient;
    const optimizerGb = masterWeightsGb + optimizerStateGb;
    const allocated = weightsGb + gradientsGb + optimizerGb + activationsGb + workspaceGb;
    const parallel = layout.dataParallel * t * pp * cp > 1;
    const frameworkGb =
      constants.cudaContextGb +
      (parallel ? constants.ncclBuffersGb : 0) +
      constants.allocatorFragmentation * allocated;
    return {
      weightsGb,
      gradientsGb,
      optimizerGb,
      masterWeightsGb,
      optimizerStateGb,
      activationsGb,
      workspaceGb,
      frameworkGb,
      totalGb: allocated + frameworkGb,
    };
  }
}

/**
 * Parameters per GPU under TP (before the pipeline splits them) of the layers before the transformer
 * blocks, in them and after them, and of the linears in them.
 */
export function regionParameters(
  cost: ModelCost,
  tensorParallel: number,
  expertParallel = 1,
): RegionParameters {
  // (Keyed by number, not by a string built per call: a search asks this some hundred thousand times.)
  let byTp = regionCache.get(cost);
  if (!byTp) regionCache.set(cost, (byTp = new Map()));
  let byEp = byTp.get(tensorParallel);
  if (!byEp) byTp.set(tensorParallel, (byEp = new Map()));
  let r = byEp.get(expertParallel);
  if (!r) byEp.set(expertParallel, (r = regionParametersOf(cost, tensorParallel, expertParallel)));
  return r;
}

interface RegionParameters {
  before: number;
  blocks: number;
  after: number;
  blockLinears: number;
  /** Of blocks: the experts (1/EP of them). */
  blockExperts: number;
}
const regionCache = new WeakMap<ModelCost, Map<number, Map<number, RegionParameters>>>();

function regionParametersOf(
  cost: ModelCost,
  tensorParallel: number,
  expertParallel: number,
): RegionParameters {
  const s = parallelStructure(cost);
  const firstBlock = s.inBlocks.indexOf(true);
  const r = { before: 0, blocks: 0, after: 0, blockLinears: 0, blockExperts: 0 };
  cost.layers.forEach((l, i) => {
    const spread = weightSpreadOf(l, s.tpSplit[i]);
    const parameters =
      (l.parameters * l.count) /
      (spread === 'experts' ? expertParallel : spread === 'tensor' ? tensorParallel : 1);
    if (s.inBlocks[i] || firstBlock < 0) {
      r.blocks += parameters;
      if (spread === 'experts') r.blockExperts += parameters;
      if (l.type === 'linear') r.blockLinears += parameters;
    } else if (i > firstBlock) r.after += parameters;
    else r.before += parameters;
  });
  return r;
}

const blockLinearShares = new WeakMap<ModelCost, number>();
/** The share of a model's parameters in the linears inside its transformer blocks (all linears where it has no blocks). */
function blockLinearShare(cost: ModelCost): number {
  let share = blockLinearShares.get(cost);
  if (share === undefined) {
    const s = parallelStructure(cost);
    let linear = 0;
    cost.layers.forEach((l, i) => {
      if (l.type === 'linear' && (s.inBlocks[i] || s.blocks === 0)) linear += l.parameters * l.count;
    });
    share = cost.parameters > 0 ? linear / cost.parameters : 0;
    blockLinearShares.set(cost, share);
  }
  return share;
}

/** The memory layout of an execution (plain data parallelism when it has no `parallelism`). */
export function layoutOfExecution(exec: Execution): MemoryLayout {
  const gpus = exec.gpusPerNode * exec.nodes;
  const p: Parallelism | undefined = exec.parallelism;
  const frozen = exec.frozenBase ? { frozenBase: true } : {};
  if (!p) return { ...plainLayout(gpus, exec.attention), ...frozen };
  return {
    ...frozen,
    tensorParallel: p.tensorParallel,
    pipelineParallel: p.pipelineParallel,
    dataParallel: gpus / (p.tensorParallel * p.pipelineParallel),
    zeroStage: p.zeroStage,
    ...(unshardedStageOf(p.pipelineParallel, p.zeroStage) ? { unshardedStage: true } : {}),
    ...((p.expertParallel ?? 1) > 1 ? { expertParallel: p.expertParallel } : {}),
    recompute: p.recompute,
    ...(p.recomputeModules ? { recomputeModules: p.recomputeModules } : {}),
    microBatches: p.microBatches ?? exec.gradAccumSteps,
    // An interleaved schedule's first stage holds more micro-batches' activations than 1F1B's.
    ...((p.virtualPipelineStages ?? 1) > 1 ? { virtualStages: p.virtualPipelineStages } : {}),
    ...(p.optimizerState ? { optimizerState: p.optimizerState } : {}),
    ...(p.masterWeights ? { masterWeights: p.masterWeights } : {}),
    ...(exec.attention ? { attention: exec.attention } : {}),
  };
}

/** Memory per GPU of an execution. */
export function memoryOfExecution(
  model: Pick<ModelDef, 'optimizer'>,
  cost: ModelCost,
  exec: Execution,
  eff: Efficiency,
  /** MemoryLayout.activationScale. */
  activationScale = 1,
): MemoryBreakdown {
  // Context parallelism: each rank holds the activations of 1/CP of every sequence; its weights and
  // optimizer state are sharded over the data-parallel x context-parallel group (Megatron's distributed optimizer).
  const cp = exec.parallelism?.contextParallel ?? 1;
  const s = stackMemory(exec.stack, exec.precision, eff);
  return shardedMemoryPerGpu(
    model,
    cost,
    exec.precision,
    exec.batchSizePerGpu / cp,
    // What the execution states (its optimizer's moments and master weights) wins over the stack's recipes.
    { ...s.layout, ...layoutOfExecution(exec), ...(activationScale !== 1 ? { activationScale } : {}) },
    s.eff,
  );
}

/**
 * True when the memory fits in the GPU with `headroomGb` kept free: in what CUDA gives a process
 * (GpuSpec.usableMemoryGb), not the label, which the driver keeps up to 8% over it.
 */
export function fits(memory: MemoryBreakdown, gpu: GpuSpec, headroomGb = 0): boolean {
  return memory.totalGb + headroomGb <= gpu.usableMemoryGb;
}
