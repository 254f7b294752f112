// What each precision mode means for the hardware: which math mode each class of layer runs in,
// how many bytes each tensor takes, and what the mode costs beyond the math. One table, so the
// meaning of a mode lives in one place.
import {
  PRECISIONS,
  type DType,
  type GpuSpec,
  type LayerCost,
  type ModelCost,
  type MathMode,
  type OpClass,
  type OptimizerKind,
  type Precision,
} from './types.js';
import type { MasterWeights } from '../seeds/types.js';

export const BYTES: Record<DType, number> = { fp32: 4, fp16: 2, bf16: 2, fp8: 1 };

/**
 * Bytes a scaled low-precision GEMM input takes per element, scales included: FP8 (e4m3/e5m2) with one
 * fp32 scale per tensor; NVFP4 with one e4m3 scale per 16-element block (MXFP4: one e8m0 per 32;
 * NVFP4's 1/16 is the larger).
 */
export const SCALED_INPUT_BYTES = { fp8: 1, fp4: 0.5 + 1 / 16 } as const;

export interface PrecisionPolicy {
  precision: Precision;
  /** Math mode per op class. 'matmul' is what tensor cores run; the rest are memory-bound passes. */
  math: Record<OpClass, MathMode>;
  /** Storage type of activations written by each op class. */
  activation: Record<OpClass, DType>;
  /** Working copy of the weights the kernels read. */
  weights: DType;
  /** Gradients as the backward pass produces them and the all-reduce sends them. */
  gradients: DType;
  /**
   * What the data-parallel reduction sends when it differs from the gradient buffers: Transformer
   * Engine accumulates into fp32 main_grad buffers (memory) while Megatron-Core reduces in bf16 by
   * default (grad_reduce_in_fp32 off), as its BF16 runs do.
   */
  gradientReduce?: DType;
  /** An fp32 master copy next to low-precision working weights. */
  masterWeights: boolean;
  /** Optimizer state element type (Adam's m and v, SGD's momentum). */
  optimizerState: DType;
  /** Dynamic loss scaling: unscale + inf/nan check over all gradients every step. */
  lossScaling: boolean;
  /** Autocast re-casts fp32 weights to the math type on every forward (read 4, write 2 bytes per parameter). */
  castsWeightsEachStep: boolean;
  /**
   * Matmul inputs quantized with scaling (Transformer Engine): an amax and a cast pass over each
   * activation (forward) and output gradient (backward), and a cast of the weights once per step.
   * The type the GEMMs read; absent = the GEMMs read the working types.
   */
  scaledGemmInput?: keyof typeof SCALED_INPUT_BYTES;
  /**
   * The weights are cast to the scaled type at every forward (every micro-batch) rather than once
   * per step: Transformer Engine keeps the quantized copy across micro-batches only when the loop
   * says which is the first (is_first_microbatch), which a stock loop does not.
   */
  recastsScaledWeights?: boolean;
  /**
   * Element type a GEMM or convolution saves its input in for backward: the math type under autocast
   * (it saves the cast copy), FP8 under Transformer Engine (its Linear saves the FP8-cast input).
   */
  savedGemmInput: DType;
  /**
   * Low-precision copies of the weights made in forward and kept for backward: autocast caches one
   * cast per weight for the whole forward, and the GEMMs save it; Transformer Engine keeps each
   * weight in FP8 and its FP8 transpose (copies: 2). null where the kernels read the stored weights.
   * `blockLinearsOnly`: only the linears inside the transformer blocks have the copies (Transformer
   * Engine's modules; the embedding and the output layer stay in bf16 in Megatron-Core and torchtitan's
   * float8 conversion skips the output layer).
   */
  forwardWeightCopy: { dtype: DType; copies: number; blockLinearsOnly?: boolean } | null;
  description: string;
}

const allFp32 = { matmul: 'fp32', reduction: 'fp32', pointwise: 'fp32', gather: 'fp32' } as const;

export const POLICIES: Record<Precision, PrecisionPolicy> = {
  FP32: {
    precision: 'FP32',
    math: { ...allFp32 },
    activation: { ...allFp32 },
    weights: 'fp32',
    gradients: 'fp32',
    masterWeights: false,
    optimizerState: 'fp32',
    lossScaling: false,
    castsWeightsEachStep: false,
    savedGemmInput: 'fp32',
    forwardWeightCopy: null,
    description:
      'fp32 storage and math. On Ampere and newer, framework defaults may run matmuls and convolutions in TF32 (see fp32UsesTf32).',
  },
  TF32: {
    precision: 'TF32',
    math: { ...allFp32, matmul: 'tf32' },
    activation: { ...allFp32 },
    weights: 'fp32',
    gradients: 'fp32',
    masterWeights: false,
    optimizerState: 'fp32',
    lossScaling: false,
    castsWeightsEachStep: false,
    savedGemmInput: 'fp32',
    forwardWeightCopy: null,
    description: 'fp32 storage; matmuls and convolutions on TF32 tensor cores (Ampere and newer).',
  },
  AMP_FP16: {
    precision: 'AMP_FP16',
    math: { matmul: 'fp16', reduction: 'fp32', pointwise: 'fp16', gather: 'fp32' },
    activation: { matmul: 'fp16', reduction: 'fp32', pointwise: 'fp16', gather: 'fp32' },
    weights: 'fp32',
    gradients: 'fp32',
    masterWeights: false,
    optimizerState: 'fp32',
    lossScaling: true,
    castsWeightsEachStep: true,
    savedGemmInput: 'fp16',
    forwardWeightCopy: { dtype: 'fp16', copies: 1 },
    description:
      'Automatic mixed precision, fp16: matmuls on fp16 tensor cores; softmax, layer norm, loss and reductions kept in fp32 (batch norm reads and writes fp16: autocast does not upcast it); fp32 weights cast each step; dynamic loss scaling.',
  },
  AMP_BF16: {
    precision: 'AMP_BF16',
    math: { matmul: 'bf16', reduction: 'fp32', pointwise: 'bf16', gather: 'fp32' },
    activation: { matmul: 'bf16', reduction: 'fp32', pointwise: 'bf16', gather: 'fp32' },
    weights: 'fp32',
    gradients: 'fp32',
    masterWeights: false,
    optimizerState: 'fp32',
    lossScaling: false,
    castsWeightsEachStep: true,
    savedGemmInput: 'bf16',
    forwardWeightCopy: { dtype: 'bf16', copies: 1 },
    description:
      'Automatic mixed precision, bf16: as AMP_FP16 but bf16 tensor cores and no loss scaling (bf16 has fp32 range).',
  },
  FP16: {
    precision: 'FP16',
    math: { matmul: 'fp16', reduction: 'fp32', pointwise: 'fp16', gather: 'fp16' },
    activation: { matmul: 'fp16', reduction: 'fp16', pointwise: 'fp16', gather: 'fp16' },
    weights: 'fp16',
    gradients: 'fp16',
    masterWeights: true,
    optimizerState: 'fp32',
    lossScaling: true,
    castsWeightsEachStep: false,
    savedGemmInput: 'fp16',
    forwardWeightCopy: null,
    description:
      'Half-precision model with fp32 master weights (apex O2): fp16 weights, activations and gradients; normalization math in fp32; loss scaling.',
  },
  FP16_PURE: {
    precision: 'FP16_PURE',
    math: { matmul: 'fp16', reduction: 'fp16', pointwise: 'fp16', gather: 'fp16' },
    activation: { matmul: 'fp16', reduction: 'fp16', pointwise: 'fp16', gather: 'fp16' },
    weights: 'fp16',
    gradients: 'fp16',
    masterWeights: false,
    optimizerState: 'fp16',
    lossScaling: true,
    castsWeightsEachStep: false,
    savedGemmInput: 'fp16',
    forwardWeightCopy: null,
    description: 'Everything in fp16 (apex O3): no master copy, fp16 optimizer state.',
  },
  BF16: {
    precision: 'BF16',
    math: { matmul: 'bf16', reduction: 'fp32', pointwise: 'bf16', gather: 'bf16' },
    activation: { matmul: 'bf16', reduction: 'bf16', pointwise: 'bf16', gather: 'bf16' },
    weights: 'bf16',
    gradients: 'bf16',
    masterWeights: true,
    optimizerState: 'fp32',
    lossScaling: false,
    castsWeightsEachStep: false,
    savedGemmInput: 'bf16',
    forwardWeightCopy: null,
    description:
      'bf16 model with fp32 master weights and optimizer state (Megatron/DeepSpeed "bf16"); no loss scaling.',
  },
  FP8: {
    precision: 'FP8',
    math: { matmul: 'fp8', reduction: 'fp32', pointwise: 'bf16', gather: 'fp32' },
    activation: { matmul: 'bf16', reduction: 'fp32', pointwise: 'bf16', gather: 'fp32' },
    // Transformer Engine's recipe as Megatron-Core runs it: bf16 weights, fp32 gradients (its
    // main_grad buffers), fp32 master weights and moments in the optimizer, FP8 only for GEMM inputs:
    // each weight's FP8 copy and its transpose are kept for the step, and each Linear saves its
    // FP8-cast input for backward. 2 + 4 + 4 + 8 + 2 bytes per parameter.
    weights: 'bf16',
    gradients: 'fp32',
    gradientReduce: 'bf16',
    masterWeights: true,
    optimizerState: 'fp32',
    lossScaling: false,
    castsWeightsEachStep: false,
    scaledGemmInput: 'fp8',
    savedGemmInput: 'fp8',
    forwardWeightCopy: { dtype: 'fp8', copies: 2, blockLinearsOnly: true },
    description:
      'FP8 as Transformer Engine runs under Megatron-Core (what the MEGATRON, TUNED and TORCH_COMPILE stacks assume; Hopper, Ada and newer): matmul inputs cast to FP8 with per-tensor scaling (delayed amax), GEMMs on FP8 tensor cores with bf16 outputs; bf16 weights and activations elsewhere; fp32 gradient buffers (main_grad), master weights and optimizer state; weights cast to FP8 once per step (kept with their transpose) and all-gathered (ZeRO-3/FSDP) in bf16.',
  },
  FP4: {
    precision: 'FP4',
    math: { matmul: 'fp4', reduction: 'fp32', pointwise: 'bf16', gather: 'bf16' },
    activation: { matmul: 'bf16', reduction: 'bf16', pointwise: 'bf16', gather: 'bf16' },
    // As FP8 with FP4 GEMM inputs. Memory counts the saved inputs and weight copies at FP8's byte
    // (there is no 4-bit storage type here): an upper bound by about 2x on those two terms.
    weights: 'bf16',
    gradients: 'fp32',
    gradientReduce: 'bf16',
    masterWeights: true,
    optimizerState: 'fp32',
    lossScaling: false,
    castsWeightsEachStep: false,
    scaledGemmInput: 'fp4',
    savedGemmInput: 'fp8',
    forwardWeightCopy: { dtype: 'fp8', copies: 2, blockLinearsOnly: true },
    description:
      'FP4 training (NVFP4 / MXFP4, on GPUs whose datasheet gives an FP4 rate: Blackwell) as Megatron-Core stores it (what the MEGATRON, TUNED and TORCH_COMPILE stacks assume): matmul inputs quantized to FP4 with block scales (16 elements per e4m3 scale for NVFP4), GEMMs on FP4 tensor cores with bf16 outputs; bf16 elsewhere; fp32 gradient buffers, master weights and optimizer state. No FP4 training run or FP4 kernel is measured here: estimates are unmeasured.',
  },
};

/**
 * The type FSDP gathers a mode's weights in: under AMP (fp32 weights autocast casts to a 16-bit copy
 * at each forward) FSDP's mixed precision gathers that copy; otherwise the weights as stored (FP8
 * under Transformer Engine casts the gathered weight itself).
 */
export function fsdpGatherType(policy: PrecisionPolicy): DType {
  const copy = policy.forwardWeightCopy;
  return policy.castsWeightsEachStep && copy && BYTES[copy.dtype] === 2 ? copy.dtype : policy.weights;
}

/**
 * A precision mode's storage as a stock PyTorch loop trains it (PYTORCH_EAGER). FP8 and FP4 there are
 * Transformer Engine's modules in place of nn.Linear, under torch.autocast(bf16) and fp8_autocast,
 * as Hugging Face accelerate and trainplan's harness run them: the model stays fp32 as under AMP,
 * so there is no master copy, the gradients are fp32 and data parallelism reduces them in fp32
 * (DDP) and gathers fp32 weights (FSDP), and each linear's fp32 weight is cast to the scaled type at
 * every forward. POLICIES' FP8 and FP4 are Megatron-Core's recipe (bf16 weights, fp32 main_grad
 * and master, bf16 reductions), what the published FP8 runs trained; a stock loop that keeps bf16
 * weights with a master copy says so with the layout's masterWeights, and gets that recipe's
 * storage. The other modes store the same on every stack.
 */
export function stockLoopPolicy(precision: Precision): PrecisionPolicy {
  return STOCK_LOOP[precision] ?? POLICIES[precision];
}

/**
 * The storage a step keeps in `precision`: a stock loop's (stockLoopPolicy) where it runs on
 * PYTORCH_EAGER and its layout states no master weights (stating them says the code keeps bf16
 * weights beside a master copy, the recipe of POLICIES), else POLICIES'. The math is the same.
 */
export function storagePolicy(
  precision: Precision,
  stockLoop: boolean,
  masterWeights: MasterWeights | undefined,
): PrecisionPolicy {
  return stockLoop && masterWeights === undefined ? stockLoopPolicy(precision) : POLICIES[precision];
}

const fp32Model = (p: PrecisionPolicy, description: string): PrecisionPolicy => ({
  ...p,
  weights: 'fp32',
  gradients: 'fp32',
  gradientReduce: undefined,
  masterWeights: false,
  recastsScaledWeights: true,
  description,
});

const STOCK_LOOP: Partial<Record<Precision, PrecisionPolicy>> = {
  FP8: fp32Model(
    POLICIES.FP8,
    "FP8 as Transformer Engine runs in a stock PyTorch loop (Hopper, Ada and newer; its Linear in place of nn.Linear under torch.autocast(bf16) and fp8_autocast, as Hugging Face accelerate and trainplan's harness run it): matmul inputs cast to FP8 with per-tensor scaling, GEMMs on FP8 tensor cores with bf16 outputs; bf16 activations elsewhere; the model, its gradients (reduced in fp32) and the optimizer state fp32, no master copy; each weight cast to FP8 at every forward (kept with its transpose for backward).",
  ),
  FP4: fp32Model(
    POLICIES.FP4,
    'FP4 training (NVFP4 / MXFP4, on GPUs whose datasheet gives an FP4 rate: Blackwell) as Transformer Engine runs in a stock PyTorch loop: matmul inputs quantized to FP4 with block scales, GEMMs on FP4 tensor cores with bf16 outputs; bf16 activations elsewhere; the model, its gradients and the optimizer state fp32, no master copy. No FP4 training run or FP4 kernel is measured here: estimates are unmeasured.',
  ),
};

/**
 * The math mode a matmul really runs in. FP32 on Ampere-and-newer is TF32 when the framework
 * allows it: cuDNN convolutions do by default in PyTorch, and NGC containers and TensorFlow enable it
 * for matmuls too (the measurements flag these rows `fp32_on_tf32_capable_gpu`).
 */
export function effectiveMath(
  policy: PrecisionPolicy,
  op: OpClass,
  gpu: GpuSpec,
  fp32UsesTf32: boolean,
): MathMode {
  const m = policy.math[op];
  if (m === 'fp32' && op === 'matmul' && fp32UsesTf32 && gpu.peakTflops.tf32 !== null) return 'tf32';
  return m;
}

/**
 * The element type a layer's activations move in. A policy's `activation` is per op class, but
 * autocast keeps batch norm out of its fp32 list (cuDNN batch norm reads and writes the input's
 * type and keeps fp32 statistics in registers; TensorFlow's mixed-precision graph rewrite treats
 * FusedBatchNormV3 the same way), so under AMP a batch norm moves the 16-bit type of the convolution
 * before it, where layer norm, softmax and the loss are upcast to fp32. seeds/memory.json's
 * `norm.batchnorm` rule says the same for what it saves.
 */
export function activationType(policy: PrecisionPolicy, l: { opClass: OpClass; kind?: string }): DType {
  if (l.opClass === 'reduction' && (l.kind === 'batchnorm' || l.kind === 'frozen_batchnorm'))
    return policy.activation.pointwise;
  return policy.activation[l.opClass];
}

/** Peak for a math mode; fp16/bf16 pointwise passes run on the vector units at about the fp32 rate (they are memory-bound anyway). */
export function peakTflops(gpu: GpuSpec, math: MathMode, op: OpClass): number | null {
  if (op !== 'matmul') return gpu.peakTflops.fp32;
  return gpu.peakTflops[math];
}

/** Why a GPU cannot run a precision mode, or null when it can. */
export function unsupportedReason(gpu: GpuSpec, precision: Precision): string | null {
  if (!(gpu.memoryBwGbps > 0) || !(gpu.memoryGb > 0))
    return `${gpu.id}: the catalog has no memory size or bandwidth figure, so no prediction can be made`;
  // Normalization, activations and the optimizer run on the vector units at the fp32 rate.
  if (gpu.peakTflops.fp32 === null)
    return `${gpu.id}: the catalog has no fp32 (vector) TFLOPS figure, so no prediction can be made`;
  const need = POLICIES[precision].math.matmul;
  if (gpu.peakTflops[need] !== null) return null;
  const what: Record<MathMode, string> = {
    fp32: 'fp32 math',
    tf32: 'TF32 tensor cores (Ampere and newer)',
    fp16: 'fp16 tensor cores',
    bf16: 'bf16 support (NVIDIA Ampere and newer, not V100, T4 or Turing; AMD Instinct MI100 and newer)',
    fp8: 'FP8 tensor cores (NVIDIA Hopper, Ada and newer; AMD Instinct MI300 and newer)',
    fp4: 'FP4 tensor-core rate in its datasheet (Blackwell and newer)',
  };
  return `${gpu.id} has no ${what[need]}, required by ${precision}`;
}

/** Optimizer states per parameter. */
export const OPTIMIZER_STATES: Record<OptimizerKind, number> = { sgd: 1, adam: 2, lamb: 2 };

/**
 * Bytes per parameter the optimizer step itself moves: read weight and gradient, read and write each
 * state, write the weight, all on the master copy where there is one. The master-copy traffic and
 * loss-scale unscaling are the precision mode's own cost (step.ts, mixedPrecisionMs).
 */
export function optimizerBytesPerParam(
  policy: PrecisionPolicy,
  optimizer: OptimizerKind,
  master = masterBytesOf(policy),
): number {
  const w = master > 0 ? master : BYTES[policy.weights];
  // An fp32 master is updated from fp32 gradients (the up-cast is the mode's own traffic); a bf16
  // one from the gradients as reduced.
  const g = master === BYTES.fp32 ? BYTES.fp32 : BYTES[policy.gradients];
  return 2 * w + g + 2 * OPTIMIZER_STATES[optimizer] * BYTES[policy.optimizerState];
}

/**
 * Bytes per parameter of the master weights held in memory: none in a mode without a master copy
 * (its optimizer updates the working weights); else as the optimizer keeps them (seeds/types.ts
 * MASTER_WEIGHTS): fp32 by default, 2 bytes for a bf16 copy or for the remainders beside bf16
 * weights, none where the optimizer updates the 16-bit weights themselves.
 */
export function masterBytesOf(policy: PrecisionPolicy, kept?: MasterWeights): number {
  if (!policy.masterWeights || kept === 'none') return 0;
  return kept === 'bf16' || kept === 'remainders' ? BYTES.bf16 : BYTES.fp32;
}

/**
 * Bytes per parameter of the master weights the optimizer step reads and writes: what is held,
 * except that the remainders are read and written with the bf16 weights they complete, an fp32
 * master's traffic (they have no working copy to refresh: counted as one all the same, a few
 * milliseconds per step at most).
 */
export const masterTrafficBytesOf = (policy: PrecisionPolicy, kept?: MasterWeights): number =>
  masterBytesOf(policy, kept === 'remainders' ? 'fp32' : kept);

/** Bytes per parameter held in GPU memory: working weights, gradients, optimizer state (the master copy: masterBytesOf). */
export function stateBytesPerParam(
  policy: PrecisionPolicy,
  optimizer: OptimizerKind,
): { weights: number; gradients: number; optimizer: number } {
  return {
    weights: BYTES[policy.weights],
    gradients: BYTES[policy.gradients],
    optimizer: OPTIMIZER_STATES[optimizer] * BYTES[policy.optimizerState],
  };
}

/**
 * The precision modes a search tries when the request lists none. A plan a person pays for should not
 * rest unasked on a mode whose training may not converge:
 * - FP4: no FP4 training run or FP4 kernel is measured here, and FP4 training is a research recipe
 *   (which layers stay in higher precision, whether it converges) rather than a switch a user flips.
 * - FP16_PURE (apex O3: fp16 weights, gradients and optimizer state, no fp32 master copy): its speed is
 *   measured (53 rows), but apex's own documentation presents O3 as a speed baseline that may not
 *   reach the stability of the mixed-precision levels, and no recipe trains a large model that way.
 *   Without this rule the cheapest plan for an LLM was often FP16_PURE.
 * A request that lists either in `precisions` gets its plans (FP4's with "unmeasured" evidence).
 */
export const DEFAULT_SEARCH_PRECISIONS: readonly Precision[] = PRECISIONS.filter(
  (p) => p !== 'FP4' && p !== 'FP16_PURE',
);

/**
 * The GEMMs FP8/FP4 training quantizes: those of linear layers (and weighted matmuls of imported
 * graphs), as Transformer Engine's te.Linear / LayerNormLinear / LayerNormMLP do. Convolutions and
 * recurrent cells have no TE FP8 module and stay in bf16 (so a CNN "in FP8" runs its convolutions
 * as BF16 does); attention's weightless score and context matmuls stay bf16 (fused attention runs
 * in bf16).
 */
export const quantizedGemm = (l: Pick<LayerCost, 'type' | 'opClass' | 'parameters'>): boolean =>
  l.opClass === 'matmul' && l.parameters > 0 && (l.type === 'linear' || l.type === 'matmul');

/** The share of a model's GEMM FLOPs (forward and backward) that an FP8/FP4 recipe quantizes. */
export function quantizedGemmShare(cost: Pick<ModelCost, 'layers'>): number {
  let all = 0,
    quantized = 0;
  for (const l of cost.layers) {
    if (l.opClass !== 'matmul') continue;
    const f = (l.forwardFlops + l.backwardFlops) * l.count;
    all += f;
    if (quantizedGemm(l)) quantized += f;
  }
  return all > 0 ? quantized / all : 0;
}

/**
 * FP8 is searched by default only for a model whose GEMM FLOPs are mostly in linear layers. Where
 * they are convolutions (a CNN) or recurrent cells, Transformer Engine's recipe leaves them in bf16:
 * the "FP8" run is the BF16 run plus the casts of a classifier, no recipe trains a CNN that way, and
 * the learned correction would rank it on the FP8 effect it fitted on LLM runs, an effect such a
 * model cannot have. A request that lists FP8 still gets its plans.
 */
export const FP8_MIN_QUANTIZED_SHARE = 0.5;

/** DEFAULT_SEARCH_PRECISIONS for one model: without FP8 where it would quantize little (above). */
export function defaultSearchPrecisions(cost: Pick<ModelCost, 'layers'>): Precision[] {
  const fp8 = quantizedGemmShare(cost) >= FP8_MIN_QUANTIZED_SHARE;
  return DEFAULT_SEARCH_PRECISIONS.filter((p) => p !== 'FP8' || fp8);
}
