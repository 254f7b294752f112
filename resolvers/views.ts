// Domain objects -> the API's shapes. Only derived fields are added here.
import { costOf } from '../predictor/predict.js';
import { storagePolicy, unsupportedReason } from '../predictor/precision.js';
import { isStockLoop, type SoftwareStack } from '../predictor/software.js';
import { PRECISIONS, type ModelDef } from '../predictor/types.js';
import type { CatalogGpu } from '../seeds/types.js';
import type { Gpu, LayerTypeSummary, Model, PrecisionInfo } from '../schema/types.js';

export function gpuView(g: CatalogGpu): Gpu {
  return { ...g, supportedPrecisions: PRECISIONS.filter((p) => unsupportedReason(g, p) === null) };
}

export function modelView(m: ModelDef): Model {
  const cost = costOf(m);
  const byType = new Map<string, LayerTypeSummary>();
  for (const l of cost.layers) {
    const s = byType.get(l.type) ?? { type: l.type, count: 0, parameters: 0, forwardFlopsPerSample: 0 };
    s.count += l.count;
    s.parameters += l.parameters * l.count;
    s.forwardFlopsPerSample += l.forwardFlops * l.count;
    byType.set(l.type, s);
  }
  return {
    id: m.id,
    name: m.name,
    family: m.family,
    batchElement: m.batchElement,
    throughputUnit: m.throughputUnit,
    unitsPerBatchElement: m.unitsPerBatchElement,
    seqLen: m.seqLen,
    imageSize: m.imageSize,
    optimizer: m.optimizer,
    batchSizes: m.batchSizes,
    parameters: cost.parameters,
    forwardFlopsPerSample: cost.forwardFlops,
    backwardFlopsPerSample: cost.backwardFlops,
    layerCount: cost.layers.reduce((n, l) => n + l.count, 0),
    layersByType: [...byType.values()],
    source: m.source,
  };
}

/** The precision modes as `stack` stores them (a stock loop's FP8 and FP4 differ: precision.ts). */
export function precisionViews(stack: SoftwareStack): PrecisionInfo[] {
  return PRECISIONS.map((p) => {
    const x = storagePolicy(p, isStockLoop(stack), undefined);
    return {
      id: p,
      description: x.description,
      matmulMath: x.math.matmul,
      weights: x.weights,
      gradients: x.gradients,
      masterWeights: x.masterWeights,
      lossScaling: x.lossScaling,
      optimizerState: x.optimizerState,
    };
  });
}
