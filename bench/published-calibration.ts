// How much the published runs of a query's own architecture, on its GPU and stack, should move an
// LLM answer (predictor/learned/published-calibration.ts), measured on runs held out of both the
// trees and the calibration.
//
//   npx tsx bench/published-calibration.ts [--write]      (about 3 minutes on two cores)
//
// Two splits of the dense LLM runs (the benchmark rows always train): "runs", ten folds of single
// runs (a user asking for a layout near a published one), and "layouts", ten folds of whole layouts
// (architecture, GPU, stack, precision, TP, PP, CP, VP, micro-batch, sequence: every GPU count of a
// layout out together, a layout nobody published). Per fold the stack effects are refitted and the
// trees fitted without the fold (as the card's folds are); the other runs' errors against those trees
// (in-sample, as the shipped trees' are against the runs they fitted) calibrate each held-out run.
// The weights are chosen on the even folds of both splits and reported on the odd ones; the interval
// is the P5/P95 of every held-out layout of "layouts" (the harder case), per stack where it has enough,
// its coverage checked one model family at a time against the interval computed without that family.
// --write stores the choice and the interval in seeds/calibration.json (published).
import { readFileSync, writeFileSync } from 'node:fs';
import { loadEfficiency } from '../seeds/catalog.js';
import { loadCalibrationSettings, type PublishedCalibrationSettings } from '../seeds/calibration.js';
import {
  fitWithout,
  llmExamples,
  PARAMS,
  predictHeldOut,
  trainingExamples,
  type Example,
} from '../predictor/learned/train.js';
import { measuredLlmRuns } from '../predictor/published-runs.js';
import { isMoeRun } from '../seeds/llm.js';
import { rng } from '../predictor/learned/gbdt.js';
import {
  correctionInputOf,
  LearnedPredictor,
  widenInterval,
  type Interval,
} from '../predictor/learned/model.js';
import { calibrateOnPublished, type PublishedResidual } from '../predictor/learned/published-calibration.js';
import { stackRefitView } from '../cli/train-predictor.js';
import { stackOfFramework } from '../predictor/software.js';

const ex = trainingExamples();
const view = stackRefitView(loadEfficiency());
const llm = ex.map((_, i) => i).filter((i) => ex[i].kind === 'llm');
const stackOf = (e: Example) => stackOfFramework(e.run!.framework);
/** What the runtime pools: the architecture's published names, the GPU and the stack. */
const poolOf = (e: Example) =>
  `${(e.model.publishedAs ?? [e.row.model]).join(',')}|${e.row.gpu}|${stackOf(e)}`;
const layoutOf = (e: Example) => {
  const r = e.run!;
  return [
    poolOf(e),
    r.precision,
    r.tensorParallel,
    r.pipelineParallel,
    r.contextParallel,
    r.virtualPipeline,
    r.microBatch,
    r.seqLen,
  ].join('|');
};

function foldsBy(key: (e: Example) => string, seed: number): number[][] {
  const groups = [...new Set(llm.map((i) => key(ex[i])))].sort();
  const r = rng(seed);
  const order = groups.map((g) => [r(), g] as const).sort((a, b) => a[0] - b[0]);
  const fold = new Map(order.map(([, g], j) => [g, j % 10]));
  return Array.from({ length: 10 }, (_, k) => llm.filter((i) => fold.get(key(ex[i])) === k));
}

interface HeldOut {
  fold: number;
  /** log(measured / predicted step) without calibration. */
  logError: number;
  /** The other runs of its pool, with their in-sample errors. */
  pool: PublishedResidual[];
}

function heldOut(folds: number[][]): Map<number, HeldOut> {
  const out = new Map<number, HeldOut>();
  folds.forEach((fold, k) => {
    const inFold = new Set(fold);
    const { seen, model } = fitWithout(ex, inFold, true, PARAMS, view);
    const others = llm.filter((i) => !inFold.has(i));
    const inSample = predictHeldOut(
      others.map((j) => seen[j]),
      model,
      true,
    );
    const pools = new Map<string, PublishedResidual[]>();
    others.forEach((i, t) => {
      const list = pools.get(poolOf(ex[i])) ?? [];
      list.push({
        id: ex[i].row.id,
        framework: ex[i].run!.framework,
        precision: ex[i].row.precision,
        logError: Math.log(inSample[t] / ex[i].row.throughput!),
      });
      pools.set(poolOf(ex[i]), list);
    });
    const p = predictHeldOut(
      fold.map((j) => seen[j]),
      model,
      true,
    );
    fold.forEach((i, t) =>
      out.set(i, {
        fold: k,
        logError: Math.log(p[t] / ex[i].row.throughput!),
        pool: pools.get(poolOf(ex[i])) ?? [],
      }),
    );
    process.stderr.write(`.`);
  });
  process.stderr.write('\n');
  return out;
}

const base = loadCalibrationSettings().published;
const calibrated = (h: HeldOut, i: number, s: PublishedCalibrationSettings) => {
  const c = calibrateOnPublished(ex[i].row.precision, stackOf(ex[i]), h.pool, s);
  return { logError: h.logError - Math.log(c?.scale ?? 1), c };
};
const ape = (logStepError: number) => Math.abs(Math.exp(-logStepError) - 1);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

const splits = {
  runs: heldOut(foldsBy((e) => e.row.id, 3)),
  layouts: heldOut(foldsBy(layoutOf, 5)),
};

// Weights: a grid, scored on every fold (the choice reads only the even ones).
const grid: PublishedCalibrationSettings[] = [];
for (const prior of [0.25, 0.5, 1, 2, 4])
  for (const otherPrecision of [0.1, 0.3, 1]) grid.push({ ...base, prior, otherPrecision });
const score = (split: Map<number, HeldOut>, s: PublishedCalibrationSettings, parity: number) =>
  mean(
    [...split].filter(([, h]) => h.fold % 2 === parity).map(([i, h]) => ape(calibrated(h, i, s).logError)),
  );
console.log('prior  other precision   runs: even folds  odd folds   layouts: even  odd');
for (const s of grid)
  console.log(
    `${String(s.prior).padEnd(6)} ${String(s.otherPrecision).padEnd(16)}  ${pct(score(splits.runs, s, 0)).padStart(16)} ${pct(score(splits.runs, s, 1)).padStart(10)}  ${pct(score(splits.layouts, s, 0)).padStart(14)} ${pct(score(splits.layouts, s, 1)).padStart(5)}`,
  );
// Both cases a user asks (near a published layout, and a layout nobody published) count equally.
const both = (x: PublishedCalibrationSettings) => score(splits.runs, x, 0) + score(splits.layouts, x, 0);
const best = grid.reduce((a, b) => (both(b) < both(a) ? b : a));
// The interval: calibrated errors of every held-out layout whose pool had runs (each run is held out
// once in "layouts", so these are all out-of-fold errors); a stack with MIN_STACK_RUNS of them gets
// its own, never narrower than the pooled one. P5/P95, as for a user's runs (bench/calibration.ts):
// architectures differ in how far off they are, so the P10/P90 of some covers others' held-out runs
// less than 80% (printed below for comparison). Taken from the even folds alone, as before, too few
// TORCH_COMPILE layouts with a pool fell there for an interval of their own, so torchtitan's runs took
// Megatron's: checked as below, 65% of their held-out layouts against 70% now (all layouts 85%
// against 88%, Llama-3's 69% against 80%). The coverage below is checked one model family at a time
// against the interval computed without that family's runs.
const MIN_STACK_RUNS = 8;
const layoutEntries = [...splits.layouts].filter(([, h]) => h.pool.length > 0);
const quantiles = (errs: number[], q: number): Interval => {
  const s = [...errs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.round(p * (s.length - 1))))];
  return { q10: Number(at(q).toFixed(4)), q90: Number(at(1 - q).toFixed(4)), rows: errs.length };
};
function intervalsFrom(entries: [number, HeldOut][], q: number) {
  const pooled = quantiles(
    entries.map(([i, h]) => calibrated(h, i, best).logError),
    q,
  );
  const byStack: Record<string, Interval> = {};
  for (const stack of [...new Set(entries.map(([i]) => stackOf(ex[i])))].sort()) {
    const own = entries.filter(([i]) => stackOf(ex[i]) === stack);
    if (own.length >= MIN_STACK_RUNS)
      byStack[stack] = {
        ...widenInterval(
          quantiles(
            own.map(([i, h]) => calibrated(h, i, best).logError),
            q,
          ),
          pooled,
        ),
        rows: own.length,
      };
  }
  return { interval: pooled, byStack };
}
const { interval, byStack } = intervalsFrom(layoutEntries, 0.05);
const chosen: PublishedCalibrationSettings = { ...best, interval, byStack };
/** The settings a run's coverage is checked with: the intervals computed without its model family's runs. */
const withoutFamily = new Map<
  string,
  { p5: PublishedCalibrationSettings; p10: PublishedCalibrationSettings }
>(
  [...new Set(layoutEntries.map(([i]) => ex[i].family!))].map((f) => {
    const others = layoutEntries.filter(([i]) => ex[i].family !== f);
    return [
      f,
      { p5: { ...best, ...intervalsFrom(others, 0.05) }, p10: { ...best, ...intervalsFrom(others, 0.1) } },
    ];
  }),
);
const factors = (iv: Interval) =>
  `x${Math.exp(iv.q10).toFixed(3)} to x${Math.exp(iv.q90).toFixed(3)} (${iv.rows} runs)`;
console.log(
  `\nchosen on the even folds of both splits: prior ${chosen.prior}, other precision ${chosen.otherPrecision}; interval (P5/P95) from every held-out layout: ${factors(interval)}; ${Object.entries(
    byStack,
  )
    .map(([k, iv]) => `${k} ${factors(iv)}`)
    .join(', ')}`,
);

const { intervals } = (await LearnedPredictor.load()).meta;
/** What an LLM answer carried before: its stack's interval widened to an unmeasured model's. */
const uncalibratedInterval = (i: number): Interval =>
  widenInterval(intervals.llmRunsByStack?.[stackOf(ex[i])] ?? intervals.llmRuns!, intervals.unmeasuredModel);
const inside = (iv: Interval, x: number) => x >= iv.q10 && x <= iv.q90;

for (const [name, split] of Object.entries(splits)) {
  const rows = [...split];
  const withPool = rows.filter(([, h]) => h.pool.length > 0);
  console.log(
    `\n${name}: ${rows.length} runs held out, ${withPool.length} with runs of their architecture on their GPU and stack left in`,
  );
  console.log(
    'group                 runs   MAPE uncalibrated  calibrated   coverage before  after (family out)  with P10/P90',
  );
  const groups = new Map<string, [number, HeldOut][]>([['all', withPool]]);
  for (const r of withPool) {
    for (const g of [stackOf(ex[r[0]]), ex[r[0]].family]) groups.set(g, [...(groups.get(g) ?? []), r]);
  }
  // A family no held-out layout of which had a pool has no interval computed without it: the shipped one.
  const settingsOf = (i: number) => withoutFamily.get(ex[i].family!) ?? { p5: chosen, p10: chosen };
  const covered = (i: number, h: HeldOut, s: PublishedCalibrationSettings) => {
    const c = calibrated(h, i, s);
    return inside(c.c!.interval, c.logError) ? 1 : 0;
  };
  for (const [g, list] of groups)
    console.log(
      `${g.padEnd(20)} ${String(list.length).padStart(5)}  ${pct(mean(list.map(([, h]) => ape(h.logError)))).padStart(17)}  ${pct(mean(list.map(([i, h]) => ape(calibrated(h, i, chosen).logError)))).padStart(10)}  ${pct(mean(list.map(([i, h]) => (inside(uncalibratedInterval(i), h.logError) ? 1 : 0)))).padStart(15)}  ${pct(mean(list.map(([i, h]) => covered(i, h, settingsOf(i).p5)))).padStart(18)}  ${pct(mean(list.map(([i, h]) => covered(i, h, settingsOf(i).p10)))).padStart(12)}`,
    );
}

const rounded = (iv: Interval) => ({
  q10: Number(iv.q10.toFixed(4)),
  q90: Number(iv.q90.toFixed(4)),
  rows: iv.rows,
});
if (process.argv.includes('--write')) {
  const file = new URL('../seeds/calibration.json', import.meta.url);
  const json = JSON.parse(readFileSync(file, 'utf8'));
  json.published = {
    otherPrecision: chosen.otherPrecision,
    prior: chosen.prior,
    interval: rounded(interval),
    byStack: Object.fromEntries(Object.entries(byStack).map(([k, iv]) => [k, rounded(iv)])),
  };
  writeFileSync(file, JSON.stringify(json, null, 2) + '\n');
  console.log('wrote seeds/calibration.json published');
}

// The superseded runs that calibrate where no latest run measured their architecture on their GPU
// under their stack (today torchtitan's A100 runs): the shipped trees never fitted them, so each is
// predicted by the shipped predictor and calibrated by the others of its pool, one left out at a time.
{
  const learned = await LearnedPredictor.load();
  const fittedKeys = new Set(llm.map((i) => poolOf(ex[i])));
  const superseded = llmExamples(
    loadEfficiency(),
    measuredLlmRuns().filter((r) => !r.isLatest && !isMoeRun(r)),
  ).filter((e) => !fittedKeys.has(poolOf(e)));
  const items = superseded.map(correctionInputOf);
  const k = await learned.correct(items);
  // The shipped answer less its own calibration (whose pool holds the run itself): the trees' error.
  const errs = superseded.map((e, i) =>
    Math.log(
      (e.aware.throughput * (learned.publishedCalibrationOf(items[i])?.scale ?? 1)) /
        k.mid[i] /
        e.row.throughput!,
    ),
  );
  const before: number[] = [],
    after: number[] = [];
  superseded.forEach((e, i) => {
    const pool: PublishedResidual[] = superseded.flatMap((o, j) =>
      j !== i && poolOf(o) === poolOf(e)
        ? [
            {
              id: o.row.id,
              framework: o.run!.framework,
              superseded: true,
              precision: o.row.precision,
              logError: errs[j],
            },
          ]
        : [],
    );
    if (!pool.length) return;
    const c = calibrateOnPublished(e.row.precision, stackOf(e), pool, chosen)!;
    before.push(ape(errs[i]));
    after.push(ape(errs[i] - Math.log(c.scale)));
  });
  console.log(
    `\nsuperseded runs calibrating where no latest run is (${superseded.length}; ${[...new Set(superseded.map(poolOf))].join('; ')}), each left out of its pool, shipped trees: ${before.length} with others in their pool, MAPE ${pct(mean(before))} -> ${pct(mean(after))}`,
  );
}
