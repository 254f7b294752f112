// A user's measured peaks calibrate the memory of their model. The harness records the peak PyTorch
// allocated (torch.cuda.max_memory_allocated); memory.ts predicts the same quantity as the weights,
// gradients, optimizer state, activations and workspaces, before the CUDA context, NCCL's buffers
// and fragmentation. Of those, the weights and states are counted exactly from the parameters; what
// a model keeps for backward depends on its kernels (a composite op saving more, an attention
// materialising its scores), so the gap between a run's peak and the prediction at its
// configuration is taken as the activations being that many times what the rules count, and
// applied to the model's other configurations (batch sizes, layouts, GPUs) in that precision.
import type { MemoryCalibrationSettings } from '../seeds/calibration.js';
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
