// A whole prediction for one configuration: step time, throughput, memory, hours and cost.
import { modelCost } from './layers.js';
import { fits, memoryOfExecution, type AttentionImplementation, type MemoryBreakdown } from './memory.js';
import { checkParallelism, parallelStructure, type Parallelism } from './parallel.js';
import { unsupportedReason } from './precision.js';
import { modelFlopsPerSample, utilization, type Utilization } from './utilization.js';
import { stepTime, type Breakdown, type Efficiency, type Execution, type NetworkTransport } from './step.js';
import type { GpuSpec, MathMode, ModelCost, ModelDef, Precision } from './types.js';
import { DEFAULT_STACK, type SoftwareStack } from './software.js';

// InputError lives in its own module so that modules predict.ts imports (parallel.ts) can throw it too.
export { InputError } from './input-error.js';
import { InputError } from './input-error.js';

const costs = new WeakMap<ModelDef, ModelCost>();
/** Per-sample costs of a model, computed once per model object. */
export function costOf(model: ModelDef): ModelCost {
  let c = costs.get(model);
  if (!c) {
    c = modelCost(model);
    costs.set(model, c);
  }
  return c;
}

export interface PredictRequest {
  model: ModelDef;
  gpu: GpuSpec;
  precision: Precision;
  batchSizePerGpu: number;
  gpusPerNode: number;
  nodes: number;
  gradAccumSteps?: number;
  fp32UsesTf32?: boolean;
  interNodeGbps: number;
  /** How NCCL crosses that network (step.ts interNodeRate); absent = RDMA. */
  interNodeTransport?: NetworkTransport;
  /** Total work in the model's throughput unit (dataset size x epochs). */
  samples?: number;
  /** Price per GPU-hour (the caller's, or the catalog's); absent or null: no cost is given. */
  priceUsdPerGpuHour?: number | null;
  /** Tensor/pipeline parallelism, ZeRO, recomputation (parallel.ts); absent = plain data parallelism. */
  parallelism?: Parallelism;
  /** Software stack (software.ts); absent = PYTORCH_EAGER, what a typical PyTorch user runs. */
  stack?: SoftwareStack;
  /** How the attention cores run: their step time and what they keep for backward (absent: step.ts fusedAttention's default). */
  attention?: AttentionImplementation;
  /** LoRA fine-tuning on a frozen base (step.ts Execution.frozenBase); absent = every weight trained. */
  frozenBase?: boolean;
  /** Convolution activations stored channels-last (step.ts Execution.channelsLast); absent = the stack's layout. */
  channelsLast?: boolean;
  /** GB per GPU to keep free beyond the predicted peak; default seeds/memory.json's defaultMemoryHeadroomGb. */
  memoryHeadroomGb?: number;
  /** Activations as a user's runs of the model measured them, over what memory.ts counts (MemoryLayout.activationScale); default 1. */
  activationScale?: number;
}

export interface Prediction {
  modelId: string;
  gpuId: string;
  execution: Execution;
  stepTimeMs: number;
  breakdown: Breakdown;
  /** Total over all GPUs, in `throughputUnit`. */
  throughput: number;
  throughputUnit: string;
  globalBatch: number;
  /** Model FLOPs of one step, all GPUs together (utilization.ts modelFlopsPerSample x globalBatch): what MFU counts. */
  modelFlopsPerStep: number;
  memory: MemoryBreakdown;
  /** The peak plus the headroom kept free fit in the GPU's memory. */
  fitsInMemory: boolean;
  /** GB per GPU kept free in deciding fitsInMemory. */
  memoryHeadroomGb: number;
  dominantMath: MathMode;
  priceUsdPerGpuHour: number | null;
  totalHours: number | null;
  costUsd: number | null;
}

/**
 * A prediction's model TFLOPS per GPU and MFU at a step time: its own, or the one an answer gives
 * after correction or a run measured (utilization.ts).
 */
export const utilizationAt = (p: Prediction, gpu: GpuSpec, stepTimeMs = p.stepTimeMs): Utilization =>
  utilization(
    p.modelFlopsPerStep,
    stepTimeMs,
    p.execution.gpusPerNode * p.execution.nodes,
    gpu,
    p.dominantMath,
  );

export function toExecution(r: PredictRequest): Execution {
  return {
    precision: r.precision,
    batchSizePerGpu: r.batchSizePerGpu,
    gpusPerNode: r.gpusPerNode,
    nodes: r.nodes,
    gradAccumSteps: r.gradAccumSteps ?? 1,
    fp32UsesTf32: r.fp32UsesTf32 ?? true,
    interNodeGbps: r.interNodeGbps,
    ...(r.interNodeTransport === 'TCP' ? { interNodeTransport: 'TCP' as const } : {}),
    ...(r.parallelism ? { parallelism: r.parallelism } : {}),
    ...(r.stack && r.stack !== DEFAULT_STACK ? { stack: r.stack } : {}),
    ...(r.attention ? { attention: r.attention } : {}),
    ...(r.frozenBase ? { frozenBase: true } : {}),
    ...(r.channelsLast !== undefined ? { channelsLast: r.channelsLast } : {}),
  };
}

/** Hours and dollars for `samples` units of work at a throughput. */
export function hoursAndCost(
  samples: number | undefined,
  throughput: number,
  gpus: number,
  price: number | null,
): { totalHours: number | null; costUsd: number | null } {
  if (samples === undefined) return { totalHours: null, costUsd: null };
  const totalHours = samples / throughput / 3600;
  return { totalHours, costUsd: price === null ? null : totalHours * gpus * price };
}

export function predict(r: PredictRequest, eff: Efficiency): Prediction {
  const reason = unsupportedReason(r.gpu, r.precision);
  if (reason) throw new InputError('precision', reason);
  const exec = toExecution(r);
  const cost = costOf(r.model);
  if (r.parallelism) {
    const bad = checkParallelism(r.parallelism, parallelStructure(cost, r.model.layers), exec);
    if (bad) throw bad;
  }
  const step = stepTime(r.model, cost, r.gpu, exec, eff);
  const gpus = exec.gpusPerNode * exec.nodes;
  const throughput = (step.globalBatch * r.model.unitsPerBatchElement) / (step.stepTimeMs / 1e3);
  const memory = memoryOfExecution(r.model, cost, exec, eff, r.activationScale);
  const memoryHeadroomGb = r.memoryHeadroomGb ?? eff.memory.defaultMemoryHeadroomGb;
  const price = r.priceUsdPerGpuHour ?? null;
  return {
    modelId: r.model.id,
    gpuId: r.gpu.id,
    execution: exec,
    stepTimeMs: step.stepTimeMs,
    breakdown: step.breakdown,
    throughput,
    throughputUnit: r.model.throughputUnit,
    globalBatch: step.globalBatch,
    modelFlopsPerStep: modelFlopsPerSample(cost, r.frozenBase) * step.globalBatch,
    memory,
    fitsInMemory: fits(memory, r.gpu, memoryHeadroomGb),
    memoryHeadroomGb,
    dominantMath: step.dominantMath,
    priceUsdPerGpuHour: price,
    ...hoursAndCost(r.samples, throughput, gpus, price),
  };
}
