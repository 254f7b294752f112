// GPU memory per GPU. Under plain data parallelism every GPU holds the whole model state plus the
// activations of its own micro-batch. With a `Parallelism` (parallel.ts) the same terms are divided:
//
//   model state per GPU  = parameters of this GPU's TP share of its pipeline stage
//                          x (weights [/ DP with ZeRO-3] + gradients [/ DP with ZeRO >= 2]
//                             + master copy and optimizer state [/ DP with ZeRO >= 1])
//   activations per GPU  = micro-batch x activation bytes per sample kept under the recompute mode,
//                          / TP (sequence parallelism splits every transformer layer's activations)
//                          x min(micro-batches, PP) / PP (1F1B: the first stage holds PP micro-batches
//                          of its 1/PP of the layers; Korthikanti et al. 2022 §4.2.3)
//
// which is Megatron-LM's accounting (weights+optimizer "18 bytes per parameter, 6 + 12/DP with the
// distributed optimizer", Korthikanti et al. 2022 Table 2 for activations) and DeepSpeed's ZeRO
// model-state partitioning (Rajbhandari et al. 2020, §5). test/parallel.test.ts checks both.
import { BYTES, stateBytesPerParam, POLICIES } from './precision.js';
import {
  parallelStructure,
  parametersPerGpu,
  RECOMPUTE,
  type Parallelism,
  type Recompute,
  type ZeroStage,
} from './parallel.js';
import type { Efficiency, Execution } from './step.js';
import type { GpuSpec, ModelCost, ModelDef, Precision } from './types.js';

const GIB = 2 ** 30;

export interface MemoryBreakdown {
  weightsGb: number;
  gradientsGb: number;
  masterWeightsGb: number;
  optimizerStateGb: number;
  activationsGb: number;
  /** CUDA context, cuBLAS/cuDNN workspaces, all-reduce buckets. */
  workspaceGb: number;
  totalGb: number;
}

/**
 * Activation bytes one sample keeps for backward, at the precision's storage types: every layer's
 * output (what an eager framework holds without recomputation).
 */
export function activationBytesPerSample(cost: ModelCost, precision: Precision): number {
  const policy = POLICIES[precision];
  let bytes = 0;
  for (const l of cost.layers) bytes += l.count * l.outputElements * BYTES[policy.activation[l.opClass]];
  return bytes;
}

/**
 * Activation bytes one sample keeps on one GPU for a TP degree and recompute mode (before the
 * pipeline's in-flight factor):
 *   none:      every layer's output, / TP for the layers TP splits;
 *   selective: without the attention cores' outputs (scores, softmax, dropout: the as^2 terms);
 *   full:      layers outside the transformer blocks as before, plus one checkpoint of the residual
 *              stream per block (Korthikanti et al.'s 2sbh per layer, kept whole on each TP rank), plus
 *              one block's activations while it is recomputed.
 */
export function activationBytesPerSampleOn(
  cost: ModelCost,
  precision: Precision,
  tensorParallel: number,
  recompute: Recompute,
): number {
  // Searches ask for the same few values many times: cached per model, precision, TP degree and mode.
  let byPrecision = activationCache.get(cost);
  if (!byPrecision) {
    byPrecision = new Map();
    activationCache.set(cost, byPrecision);
  }
  let cache = byPrecision.get(precision);
  if (!cache) {
    cache = new Map();
    byPrecision.set(precision, cache);
  }
  const key = tensorParallel * 4 + RECOMPUTE.indexOf(recompute);
  let bytes = cache.get(key);
  if (bytes === undefined) {
    bytes =
      tensorParallel === 1 && recompute === 'none'
        ? activationBytesPerSample(cost, precision)
        : activationBytesOn(cost, precision, tensorParallel, recompute);
    cache.set(key, bytes);
  }
  return bytes;
}

const activationCache = new WeakMap<ModelCost, Map<Precision, Map<number, number>>>();

function activationBytesOn(
  cost: ModelCost,
  precision: Precision,
  tensorParallel: number,
  recompute: Recompute,
): number {
  const policy = POLICIES[precision];
  const s = parallelStructure(cost);
  let kept = 0,
    blockBytes = 0;
  cost.layers.forEach((l, i) => {
    const bytes =
      (l.count * l.outputElements * BYTES[policy.activation[l.opClass]]) /
      (s.tpSplit[i] ? tensorParallel : 1);
    if (recompute === 'selective' && s.attentionCore[i]) return;
    if (recompute === 'full' && s.inBlocks[i]) blockBytes += bytes;
    else kept += bytes;
  });
  if (recompute !== 'full' || s.blocks === 0) return kept;
  const checkpoints = s.blocks * s.residualElements * BYTES[policy.activation.matmul];
  return kept + checkpoints + blockBytes / s.blocks;
}

/** What memory depends on beyond the model, precision and micro-batch. */
export interface MemoryLayout {
  tensorParallel: number;
  pipelineParallel: number;
  /** Model replicas; ZeRO shards over them, and without ZeRO their all-reduce needs a bucket copy. */
  dataParallel: number;
  zeroStage: ZeroStage;
  recompute: Recompute;
  /** Micro-batches per step (the pipeline holds min(micro-batches, stages) of them at once). */
  microBatches: number;
  optimizerState?: 'fp32' | 'bf16';
}

/** GB here are GiB, as GPU memory sizes are labelled (an "80GB" GPU holds 80 GiB). */
export function memoryPerGpu(
  model: Pick<ModelDef, 'optimizer'>,
  cost: ModelCost,
  precision: Precision,
  batchSizePerGpu: number,
  multiGpu: boolean,
  eff: Efficiency,
): MemoryBreakdown {
  // Without ZeRO only whether there is a data-parallel all-reduce matters, not how wide it is.
  return shardedMemoryPerGpu(
    model,
    cost,
    precision,
    batchSizePerGpu,
    {
      tensorParallel: 1,
      pipelineParallel: 1,
      dataParallel: multiGpu ? 2 : 1,
      zeroStage: 0,
      recompute: 'none',
      microBatches: 1,
    },
    eff,
  );
}

/** Memory per GPU for any layout; plain data parallelism is TP = PP = 1, ZeRO 0, no recomputation. */
export function shardedMemoryPerGpu(
  model: Pick<ModelDef, 'optimizer'>,
  cost: ModelCost,
  precision: Precision,
  batchSizePerGpu: number,
  layout: MemoryLayout,
  eff: Efficiency,
): MemoryBreakdown {
  const t = layout.tensorParallel,
    pp = layout.pipelineParallel,
    d = layout.dataParallel,
    z = layout.zeroStage;
  const s = parallelStructure(cost);
  const P = parametersPerGpu(cost, s, layout);
  const per = stateBytesPerParam(POLICIES[precision], model.optimizer);
  const optimizerBytes = layout.optimizerState
    ? (per.optimizer / BYTES[POLICIES[precision].optimizerState]) * BYTES[layout.optimizerState]
    : per.optimizer;
  const weightsGb = (P * per.weights) / GIB / (z >= 3 ? d : 1);
  const gradientsGb = (P * per.gradients) / GIB / (z >= 2 ? d : 1);
  const masterWeightsGb = (P * per.master) / GIB / (z >= 1 ? d : 1);
  const optimizerStateGb = (P * optimizerBytes) / GIB / (z >= 1 ? d : 1);
  const inFlight = Math.min(layout.microBatches, pp) / pp;
  const activationsGb =
    (batchSizePerGpu *
      activationBytesPerSampleOn(cost, precision, t, layout.recompute) *
      eff.activationFragmentation *
      inFlight) /
    GIB;
  // DDP keeps a flat copy of the gradients in its buckets. ZeRO reduce-scatters through two buckets
  // instead, and ZeRO-3 gathers the full weights of the layer in use and of the one prefetched.
  const buckets = d <= 1 ? 0 : z === 0 ? gradientsGb : (2 * eff.bucketMb * 1e6) / GIB;
  const gathered =
    z >= 3 && d > 1 ? (2 * (s.largestLayerParameters / (t > 1 ? t : 1)) * per.weights) / GIB : 0;
  const workspaceGb = eff.workspaceGb + buckets + gathered;
  const totalGb = weightsGb + gradientsGb + masterWeightsGb + optimizerStateGb + activationsGb + workspaceGb;
  return { weightsGb, gradientsGb, masterWeightsGb, optimizerStateGb, activationsGb, workspaceGb, totalGb };
}

/** Memory per GPU of an execution (plain data parallelism when it has no `parallelism`). */
export function memoryOfExecution(
  model: Pick<ModelDef, 'optimizer'>,
  cost: ModelCost,
  exec: Execution,
  eff: Efficiency,
): MemoryBreakdown {
  const gpus = exec.gpusPerNode * exec.nodes;
  const p: Parallelism | undefined = exec.parallelism;
  if (!p) return memoryPerGpu(model, cost, exec.precision, exec.batchSizePerGpu, gpus > 1, eff);
  // Context parallelism: each rank holds the activations of 1/CP of every sequence; its weights and
  // optimizer state are sharded over the data-parallel x context-parallel group (Megatron's distributed optimizer).
  return shardedMemoryPerGpu(
    model,
    cost,
    exec.precision,
    exec.batchSizePerGpu / (p.contextParallel ?? 1),
    {
      tensorParallel: p.tensorParallel,
      pipelineParallel: p.pipelineParallel,
      dataParallel: gpus / (p.tensorParallel * p.pipelineParallel),
      zeroStage: p.zeroStage,
      recompute: p.recompute,
      microBatches: p.microBatches ?? exec.gradAccumSteps,
      optimizerState: p.optimizerState,
    },
    eff,
  );
}

export function fits(memory: MemoryBreakdown, gpu: GpuSpec): boolean {
  return memory.totalGb <= gpu.memoryGb;
}
