import type { ModelDef } from '../predictor/types.js';

// A GEMM-heavy toy transformer block stack, defined here so these tests do not depend on the zoo.
export const T = 512,
  H = 2048;
export const toy: ModelDef = {
  id: 'toy',
  name: 'toy',
  family: 'test',
  batchElement: 'sequence',
  throughputUnit: 'tokens/s',
  unitsPerBatchElement: T,
  seqLen: T,
  optimizer: 'adam',
  batchSizes: [8],
  source: 'test',
  layers: [
    { type: 'embedding', vocab: 32000, dim: H, tokens: T },
    { type: 'linear', inFeatures: H, outFeatures: 4 * H, tokens: T, count: 8 },
    { type: 'activation', kind: 'gelu', elements: 4 * H * T, count: 8 },
    { type: 'linear', inFeatures: 4 * H, outFeatures: H, tokens: T, count: 8 },
    { type: 'norm', kind: 'layernorm', channels: H, elements: H * T, count: 8 },
    { type: 'loss', elements: 32000 * T },
  ],
};
