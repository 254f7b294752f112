// The learned correction's cost on a 1,000,000-candidate recommend: the same search ranked with the
// analytical predictor alone, with the learned correction (pruned: only candidates that can change
// the answer are corrected, optimizer/pruned.ts) and, for reference, with every candidate corrected.
// The three run interleaved in one process, so the ratio is measured under the same conditions.
// Run: npx tsx bench/pruning.ts   (BENCH_RUNS=7 by default)
import { recommendCorrected } from '../optimizer/recommend-corrected.js';
import { searchSize, type RecommendRequest } from '../optimizer/recommend.js';
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
  const time = async (choice: 'ANALYTICAL' | 'LEARNED', prune: boolean) => {
    const t0 = performance.now();
    const r = await recommendCorrected(req, learned, eff, software, undefined, choice, prune);
    return { ms: performance.now() - t0, r };
  };
  await time('ANALYTICAL', true); // warm-up: model costs, JIT
  await time('LEARNED', true);
  const a: number[] = [],
    p: number[] = [],
    u: number[] = [];
  let same = true,
    evaluated = 0,
    feasible = 0;
  for (let i = 0; i < runs; i++) {
    const x = await time('ANALYTICAL', true);
    const y = await time('LEARNED', true);
    const z = await time('LEARNED', false);
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
