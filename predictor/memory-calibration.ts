// A user's measured peaks calibrate the memory of their model. The harness records the peak PyTorch
// allocated (torch.cuda.max_memory_allocated); memory.ts predicts the same quantity as the weights,
// gradients, optimizer state, activations and workspaces, before the CUDA context, NCCL's buffers
// and fragmentation. Of those, the weights and states are counted exactly from the parameters; what
// a model keeps for backward depends on its kernels (a composite op saving more, an attention
// materialising its scores), so the gap between a run's peak and the prediction at its
// configuration is taken as the activations being that many times what the rules count, and
// applied to the model's other configurations (batch sizes, layouts, GPUs) in that precision.
import type { MemoryCalibrationSettings } from '../seeds/calibration.js';
import type { GpuSpec } from '../seeds/types.js';
import type { MemoryBreakdown } from './memory.js';
import { DEFAULT_STACK, type SoftwareStack } from './software.js';
import type { Precision } from './types.js';

/** What runs of one model in one precision measured: activations `scale` times memory.ts's, from `runs` runs. */
export interface MemoryCalibration {
  scale: number;
  runs: number;
}

/** model id x precision -> its calibration (memoryKey). */
export type MemoryCalibrations = ReadonlyMap<string, MemoryCalibration>;

export const memoryKey = (modelId: string, precision: Precision): string => `${modelId}|${precision}`;

/** What memory.ts counts as allocated (the harness's peak): everything but the framework's share. */
export const allocatedGb = (m: MemoryBreakdown): number =>
  m.weightsGb + m.gradientsGb + m.optimizerGb + m.activationsGb + m.workspaceGb;

/**
 * The activation scale a run's measured peak implies against the prediction at its configuration:
 * (measured - what is not activations) / activations, 1 where the peak agrees with the prediction
 * within the model's noise; null where the run cannot tell (seeds/calibration.json `memory`).
 */
export function activationScaleOf(
  predicted: MemoryBreakdown,
  measuredGb: number,
  s: MemoryCalibrationSettings,
): number | null {
  const allocated = allocatedGb(predicted);
  const activations = predicted.activationsGb;
  if (!(measuredGb > 0) || !(activations > s.minActivationShare * allocated)) return null;
  // Within the memory model's own noise the run confirms the prediction rather than correcting it.
  if (Math.abs(Math.log(measuredGb / allocated)) <= s.agreement) return 1;
  const scale = (measuredGb - (allocated - activations)) / activations;
  return scale >= s.minScale && scale <= s.maxScale ? scale : null;
}

/** Per model and precision, the median of its runs' scales. */
export function memoryCalibrations(
  observations: readonly { key: string; scale: number }[],
): Map<string, MemoryCalibration> {
  const byKey = new Map<string, number[]>();
  for (const o of observations) {
    const scales = byKey.get(o.key);
    if (scales) scales.push(o.scale);
    else byKey.set(o.key, [o.scale]);
  }
  const out = new Map<string, MemoryCalibration>();
  for (const [key, scales] of byKey) {
    const sorted = scales.sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    const scale = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    out.set(key, { scale, runs: sorted.length });
  }
  return out;
}

/**
 * The calibration a query of `modelId` in `precision` on `stack` gets: the runs ran stock PyTorch
 * (the harness), so they calibrate the default stack's memory rules only.
 */
export function memoryCalibrationFor(
  calibrations: MemoryCalibrations | undefined,
  modelId: string,
  precision: Precision,
  stack: SoftwareStack | undefined,
): MemoryCalibration | undefined {
  return (stack ?? DEFAULT_STACK) === DEFAULT_STACK
    ? calibrations?.get(memoryKey(modelId, precision))
    : undefined;
}

/**
 * A prediction request with its model's activations as the runs measured them
 * (PredictRequest.activationScale), and the calibration that set it; the request as it is without one.
 */
export function withMeasuredActivations<
  R extends { model: { id: string }; precision: Precision; stack?: SoftwareStack; activationScale?: number },
>(req: R, calibrations: MemoryCalibrations | undefined): { req: R; memory?: MemoryCalibration } {
  const memory = memoryCalibrationFor(calibrations, req.model.id, req.precision, req.stack);
  return memory ? { req: { ...req, activationScale: memory.scale }, memory } : { req };
}

/** Per precision, the activation scale a search of `modelId` takes (RecommendRequest.activationScales). */
export function activationScalesFor(
  calibrations: MemoryCalibrations | undefined,
  modelId: string,
  precisions: readonly Precision[],
  stack: SoftwareStack | undefined,
): Partial<Record<Precision, number>> {
  return Object.fromEntries(
    precisions.flatMap((p) => {
      const m = memoryCalibrationFor(calibrations, modelId, p, stack);
      return m ? [[p, m.scale]] : [];
    }),
  );
}

/** What a plan list says of the memory it sized with runs' peaks (RecommendRequest.activationScales); '' without. */
export function activationScalesWords(scales: Partial<Record<Precision, number>> | undefined): string {
  const entries = Object.entries(scales ?? {});
  if (!entries.length) return '';
  const each = entries.map(([p, s]) => `${s!.toFixed(2)}x in ${p}`).join(', ');
  return `; memory: this model's activations ${each} what trainplan counts, from the peak memory of your runs`;
}

/**
 * What CUDA gave the processes of a user's runs on one GPU (the harness's `gpu_memory_gb`,
 * torch.cuda.get_device_properties' total_memory): the smallest total, GiB, of `runs` runs that say.
 */
export interface RecordedCapacity {
  gb: number;
  runs: number;
}

/** GPU id -> what the user's runs on it had (recordedCapacities). */
export type RecordedCapacities = ReadonlyMap<string, RecordedCapacity>;

/**
 * Per GPU, the smallest memory any run on it reports its process had. A run is the user's own word
 * on their GPU: an ECC setting (a GDDR card's ECC keeps 1/16 of it), a driver that keeps more, or a
 * GPU whose figure no source gives here (GpuSpec.usableMemoryGb is its label then). The smallest,
 * since plans on that GPU must fit on every one of their machines.
 */
export function recordedCapacities(
  runs: readonly { gpu: string; gpuMemoryGb: number | null }[],
): Map<string, RecordedCapacity> {
  const out = new Map<string, RecordedCapacity>();
  for (const { gpu, gpuMemoryGb: gb } of runs) {
    if (gb == null || !(gb > 0) || !Number.isFinite(gb)) continue;
    const seen = out.get(gpu);
    out.set(gpu, seen ? { gb: Math.min(seen.gb, gb), runs: seen.runs + 1 } : { gb, runs: 1 });
  }
  return out;
}

/**
 * The GPU as the user's runs had it: plans on it fitted in what their processes were given
 * (RecordedCapacities), said in usableMemorySource; the catalog's GPU where no run says.
 */
export function withRecordedCapacity<G extends Pick<GpuSpec, 'id' | 'usableMemoryGb' | 'usableMemorySource'>>(
  gpu: G,
  capacities: RecordedCapacities | undefined,
): G {
  const c = capacities?.get(gpu.id);
  if (!c) return gpu;
  return {
    ...gpu,
    usableMemoryGb: c.gb,
    usableMemorySource: `${c.runs === 1 ? 'your recorded run on it: what CUDA gave its process' : `your ${c.runs} recorded runs on it: the least CUDA gave their processes`} (catalog: ${gpu.usableMemoryGb.toFixed(2)}, ${gpu.usableMemorySource})`,
  };
}

/**
 * What an answer says where the user's runs set its GPUs' memory (withRecordedCapacity); '' where
 * no run on them says.
 */
export function recordedCapacityWords(
  gpus: readonly Pick<GpuSpec, 'id'>[],
  capacities: RecordedCapacities | undefined,
): string {
  // Once per GPU type, however many clients or inventory lines name it.
  const each = [...new Set(gpus.map((g) => g.id))].flatMap((id) => {
    const c = capacities?.get(id);
    return c
      ? [`${c.gb.toFixed(2)} GiB on ${id} (${c.runs === 1 ? '1 run' : `the smallest of ${c.runs} runs`})`]
      : [];
  });
  return each.length ? `memory: fitted in what CUDA gave your runs' processes: ${each.join(', ')}` : '';
}
