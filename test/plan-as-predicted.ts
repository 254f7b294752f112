// What predict answers for a plan recommend returned, at the plan's own layout: the tests that hold
// the search to "each plan is what predict says for its layout" ask it through this one place.
import { predict, type Prediction } from '../predictor/predict.js';
import type { Plan } from '../optimizer/recommend.js';
import type { SoftwareStack } from '../predictor/software.js';
import type { ModelDef } from '../predictor/types.js';
import type { Efficiency } from '../seeds/types.js';

export function predictedAtPlan(
  p: Plan,
  model: ModelDef,
  samples: number,
  eff: Efficiency,
  stack?: SoftwareStack,
): Prediction {
  const { dataParallel: _, microBatches: __, ...layout } = p.parallelism;
  return predict(
    {
      model,
      gpu: p.gpu,
      precision: p.precision,
      batchSizePerGpu: p.batchSizePerGpu,
      gpusPerNode: p.gpusPerNode,
      nodes: p.nodes,
      gradAccumSteps: p.gradAccumSteps,
      interNodeGbps: p.interNodeGbps,
      samples,
      parallelism: layout,
      ...(stack ? { stack } : {}),
    },
    eff,
  );
}
