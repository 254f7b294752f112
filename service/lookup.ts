// Ids from a request -> catalog objects, or an InputError naming the field and the ids allowed.
import type { ModelDef } from '../predictor/types.js';
import { getGpu, loadGpus } from '../seeds/catalog.js';
import type { CatalogGpu } from '../seeds/types.js';
import { resolveModel, zooModel, type CustomModelInput } from './models.js';
import { FLOORS, inRange, InputError, LIMITS } from './validate.js';

const list = (ids: string[]) =>
  ids.length > 12
    ? `${ids.slice(0, 12).join(', ')}, ... (${ids.length} in all; see the query)`
    : ids.join(', ');

export function gpuById(field: string, id: string): CatalogGpu {
  const g = getGpu(id);
  if (!g)
    throw new InputError(
      field,
      `unknown GPU "${id.slice(0, 80)}"; allowed: ${list(loadGpus().map((x) => x.id))} (query gpus)`,
    );
  return g;
}

export function modelById(field: string, id: string): ModelDef {
  if (id == null) throw new InputError(field, 'give a zoo model id (custom models are not taken here)');
  return zooModel(id, undefined, { model: field, seqLen: field });
}

/** What to train and how much of it, as a request gives it (the GraphQL WorkloadInput has this shape). */
export interface WorkloadInput {
  /** A zoo id; null when customModel is given. */
  model: string | null;
  samples: number;
  customModel?: CustomModelInput | null;
  seqLen?: number | null;
  /** 'full' (default) or 'lora' (GraphQL FineTuning). */
  fineTuning?: string | null;
}

/** Where LoRA is not planned yet: a clear error naming the field instead of a full-training answer. */
export function fullTrainingOnly(field: string, w: Pick<WorkloadInput, 'fineTuning'>, where: string): void {
  if (w.fineTuning === 'lora') throw new InputError(field, `LORA is not supported ${where} yet; use FULL`);
}

/** The workload's model: a zoo id (at workload.seqLen when given) or workload.customModel (service/models.ts). */
export function workload(w: WorkloadInput): { model: ModelDef; samples: number; frozenBase: boolean } {
  return {
    // LoRA: the base weights are frozen (predictor/step.ts Execution.frozenBase).
    frozenBase: w.fineTuning === 'lora',
    model:
      w.customModel == null && w.seqLen == null && w.model != null
        ? modelById('workload.model', w.model)
        : resolveModel(w.model, w.customModel, w.seqLen, {
            model: 'workload.model',
            customModel: 'workload.customModel',
            seqLen: 'workload.seqLen',
          }).model,
    samples: inRange('workload.samples', w.samples, FLOORS.samples, LIMITS.samples),
  };
}
