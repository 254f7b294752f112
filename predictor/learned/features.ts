// The learned model's input: one vector per configuration, built from the analytical
// prediction (per-layer features summed by class, the breakdown), the hardware's datasheet figures,
// the precision mode, the layout, and measured evidence about the same model. Versioned: a model
// file records the version and names it was trained with, and refuses to run on others.
import { costOf } from '../predict.js';
import { publishedArchitecturesOf } from '../published-runs.js';
import { isConvolution, type Breakdown, type Execution } from '../step.js';
import { type GpuSpec, type MathMode, type ModelCost, type ModelDef } from '../types.js';
import type { Evidence } from './evidence.js';
import { DEFAULT_STACK, stackEffects } from '../software.js';
import { checkpointsBlocks, parallelStructure } from '../parallel.js';
import { correctionPrecision, LEARNED_PRECISIONS } from './precision-twins.js';

export const FEATURE_VERSION = 5;

/**
 * The training framework: the same model, GPU, precision and batch ran up to 2x apart between
 * DeepLearningExamples' PyTorch and TensorFlow implementations, so it is part of the configuration.
 */
export const FRAMEWORKS = ['PyTorch', 'TensorFlow', 'TensorFlow2', 'MXNet', 'PaddlePaddle'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/** A measurement's framework label -> one of FRAMEWORKS (DGL on PyTorch is PyTorch; CUDA-Optimized code has no framework and is closest to PyTorch). */
export function frameworkOf(label: string): Framework {
  const l = label.toLowerCase();
  if (l.includes('tensorflow2')) return 'TensorFlow2';
  if (l.includes('tensorflow')) return 'TensorFlow';
  if (l.includes('mxnet')) return 'MXNet';
  if (l.includes('paddle')) return 'PaddlePaddle';
  return 'PyTorch';
}

/** Framework and compiler: how the model is run, beyond what the hardware and precision say. */
export interface Software {
  framework: Framework;
  xla: boolean;
}
export const DEFAULT_SOFTWARE: Software = { framework: 'PyTorch', xla: false };

const GENERATION_ORDER = ['pascal', 'volta', 'turing', 'ampere', 'ada', 'hopper', 'blackwell'];

const BASE = [
  'log_analytical_step_ms',
  'frac_forward',
  'frac_backward',
  'frac_optimizer',
  'frac_mixed_precision',
  'frac_comm_exposed',
  'frac_overhead',
  'log_flops_per_gpu_step',
  'matmul_flop_fraction',
  'log_flops_per_activation',
  'frac_layers_matmul',
  'frac_layers_reduction',
  'frac_layers_pointwise',
  'frac_layers_gather',
  'log_layer_instances',
  'log_parameters',
  'log_seq_or_image',
  'log_batch',
  'log_gpus',
  'log_nodes',
  'gpus_per_node',
  'log_peak_fp32',
  'log_mem_bw',
  'sm_count',
  'boost_clock_mhz',
  'l2_mb',
  'memory_gb',
  'log_intra_bw',
  'generation',
  'nvlink_fabric',
  'evidence_same_gpu',
  'evidence_same_gpu_n',
  'evidence_same_precision',
  'evidence_same_precision_n',
  'evidence_model',
  'evidence_model_n',
  ...FRAMEWORKS.map((f) => `framework_${f}`),
  'xla',
  'evidence_same_framework',
  'evidence_same_framework_n',
  'evidence_nearest_gpu',
  'evidence_nearest_gpu_n',
  'evidence_nearest_gpu_distance',
  // The layout and the software stack: what tells a Megatron LLM run at TP 4 / PP 8 apart from a
  // stock-PyTorch CNN on 8 data-parallel GPUs. All zero or one under plain data parallelism on the
  // default stack, so a recommend's groups of plain-DP candidates share them (optimizer/pruned.ts).
  'log_tensor_parallel',
  'log_pipeline_parallel',
  'log_context_parallel',
  'log_virtual_pipeline_stages',
  'zero_stage',
  'recompute',
  'frac_pipeline_bubble',
  'frac_recompute',
  'frac_tensor_parallel_comm',
  'frac_pipeline_comm',
  // The stack as its effects (seeds/software.json), not as a name: TUNED, which no row ran, then
  // sits next to MEGATRON (same fused kernels and GEMM fraction) instead of at an unseen category.
  'stack_flash_attention',
  'stack_pointwise_bytes',
  'stack_matmul_fraction',
  'stack_launch_factor',
];
const PRECISION_AWARE = [
  'evidence_trend',
  'evidence_trend_slope',
  'evidence_trend_gpus',
  'evidence_same_gpu_same_math',
  'evidence_same_gpu_same_math_n',
  'evidence_sibling_gpu',
  'evidence_sibling_gpu_n',
  'evidence_same_precision_framework',
  'evidence_same_precision_framework_n',
  'log_peak_dominant',
  'log_ridge_point',
  'tensor_core_math',
  'fp32_uses_tf32',
  ...LEARNED_PRECISIONS.map((p) => `precision_${p}`),
];

/** Feature names, in order. The precision-unaware variant is the ablation baseline. */
export function featureNames(precisionAware: boolean): string[] {
  return precisionAware ? [...BASE, ...PRECISION_AWARE] : [...BASE];
}

/** What a model contributes, the same for every configuration: computed once per model. */
export interface ModelFeatures {
  matmulFlopFraction: number;
  flopsPerActivation: number;
  layerMix: [number, number, number, number];
  layerInstances: number;
  parameters: number;
  forwardBackwardFlops: number;
  seqOrImage: number;
  /** The model has mixture-of-experts layers (not a feature the trees see: it picks the interval and evidence). */
  mixtureOfExperts?: boolean;
  /**
   * The model has convolution layers, which no published LLM run had: the tuned stacks' effects
   * were never measured on one (not a feature the trees see: it picks the interval and evidence).
   */
  convolutional?: boolean;
  /**
   * The published LLM architectures the model is (published-runs.ts; zoo llama2_7b is Llama-2-7B):
   * not a feature the trees see, it says which published runs stand behind an answer.
   */
  publishedAs?: readonly string[];
  /**
   * How the model's code runs its attention cores, where it says (ModelCost.attention): not a feature
   * the trees see; with the stack and the request it decides whether a run and a query ran the same
   * step (model.ts correctionConfiguration).
   */
  attention?: ModelCost['attention'];
  /** The model has attention cores (scores, softmax, context): not a feature the trees see. */
  attentionCores?: boolean;
}

export function modelFeatures(model: ModelDef, cost: ModelCost): ModelFeatures {
  let matmul = 0,
    total = 0,
    instances = 0;
  const mix = { matmul: 0, reduction: 0, pointwise: 0, gather: 0 };
  for (const l of cost.layers) {
    const f = (l.forwardFlops + l.backwardFlops) * l.count;
    total += f;
    if (l.opClass === 'matmul') matmul += f;
    mix[l.opClass] += l.count;
    instances += l.count;
  }
  return {
    matmulFlopFraction: total ? matmul / total : 0,
    flopsPerActivation: cost.activationElements ? cost.forwardFlops / cost.activationElements : 0,
    layerMix: [
      mix.matmul / instances,
      mix.reduction / instances,
      mix.pointwise / instances,
      mix.gather / instances,
    ],
    layerInstances: instances,
    parameters: cost.parameters,
    forwardBackwardFlops: cost.forwardFlops + cost.backwardFlops,
    seqOrImage: model.seqLen ?? model.imageSize ?? 1,
    ...(cost.layers.some((l) => (l.experts ?? 1) > 1) ? { mixtureOfExperts: true } : {}),
    ...(cost.layers.some(isConvolution) ? { convolutional: true } : {}),
    ...(cost.attention ? { attention: cost.attention } : {}),
    ...(parallelStructure(cost).hasAttention ? { attentionCores: true } : {}),
  };
}

const modelFeatureCache = new WeakMap<ModelDef, ModelFeatures>();
/** modelFeatures of a model, computed once per model object (many rows and candidates share one). */
export function modelFeaturesOf(model: ModelDef): ModelFeatures {
  let f = modelFeatureCache.get(model);
  if (!f) {
    const publishedAs = publishedArchitecturesOf(model);
    f = { ...modelFeatures(model, costOf(model)), ...(publishedAs.length ? { publishedAs } : {}) };
    modelFeatureCache.set(model, f);
  }
  return f;
}

const ln = (x: number) => Math.log(Math.max(x, 1e-12));

/** Writes one configuration's features into `out` at `offset`. */
export function writeFeatures(
  out: Float32Array | number[],
  offset: number,
  precisionAware: boolean,
  m: ModelFeatures,
  gpu: GpuSpec,
  exec: Execution,
  stepMs: number,
  b: Breakdown,
  dominantMath: MathMode,
  ev: Evidence,
  sw: Software,
): void {
  let i = offset;
  const put = (v: number) => {
    out[i++] = Number.isFinite(v) ? v : 0;
  };
  const gpus = exec.gpusPerNode * exec.nodes;
  put(ln(stepMs));
  put(b.forwardMs / stepMs);
  put(b.backwardMs / stepMs);
  put(b.optimizerMs / stepMs);
  put(b.mixedPrecisionMs / stepMs);
  put(b.communicationMs / stepMs);
  put(b.overheadMs / stepMs);
  put(ln(m.forwardBackwardFlops * exec.batchSizePerGpu * exec.gradAccumSteps));
  put(m.matmulFlopFraction);
  put(ln(m.flopsPerActivation));
  for (const x of m.layerMix) put(x);
  put(ln(m.layerInstances));
  put(ln(m.parameters));
  put(ln(m.seqOrImage));
  put(ln(exec.batchSizePerGpu));
  put(ln(gpus));
  put(ln(exec.nodes));
  put(exec.gpusPerNode);
  put(ln(gpu.peakTflops.fp32 ?? 0));
  put(ln(gpu.memoryBwGbps));
  put(gpu.smCount ?? 0);
  put(gpu.boostClockMhz ?? 0);
  put(gpu.l2CacheMb ?? 0);
  put(gpu.memoryGb);
  put(ln(gpu.intraNodeBwGbpsBidir || 32));
  put(GENERATION_ORDER.indexOf(gpu.generation));
  put(gpu.hasNvlinkFabric ? 1 : 0);
  put(ev.sameGpu);
  put(Math.log1p(ev.sameGpuN));
  put(ev.samePrecision);
  put(Math.log1p(ev.samePrecisionN));
  put(ev.model);
  put(Math.log1p(ev.modelN));
  for (const f of FRAMEWORKS) put(sw.framework === f ? 1 : 0);
  put(sw.xla ? 1 : 0);
  put(ev.sameFramework);
  put(Math.log1p(ev.sameFrameworkN));
  put(ev.nearestGpu);
  put(Math.log1p(ev.nearestGpuN));
  put(ev.nearestGpuDistance);
  const par = exec.parallelism;
  put(ln(par?.tensorParallel ?? 1));
  put(ln(par?.pipelineParallel ?? 1));
  put(ln(par?.contextParallel ?? 1));
  put(ln(par?.virtualPipelineStages ?? 1));
  put(par?.zeroStage ?? 0);
  // Checkpointed blocks (full or a policy keeping some outputs) 2, selective 1; the recompute share
  // below says how much each reruns.
  put(par && checkpointsBlocks(par.recompute) ? 2 : par?.recompute === 'selective' ? 1 : 0);
  put(b.pipelineBubbleMs / stepMs);
  put(b.recomputeMs / stepMs);
  put(b.tensorParallelCommMs / stepMs);
  put(b.pipelineCommMs / stepMs);
  const fx = stackEffects(exec.stack ?? DEFAULT_STACK);
  put(fx.flashAttention ? 1 : 0);
  put(fx.pointwiseBytesFactor);
  // null: the fitted constants' fraction (efficiency.json, ~0.7 of the kernel rate), below every
  // fitted stack's; 0 keeps that order without restating the constant.
  put(fx.matmulEfficiency ?? 0);
  put(fx.kernelOverheadFactor);
  if (precisionAware) {
    put(ev.trend);
    put(ev.trendSlope);
    put(Math.log1p(ev.trendGpus));
    put(ev.sameGpuSameMath);
    put(Math.log1p(ev.sameGpuSameMathN));
    put(ev.sibling);
    put(Math.log1p(ev.siblingN));
    put(ev.samePrecisionFramework);
    put(Math.log1p(ev.samePrecisionFrameworkN));
    const peak = gpu.peakTflops[dominantMath] ?? gpu.peakTflops.fp32 ?? 0;
    put(ln(peak));
    put(ln((peak * 1e12) / (gpu.memoryBwGbps * 1e9)));
    put(dominantMath === 'fp32' ? 0 : 1);
    put(exec.fp32UsesTf32 ? 1 : 0);
    const seenAs = correctionPrecision(exec.precision);
    for (const p of LEARNED_PRECISIONS) put(seenAs === p ? 1 : 0);
  }
}
