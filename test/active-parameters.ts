// What a mixture-of-experts model's card calls its active parameters: all but the experts a token is
// not routed to (top-k of E in each MoE layer). Cards differ on whether the embedding table counts;
// each test says.
import { parallelStructure } from '../predictor/parallel.js';
import type { ModelCost } from '../predictor/types.js';

export function activeParameters(cost: ModelCost, topK: number): number {
  const s = parallelStructure(cost);
  return cost.parameters - s.expertParameters * (1 - topK / s.experts!);
}
