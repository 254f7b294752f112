// THE step-time formula. One training iteration on data-parallel GPUs is
//
//   step = accum x (forward + backward) + optimizer + mixedPrecision + exposedCommunication + overhead
//
// where each layer's forward and backward time is a roofline: max(GEMM time, bytes / achievable memory
// bandwidth at that mode's element sizes), and the gradient all-reduce (ring inside a node,
// hierarchical across nodes) overlaps with backward except for its last bucket. Exposed communication
// also holds what the overlap does not make free (a fitted fraction of the hidden time: NCCL shares the
// SMs) and the wait for the slowest GPU (synchronizationWaitMs: one GPU's step varies, and n GPUs wait
// for the slowest of n). "Achievable" means
// measured, not datasheet (achievable.ts): a GEMM's time is what kernels of its ideal time measured
// (small ones are latency-bound), memory bandwidth is what STREAM measured, and an all-reduce runs at
// the NCCL bus bandwidth measured for its message size. The fitted constants on top of those
// (efficiency.json) are what a training framework loses against the kernel benchmarks. Everything that does not depend on the GPU count (`computeTime`) is separate
// from what does (`communicationTime`), so the optimizer can reuse the first across node counts.
//
// An execution with a `parallelism` (parallel.ts) splits the same terms and adds what the split costs
// (Narayanan et al. 2021, arXiv:2104.04473; Korthikanti et al. 2022, arXiv:2205.05198; Rajbhandari et
// al. 2020, arXiv:1910.02054):
//
//   step = micro-batches x stage(forward + backward + recompute + TP all-reduces)      [1F1B pipeline]
//        + bubble: (PP - 1) x one micro-batch's stage time, i.e. a fraction (PP-1)/(m+PP-1) of the whole
//        + optimizer and precision overheads on this GPU's shard + exposed DP/ZeRO and PP communication
//        + overhead
//
// where a stage holds 1/PP of the layers and TP divides each layer's work (parallel.ts says which
// layers it divides), recomputation reruns the attention cores (selective) or the blocks' forward
// (full), TP all-reduces every row-parallel linear's output once per pass over the node's link, PP
// sends the residual stream between stages, and the DP group (GPUs / (TP x PP)) all-reduces, or with
// ZeRO reduce-scatters the gradients and all-gathers the weights (every micro-batch for ZeRO-3, and
// for ZeRO-2 on the PyTorch stacks, whose FSDP keeps the weights sharded: software.json zeroStage2).
// Without `parallelism` every term below reduces to the plain data-parallel formula above.
import type { AttentionImplementation, Efficiency, NetworkTransport } from '../seeds/types.js';
import {
  allReduceLinkFraction,
  allToAllLinkFraction,
  attentionFlops,
  gemmSeconds,
  memoryFraction,
} from './achievable.js';
import {
  BLOCK_CHECKPOINTS,
  checkpointsBlocks,
  rerunOf,
  type BlockCheckpoint,
  denseParametersPerGpu,
  expertGradientGroup,
  expertParametersPerGpu,
  microBatchesOf,
  parallelStructure,
  parametersPerGpu,
  RECOMPUTE_MODULES,
  selectiveModules,
  type Parallelism,
  type RecomputeModule,
  type ZeroStage,
  unshardedStageOf,
  shardsWeightsOf,
  allReducesGradientsOf,
  type ZeroImplementation,
} from './parallel.js';
import {
  activationType,
  BYTES,
  SCALED_INPUT_BYTES,
  effectiveMath,
  fsdpGatherType,
  masterTrafficBytesOf,
  optimizerBytesPerParam,
  peakTflops,
  POLICIES,
  type PrecisionPolicy,
  quantizedGemm,
  storagePolicy,
} from './precision.js';
import type { GpuSpec, LayerCost, MathMode, ModelCost, ModelDef, Precision } from './types.js';
import {
  DEFAULT_STACK,
  isStockLoop,
  stackEffects,
  type CompositeOp,
  type SoftwareStack,
  type StackEffects,
} from './software.js';

export type { NetworkTransport };

// The fitted constants are data (seeds/efficiency.json, loaded by seeds/catalog.ts loadEfficiency):
// every formula takes them as an argument, so none reads a file or a hidden global.
export type { Efficiency };

/** Bytes a second one node's network moves for NCCL: its line rate times what the transport reaches. */
export function interNodeRate(
  exec: Pick<Execution, 'interNodeGbps' | 'interNodeTransport'>,
  eff: Pick<Efficiency, 'networkEfficiency' | 'tcpNetworkEfficiency'>,
): number {
  const fraction = exec.interNodeTransport === 'TCP' ? eff.tcpNetworkEfficiency : eff.networkEfficiency;
  return (exec.interNodeGbps / 8) * 1e9 * fraction;
}

/** How a step is executed: everything about the run that is not the model or the GPU. */
export interface Execution {
  precision: Precision;
  batchSizePerGpu: number;
  gpusPerNode: number;
  nodes: number;
  /** Micro-batches accumulated per optimizer step (1 = none). */
  gradAccumSteps: number;
  /** FP32 runs matmuls/convolutions in TF32 where the GPU has it (framework default; see precision.ts). */
  fp32UsesTf32: boolean;
  /** Inter-node network per node, Gbps. */
  interNodeGbps: number;
  /**
   * How NCCL moves data between nodes on that network; absent = RDMA (interNodeRate).
   */
  interNodeTransport?: NetworkTransport;
  /** Tensor/pipeline parallelism, ZeRO sharding, recomputation; absent = plain data parallelism. */
  parallelism?: Parallelism;
  /** The software stack the step runs on (software.ts); absent = PYTORCH_EAGER, what the constants were fitted on. */
  stack?: SoftwareStack;
  /** How the attention core runs (what it keeps for backward); absent = seeds/memory.json's default, fused. */
  attention?: AttentionImplementation;
  /**
   * LoRA fine-tuning: the base model's weights are frozen. Backward computes input gradients only
   * (no weight gradients: half a linear's backward), and there are no base gradients to reduce, no
   * optimizer step or master copy for them; ZeRO-3 still gathers the frozen weights. The adapters'
   * own work (rank-r GEMMs, well under 1% of the FLOPs) is left out.
   */
  frozenBase?: boolean;
  /**
   * Convolution activations stored channels-last (NHWC); absent = the stack's (StackEffects.channelsLast).
   * A measured row says what its source's code ran (predictor/measured.ts).
   */
  channelsLast?: boolean;
}

/** Milliseconds per optimizer step, by where the time goes. */
export interface Breakdown {
  forwardMs: number;
  backwardMs: number;
  optimizerMs: number;
  /** Casts, master-weight copies, loss scaling, FP8 scaling: what the precision mode adds beyond the math. */
  mixedPrecisionMs: number;
  /** Communication not hidden behind compute, with the wait for the slowest GPU (synchronizationWaitMs). */
  communicationMs: number;
  /** Communication in total, hidden or not, with that wait. */
  communicationTotalMs: number;
  /** Kernel launches and the per-iteration fixed cost. */
  overheadMs: number;
  /** Forward passes rerun during backward (activation recomputation). */
  recomputeMs: number;
  /** Pipeline fill and drain: (PP - 1) x one micro-batch's stage time. */
  pipelineBubbleMs: number;
  /** Communication by kind, hidden or not (they add up to communicationTotalMs). */
  dataParallelCommMs: number;
  tensorParallelCommMs: number;
  pipelineCommMs: number;
  /** Mixture-of-experts all-to-alls (tokens to their experts' GPUs and back) on the critical path; 0 without expert parallelism. */
  expertParallelCommMs: number;
  /** Of communicationMs (and of dataParallelCommMs): the wait for the slowest GPU (synchronizationWaitMs). */
  synchronizationWaitMs: number;
}

/**
 * The part of a step that does not depend on how many GPUs there are (with ZeRO >= 1 the optimizer
 * step covers this GPU's shard, 1/DP of its parameters, so there it does).
 */
export interface ComputeTime {
  forwardMs: number;
  backwardMs: number;
  optimizerMs: number;
  mixedPrecisionMs: number;
  overheadMs: number;
  /** Bytes of gradients one GPU contributes to the all-reduce. */
  gradientBytes: number;
  /** Math mode that carried most of the FLOPs (what a faster tensor core would speed up). */
  dominantMath: MathMode;
  /** Recomputation during backward, all micro-batches; 0 without. */
  recomputeMs?: number;
  /** Tensor-parallel all-reduces, all micro-batches (on the critical path); 0 without TP. */
  tensorParallelMs?: number;
  /** Expert-parallel all-to-alls, all micro-batches (on the critical path); 0 without EP. */
  expertParallelMs?: number;
  /** Of gradientBytes: the expert weights', reduced over their own (smaller) group. */
  expertGradientBytes?: number;
  /** Of weightBytes: the expert weights'. */
  expertWeightBytes?: number;
  /** Pipeline bubble; 0 without PP. */
  pipelineBubbleMs?: number;
  /** Bytes of this GPU's working weights (what ZeRO gathers). */
  weightBytes?: number;
  /**
   * Collectives one ZeRO-3 / FSDP gather (or reduce-scatter) of those weights is split into: one per
   * transformer block of this stage, the unit FSDP, torchtitan, MaxText and Megatron-FSDP shard and
   * prefetch by; absent (no blocks found) = the DDP bucket count.
   */
  shardUnits?: number;
  /** Bytes one micro-batch sends across a pipeline stage boundary, each way. */
  stageBoundaryBytes?: number;
}

/** FLOP/s a framework's GEMM of `kernelFlops` reaches: the measured kernel rate at that size, times the fitted framework fraction. */
const achievedMatmulFlops = (gpu: GpuSpec, math: MathMode, kernelFlops: number, eff: Efficiency): number => {
  const peak = peakTflops(gpu, math, 'matmul') ?? 0;
  if (!(kernelFlops > 0) || !(peak > 0)) return peak * 1e12 * eff.matmulEfficiency[math];
  return (kernelFlops / gemmSeconds(gpu, math, kernelFlops, peak)) * eff.matmulEfficiency[math];
};

/** Bytes/s a framework's memory-bound kernels reach: datasheet x measured STREAM fraction x fitted framework fraction. */
export const memoryBandwidth = (gpu: GpuSpec, eff: Efficiency): number =>
  gpu.memoryBwGbps * 1e9 * memoryFraction(gpu).fraction * eff.memoryEfficiency;

interface PassTime {
  ms: number;
  flops: number;
}

/**
 * One layer's forward and backward roofline time (all `count` instances), ms, on one GPU holding
 * 1/`split` of it (tensor parallelism: FLOPs, bytes and the GEMM each kernel runs all shrink).
 */
function layerTime(
  l: LayerCost,
  batch: number,
  gpu: GpuSpec,
  policy: PrecisionPolicy,
  exec: Pick<Execution, 'fp32UsesTf32' | 'frozenBase'>,
  eff: Efficiency,
  split = 1,
  fusion: {
    inFusedAttention: boolean;
    pointwiseBytesFactor: number;
    composite?: CompositeOp;
    /** Convolution activations are NCHW (not channels-last): see slowNchwConv. */
    nchw?: boolean;
  } = {
    inFusedAttention: false,
    pointwiseBytesFactor: 1,
  },
  /** Samples' worth of rows one kernel sees per sample of this GPU: EP for expert layers (each GPU runs the tokens of EP GPUs through E / EP experts). */
  gemmScale = 1,
): { fwd: PassTime; bwd: PassTime; math: MathMode } {
  const quantized = !!policy.scaledGemmInput && quantizedGemm(l);
  const math = layerMath(l, policy, gpu, exec.fp32UsesTf32);
  const actBytes = BYTES[activationType(policy, l)];
  const weightBytes = quantized
    ? SCALED_INPUT_BYTES[policy.scaledGemmInput!] // the GEMM reads the quantized copy
    : l.opClass === 'matmul' && policy.castsWeightsEachStep
      ? BYTES[math === 'fp32' || math === 'tf32' ? 'fp32' : 'fp16']
      : BYTES[policy.weights];
  const bw = memoryBandwidth(gpu, eff);
  // A fused attention kernel keeps scores and probabilities on chip (its Q/K/V/O traffic is small next
  // to its math); fused elementwise chains move a fraction of the bytes the separate kernels would.
  const bytesFactor = fusion.inFusedAttention
    ? 0
    : l.opClass === 'pointwise' || l.opClass === 'reduction'
      ? fusion.pointwiseBytesFactor
      : 1;
  // A GPU reads only the experts it holds: 1/EP of an expert layer's weights (not split by TP).
  const weightsRead = l.experts ? (l.parameters / gemmScale) * split : l.parameters;
  // A layer the stack's code runs as several kernels (StackEffects.compositeOps: GPT-2's gelu_new
  // in eager PyTorch) moves its elements once per pass of each, in the type of the class they run in.
  const composite = fusion.composite;
  // One pass reads or writes the layer's larger side: its output, or a loss's logits.
  const passBytes = composite
    ? BYTES[policy.activation[composite.opClass]] * Math.max(l.inputElements, l.outputElements) * batch
    : 0;
  const fwdBytes = composite
    ? (bytesFactor * composite.forwardPasses * passBytes) / split
    : (bytesFactor * (batch * (l.inputElements + l.outputElements) * actBytes + weightsRead * weightBytes)) /
      split;
  // Backward reads the saved input and the output gradient, writes the input gradient and the weight
  // gradient; a frozen weight is only read (for the input gradient). An input gradient formed larger
  // than its input (a broadcast operand's) is written at that size and read back to be summed down.
  const frozen = !!exec.frozenBase && l.parameters > 0;
  const gradientPasses = l.gradientElements ? 2 * l.gradientElements - l.inputElements : l.inputElements;
  const bwdBytes = composite
    ? (bytesFactor * composite.backwardPasses * passBytes) / split
    : (bytesFactor *
        (batch * (l.inputElements + gradientPasses + l.outputElements) * actBytes +
          (frozen ? 1 : 2) * weightsRead * weightBytes)) /
      split;
  // A frozen weighted layer's backward is its input gradient alone: half a GEMM's backward (data and
  // weight gradients cost a forward each); a frozen embedding, first in the model, needs none.
  const backwardFlops = !frozen ? l.backwardFlops : l.opClass === 'matmul' ? l.backwardFlops / 2 : 0;
  let fwdFlopsTime: number, bwdFlopsTime: number;
  if (l.opClass === 'matmul') {
    const gemm = achievedMatmulFlops(gpu, math, (gemmScale * batch * l.kernelFlops) / split, eff);
    // Inside a fused attention kernel the GEMMs run at the attention kernel's measured rate (never
    // above a plain GEMM of their size), and under a causal mask only the blocks on or below the diagonal.
    const fused = fusion.inFusedAttention ? attentionFlops(gpu) : null;
    const rate = fused ? Math.min(gemm, fused.flops) : gemm;
    const run = fusion.inFusedAttention && l.causalKeys ? causalShare(l.causalKeys) : 1;
    const layout = fusion.nchw && slowNchwConv(l, gpu, math) ? eff.nchwConvEfficiency : 1;
    fwdFlopsTime = (run * batch * l.forwardFlops) / split / rate / layout;
    bwdFlopsTime = (run * batch * backwardFlops) / split / rate / layout;
  } else {
    const vector = (gpu.peakTflops.fp32 ?? 0) * 1e12 * eff.matmulEfficiency.fp32;
    fwdFlopsTime = (batch * l.forwardFlops) / split / vector;
    bwdFlopsTime = (batch * backwardFlops) / split / vector;
  }
  const n = l.count;
  // Inside a fused attention kernel only its two GEMMs keep a launch; the elementwise steps have none.
  const floor = fusion.inFusedAttention && l.opClass !== 'matmul' ? 0 : l.kernels * eff.minKernelUs * 1e-6;
  const fwdFloor = composite ? composite.forwardKernels * eff.minKernelUs * 1e-6 : floor;
  const bwdFloor = composite ? composite.backwardKernels * eff.minKernelUs * 1e-6 : 2 * floor;
  return {
    fwd: {
      ms: n * 1e3 * Math.max(fwdFlopsTime, fwdBytes / bw, fwdFloor),
      flops: (n * batch * l.forwardFlops) / split,
    },
    bwd: {
      // A frozen embedding, first in the model, has no backward at all.
      ms: frozen && l.type === 'embedding' ? 0 : n * 1e3 * Math.max(bwdFlopsTime, bwdBytes / bw, bwdFloor),
      flops: (n * batch * backwardFlops) / split,
    },
    math,
  };
}

/**
 * Whether a layer is a 16-bit convolution on NCHW activations on NVIDIA tensor cores. cuDNN's
 * tensor-core convolution kernels read NHWC: given PyTorch's default NCHW memory format it transposes
 * the input and output around the kernel or falls back to slower NCHW kernels. Measured: the PyTorch
 * channels-last tutorial, ResNet-50 under AMP on a V100 22% faster channels-last (8-35% over a set of
 * models); Paddle's NHWC convolution PR (PaddlePaddle/Paddle#20597), FP16 steps 1.22x (ResNet-50),
 * 1.72x (VGG-16), 1.11x (Inception-v4) slower in NCHW. VGG-16, the most compute-bound, loses most:
 * the cost behaves as a slower convolution rate, not as extra traffic, so the roofline charges
 * the math at Efficiency.nchwConvEfficiency of the rate (set from those figures: efficiency.json). fp32
 * convolutions run NCHW kernels natively, and no figure here says what AMD's MIOpen does.
 */
function slowNchwConv(l: LayerCost, gpu: GpuSpec, math: MathMode): boolean {
  return (
    isConvolution(l) && (math === 'fp16' || math === 'bf16') && TENSOR_CORE_GENERATIONS.has(gpu.generation)
  );
}
/** A 1-D or 2-D convolution: the layers whose memory format matters. */
export const isConvolution = (l: Pick<LayerCost, 'type'>): boolean =>
  l.type === 'conv2d' || l.type === 'conv1d';

/** The math a layer runs in: a GEMM FP8/FP4 does not quantize stays in BF16 (precision.ts quantizedGemm). */
function layerMath(l: LayerCost, policy: PrecisionPolicy, gpu: GpuSpec, fp32UsesTf32: boolean): MathMode {
  return policy.scaledGemmInput && l.opClass === 'matmul' && !quantizedGemm(l)
    ? 'bf16'
    : effectiveMath(policy, l.opClass, gpu, fp32UsesTf32);
}

/**
 * The layout a step's 16-bit convolutions ran in, for `evidence`: undefined when it has none on
 * tensor cores (no convolution, fp32 math, an AMD GPU), where the layout changes nothing.
 */
export function convolutionLayout(
  cost: ModelCost,
  gpu: GpuSpec,
  exec: Pick<Execution, 'precision' | 'fp32UsesTf32' | 'stack' | 'channelsLast'>,
): 'NCHW' | 'channels-last' | undefined {
  const policy = POLICIES[exec.precision];
  const slowed = cost.layers.some((l) => slowNchwConv(l, gpu, layerMath(l, policy, gpu, exec.fp32UsesTf32)));
  if (!slowed) return undefined;
  return storesChannelsLast(exec) ? 'channels-last' : 'NCHW';
}

/** Whether a step's convolution activations are channels-last: as said, else the stack's layout. */
function storesChannelsLast(exec: Pick<Execution, 'stack' | 'channelsLast'>): boolean {
  return exec.channelsLast ?? stackEffects(exec.stack ?? DEFAULT_STACK).channelsLast;
}
const TENSOR_CORE_GENERATIONS = new Set(['volta', 'turing', 'ampere', 'ada', 'hopper', 'blackwell']);

/**
 * The share of a causal attention GEMM a fused kernel runs: FlashAttention tiles the score matrix in
 * 128 x 128 blocks and skips every block wholly above the diagonal (Dao 2023, FlashAttention-2,
 * sec. 3.1.1: "about half" the blocks for long sequences), so with n key blocks it runs the n(n+1)/2
 * on or below it. An unfused kernel computes the whole product and masks it (not called there).
 */
export function causalShare(keys: number): number {
  const n = Math.ceil(keys / FLASH_BLOCK);
  return (n + 1) / (2 * n);
}
const FLASH_BLOCK = 128;

/**
 * The per-layer sums of one micro-batch on one GPU holding 1/TP of each layer TP splits (all stages:
 * computeTime takes a stage's share). Depends on the GPU, precision, micro-batch and TP degree only,
 * so a search can reuse it across pipeline depths, ZeRO stages and GPU counts.
 */
export interface LayerSums {
  fwd: number;
  bwd: number;
  /** Forward time of the attention cores (what selective recomputation reruns by default). */
  coreFwd: number;
  /** Forward time each block checkpoint reruns (parallel.ts blockCheckpointsOf). */
  checkpointFwd: Record<BlockCheckpoint, number>;
  /** Forward time of each selective-recomputation module's layers (parallel.ts recomputeModule; core_attn = coreFwd). */
  moduleFwd: Record<RecomputeModule, number>;
  kernels: number;
  tensors: number;
  matmulInputElements: number;
  dominantMath: MathMode;
}

/**
 * A tuned stack hides its own fraction of the data-parallel communication behind compute, and says
 * what hiding it and waiting for the slowest GPU cost it (StackEffects). `fullySharded`: FSDP's
 * communication (ZeRO 2-3: SHARD_GRAD_OP and FULL_SHARD in stock PyTorch), whose wait and
 * interference a stack may set apart from DDP's (StackEffects.fullyShardedSync: the stock stack's
 * were fitted on DDP's scaling, which FSDP's published runs do not show). ZeRO-1 is DDP's
 * all-reduce with a sharded optimizer: DDP's terms.
 */
function withStackOverlap(
  eff: Efficiency,
  stack: SoftwareStack | undefined,
  fullySharded = false,
): Efficiency {
  const fx = stackEffects(stack ?? DEFAULT_STACK);
  const sync = fullySharded ? fx.fullyShardedSync : undefined;
  if (
    !sync &&
    fx.commOverlap === null &&
    fx.stragglerCv === undefined &&
    fx.overlapInterference === undefined
  )
    return eff;
  // Asked for every candidate a search evaluates: one copy per constants and stack effects (the same
  // objects until a fit overrides them), not per call.
  let byStack = overlapCopies.get(eff);
  if (!byStack) overlapCopies.set(eff, (byStack = new WeakMap()));
  const key: object = sync ?? fx;
  let copy = byStack.get(key);
  if (!copy)
    byStack.set(
      key,
      (copy = {
        ...eff,
        overlapFraction: fx.commOverlap ?? eff.overlapFraction,
        stragglerCv: sync?.stragglerCv ?? fx.stragglerCv ?? eff.stragglerCv,
        overlapInterference: sync?.overlapInterference ?? fx.overlapInterference ?? eff.overlapInterference,
      }),
    );
  return copy;
}
const overlapCopies = new WeakMap<Efficiency, WeakMap<object, Efficiency>>();

/** A tuned stack's GEMMs run at its own fraction of the measured kernel rate (tensor-core modes; FP32 keeps the fitted one). */
function withStackMatmul(eff: Efficiency, fx: StackEffects): Efficiency {
  const m = fx.matmulEfficiency;
  if (m === null) return eff;
  return {
    ...eff,
    matmulEfficiency: { fp32: eff.matmulEfficiency.fp32, tf32: m, fp16: m, bf16: m, fp8: m, fp4: m },
  };
}

/**
 * Whether a step runs the attention cores as one fused kernel: the request's `attention`, else
 * fused on a stack that replaces attention with its own kernel whatever the model's code does
 * (software.json flashAttention: Megatron's, XLA's, Inductor's attention rewrite), else on stock
 * PyTorch the model's code's (ModelDef.attention: DeepLearningExamples' BERT and Transformer-XL
 * scripts, which their benchmark rows ran, write the scores to memory), else seeds/memory.json's
 * defaultAttention (fused: PyTorch's scaled_dot_product_attention, which Hugging Face, torchvision
 * and torchtitan call).
 */
export function fusedAttention(
  exec: Pick<Execution, 'attention' | 'stack'>,
  cost: Pick<ModelCost, 'attention'>,
  eff: Efficiency,
): boolean {
  const code = stackEffects(exec.stack ?? DEFAULT_STACK).flashAttention ? 'fused' : cost.attention;
  return (exec.attention ?? code ?? eff.memory.defaultAttention) === 'fused';
}

export function layerSums(
  cost: ModelCost,
  gpu: GpuSpec,
  exec: Pick<
    Execution,
    'precision' | 'batchSizePerGpu' | 'fp32UsesTf32' | 'stack' | 'frozenBase' | 'channelsLast' | 'attention'
  > & {
    parallelism?: Parallelism;
  },
  eff: Efficiency,
): LayerSums {
  const ep = exec.parallelism?.expertParallel ?? 1;
  const policy = POLICIES[exec.precision];
  const B = exec.batchSizePerGpu;
  const par = exec.parallelism;
  const s = par ? parallelStructure(cost) : undefined;
  const t = par?.tensorParallel ?? 1;
  const fx = stackEffects(exec.stack ?? DEFAULT_STACK);
  // A fused attention kernel spans the scores, mask, softmax, dropout and the context GEMM, whose
  // input (the probabilities) never leaves the chip: the span selective recomputation reruns.
  const fused = fusedAttention(exec, cost, eff) ? parallelStructure(cost).selectiveRecompute : undefined;
  const stackEff = withStackMatmul(eff, fx);
  const nchw = !storesChannelsLast(exec);
  let fwd = 0,
    bwd = 0,
    kernels = 0,
    matmulInputElements = 0,
    tensors = 0,
    coreFwd = 0;
  // Per block checkpoint (BLOCK_CHECKPOINTS order), summed by index and named at the end: a search
  // asks for some thousand of these sums per request, over every layer.
  const checkpointSums = new Float64Array(BLOCK_CHECKPOINTS.length);
  const reruns = s ? BLOCK_CHECKPOINTS.map((c) => s.blockCheckpoint[c].rerun) : [];
  const moduleFwd = Object.fromEntries(RECOMPUTE_MODULES.map((m) => [m, 0])) as Record<
    RecomputeModule,
    number
  >;
  // Which module reruns each layer (read off the layer list whether or not a plan recomputes).
  const modules = parallelStructure(cost).recomputeModule;
  const flopsByMath = new Map<MathMode, number>();
  for (let i = 0; i < cost.layers.length; i++) {
    const l = cost.layers[i];
    const split = s?.tpSplit[i] ? t : 1;
    const composite = fx.compositeOps?.[`${l.type}.${l.kind}`];
    const lt = layerTime(
      l,
      B,
      gpu,
      policy,
      exec,
      stackEff,
      split,
      { inFusedAttention: !!fused?.[i], pointwiseBytesFactor: fx.pointwiseBytesFactor, composite, nchw },
      l.experts ? ep : 1,
    );
    // Expert GEMMs run at the stack's fitted fraction of their roofline (software.json expertGemmEfficiency).
    const slow = l.experts ? 1 / (fx.expertGemmEfficiency ?? 1) : 1;
    lt.fwd.ms *= slow;
    lt.bwd.ms *= slow;
    fwd += lt.fwd.ms;
    bwd += lt.bwd.ms;
    if (s?.selectiveRecompute[i]) coreFwd += lt.fwd.ms;
    if (s?.inBlocks[i]) for (let c = 0; c < reruns.length; c++) checkpointSums[c] += lt.fwd.ms * reruns[c][i];
    const m = modules[i];
    if (s && m) moduleFwd[m] += lt.fwd.ms;
    // Forward launches, backward about twice as many (a composite layer: as its code counts them).
    kernels += (composite ? composite.forwardKernels + composite.backwardKernels : 3 * l.kernels) * l.count;
    if (l.parameters > 0) tensors += l.count;
    if (l.opClass === 'matmul') {
      // What FP8/FP4 casts: the inputs of the quantized GEMMs.
      if (quantizedGemm(l)) matmulInputElements += (l.count * l.inputElements) / split;
      flopsByMath.set(lt.math, (flopsByMath.get(lt.math) ?? 0) + lt.fwd.flops + lt.bwd.flops);
    }
  }
  let dominantMath: MathMode = 'fp32',
    most = -1;
  for (const [m, f] of flopsByMath)
    if (f > most) {
      most = f;
      dominantMath = m;
    }
  const checkpointFwd = Object.fromEntries(BLOCK_CHECKPOINTS.map((c, k) => [c, checkpointSums[k]])) as Record<
    BlockCheckpoint,
    number
  >;
  return { fwd, bwd, coreFwd, checkpointFwd, moduleFwd, kernels, tensors, matmulInputElements, dominantMath };
}

/**
 * Compute part of a step on one GPU at a per-GPU micro-batch. With `parallelism`, one GPU runs its
 * TP share of its pipeline stage (1/PP of the layers) for every micro-batch. `sums` (layerSums for
 * the same GPU, precision, micro-batch and TP degree) may be passed in to reuse it.
 */
export function computeTime(
  model: Pick<ModelDef, 'optimizer'>,
  cost: ModelCost,
  gpu: GpuSpec,
  exec: Execution,
  eff: Efficiency,
  given?: LayerSums,
): ComputeTime {
  const sums = given ?? layerSums(cost, gpu, exec, eff);
  const par = exec.parallelism;
  // What the step stores and moves: a stock loop keeps an FP8 model in fp32 (precision.ts).
  const policy = storagePolicy(exec.precision, isStockLoop(exec.stack), par?.masterWeights);
  const fx = stackEffects(exec.stack ?? DEFAULT_STACK);
  const B = exec.batchSizePerGpu;
  const s = par ? parallelStructure(cost) : undefined;
  const t = par?.tensorParallel ?? 1,
    pp = par?.pipelineParallel ?? 1,
    z = par?.zeroStage ?? 0,
    cp = par?.contextParallel ?? 1,
    v = par?.virtualPipelineStages ?? 1;
  const { fwd, bwd, coreFwd, checkpointFwd, moduleFwd, kernels, tensors, matmulInputElements, dominantMath } =
    sums;
  // One pipeline stage: 1/PP of every sum above (stages assumed balanced, as Megatron splits layers
  // evenly). Costing the heaviest stage instead (the last: its blocks plus the output layer and loss,
  // which Megatron-Core's default split puts there) took the published runs' analytical MAPE from
  // 9.1% to 8.7% and Nemotron-4-340B at PP 8 from 1.10x to 1.03x of measured, but Llama-3-70B at PP 8
  // from 0.99x to 0.93x and the error with each publisher held out of the stack fit from 9.9% to
  // 10.9% (`npx trainplan evaluate --llm --fit`): recipes may count the embedding and loss as layers
  // (Megatron's account_for_embedding/loss_in_pipeline_split) and the runs do not say which did. With
  // context parallelism each GPU does 1/CP of the sequence (Megatron balances the causal
  // mask's work across the ring). Kernel time is taken as proportional to the work: CP's smaller GEMMs
  // are not re-looked-up on the measured curve.
  const stageFwd = fwd / pp / cp,
    stageBwd = bwd / pp / cp;
  // Selective recomputation reruns the forward of its modules' layers (the attention core unless
  // the plan names others), a block checkpoint what it does not keep of the blocks (full: all of it).
  const selectiveFwd = par
    ? selectiveModules(par.recompute, par.recomputeModules).reduce((sum, m) => sum + moduleFwd[m], 0)
    : 0;
  const recompute = par?.recompute ?? 'none';
  const rerun = rerunOf(recompute);
  const stageRecompute =
    (recompute === 'selective' ? selectiveFwd : checkpointsBlocks(recompute) ? checkpointFwd[recompute] : 0) /
    pp /
    cp;
  // TP: each row-parallel linear's output is all-reduced over the TP ranks once in forward and once in
  // backward (sequence parallelism's all-gather + reduce-scatter pairs move the same bytes), plus once
  // more when a block checkpoint reruns the forward. They sit on the critical path.
  let stageTp = 0;
  if (s && t > 1) {
    const passes = rerun.tensorParallel ? 3 : 2;
    const bytes = (B * s.tpReduceElements * BYTES[policy.activation.matmul]) / cp;
    // Each of the tpCollectives all-reduces moves its share; its message size sets the bus bandwidth
    // (the measured curve includes NCCL's latency, so small messages are slow per byte).
    const message = bytes / Math.max(1, s.tpCollectives);
    const link = intraNodeBandwidth(gpu, t, eff, 1) * allReduceLinkFraction(gpu, message);
    stageTp = (1e3 * passes * (((2 * (t - 1)) / t) * bytes)) / link / pp;
  }

  const P = s ? parametersPerGpu(cost, s, par) : cost.parameters;
  // Experts (mixture of experts) are held by fewer GPUs than the rest and sharded over their own group.
  const Pe = s ? expertParametersPerGpu(s, par) : 0,
    Pd = s ? denseParametersPerGpu(s, par) : P;
  // What the optimizer updates and the gradients reduce: nothing of a frozen base (LoRA).
  const trained = exec.frozenBase ? 0 : P;
  const dp = par ? (exec.gpusPerNode * exec.nodes) / (t * pp) : 1;
  const edp = expertGradientGroup(dp, par);
  // ZeRO shards over the data-parallel group: stage 1 the optimizer state and master copy (so the
  // optimizer step and the master-weight traffic cover 1/DP of the parameters), stage 2 the gradients
  // (unscaling too), stage 3 the weights (each rank casts only its shard before gathering it), as
  // stage 2 does where FSDP runs it (SHARD_GRAD_OP, software.json zeroStage2: the weights sharded
  // between micro-batches). The experts shard over the GPUs holding the same experts.
  // Parameters of this GPU whose state a ZeRO stage shards, once that stage is on.
  const shardsWeights = shardsWeightsOf(z, fx);
  // What the weights are gathered in: the compute copy where FSDP shards them and autocast would
  // cast each gathered fp32 weight (AMP): FSDP's mixed precision casts the shard and gathers the
  // copy (MixedPrecision param_dtype, as torchtitan, accelerate and trainplan's harness set it);
  // else the stored type (ZeRO-1 and DeepSpeed's stage 2 gather the updated weights as stored).
  const gathered = shardsWeights ? fsdpGatherType(policy) : policy.weights;
  const heldAfterStage1 = heldParameters(Pd, Pe, z >= 1 ? dp : 1, z >= 1 ? edp : 1),
    heldAfterStage2 = heldParameters(Pd, Pe, z >= 2 ? dp : 1, z >= 2 ? edp : 1),
    heldAfterStage3 = heldParameters(Pd, Pe, shardsWeights ? dp : 1, shardsWeights ? edp : 1);
  const trainedShare = exec.frozenBase ? 0 : 1;
  const bw = memoryBandwidth(gpu, eff);
  const optPolicy = par?.optimizerState ? { ...policy, optimizerState: par.optimizerState } : policy;
  const master = masterTrafficBytesOf(policy, par?.masterWeights);
  const optimizerMs =
    (1e3 * trainedShare * heldAfterStage1 * optimizerBytesPerParam(optPolicy, model.optimizer, master)) / bw;

  // What the precision mode adds beyond the math, in bytes moved per step.
  let mpBytes = 0;
  const accum = exec.gradAccumSteps;
  if (policy.castsWeightsEachStep)
    mpBytes += accum * heldAfterStage3 * (BYTES.fp32 + 2) * (exec.frozenBase ? 1 : 2); // weight cast forward, gradient cast back
  if (master > 0)
    mpBytes +=
      trainedShare *
      heldAfterStage1 *
      ((master === BYTES.fp32 ? BYTES[policy.gradients] + BYTES.fp32 : 0) + master + BYTES[policy.weights]); // grad up-cast to an fp32 master, working copy refresh
  if (policy.lossScaling) mpBytes += trainedShare * heldAfterStage2 * 2 * BYTES[policy.gradients]; // unscale in place + inf/nan check
  if (policy.scaledGemmInput) {
    // Transformer Engine: every micro-batch casts each matmul input (forward) and output gradient
    // (backward): read bf16, write the scaled type. The weights are cast once per step (TE keeps the
    // quantized copy across micro-batches; a stock loop's at every forward), in both layouts the
    // forward and backward GEMMs read.
    const q = SCALED_INPUT_BYTES[policy.scaledGemmInput];
    mpBytes += accum * B * (matmulInputElements / pp / cp) * 2 * (BYTES.bf16 + q);
    mpBytes += (policy.recastsScaledWeights ? accum : 1) * heldAfterStage3 * (BYTES[policy.weights] + 2 * q);
  }
  const mixedPrecisionMs = (1e3 * mpBytes) / bw;

  // CP: every attention layer passes each rank's K and V chunk (about the residual stream's size each,
  // for multi-head attention) around the ring, forward and twice in backward (K/V again, then dK/dV),
  // once more when a block checkpoint reruns the attention. Ring attention overlaps each step with the attention math of
  // the chunk at hand: only what the attention core's time cannot cover is on the critical path.
  let stageCp = 0;
  if (s && cp > 1) {
    const passes = rerun.attention ? 4 : 3;
    const bytes = ((2 * B * s.residualElements * s.blocks * (cp - 1)) / cp) * BYTES[policy.activation.matmul];
    const link = intraNodeBandwidth(
      gpu,
      Math.min(exec.gpusPerNode, t * cp),
      eff,
      eff.collectiveLinkEfficiency ?? 0.8,
    );
    const exchangeMs = (1e3 * passes * (bytes / t)) / link / pp;
    stageCp = Math.max(0, exchangeMs - (3 * coreFwd) / pp / cp);
  }
  // EP: every MoE layer sends each routed token's hidden state to its expert's GPU and back (dispatch
  // and combine), forward, backward (the gradients) and again under a block checkpoint; of a GPU's
  // routed tokens (its 1/TP sequence share under sequence parallelism, 1/CP under CP) (EP-1)/EP leave
  // it. The EP ranks are consecutive GPUs (Megatron-Core's expert rank order with ETP = 1): peers in
  // the node go over its link, the rest over the node's NICs, which its GPUs share; both at once.
  let stageEp = 0;
  const ep = par?.expertParallel ?? 1;
  if (s && ep > 1 && s.moeLayers > 0) {
    const passes = rerun.expertAllToAll ? 3 : 2;
    // One all-to-all's tensor per GPU (its routed tokens of one layer), which sets the measured rate.
    const tensor = (B * (s.expertDispatchElements / s.moeLayers) * BYTES[policy.activation.matmul]) / t / cp;
    const bytes = (2 * s.moeLayers * tensor * (ep - 1)) / ep;
    const g = exec.gpusPerNode;
    const local = Math.min(ep, g);
    const inNode = (local - 1) / (ep - 1);
    const link = intraNodeBandwidth(gpu, local, eff, allToAllLinkFraction(gpu, tensor).fraction);
    const intraS = local > 1 ? (bytes * inNode) / link : 0;
    const interS = inNode < 1 ? (bytes * (1 - inNode)) / (interNodeRate(exec, eff) / g) : 0;
    const latencyS = 2 * s.moeLayers * eff.allReduceLatencyUs * 1e-6;
    stageEp = (1e3 * passes * (Math.max(intraS, interS) + latencyS)) / pp;
  }
  const recomputeMs = accum * stageRecompute;
  // TP all-reduces and the CP exchange not hidden by attention: collectives on the critical path, less
  // what a tuned stack overlaps with the GEMMs they feed.
  const tpExposed = 1 - fx.tensorParallelOverlap;
  stageTp *= tpExposed;
  stageCp *= tpExposed;
  stageEp *= tpExposed;
  const tensorParallelMs = accum * (stageTp + stageCp);
  const expertParallelMs = accum * stageEp;
  const launchUs = eff.kernelOverheadUs * fx.kernelOverheadFactor;
  const cpuMs = ((accum * (kernels / pp) + (tensors / pp) * 0.1) * launchUs) / 1e3;
  const gpuMs =
    accum * (stageFwd + stageBwd) +
    optimizerMs +
    mixedPrecisionMs +
    recomputeMs +
    tensorParallelMs +
    expertParallelMs;

  // The CPU dispatches kernels while the GPU runs earlier ones: only dispatch time beyond the GPU's
  // own time shows (small batches, small models, fast GPUs).
  const overheadMs = Math.max(0, cpuMs - gpuMs) + eff.stepOverheadMs;
  const gradientBytes = trained * BYTES[policy.gradientReduce ?? policy.gradients];
  if (!par)
    return {
      forwardMs: accum * stageFwd,
      backwardMs: accum * stageBwd,
      optimizerMs,
      mixedPrecisionMs,
      overheadMs,
      gradientBytes,
      dominantMath,
    };
  // Built by assignment, in the order the fields are listed, rather than with conditional spreads:
  // the parallel search asks for some hundred thousand of these per request, and an object literal
  // with spreads is copied property by property at each one.
  const time: ComputeTime = {
    forwardMs: accum * stageFwd,
    backwardMs: accum * stageBwd,
    optimizerMs,
    mixedPrecisionMs,
    overheadMs,
    gradientBytes,
    dominantMath,
    recomputeMs,
    tensorParallelMs,
  };
  if (ep > 1) time.expertParallelMs = expertParallelMs;
  if (Pe > 0) {
    time.expertGradientBytes = exec.frozenBase ? 0 : Pe * BYTES[policy.gradientReduce ?? policy.gradients];
    time.expertWeightBytes = Pe * BYTES[gathered];
  }
  // 1F1B: the last micro-batch leaves the pipeline (PP - 1) stage times after a full pipeline would;
  // interleaving v chunks per GPU makes each of those slots 1/v as long.
  time.pipelineBubbleMs =
    ((pp - 1) / v) * (stageFwd + stageBwd + stageRecompute + stageTp + stageCp + stageEp);
  time.weightBytes = P * BYTES[gathered];
  if (s && s.blocks > 0) time.shardUnits = Math.max(1, Math.round(s.blocks / pp));
  // The residual stream of one micro-batch; with sequence parallelism each TP rank sends its 1/TP,
  // with context parallelism each CP rank its 1/CP.
  time.stageBoundaryBytes = (B * (s?.residualElements ?? 0) * BYTES[policy.activation.matmul]) / t / cp;
  return time;
}

/** A GPU's share of its dense and expert parameters when the first are split `dense` and the experts `experts` ways. */
const heldParameters = (Pd: number, Pe: number, dense: number, experts: number) => Pd / dense + Pe / experts;

/**
 * Unidirectional bytes/s one GPU can push over its node's link for a ring of `gpusPerNode`, at
 * `efficiency` of the link (default: the calibrated data-parallel figure).
 */
export function intraNodeBandwidth(
  gpu: GpuSpec,
  gpusPerNode: number,
  eff: Efficiency,
  efficiency = eff.linkEfficiency,
): number {
  // No figure: the PCIe link every card has. A 2-way bridge connects pairs only, so a larger ring crosses PCIe.
  let bidir = gpu.intraNodeBwGbpsBidir || gpu.pcieBwGbpsBidir;
  if (!gpu.hasNvlinkFabric && gpusPerNode > 2 && /bridge/i.test(gpu.intraNodeLink))
    bidir = gpu.pcieBwGbpsBidir;
  return (bidir / 2) * 1e9 * efficiency;
}

/** Gradient all-reduce: total time and the part not hidden behind backward, ms. */
export function communicationTime(
  gradientBytes: number,
  backwardMs: number,
  gpu: GpuSpec,
  exec: Pick<Execution, 'gpusPerNode' | 'nodes' | 'interNodeGbps' | 'interNodeTransport' | 'stack'>,
  fitted: Efficiency,
  /** How many collectives move the bytes (each pays the latency); default: DDP's buckets of bucketMb. */
  collectives?: number,
): { totalMs: number; exposedMs: number } {
  const eff = withStackOverlap(fitted, exec.stack);
  const g = exec.gpusPerNode,
    N = exec.nodes;
  if (g * N <= 1 || gradientBytes <= 0) return { totalMs: 0, exposedMs: 0 };
  const buckets = collectives ?? Math.max(1, Math.ceil(gradientBytes / (eff.bucketMb * 1e6)));
  let seconds = 0;
  // Inside the node: the NCCL bus bandwidth measured for a bucket-sized message (latency included),
  // times the fitted fraction left while the all-reduce shares the GPU with backward.
  const bucketBytes = Math.min(gradientBytes, eff.bucketMb * 1e6);
  if (g > 1)
    seconds +=
      (((2 * (g - 1)) / g) * gradientBytes) /
      (intraNodeBandwidth(gpu, g, eff) * allReduceLinkFraction(gpu, bucketBytes));
  if (N > 1) {
    // Hierarchical: reduce-scatter inside the node, all-reduce of each GPU's shard across nodes over
    // the node's NICs (shared by its g GPUs), all-gather inside the node.
    // Latency: NCCL's trees across nodes take about log2(N) hops each way per bucket, not a ring's N - 1
    // (a ring's latency would make a 256-node all-gather of 70B parameters take a minute).
    const net = interNodeRate(exec, eff);
    seconds +=
      (((2 * (N - 1)) / N) * gradientBytes) / net +
      buckets * 2 * Math.ceil(Math.log2(N)) * eff.allReduceLatencyUs * 1e-6;
  }
  const totalMs = seconds * 1e3;
  const lastBucketMs = totalMs / buckets;
  return {
    totalMs,
    exposedMs: withInterference(
      totalMs,
      Math.max(lastBucketMs, totalMs - eff.overlapFraction * backwardMs),
      eff,
    ),
  };
}

/**
 * DDP's gradient all-reduce (plain data parallelism, and PyTorch's ZeroRedundancyOptimizer over it):
 * accumulating over m micro-batches, DDP runs the first m - 1 under no_sync, so only the last one's
 * backward can hide it.
 */
const ddpAllReduce = (
  gradientBytes: number,
  c: Pick<ComputeTime, 'backwardMs'>,
  m: number,
  gpu: GpuSpec,
  layout: Parameters<typeof communicationTime>[3],
  eff: Efficiency,
) => communicationTime(gradientBytes, c.backwardMs / m, gpu, layout, eff);

/**
 * Hidden communication is not free: NCCL's kernels run on SMs and read HBM that the compute they hide
 * behind would use, so a fraction `overlapInterference` of the hidden time still lengthens the step.
 */
const withInterference = (totalMs: number, exposedMs: number, eff: Pick<Efficiency, 'overlapInterference'>) =>
  exposedMs + (eff.overlapInterference ?? 0) * Math.max(0, totalMs - exposedMs);

/** The part of a bucketed collective of `bytes` taking `ms` that no compute can hide: its last bucket. */
const lastBucketMs = (ms: number, bytes: number, eff: Efficiency) =>
  ms / Math.max(1, Math.ceil(bytes / (eff.bucketMb * 1e6)));

/** Communication a step adds beyond compute: all of it, the part not hidden, and (with parallelism) by kind. */
export interface Communication {
  totalMs: number;
  exposedMs: number;
  /** Data-parallel all-reduce, or ZeRO's reduce-scatters and all-gathers. Default: totalMs. */
  dataParallelMs?: number;
  /** Pipeline sends between stages. Default: 0. */
  pipelineMs?: number;
  /** Of exposedMs (and of dataParallelMs): the wait for the slowest GPU (synchronizationWaitMs). Default: 0. */
  waitMs?: number;
}

type GroupLayout = Pick<Execution, 'gpusPerNode' | 'nodes' | 'interNodeGbps' | 'interNodeTransport'>;

/** The data-parallel group of a GPU when `stride` consecutive GPUs hold different weights. */
function groupLayout(
  exec: Pick<Execution, 'gpusPerNode' | 'interNodeGbps' | 'interNodeTransport'>,
  members: number,
  stride: number,
): GroupLayout {
  const g = exec.gpusPerNode;
  const perNode = Math.max(1, Math.floor(g / stride));
  return {
    gpusPerNode: perNode,
    nodes: members / perNode,
    interNodeGbps: exec.interNodeGbps / Math.min(g, stride),
    interNodeTransport: exec.interNodeTransport,
  };
}

/** Reducing gradients of G bytes (and, under ZeRO, gathering weights of W bytes) over `members` GPUs. */
function reduction(
  {
    c,
    gpu,
    eff,
    z,
    m,
    pp,
    zero,
  }: {
    c: ComputeTime;
    gpu: GpuSpec;
    eff: Efficiency;
    z: ZeroStage;
    m: number;
    pp: number;
    /** How the stack runs ZeRO-1 and -2 (parallel.ts shardsWeightsOf, allReducesGradientsOf). */
    zero: ZeroImplementation;
  },
  G: number,
  W: number,
  members: number,
  layout: GroupLayout,
): { total: number; exposed: number } {
  if (!(members > 1)) return { total: 0, exposed: 0 };
  if (allReducesGradientsOf(z, zero)) {
    // DDP all-reduces the gradients behind backward; under ZeRO-1 as PyTorch's
    // ZeroRedundancyOptimizer each rank then broadcasts its updated shard, with nothing to hide
    // behind: one reduce-scatter's worth more than the distributed optimizer below. (A frozen base
    // has nothing to reduce or broadcast.)
    const r = ddpAllReduce(G, c, m, gpu, layout, eff);
    const broadcast = z === 1 && G > 0 ? communicationTime(W, 0, gpu, layout, eff).totalMs / 2 : 0;
    return { total: r.totalMs + broadcast, exposed: r.exposedMs + broadcast };
  }
  if (!(z === 3 || G > 0)) return { total: 0, exposed: 0 };
  // (ZeRO-1/2 with nothing trained, a frozen base, has no gradients to reduce and no updated
  // weights to gather; ZeRO-3 still gathers the frozen weights.)
  // A ring reduce-scatter or all-gather moves (n-1)/n of the data: half an all-reduce.
  // FSDP (ZeRO-3, and ZeRO-2 as SHARD_GRAD_OP) gathers and reduce-scatters one unit (a transformer
  // block) per collective, not DDP's 25 MB buckets: the latency counts once per block.
  const fsdp = shardsWeightsOf(z, zero);
  const units = fsdp ? c.shardUnits : undefined;
  const rs = communicationTime(G, 0, gpu, layout, eff, units).totalMs / 2,
    ag = communicationTime(W, 0, gpu, layout, eff, units).totalMs / 2;
  if (!fsdp) {
    // ZeRO-1 (Megatron's distributed optimizer) reduce-scatters once per step, as the last
    // micro-batch's backward produces the gradients (the earlier ones only accumulate), so only that
    // backward hides it; ZeRO-2 with the weights whole on every GPU (DeepSpeed's) reduce-scatters
    // every micro-batch, behind every backward. The updated weights are all-gathered after the
    // optimizer step, with nothing left to hide behind.
    const rsTotal = (z === 2 ? m : 1) * rs;
    const hidingMs = z === 2 ? c.backwardMs : c.backwardMs / m;
    return {
      total: rsTotal + ag,
      exposed:
        withInterference(
          rsTotal,
          Math.max(lastBucketMs(rs, G, eff), rsTotal - eff.overlapFraction * hidingMs),
          eff,
        ) + ag,
    };
  }
  if (unshardedStageOf(pp, z)) {
    // ZeRO-3 under a pipeline (torchtitan's): each stage gathers its weights once, at its first
    // micro-batch's forward, prefetching all but the first unit behind that forward; its gradients
    // are reduce-scattered once, after the last backward (pipelining's REDUCE_GRAD), with no
    // compute left on the first stage to hide them behind.
    return {
      total: ag + rs,
      exposed: withInterference(
        ag + rs,
        Math.max(
          units ? ag / units : lastBucketMs(ag, W, eff),
          ag - (eff.overlapFraction * c.forwardMs) / m,
        ) + rs,
        eff,
      ),
    };
  }
  // FSDP: every micro-batch gathers the weights before its forward and, under ZeRO-3 (FULL_SHARD,
  // which frees them after forward), again before its backward, and reduce-scatters its gradients;
  // prefetching hides them behind the compute. ZeRO-2 (SHARD_GRAD_OP) keeps the forward's gather to
  // the end of the backward: two thirds of ZeRO-3's traffic, and none of it after the optimizer
  // step, where DeepSpeed's stage 2 gathers with nothing to hide behind.
  const total = m * ((z === 3 ? 2 : 1) * ag + rs);
  return {
    total,
    exposed: withInterference(
      total,
      Math.max(
        units ? ag / units : lastBucketMs(ag, W, eff),
        total - eff.overlapFraction * (c.forwardMs + c.backwardMs),
      ),
      eff,
    ),
  };
}

/** The compute terms of a step: what stepMs adds up besides communication, and what a GPU's spread applies to. */
export type StepCompute = Pick<
  ComputeTime,
  | 'forwardMs'
  | 'backwardMs'
  | 'optimizerMs'
  | 'mixedPrecisionMs'
  | 'overheadMs'
  | 'recomputeMs'
  | 'tensorParallelMs'
  | 'expertParallelMs'
  | 'pipelineBubbleMs'
>;

/**
 * E[max of n independent standard normals]: how many standard deviations the slowest of n GPUs is
 * behind their mean step (0 for one GPU, 0.56 for two, 1.42 for 8, 3.0 for 512). Integrated on a
 * grid, once per n.
 */
export function expectedMaxOfNormals(n: number): number {
  if (!(n > 1)) return 0;
  let e = maxOfNormals.get(n);
  if (e === undefined) {
    // E[max] = integral of x n phi(x) Phi(x)^(n-1); the integrand is negligible outside [-8, 8].
    const h = 0.005;
    e = 0;
    for (let x = -8; x <= 8; x += h) {
      const phi = Math.exp((-x * x) / 2) / Math.sqrt(2 * Math.PI);
      e += x * n * phi * Math.pow(normalCdf(x), n - 1) * h;
    }
    maxOfNormals.set(n, e);
  }
  return e;
}
const maxOfNormals = new Map<number, number>();

/** Standard normal CDF (Abramowitz and Stegun 7.1.26 for erf, error under 1.5e-7). */
function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const erf =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
      t *
      Math.exp(-z * z);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/**
 * Waiting for the slowest GPU. A synchronous step ends when every GPU's gradients are reduced, so it
 * takes the slowest GPU's compute, not the mean one's. Each GPU's step varies (clocks under power and
 * thermal limits, its data loader, the OS) with a coefficient of variation `stragglerCv`; for n
 * independent GPUs the slowest is expectedMaxOfNormals(n) standard deviations behind. Profilers show
 * this wait inside the all-reduce, so it counts as exposed communication. It is what measured
 * data-parallel scaling loses where the all-reduce itself is small: DeepLearningExamples' NVLink runs
 * lose 2-4% on 2-8 GPUs with under 3% of their step in communication.
 */
export function synchronizationWaitMs(
  c: StepCompute,
  gpus: number,
  eff: Pick<Efficiency, 'stragglerCv' | 'stragglerFittedGpus'>,
): number {
  const cv = eff.stragglerCv ?? 0;
  return cv > 0 ? cv * expectedMaxOfNormals(stragglerGpus(gpus, eff)) * stepMs(c, { exposedMs: 0 }) : 0;
}

/**
 * The GPU count the slowest-GPU wait is taken at: beyond the most GPUs a scaling pair measured, held
 * at that count, since independent spreads would keep the wait growing (3.0 sd at 512 GPUs) but the
 * measured runs of 32-512 GPUs do not slow so. Where it is below `gpus`, the wait is an extrapolation.
 */
export function stragglerGpus(gpus: number, eff: Pick<Efficiency, 'stragglerFittedGpus'>): number {
  return Math.min(gpus, eff.stragglerFittedGpus ?? gpus);
}

/**
 * Everything a step communicates besides TP (which computeTime counts, since it does not depend on
 * the GPU count): the data-parallel group's gradient reduction (ZeRO's variants) and pipeline sends.
 * Megatron's placement: a replica's TP ranks sit side by side in a node, then its pipeline stages,
 * then the next replica; so the DP group of a GPU has max(1, GPUs per node / (TP x PP)) members per
 * node, and the min(GPUs per node, TP x PP) DP groups of a node share its network.
 */
export function parallelCommunicationTime(
  c: ComputeTime,
  gpu: GpuSpec,
  exec: Pick<
    Execution,
    | 'gpusPerNode'
    | 'nodes'
    | 'interNodeGbps'
    | 'interNodeTransport'
    | 'gradAccumSteps'
    | 'parallelism'
    | 'stack'
  >,
  fitted: Efficiency,
): Communication {
  const par = exec.parallelism;
  const t = par?.tensorParallel ?? 1,
    pp = par?.pipelineParallel ?? 1,
    z = par?.zeroStage ?? 0,
    ep = par?.expertParallel ?? 1;
  const fx = stackEffects(exec.stack ?? DEFAULT_STACK);
  const eff = withStackOverlap(fitted, exec.stack, z >= 2);
  const wait = synchronizationWaitMs(c, exec.gpusPerNode * exec.nodes, eff);
  if (!par || (t === 1 && pp === 1 && z === 0 && ep === 1)) {
    const r = ddpAllReduce(c.gradientBytes, c, exec.gradAccumSteps, gpu, exec, eff);
    return { totalMs: r.totalMs + wait, exposedMs: r.exposedMs + wait, waitMs: wait };
  }
  const g = exec.gpusPerNode,
    replica = t * pp;
  const dp = (g * exec.nodes) / replica;
  const m = microBatchesOf(par, exec.gradAccumSteps);
  const Ge = c.expertGradientBytes ?? 0,
    We = c.expertWeightBytes ?? 0;
  const ctx = {
    c,
    gpu,
    eff,
    z,
    m,
    pp,
    zero: fx,
  };
  // The experts' gradients are reduced (and under ZeRO their weights gathered) over the GPUs holding
  // the same experts: every EP-th GPU of a stage (expert rank order tp-ep-dp with ETP = 1).
  const dense = reduction(
    ctx,
    c.gradientBytes - Ge,
    (c.weightBytes ?? 0) - We,
    dp,
    groupLayout(exec, dp, replica),
  );
  const edp = expertGradientGroup(dp, par);
  const experts =
    Ge > 0 || We > 0 ? reduction(ctx, Ge, We, edp, groupLayout(exec, edp, ep)) : { total: 0, exposed: 0 };
  const dpTotal = dense.total + experts.total + wait,
    dpExposed = dense.exposed + experts.exposed + wait;
  // Pipeline: every micro-batch's activations cross each stage boundary forward and their gradients
  // backward, on the critical path: (m + PP - 1) stage slots of one send each way. Stages share a node
  // while a replica fits in one; otherwise the boundary stage's TP ranks share the node's network.
  let ppTotal = 0;
  if (pp > 1) {
    const link =
      replica <= g
        ? intraNodeBandwidth(gpu, g, eff, eff.collectiveLinkEfficiency ?? 0.8)
        : interNodeRate(exec, eff) / t;
    // Interleaving sends each micro-batch across v x PP chunk boundaries instead of PP.
    const v = par.virtualPipelineStages ?? 1;
    ppTotal =
      (m * v + pp - 1) * 2 * 1e3 * ((c.stageBoundaryBytes ?? 0) / link + eff.allReduceLatencyUs * 1e-6);
  }
  return {
    totalMs: dpTotal + ppTotal,
    exposedMs: dpExposed + ppTotal,
    dataParallelMs: dpTotal,
    pipelineMs: ppTotal,
    waitMs: wait,
  };
}

export interface StepTime {
  stepTimeMs: number;
  breakdown: Breakdown;
  /** Batch elements per optimizer step over all GPUs (over the data-parallel replicas with TP/PP). */
  globalBatch: number;
  dominantMath: MathMode;
}

/** The step time: every compute term plus the communication not hidden behind compute. */
export function stepMs(c: StepCompute, comm: Pick<Communication, 'exposedMs'>): number {
  return (
    c.forwardMs +
    c.backwardMs +
    c.optimizerMs +
    c.mixedPrecisionMs +
    comm.exposedMs +
    c.overheadMs +
    (c.recomputeMs ?? 0) +
    (c.tensorParallelMs ?? 0) +
    (c.expertParallelMs ?? 0) +
    (c.pipelineBubbleMs ?? 0)
  );
}

/** Every part of a breakdown times k: a learned correction scales the whole step, keeping the analytical proportions. */
export function scaleBreakdown(b: Breakdown, k: number): Breakdown {
  return Object.fromEntries(Object.entries(b).map(([name, ms]) => [name, ms * k])) as unknown as Breakdown;
}

/** Puts the compute part and the communication part of a step together. */
export function combine(
  c: ComputeTime,
  comm: Communication,
  exec: Pick<Execution, 'batchSizePerGpu' | 'gradAccumSteps' | 'gpusPerNode' | 'nodes'> & {
    parallelism?: Parallelism;
  },
): StepTime {
  const tp = c.tensorParallelMs ?? 0,
    ep = c.expertParallelMs ?? 0,
    recompute = c.recomputeMs ?? 0,
    bubble = c.pipelineBubbleMs ?? 0;
  const breakdown: Breakdown = {
    forwardMs: c.forwardMs,
    backwardMs: c.backwardMs,
    optimizerMs: c.optimizerMs,
    mixedPrecisionMs: c.mixedPrecisionMs,
    communicationMs: comm.exposedMs + tp + ep,
    communicationTotalMs: comm.totalMs + tp + ep,
    overheadMs: c.overheadMs,
    recomputeMs: recompute,
    pipelineBubbleMs: bubble,
    dataParallelCommMs: comm.dataParallelMs ?? comm.totalMs,
    tensorParallelCommMs: tp,
    pipelineCommMs: comm.pipelineMs ?? 0,
    expertParallelCommMs: ep,
    synchronizationWaitMs: comm.waitMs ?? 0,
  };
  const stepTimeMs = stepMs(c, comm);
  const p = exec.parallelism;
  const globalBatch = p
    ? exec.batchSizePerGpu *
      exec.gradAccumSteps *
      ((exec.gpusPerNode * exec.nodes) / (p.tensorParallel * p.pipelineParallel * (p.contextParallel ?? 1)))
    : exec.batchSizePerGpu * exec.gradAccumSteps * exec.gpusPerNode * exec.nodes;
  return { stepTimeMs, breakdown, globalBatch, dominantMath: c.dominantMath };
}

/** One step, end to end. */
export function stepTime(
  model: Pick<ModelDef, 'optimizer'>,
  cost: ModelCost,
  gpu: GpuSpec,
  exec: Execution,
  eff: Efficiency,
): StepTime {
  const c = computeTime(model, cost, gpu, exec, eff);
  return combine(c, parallelCommunicationTime(c, gpu, exec, eff), exec);
}
