// THE step-time formula. One training iteration on data-parallel GPUs is
//
//   step = accum x (forward + backward) + optimizer + mixedPrecision + exposedCommunication + overhead
//
// where each layer's forward and backward time is a roofline: max(FLOPs / achieved peak of the math
// mode the layer runs in, bytes / achieved memory bandwidth at that mode's element sizes), and the
// gradient all-reduce (ring inside a node, hierarchical across nodes) overlaps with backward except
// for its last bucket. Everything that does not depend on the GPU count (`computeTime`) is separate
// from what does (`communicationTime`), so the optimizer can reuse the first across node counts.
import { readFileSync } from 'node:fs';
import { BYTES, effectiveMath, optimizerBytesPerParam, peakTflops, POLICIES, type PrecisionPolicy } from './precision.js';
import type { GpuSpec, LayerCost, MathMode, ModelCost, ModelDef, Precision } from './types.js';

/** The fitted global constants (seeds/efficiency.json; see its _about). */
export interface Efficiency {
  matmulEfficiency: Record<MathMode, number>;
  halfEfficiencyKernelGflop: number;
  memoryEfficiency: number;
  /** CPU time to dispatch one kernel (framework + launch); hidden while the GPU is busier than the CPU. */
  kernelOverheadUs: number;
  /** Shortest time any kernel takes on the GPU, however little work it has. */
  minKernelUs: number;
  stepOverheadMs: number;
  linkEfficiency: number;
  networkEfficiency: number;
  allReduceLatencyUs: number;
  bucketMb: number;
  overlapFraction: number;
  workspaceGb: number;
  activationFragmentation: number;
}

export const EFFICIENCY_FILE = new URL('../seeds/efficiency.json', import.meta.url);
let efficiencyCache: Efficiency | undefined;
export function defaultEfficiency(): Efficiency {
  efficiencyCache ??= JSON.parse(readFileSync(EFFICIENCY_FILE, 'utf8')) as Efficiency;
  return efficiencyCache;
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
}

/** Milliseconds per optimizer step, by where the time goes. */
export interface Breakdown {
  forwardMs: number;
  backwardMs: number;
  optimizerMs: number;
  /** Casts, master-weight copies, loss scaling, FP8 scaling: what the precision mode adds beyond the math. */
  mixedPrecisionMs: number;
  /** All-reduce time not hidden behind backward. */
  communicationMs: number;
  /** All-reduce time in total, hidden or not. */
  communicationTotalMs: number;
  /** Kernel launches and the per-iteration fixed cost. */
  overheadMs: number;
}

/** The part of a step that does not depend on how many GPUs there are. */
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
}

const achievedMatmulFlops = (gpu: GpuSpec, math: MathMode, kernelFlops: number, eff: Efficiency): number => {
  const peak = (peakTflops(gpu, math, 'matmul') ?? 0) * 1e12;
  // Small GEMMs cannot fill a large GPU: efficiency rises with the work in one kernel.
  const size = kernelFlops / (kernelFlops + eff.halfEfficiencyKernelGflop * 1e9);
  return peak * eff.matmulEfficiency[math] * size;
};

interface PassTime { ms: number; flops: number }

/** One layer's forward and backward roofline time (all `count` instances), ms. */
function layerTime(l: LayerCost, batch: number, gpu: GpuSpec, policy: PrecisionPolicy, exec: Execution, eff: Efficiency): { fwd: PassTime; bwd: PassTime; math: MathMode } {
  const math = effectiveMath(policy, l.opClass, gpu, exec.fp32UsesTf32);
  const actBytes = BYTES[policy.activation[l.opClass]];
  const weightBytes = l.opClass === 'matmul' && policy.castsWeightsEachStep ? BYTES[math === 'fp32' || math === 'tf32' ? 'fp32' : 'fp16'] : BYTES[policy.weights];
  const bw = gpu.memoryBwGbps * 1e9 * eff.memoryEfficiency;
  const fwdBytes = batch * (l.inputElements + l.outputElements) * actBytes + l.parameters * weightBytes;
  // Backward reads the saved input and the output gradient, writes the input gradient and the weight gradient.
  const bwdBytes = batch * (2 * l.inputElements + l.outputElements) * actBytes + 2 * l.parameters * weightBytes;
  let fwdFlopsTime = 0, bwdFlopsTime = 0;
  if (l.opClass === 'matmul') {
    const rate = achievedMatmulFlops(gpu, math, batch * l.kernelFlops, eff);
    fwdFlopsTime = (batch * l.forwardFlops) / rate;
    bwdFlopsTime = (batch * l.backwardFlops) / rate;
  } else {
    const vector = (gpu.peakTflops.fp32 ?? 0) * 1e12 * eff.matmulEfficiency.fp32;
    fwdFlopsTime = (batch * l.forwardFlops) / vector;
    bwdFlopsTime = (batch * l.backwardFlops) / vector;
  }
  const n = l.count;
  const floor = l.kernels * eff.minKernelUs * 1e-6;
  return {
    fwd: { ms: n * 1e3 * Math.max(fwdFlopsTime, fwdBytes / bw, floor), flops: n * batch * l.forwardFlops },
    bwd: { ms: n * 1e3 * Math.max(bwdFlopsTime, bwdBytes / bw, 2 * floor), flops: n * batch * l.backwardFlops },
    math,
  };
}

/** Compute part of a step on one GPU at a per-GPU micro-batch. */
export function computeTime(model: Pick<ModelDef, 'optimizer'>, cost: ModelCost, gpu: GpuSpec, exec: Execution, eff: Efficiency = defaultEfficiency()): ComputeTime {
  const policy = POLICIES[exec.precision];
  const B = exec.batchSizePerGpu;
  let fwd = 0, bwd = 0, kernels = 0, matmulInputElements = 0, tensors = 0;
  const flopsByMath = new Map<MathMode, number>();
  for (const l of cost.layers) {
    const t = layerTime(l, B, gpu, policy, exec, eff);
    fwd += t.fwd.ms;
    bwd += t.bwd.ms;
    kernels += 3 * l.kernels * l.count; // forward launches, backward about twice as many
    if (l.parameters > 0) tensors += l.count;
    if (l.opClass === 'matmul') {
      matmulInputElements += l.count * l.inputElements;
      flopsByMath.set(t.math, (flopsByMath.get(t.math) ?? 0) + t.fwd.flops + t.bwd.flops);
    }
  }
  const P = cost.parameters;
  const bw = gpu.memoryBwGbps * 1e9 * eff.memoryEfficiency;
  const optimizerMs = (1e3 * P * optimizerBytesPerParam(policy, model.optimizer)) / bw;

  // What the precision mode adds beyond the math, in bytes moved per step.
  let mpBytes = 0;
  const accum = exec.gradAccumSteps;
  if (policy.castsWeightsEachStep) mpBytes += accum * P * (BYTES.fp32 + 2) * 2; // weight cast forward, gradient cast back
  if (policy.masterWeights) mpBytes += P * (BYTES[policy.gradients] + BYTES.fp32 + BYTES.fp32 + BYTES[policy.weights]); // grad up-cast, working copy refresh
  if (policy.lossScaling) mpBytes += P * 2 * BYTES[policy.gradients]; // unscale in place + inf/nan check
  if (policy.fp8Scaling) mpBytes += accum * (B * matmulInputElements * 3 * 2 + P * (BYTES.fp32 + 1)); // amax + cast of inputs (fwd, bwd) and weights
  const mixedPrecisionMs = (1e3 * mpBytes) / bw;

  const cpuMs = ((accum * kernels + tensors * 0.1) * eff.kernelOverheadUs) / 1e3;
  const gpuMs = accum * (fwd + bwd) + optimizerMs + mixedPrecisionMs;

  let dominantMath: MathMode = 'fp32', most = -1;
  for (const [m, f] of flopsByMath) if (f > most) { most = f; dominantMath = m; }

  return {
    forwardMs: accum * fwd,
    backwardMs: accum * bwd,
    optimizerMs,
    mixedPrecisionMs,
    // The CPU dispatches kernels while the GPU runs earlier ones: only dispatch time beyond the GPU's
    // own time shows (small batches, small models, fast GPUs).
    overheadMs: Math.max(0, cpuMs - gpuMs) + eff.stepOverheadMs,
    gradientBytes: P * BYTES[policy.gradients],
    dominantMath,
  };
}

/** Unidirectional bytes/s one GPU can push over its node's link for a ring of `gpusPerNode`. */
export function intraNodeBandwidth(gpu: GpuSpec, gpusPerNode: number, eff: Efficiency): number {
  const pcieFallback = 32; // GB/s bidir, PCIe Gen3 x16: the floor every catalog GPU has (seeds/links.json)
  let bidir = gpu.intraNodeBwGbpsBidir || pcieFallback;
  // A 2-way bridge connects pairs only; a larger ring crosses PCIe (Gen4 x16 on these cards).
  if (!gpu.hasNvlinkFabric && gpusPerNode > 2 && /bridge/i.test(gpu.intraNodeLink)) bidir = /Gen5/.test(gpu.intraNodeLink) ? 128 : /Gen4/.test(gpu.intraNodeLink) ? 64 : 32;
  return (bidir / 2) * 1e9 * eff.linkEfficiency;
}

/** Gradient all-reduce: total time and the part not hidden behind backward, ms. */
export function communicationTime(gradientBytes: number, backwardMs: number, gpu: GpuSpec, exec: Pick<Execution, 'gpusPerNode' | 'nodes' | 'interNodeGbps'>, eff: Efficiency = defaultEfficiency()): { totalMs: number; exposedMs: number } {
  const g = exec.gpusPerNode, N = exec.nodes;
  if (g * N <= 1 || gradientBytes <= 0) return { totalMs: 0, exposedMs: 0 };
  const buckets = Math.max(1, Math.ceil(gradientBytes / (eff.bucketMb * 1e6)));
  let seconds = 0;
  if (g > 1) seconds += ((2 * (g - 1)) / g) * gradientBytes / intraNodeBandwidth(gpu, g, eff) + buckets * 2 * (g - 1) * eff.allReduceLatencyUs * 1e-6;
  if (N > 1) {
    // Hierarchical: reduce-scatter inside the node, all-reduce of each GPU's shard across nodes over
    // the node's NICs (shared by its g GPUs), all-gather inside the node.
    const net = (exec.interNodeGbps / 8) * 1e9 * eff.networkEfficiency;
    seconds += ((2 * (N - 1)) / N) * gradientBytes / net + buckets * 2 * (N - 1) * eff.allReduceLatencyUs * 1e-6;
  }
  const totalMs = seconds * 1e3;
  const lastBucketMs = totalMs / buckets;
  const exposedMs = Math.max(lastBucketMs, totalMs - eff.overlapFraction * backwardMs);
  return { totalMs, exposedMs };
}

export interface StepTime {
  stepTimeMs: number;
  breakdown: Breakdown;
  /** Batch elements per optimizer step over all GPUs. */
  globalBatch: number;
  dominantMath: MathMode;
}

/** Puts the compute part and the communication part of a step together. */
export function combine(c: ComputeTime, comm: { totalMs: number; exposedMs: number }, exec: Pick<Execution, 'batchSizePerGpu' | 'gradAccumSteps' | 'gpusPerNode' | 'nodes'>): StepTime {
  const breakdown: Breakdown = {
    forwardMs: c.forwardMs,
    backwardMs: c.backwardMs,
    optimizerMs: c.optimizerMs,
    mixedPrecisionMs: c.mixedPrecisionMs,
    communicationMs: comm.exposedMs,
    communicationTotalMs: comm.totalMs,
    overheadMs: c.overheadMs,
  };
  const stepTimeMs = c.forwardMs + c.backwardMs + c.optimizerMs + c.mixedPrecisionMs + comm.exposedMs + c.overheadMs;
  return { stepTimeMs, breakdown, globalBatch: exec.batchSizePerGpu * exec.gradAccumSteps * exec.gpusPerNode * exec.nodes, dominantMath: c.dominantMath };
}

/** One step, end to end. */
export function stepTime(model: Pick<ModelDef, 'optimizer'>, cost: ModelCost, gpu: GpuSpec, exec: Execution, eff: Efficiency = defaultEfficiency()): StepTime {
  const c = computeTime(model, cost, gpu, exec, eff);
  return combine(c, communicationTime(c.gradientBytes, c.backwardMs, gpu, exec, eff), exec);
}
