// Ids from the request -> catalog objects, or an error naming the field and the ids allowed.
import { getModel, loadZoo } from '../predictor/zoo/index.js';
import type { GpuSpec, ModelDef } from '../predictor/types.js';
import { getGpu, loadGpus } from '../seeds/catalog.js';
import type { WorkloadInput } from '../schema/inputs.js';
import { badInput, FLOORS, inRange, LIMITS } from './validate.js';
import { resolveModel } from './model-summary.js';

const list = (ids: string[]) =>
  ids.length > 12
    ? `${ids.slice(0, 12).join(', ')}, ... (${ids.length} in all; see the query)`
    : ids.join(', ');

export function gpuById(field: string, id: string): GpuSpec {
  const g = getGpu(id);
  if (!g)
    throw badInput(
      field,
      `unknown GPU "${id.slice(0, 80)}"; allowed: ${list(loadGpus().map((x) => x.id))} (query gpus)`,
    );
  return g;
}

export function modelById(field: string, id: string): ModelDef {
  if (id == null) throw badInput(field, 'give a zoo model id (custom models are not taken here)');
  const m = getModel(id);
  if (!m)
    throw badInput(
      field,
      `unknown model "${id.slice(0, 80)}"; allowed: ${list(loadZoo().map((x) => x.id))} (query models)`,
    );
  return m;
}

/** The workload's model: a zoo id (at workload.seqLen when given) or workload.customModel (resolvers/model-summary.ts). */
export function workload(w: WorkloadInput): { model: ModelDef; samples: number } {
  return {
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
