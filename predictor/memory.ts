// GPU memory per GPU under plain data parallelism: every GPU holds the whole model state plus the
// activations of its own micro-batch.
import { BYTES, stateBytesPerParam, POLICIES } from './precision.js';
import { defaultEfficiency, type Efficiency } from './step.js';
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

/** Activation bytes one sample keeps for backward, at the precision's storage types. */
export function activationBytesPerSample(cost: ModelCost, precision: Precision): number {
  const policy = POLICIES[precision];
  let bytes = 0;
  for (const l of cost.layers) bytes += l.count * l.outputElements * BYTES[policy.activation[l.opClass]];
  return bytes;
}

/** GB here are GiB, as GPU memory sizes are labelled (an "80GB" GPU holds 80 GiB). */
export function memoryPerGpu(
  model: Pick<ModelDef, 'optimizer'>, cost: ModelCost, precision: Precision, batchSizePerGpu: number, multiGpu: boolean,
  eff: Efficiency = defaultEfficiency(),
): MemoryBreakdown {
  const P = cost.parameters;
  const per = stateBytesPerParam(POLICIES[precision], model.optimizer);
  const weightsGb = (P * per.weights) / GIB;
  const gradientsGb = (P * per.gradients) / GIB;
  const masterWeightsGb = (P * per.master) / GIB;
  const optimizerStateGb = (P * per.optimizer) / GIB;
  const activationsGb = (batchSizePerGpu * activationBytesPerSample(cost, precision) * eff.activationFragmentation) / GIB;
  // DDP keeps a flat copy of the gradients in its buckets.
  const workspaceGb = eff.workspaceGb + (multiGpu ? gradientsGb : 0);
  const totalGb = weightsGb + gradientsGb + masterWeightsGb + optimizerStateGb + activationsGb + workspaceGb;
  return { weightsGb, gradientsGb, masterWeightsGb, optimizerStateGb, activationsGb, workspaceGb, totalGb };
}

export function fits(memory: MemoryBreakdown, gpu: GpuSpec): boolean {
  return memory.totalGb <= gpu.memoryGb;
}
