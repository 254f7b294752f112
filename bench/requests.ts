// The recommend request the benches start from: one zoo model, 1e9 of its units of work, cheapest
// first, every catalog GPU and precision mode, 1, 2, 4 or 8 GPUs per node on one node, the model's
// own batch sizes, 10 plans. Each bench says what it changes (`extra`): nodes, offers or a network,
// the objective, constraints.
import type { RecommendRequest } from '../optimizer/recommend.js';
import { PRECISIONS, type ModelDef } from '../predictor/types.js';
import { getModel } from '../predictor/zoo/index.js';
import { loadGpus } from '../seeds/catalog.js';

export function benchRequest(modelId: string, extra: Partial<RecommendRequest> = {}): RecommendRequest {
  const model = getModel(modelId);
  if (!model) throw new Error(`no zoo model ${modelId}`);
  return modelRequest(model, extra);
}

/** The same request for any model (an LLM built from seeds/measurements/llm_models.csv, say). */
export function modelRequest(model: ModelDef, extra: Partial<RecommendRequest> = {}): RecommendRequest {
  return {
    model,
    samples: 1e9 * model.unitsPerBatchElement,
    objective: 'COST',
    gpus: loadGpus(),
    precisions: [...PRECISIONS],
    maxNodes: 1,
    gpusPerNodeChoices: [1, 2, 4, 8],
    batchSizes: model.batchSizes,
    limit: 10,
    ...extra,
  };
}
