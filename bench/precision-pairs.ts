// What an estimate for a precision its model was never measured in rests on: the card's whole
// (model, precision) split (every GPU's rows of a model in one precision held out together, the
// model's other precisions kept) beside the combination split, per precision, with the mean log
// error that says which way each is off, and the P10/P90 by matmul math that train:predictor ships as
// the interval of that case (intervals.unmeasuredPrecision). Benchmark rows, the shipped seed.
//
//   npx tsx bench/precision-pairs.ts [--by-model]      (about 3 minutes on two cores)
import { loadEfficiency } from '../seeds/catalog.js';
import { crossValidate, PARAMS, trainingExamples } from '../predictor/learned/train.js';
import {
  otherPrecisionMeasured,
  stackRefitView,
  unmeasuredPrecisionIntervals,
} from '../cli/train-predictor.js';

const ex = trainingExamples();
const view = stackRefitView(loadEfficiency());
const pair = crossValidate(ex, 'precision', true, PARAMS, () => {}, view);
const counted = otherPrecisionMeasured(ex);
const combination = crossValidate(ex, 'combination', true, PARAMS, () => {}, view);

interface Acc {
  rows: number;
  ape: [number, number];
  log: [number, number];
}
const groups = new Map<string, Acc>();
const add = (key: string, i: number) => {
  const a = groups.get(key) ?? { rows: 0, ape: [0, 0], log: [0, 0] };
  const measured = ex[i].row.throughput!;
  [pair[i], combination[i]].forEach((p, k) => {
    a.ape[k] += Math.abs(p / measured - 1);
    a.log[k] += Math.log(p / measured);
  });
  a.rows++;
  groups.set(key, a);
};
ex.forEach((e, i) => {
  if (!counted(e)) return;
  add('all', i);
  add(e.row.precision, i);
  if (process.argv.includes('--by-model')) add(`${e.row.model} ${e.row.precision}`, i);
});
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
console.log(
  'rows; held out as (model, precision) pairs: MAPE, mean log(predicted / measured); as combinations: the same',
);
for (const [key, a] of groups)
  console.log(
    `${key.padEnd(36)} ${String(a.rows).padStart(5)}  ${pct(a.ape[0] / a.rows).padStart(6)} ${(a.log[0] / a.rows).toFixed(3).padStart(7)}   ${pct(a.ape[1] / a.rows).padStart(6)} ${(a.log[1] / a.rows).toFixed(3).padStart(7)}`,
  );

// The interval train:predictor ships for that case, by matmul math.
for (const [math, iv] of Object.entries(unmeasuredPrecisionIntervals(ex, pair)))
  console.log(
    `${math}: ${iv.rows} rows, P10/P90 ${iv.q10} / ${iv.q90} (x${Math.exp(iv.q10).toFixed(2)} to x${Math.exp(iv.q90).toFixed(2)} of the estimate)`,
  );
