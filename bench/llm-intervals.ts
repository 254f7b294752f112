// Which P10-P90 interval an LLM-style estimate should carry. The published dense LLM runs held out by
// model family (the card's split: a family's every run out of fitting), the interval train:predictor
// ships for them (intervals.llmRuns), that interval widened to the benchmark rows' leave-one-model-out
// one (intervals.unmeasuredModel: what `interval()` adds when the model has no benchmark evidence),
// and a check the shipped quantiles cannot flatter: each family against the interval computed from
// the other families' held-out errors alone. Coverage is the share of held-out runs whose measured
// step lies inside; 80% is what a P10-P90 interval promises. Last, per software stack: the stacks
// are predicted with very different errors, and train:predictor ships an interval for each stack with
// 30 runs or more (intervals.llmRunsByStack), widened as above.
//
//   npx tsx bench/llm-intervals.ts      (about 2 minutes on two cores)
import { loadEfficiency } from '../seeds/catalog.js';
import { crossValidate, PARAMS, trainingExamples } from '../predictor/learned/train.js';
import {
  heldOutInterval,
  LearnedPredictor,
  widenInterval,
  type Interval,
} from '../predictor/learned/model.js';
import { llmRunsByStack, stackRefitView } from '../cli/train-predictor.js';
import { stackOfFramework } from '../predictor/software.js';

const ex = trainingExamples();
const byFamily = crossValidate(ex, 'family', true, PARAMS, () => {}, stackRefitView(loadEfficiency()));
const llm = ex.map((_, i) => i).filter((i) => ex[i].kind === 'llm');
// log(measured step / predicted step), as train:predictor's intervals are computed.
const err = (i: number) => Math.log(byFamily[i] / ex[i].row.throughput!);
const inside = (iv: Interval, i: number) => err(i) >= iv.q10 && err(i) <= iv.q90;
const share = (idx: number[], iv: (i: number) => Interval) =>
  idx.filter((i) => inside(iv(i), i)).length / idx.length;
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const factors = (iv: Interval) => `x${Math.exp(iv.q10).toFixed(2)} to x${Math.exp(iv.q90).toFixed(2)}`;

const { intervals } = (await LearnedPredictor.load()).meta;
const shipped = intervals.llmRuns!;
const widened = widenInterval(shipped, intervals.unmeasuredModel);
const recomputed = heldOutInterval(llm.map(err));
const families = [...new Set(llm.map((i) => ex[i].family!))].sort();
const otherFamilies = new Map(
  families.map((f) => [f, heldOutInterval(llm.filter((i) => ex[i].family !== f).map(err))] as const),
);

console.log(`${llm.length} dense LLM runs held out by model family (seed ${PARAMS.seed})`);
console.log(`recomputed from these errors: ${factors(recomputed)} (shipped llmRuns ${factors(shipped)})`);
console.log('interval                                         coverage');
for (const [name, iv] of [
  ['llmRuns (shipped)', () => shipped],
  ['llmRuns widened to unmeasuredModel', () => widened],
  ['other families only', (i: number) => otherFamilies.get(ex[i].family!)!],
] as const)
  console.log(`${name.padEnd(48)} ${pct(share(llm, iv)).padStart(6)}`);
console.log(
  '\nfamily       runs  other families interval  coverage   llmRuns  widened   mean log(measured/predicted step)  below P10 / above P90 (widened)',
);
for (const f of families) {
  const idx = llm.filter((i) => ex[i].family === f);
  const other = otherFamilies.get(f)!;
  console.log(
    `${f.padEnd(12)} ${String(idx.length).padStart(4)}  ${factors(other).padEnd(22)}  ${pct(share(idx, () => other)).padStart(8)}  ${pct(share(idx, () => shipped)).padStart(8)} ${pct(share(idx, () => widened)).padStart(8)}   ${(idx.reduce((a, i) => a + err(i), 0) / idx.length).toFixed(3).padStart(7)}   ${idx.filter((i) => err(i) < widened.q10).length} / ${idx.filter((i) => err(i) > widened.q90).length}`,
  );
}

// Per stack: the pooled interval widened (as answers carried before the stacks had their own) and the
// stack's own widened (what they carry now).
const byStack = llmRunsByStack(ex, byFamily);
const stackOf = (i: number) => stackOfFramework(ex[i].run!.framework);
console.log(
  '\nstack           runs   MAPE  stack interval (held out by family)  pooled widened  stack widened',
);
for (const stack of [...new Set(llm.map(stackOf))].sort()) {
  const idx = llm.filter((i) => stackOf(i) === stack);
  const own = byStack[stack];
  const ownWidened = widenInterval(own ?? shipped, intervals.unmeasuredModel);
  const mape = idx.reduce((a, i) => a + Math.abs(byFamily[i] / ex[i].row.throughput! - 1), 0) / idx.length;
  console.log(
    `${stack.padEnd(15)} ${String(idx.length).padStart(4)}  ${pct(mape).padStart(6)}  ${(own ? factors(own) : 'pooled (under 30 runs)').padEnd(35)}  ${pct(share(idx, () => widened)).padStart(14)}  ${pct(share(idx, () => ownWidened)).padStart(13)}`,
  );
}
