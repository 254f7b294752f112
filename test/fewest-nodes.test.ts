// The fewest nodes on which a model fits (optimizer/parallel-search.ts fewestNodes), which an
// answer with nothing that fits names: read off each configuration's narrowest data-parallel width
// for a dense model, searched node by node for one with experts. Either way it must be the first
// node count at which the search itself finds a layout that fits, found here by asking it at every
// count in turn.
import { describe, expect, it } from 'vitest';
import { searchShare, shardedSearch } from '../optimizer/parallel-search.js';
import type { RecommendRequest } from '../optimizer/recommend.js';
import { costOf } from '../predictor/predict.js';
import type { Precision } from '../predictor/types.js';
import { getModel } from '../predictor/zoo/index.js';
import { getGpu, loadEfficiency } from '../seeds/catalog.js';

const eff = loadEfficiency();
const SCAN = 256;

/** A search of `model` on 8 `gpu`s per node at batch 1 in `precision`, with no global batch cap. */
function searchOf(modelId: string, gpuId: string, precision: Precision) {
  const model = getModel(modelId)!;
  const gpu = getGpu(gpuId)!;
  const r = {
    model,
    samples: 1e9,
    objective: 'TIME',
    gpus: [gpu],
    precisions: [precision],
    batchSizes: [1],
    gpusPerNodeChoices: [8],
    maxNodes: 1,
    parallelismSearch: 'auto',
    limit: 1,
  } as unknown as RecommendRequest;
  return shardedSearch(
    r,
    {
      model,
      cost: costOf(model),
      gpu,
      gpuIndex: 0,
      precision,
      batch: 1,
      price: null,
      netGbps: 400,
      maxGlobalBatch: Infinity,
      share: searchShare(),
    },
    eff,
  );
}

describe('the fewest nodes a model fits on', () => {
  const cases: [string, string, Precision][] = [
    ['llama3_70b', 'A100-SXM4-40GB', 'BF16'],
    ['llama3_70b', 'V100-SXM2-16GB', 'AMP_FP16'],
    ['llama3_1_405b', 'H100-SXM5-80GB', 'BF16'],
    ['llama3_1_405b', 'L4', 'FP32'],
    ['nemotron4_340b', 'A100-SXM4-40GB', 'AMP_FP16'],
    ['llama2_13b', 'T4', 'AMP_FP16'],
    ['mixtral_8x7b', 'V100-SXM2-16GB', 'AMP_FP16'],
    ['qwen3_30b_a3b', 'L4', 'BF16'],
  ];
  it.each(cases)('%s on %s at %s: the first node count the search finds a layout on', (m, g, p) => {
    const firstFit = (() => {
      const s = searchOf(m, g, p);
      for (let n = 1; n <= SCAN; n++) if (typeof s.best(8, n, false) !== 'string') return n;
      return null;
    })();
    expect(firstFit, 'a case that fits within the scan').not.toBeNull();
    expect(searchOf(m, g, p).fewestNodes(8, 1, SCAN)).toBe(firstFit);
    // From past it: the next count that fits, as the search finds it.
    const next = (() => {
      const s = searchOf(m, g, p);
      for (let n = firstFit! + 1; n <= SCAN; n++) if (typeof s.best(8, n, false) !== 'string') return n;
      return null;
    })();
    expect(searchOf(m, g, p).fewestNodes(8, firstFit! + 1, SCAN)).toBe(next);
    // Within a range that ends before it: none.
    if (firstFit! > 1) expect(searchOf(m, g, p).fewestNodes(8, 1, firstFit! - 1)).toBeNull();
  });
});
