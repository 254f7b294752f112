// How well the roofline predicts what more GPUs cost: every multi-GPU row of train.csv with a one-GPU
// twin (cli/calibrate.ts scalingPairs), its predicted over measured throughput ratio, by source and
// GPU count, with the shipped constants and with the slowest-GPU wait and the overlap's cost switched
// off (stragglerCv and overlapInterference 0, everything else as shipped).
//
//   npx tsx bench/scaling.ts
//
// Prints the mean log(predicted / measured scaling ratio) per group (above 0: predicted to scale
// better than it did), its mean absolute value, and the median predicted and measured scaling (ratio
// over GPUs x the one-GPU throughput). The constants before the wait existed reproduce with
// `git show e431767:seeds/efficiency.json > seeds/efficiency.json` and this bench. Takes seconds.
import { loadEfficiency, loadMeasurements } from '../seeds/catalog.js';
import { predictRow } from '../predictor/measured.js';
import { scalingPairs } from '../cli/calibrate.js';
import type { Efficiency } from '../predictor/step.js';

const pairs = scalingPairs(loadMeasurements());
const shipped = loadEfficiency();
const groupOf = (source: string, gpus: number) => `${source}, ${gpus <= 4 ? '2-4' : '8-16'} GPUs`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function table(eff: Efficiency) {
  const groups = new Map<string, { log: number[]; predicted: number[]; measured: number[] }>();
  for (const { one, many } of pairs) {
    const p1 = predictRow(one, eff).predictedThroughput;
    const p = predictRow(many, eff).predictedThroughput;
    if (!p1 || !p) continue;
    const key = groupOf(many.source, many.numGpus);
    const g = groups.get(key) ?? { log: [], predicted: [], measured: [] };
    const measured = many.throughput! / one.throughput!;
    g.log.push(Math.log(p / p1 / measured));
    g.predicted.push(p / p1 / many.numGpus);
    g.measured.push(measured / many.numGpus);
    groups.set(key, g);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log('| pairs | rows | mean log error | mean abs log error | median scaling predicted / measured |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const [key, g] of [...groups].sort(([a], [b]) => a.localeCompare(b)))
    console.log(
      `| ${key} | ${g.log.length} | ${mean(g.log).toFixed(3)} | ${mean(g.log.map(Math.abs)).toFixed(3)} | ${median(g.predicted).toFixed(2)} / ${median(g.measured).toFixed(2)} |`,
    );
}

console.log(
  `${pairs.length} scaling pairs; shipped constants (stragglerCv ${shipped.stragglerCv}, overlapInterference ${shipped.overlapInterference}):\n`,
);
table(shipped);
console.log('\nthe same constants without the slowest-GPU wait and the overlap cost:\n');
table({ ...shipped, stragglerCv: 0, overlapInterference: 0 });
