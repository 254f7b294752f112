// The learned correction's cost on a 1,000,000-candidate recommend: the same search ranked with the
// analytical predictor alone, with the learned correction (pruned: only candidates that can change
// the answer are corrected, optimizer/pruned.ts) and, for reference, with every candidate corrected.
// The three run interleaved in one process, so the ratio is measured under the same conditions.
// Then, at the sizes of everyday requests, the correction alone (correctAndRank on one search)
// bounded against correcting every candidate, per group and per candidate, and what `auto` chooses:
// the figures behind pruned.ts BOUNDS_COST_IN_CORRECTIONS.
// Run: npx tsx bench/pruning.ts   (BENCH_RUNS=7 by default)
import { recommendCorrected } from '../optimizer/recommend-corrected.js';
import type { Pruning } from '../optimizer/pruned.js';
import { searchCandidates, searchSize, type RecommendRequest } from '../optimizer/recommend.js';
import { BOUNDS_COST_IN_CORRECTIONS, correctAndRank } from '../optimizer/pruned.js';
import { selectOffers } from '../optimizer/offers.js';
import { loadEfficiency } from '../seeds/catalog.js';
import { learnedPredictor } from '../predictor/learned/model.js';
import { benchRequest } from './requests.js';

const runs = Number(process.env.BENCH_RUNS ?? 7);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const learned = await learnedPredictor();
if (!learned.predictor) throw new Error(learned.reason);
const offers = selectOffers({ catalog: true, own: [], perGpuPrices: [] });
const software = { framework: 'PyTorch' as const, xla: false };
const eff = loadEfficiency();

const request = (modelId: string, extra: Partial<RecommendRequest>) =>
  benchRequest(modelId, { offers, ...extra });

/** maxNodes giving the smallest search of at least 1,000,000 candidates. */
function atLeastAMillion(r: RecommendRequest): RecommendRequest {
  const perNode = searchSize({ ...r, maxNodes: 1 });
  return { ...r, maxNodes: Math.ceil(1e6 / perNode) };
}

const cases: [string, RecommendRequest][] = [
  ['resnet50_v1.5, cheapest', atLeastAMillion(request('resnet50_v1.5', {}))],
  [
    'resnet50_v1.5, cheapest at P90 within 2 h (P90)',
    atLeastAMillion(request('resnet50_v1.5', { deadlineHours: 2, deadlineConfidence: true, rankBy: 'P90' })),
  ],
  ['bert_large_squad, fastest', atLeastAMillion(request('bert_large_squad', { objective: 'TIME' }))],
];

console.log(
  `learned correction on 1,000,000-candidate searches (${runs} runs each, interleaved; node ${process.version})`,
);
for (const [label, req] of cases) {
  const time = async (choice: 'ANALYTICAL' | 'LEARNED', prune: Pruning) => {
    const t0 = performance.now();
    const r = await recommendCorrected(req, learned, eff, software, undefined, choice, prune);
    return { ms: performance.now() - t0, r };
  };
  await time('ANALYTICAL', 'always'); // warm-up: model costs, JIT
  await time('LEARNED', 'always');
  const a: number[] = [],
    p: number[] = [],
    u: number[] = [];
  let same = true,
    evaluated = 0,
    feasible = 0;
  for (let i = 0; i < runs; i++) {
    const x = await time('ANALYTICAL', 'always');
    const y = await time('LEARNED', 'always');
    const z = await time('LEARNED', 'never');
    a.push(x.ms);
    p.push(y.ms);
    u.push(z.ms);
    same &&= JSON.stringify(y.r) === JSON.stringify(z.r);
    evaluated = x.r.evaluated;
    feasible = x.r.feasible;
  }
  console.log(
    `${label}: ${searchSize(req)} candidates (${evaluated} evaluated, ${feasible} feasible, maxNodes ${req.maxNodes}); median analytical ${median(a).toFixed(0)} ms, learned pruned ${median(p).toFixed(0)} ms, learned unpruned ${median(u).toFixed(0)} ms; ratio learned/analytical ${(median(p) / median(a)).toFixed(2)} (unpruned ${(median(u) / median(a)).toFixed(2)}); pruned answer identical: ${same}`,
  );
}

const everyday: [string, RecommendRequest][] = [
  ['resnet50_v1.5, cheapest, up to 8 nodes', request('resnet50_v1.5', { maxNodes: 8 })],
  ['resnet50_v1.5, cheapest, up to 64 nodes', request('resnet50_v1.5', { maxNodes: 64 })],
  [
    'bert_large_squad, fastest, up to 8 nodes',
    request('bert_large_squad', { objective: 'TIME', maxNodes: 8 }),
  ],
  [
    'llama3_8b, cheapest under MEGATRON, up to 8 nodes, parallel layouts',
    request('llama3_8b', { maxNodes: 8, stack: 'MEGATRON', parallelismSearch: 'auto' }),
  ],
];
console.log(
  `\nthe correction alone, bounds against correcting every candidate (median of ${runs}; auto bounds where candidates > ${BOUNDS_COST_IN_CORRECTIONS} x groups)`,
);
for (const [label, req] of everyday) {
  const search = searchCandidates(req, eff);
  const bounded: number[] = [],
    all: number[] = [];
  let stats = { candidates: 0, groups: 0, corrected: 0 };
  for (let i = 0; i < runs; i++)
    for (const prune of ['always', 'never'] as const) {
      const t0 = performance.now();
      const out = await correctAndRank(req, search, learned.predictor, software, prune);
      (prune === 'always' ? bounded : all).push(performance.now() - t0);
      if (prune === 'always') stats = out.stats;
    }
  const auto = (await correctAndRank(req, search, learned.predictor, software, 'auto')).stats.pruned;
  const b = median(bounded),
    u = median(all);
  console.log(
    `${label}: ${stats.candidates} candidates in ${stats.groups} groups (${(stats.candidates / stats.groups).toFixed(1)} per group), ${stats.corrected} corrected when bounded; bounded ${b.toFixed(0)} ms (${((1000 * b) / stats.groups).toFixed(0)} us per group), every candidate ${u.toFixed(0)} ms (${((1000 * u) / stats.candidates).toFixed(0)} us per candidate); auto ${auto ? 'bounds' : 'corrects every candidate'}`,
  );
}
