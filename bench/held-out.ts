// The two figures a change to the learned correction (features, evidence, trees) or to the roofline
// under it is judged by: MAPE on train.csv's benchmark rows held out as whole GPUs and as whole
// (model, GPU, precision) combinations, at the four seeds the card's seed spread uses. The same
// cross-validation as `npm run train:predictor` (folds that hold LLM runs out refit the tuned stacks'
// effects first), without writing anything; a seed alone moves a split's figure by several tenths of
// a point, so compare means.
//
//   npx tsx bench/held-out.ts                 # both splits, seeds 7-10 (about 20 minutes on two cores)
//   npx tsx bench/held-out.ts gpu 7 8         # one split, some seeds
//   npx tsx bench/held-out.ts --members 1     # each fold's correction one fit, not the mean of
//                                             # PARAMS.members (4): a quarter of the time
import { loadEfficiency } from '../seeds/catalog.js';
import { crossValidate, PARAMS, trainingExamples, type Split } from '../predictor/learned/train.js';
import { SPREAD_SEEDS, stackRefitView } from '../cli/train-predictor.js';

const args = process.argv.slice(2);
const membersAt = args.indexOf('--members');
const members = membersAt >= 0 ? Number(args.splice(membersAt, 2)[1]) : PARAMS.members;
if (!Number.isInteger(members) || members < 1) throw new Error('--members takes a whole number >= 1');
const named = args.filter((a): a is Split => a === 'gpu' || a === 'combination');
const splits: Split[] = named.length ? named : ['gpu', 'combination'];
const seeds = args.filter((a) => /^\d+$/.test(a)).map(Number);
const spread = seeds.length ? seeds : SPREAD_SEEDS;

const ex = trainingExamples();
const view = stackRefitView(loadEfficiency());
const benchmark = ex.map((e, i) => (e.kind === 'benchmark' ? i : -1)).filter((i) => i >= 0);
for (const split of splits) {
  const figures = spread.map((seed) => {
    const predicted = crossValidate(ex, split, true, { ...PARAMS, seed, members }, () => {}, view);
    const ape = benchmark.map((i) => Math.abs(predicted[i] / ex[i].row.throughput! - 1));
    return (100 * ape.reduce((a, b) => a + b, 0)) / ape.length;
  });
  const mean = figures.reduce((a, b) => a + b, 0) / figures.length;
  console.log(
    `held out by ${split === 'gpu' ? 'whole GPU' : 'combination'}, benchmark rows (${benchmark.length}), ${members} fit${members > 1 ? 's' : ''} per fold, seeds ${spread.join(' / ')}: ${figures.map((f) => f.toFixed(2)).join(' / ')}% (mean ${mean.toFixed(2)}%)`,
  );
}
