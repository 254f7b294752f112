// How much three recorded runs help on a GPU the shipped measurements never saw.
//
//   npx tsx bench/calibration.ts [--draws 20] [--seed 5] [--write] [--grid]
//
// For every GPU in seeds/measurements/train.csv: fit the learned correction on every other GPU's
// rows (so the GPU is unmeasured, as a new GPU is), then, per draw, record 3 of its rows from 3
// different models as a user's runs and predict all its other rows: without the runs, with the
// runs as evidence only (the learned model's same-model features), with the runs' calibration
// (predictor/learned/calibration.ts), with both, and with both plus the neighbour transfer (what
// the server does: predictor/learned/transfer.ts, the other GPUs' rows as the shipped
// measurements; the held-out GPU's rows reach it only as the 3 runs). Error: mean absolute
// percentage error of throughput on the GPU's other rows, averaged over the draws; the table's
// "all" lines are the mean over GPUs and the mean over rows; the same on the recorded models'
// other rows (their other batch sizes, GPU counts, precisions); and two ceilings: the error if
// the GPU's mean error (or its mean error per model) were known exactly.
// Split: the transfer's constants and the intervals are chosen on the even-indexed GPUs (sorted
// by id) and reported on the odd ones too. --grid scores a grid of transfer constants on the same
// draws (pick the best on the even half); --write stores the calibrated interval measured on the
// even half (seeds/calibration.json modelOnGpu) and the spread of a configuration's repeats
// (sameConfiguration). About 3 minutes on 2 cores (27 fits).
import { loadEfficiency, loadMeasurements } from '../seeds/catalog.js';
import { examples, fit, featuresOf, type Example, PARAMS } from '../predictor/learned/train.js';
import { EvidenceIndex } from '../predictor/learned/evidence.js';
import { predictEnsemble, rng } from '../predictor/learned/gbdt.js';
import {
  calibrate,
  type CalibrationQuery,
  type CalibrationWeights,
  type RecordedEvidence,
} from '../predictor/learned/calibration.js';
import {
  loadCalibrationSettings,
  type CalibrationSettings,
  type TransferSettings,
} from '../seeds/calibration.js';
import {
  blendTransfer,
  exampleConfiguration,
  NeighbourTransfer,
  ShippedConfigurations,
} from '../predictor/learned/transfer.js';
import { gpuChips } from '../predictor/learned/gpu-twins.js';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Precision } from '../predictor/types.js';
import {
  correctionConfiguration,
  correctionInputOf,
  type Interval,
  type LearnedMeta,
} from '../predictor/learned/model.js';
import { LEARNED_META_FILE } from '../seeds/catalog.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
/**
 * The draws every calibration bench scores (`--draws`, `--seed`): one place, so benches that say
 * "the same draws" compare the same recorded runs.
 */
export const DRAWS = arg('draws', 20);
export const SEED = arg('seed', 5);
/**
 * Runs recorded per draw, each of another model (`--runs`; the issue's figure is 3): more show
 * whether a user who times more of their models is answered better. A GPU with no more models
 * than runs is skipped.
 */
export const RUNS = arg('runs', 3);

/** What calibration asks about a row: its model, GPU, precision, framework and configuration. */
export const calibrationQueryOf = (e: Example): CalibrationQuery => ({
  model: e.row.model,
  gpu: e.row.gpu,
  precision: e.row.precision,
  framework: e.software.framework,
  configuration: rowConfiguration(e),
});

/** Exact-configuration identity of a measurement row: the key the server builds for a run. */
export const rowConfiguration = (e: Example) => correctionConfiguration(correctionInputOf(e));

const ape = (pred: number, e: Example) => Math.abs(pred - e.row.throughput!) / e.row.throughput!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

const VARIANTS = [
  'no runs',
  'runs as evidence only',
  'runs calibrate only',
  'both (before transfer)',
  'both + neighbour transfer (shipped)',
] as const;
type Variant = (typeof VARIANTS)[number];

interface GpuResult {
  gpu: string;
  rows: number;
  models: number;
  /** Per variant: mean over draws of the MAPE on the GPU's other rows; and all row errors. */
  mape: Record<Variant, number>;
  rowErrors: Record<Variant, number[]>;
  /** The same, on rows of the three recorded models only (their other configurations). */
  ownMape: Record<Variant, number>;
  ownRowErrors: Record<Variant, number[]>;
  /** Ceilings for any per-GPU offset: every other row's mean error on this GPU known exactly (per GPU; per GPU and model). */
  oracleGpu: number;
  oracleGpuModel: number;
  /** log(measured step / shipped prediction) of every predicted row, and whether its model was recorded (interval coverage). */
  candidateMape: number[];
  shippedLogErrors: {
    logError: number;
    recordedModel: boolean;
    transferShare: number;
    precision: Precision;
  }[];
}

const emptyRecord = (): Record<Variant, number[]> =>
  Object.fromEntries(VARIANTS.map((v) => [v, []])) as unknown as Record<Variant, number[]>;

/** MAPE when each group's mean log error (of the predictions without runs) is known and removed. */
function oracle(rows: Example[], base: number[], group: (e: Example) => string): number {
  const sums = new Map<string, { sum: number; n: number }>();
  rows.forEach((e, i) => {
    const a = sums.get(group(e)) ?? { sum: 0, n: 0 };
    a.sum += Math.log(base[i] / e.row.throughput!);
    a.n++;
    sums.set(group(e), a);
  });
  return mean(
    rows.map((e, i) => {
      const a = sums.get(group(e))!;
      return ape(base[i] / Math.exp(a.sum / a.n), e);
    }),
  );
}

/** The shipped evidence with recorded runs joined to it, the way the server merges them (analytical residuals). */
export function withRecordedRuns(recorded: Example[], shipped: EvidenceIndex): EvidenceIndex {
  const index = new EvidenceIndex(
    recorded.map((e) => ({
      model: e.row.model,
      gpu: e.row.gpu,
      precision: e.row.precision,
      framework: e.software.framework,
      logResidual: Math.log(e.row.throughput! / e.aware.throughput),
    })),
    // The shipped GPUs, not the runs', decide which GPUs are unmeasured and read their twin, as the
    // server's shipped index does before it merges a user's runs in.
    shipped.twinsAmong,
  );
  index.addAggregated(shipped.aggregated());
  return index;
}

export function drawRuns(rows: Example[], r: () => number, runs = 3): number[] | undefined {
  const byModel = new Map<string, number[]>();
  rows.forEach((e, i) => byModel.set(e.row.model, [...(byModel.get(e.row.model) ?? []), i]));
  const models = [...byModel.keys()].sort();
  if (models.length < runs + 1) return undefined; // the runs and at least one other model to predict
  const picked: number[] = [];
  const pool = [...models];
  for (let k = 0; k < runs; k++) {
    const m = pool.splice(Math.floor(r() * pool.length), 1)[0];
    const idx = byModel.get(m)!;
    picked.push(idx[Math.floor(r() * idx.length)]);
  }
  return picked;
}

/**
 * The learned correction fitted on every other GPU's rows (`gpu` unmeasured, as a new GPU is), and
 * a row's throughput as it predicts it with an evidence index (the shipped one, or one with runs).
 */
export function heldOutGpu(ex: readonly Example[], gpu: string) {
  const model = fit(
    ex.filter((e) => e.row.gpu !== gpu),
    true,
    PARAMS,
  );
  const predictWith = (index: EvidenceIndex, e: Example) =>
    e.aware.throughput *
    Math.exp(
      predictEnsemble(
        model.ensemble,
        featuresOf(e, true, index.query(e.row.model, e.row.gpu, e.row.precision, e.software.framework)),
      ),
    );
  return { model, predictWith };
}

/**
 * A row's throughput as the server answers it with runs on its GPU: the calibrated prediction
 * blended with the transfer's (`t`, undefined where none) in log throughput by the transfer's
 * share, as predictor/learned/model.ts does on step time.
 */
export function servedWith(
  transfer: NeighbourTransfer,
  calibrated: number,
  e: Example,
): { t: ReturnType<NeighbourTransfer['query']>; thr: number } {
  const t = transfer.query(exampleConfiguration(e));
  const thr = e.aware.throughput * Math.exp(blendTransfer(Math.log(calibrated / e.aware.throughput), t));
  return { t, thr };
}

export function runBenchmark(
  ex: Example[],
  settings: Pick<CalibrationSettings, 'weights' | 'transfer'>,
  log: (s: string) => void = () => {},
  /** Other transfer settings to score on the same draws (--grid): their MAPE per GPU in `candidateMape`. */
  candidates: TransferSettings[] = [],
  /** Hold out only these GPUs (the tests); every GPU when absent. */
  onlyGpus?: readonly string[],
): GpuResult[] {
  const weights: CalibrationWeights = settings.weights;
  const gpus = [...new Set(ex.map((e) => e.row.gpu))].sort().filter((g) => !onlyGpus || onlyGpus.includes(g));
  const chips = gpuChips(ex.map((e) => e.gpu));
  const results: GpuResult[] = [];
  for (const gpu of gpus) {
    const test = ex.filter((e) => e.row.gpu === gpu);
    const { model, predictWith } = heldOutGpu(ex, gpu);
    const base = test.map((e) => predictWith(model.evidence, e));
    // Only the other GPUs' rows are shipped; the held-out GPU's reach the transfer only as the 3 runs.
    const shipped = new ShippedConfigurations(ex.filter((e) => e.row.gpu !== gpu).map(exampleConfiguration));
    const shippedLogErrors: GpuResult['shippedLogErrors'] = [];
    const candidatePerDraw: number[][] = candidates.map(() => []);
    const r = rng(SEED);
    const perDraw = emptyRecord(),
      rowErrors = emptyRecord();
    const ownPerDraw = emptyRecord(),
      ownRowErrors = emptyRecord();
    for (let d = 0; d < DRAWS; d++) {
      const picked = drawRuns(test, r, RUNS);
      if (!picked) break;
      const recorded = picked.map((i) => test[i]);
      const index = withRecordedRuns(recorded, model.evidence);
      const runEvidence = (withIndex: boolean): RecordedEvidence[] =>
        recorded.map((e) => {
          const predicted = withIndex ? predictWith(index, e) : base[test.indexOf(e)];
          // step time is inversely proportional to throughput
          return { ...calibrationQueryOf(e), logError: Math.log(predicted / e.row.throughput!) };
        });
      const runsBase = runEvidence(false),
        runsIndexed = runEvidence(true);
      const errs = emptyRecord(),
        own = emptyRecord();
      const recordedModels = new Set(recorded.map((e) => e.row.model));
      const transfer = new NeighbourTransfer(
        shipped,
        recorded.map(exampleConfiguration),
        settings.transfer,
        chips,
      );
      const candidateTransfers = candidates.map(
        (c) => new NeighbourTransfer(shipped, recorded.map(exampleConfiguration), c, chips),
      );
      const candidateErrors: number[][] = candidates.map(() => []);
      test.forEach((e, i) => {
        if (picked.includes(i)) return;
        const q = calibrationQueryOf(e);
        const indexed = predictWith(index, e);
        const both = indexed / calibrate(q, runsIndexed, weights).scale;
        // Blend in log throughput: the transfer's share by its evidence (predictor/learned/model.ts does the same on step time).
        const blend = (tr: NeighbourTransfer) => servedWith(tr, both, e);
        const { t, thr: transferred } = blend(transfer);
        candidateTransfers.forEach((tr, c) => candidateErrors[c].push(ape(blend(tr).thr, e)));
        const row: Record<Variant, number> = {
          'no runs': ape(base[i], e),
          'runs as evidence only': ape(indexed, e),
          'runs calibrate only': ape(base[i] / calibrate(q, runsBase, weights).scale, e),
          'both (before transfer)': ape(both, e),
          'both + neighbour transfer (shipped)': ape(transferred, e),
        };
        shippedLogErrors.push({
          logError: Math.log(transferred / e.row.throughput!),
          recordedModel: recordedModels.has(e.row.model),
          transferShare: t?.share ?? 0,
          precision: e.row.precision,
        });
        for (const v of VARIANTS) {
          errs[v].push(row[v]);
          if (recordedModels.has(e.row.model)) own[v].push(row[v]);
        }
      });
      candidateErrors.forEach((xs, c) => candidatePerDraw[c].push(mean(xs)));
      for (const v of VARIANTS) {
        perDraw[v].push(mean(errs[v]));
        rowErrors[v].push(...errs[v]);
        if (own[v].length) ownPerDraw[v].push(mean(own[v]));
        ownRowErrors[v].push(...own[v]);
      }
    }
    if (!perDraw['no runs'].length) {
      log(`${gpu}: fewer than ${RUNS + 1} models measured, skipped`);
      continue;
    }
    const res: GpuResult = {
      gpu,
      rows: test.length,
      models: new Set(test.map((e) => e.row.model)).size,
      mape: Object.fromEntries(VARIANTS.map((v) => [v, mean(perDraw[v])])) as Record<Variant, number>,
      rowErrors,
      ownMape: Object.fromEntries(VARIANTS.map((v) => [v, mean(ownPerDraw[v])])) as Record<Variant, number>,
      ownRowErrors,
      oracleGpu: oracle(test, base, () => ''),
      oracleGpuModel: oracle(test, base, (e) => e.row.model),
      shippedLogErrors,
      candidateMape: candidatePerDraw.map(mean),
    };
    results.push(res);
    log(`${gpu}: ${res.rows} rows, ${VARIANTS.map((v) => `${v} ${pct(res.mape[v])}`).join(', ')}`);
  }
  return results;
}

/**
 * How far a run strays from the other runs of its configuration: log(step time of a row / the
 * geometric mean of its repeats' step times) over every train.csv configuration one source
 * measured more than once (the server's configuration key: model, GPU, precision, framework,
 * batch, layout; and the source's model variant), P10/P90. The interval a prediction gets where
 * its very configuration has runs, which the calibration follows (predictor/learned/calibration.ts).
 * The repeats ran under other framework releases or on other days, so a user's own repeats, on one
 * machine and one release, may stray less.
 */
export function repeatInterval(ex: readonly Example[]): Interval {
  const groups = new Map<string, number[]>();
  for (const e of ex) {
    // One source's rows of one variant: another source's code or variant is not a repeat.
    const k = `${rowConfiguration(e)}|${e.row.source}|${e.row.variant ?? ''}`;
    // Against the row's analytical throughput, which is the same for every row of a key but for
    // rows of independent one-GPU processes side by side (as-run.json), counted once per process.
    groups.set(k, [...(groups.get(k) ?? []), Math.log(e.row.throughput! / e.aware.throughput)]);
  }
  const xs: number[] = [];
  for (const residuals of groups.values()) {
    if (residuals.length < 2) continue;
    const sum = residuals.reduce((a, b) => a + b, 0);
    // step time is inversely proportional to throughput
    for (const x of residuals) xs.push((sum - x) / (residuals.length - 1) - x);
  }
  return tailQuantiles(xs, 0.1);
}

/** Mean over GPUs of each variant's MAPE on all other rows, for a subset of GPUs. */
export const meanOverGpus = (results: GpuResult[], v: Variant) => mean(results.map((x) => x.mape[v]));

type HeldOutRow = GpuResult['shippedLogErrors'][number];

/** The `tail` and 1 - `tail` quantiles of log(measured / predicted step time) over some held-out rows. */
function quantiles(rows: HeldOutRow[], tail: number): Interval {
  return tailQuantiles(
    rows.map((r) => r.logError),
    tail,
  );
}

/** The `tail` and 1 - `tail` quantiles of some log errors, to three decimals, as an interval. */
function tailQuantiles(values: number[], tail: number): Interval {
  const xs = [...values].sort((a, b) => a - b);
  const q = (p: number) => Number(xs[Math.round(p * (xs.length - 1))].toFixed(3));
  return { q10: q(tail), q90: q(1 - tail), rows: xs.length };
}

/** Share of rows inside the interval each gets. */
const coverage = (rows: HeldOutRow[], iv: (r: HeldOutRow) => Interval) =>
  rows.filter((r) => r.logError >= iv(r).q10 && r.logError <= iv(r).q90).length / Math.max(1, rows.length);

/**
 * The interval the server gives a row of another model on a GPU with runs and no transfer: the
 * learned model's for its precision widened by the unmeasured-GPU one (predictor/learned/model.ts,
 * a GPU of a measured generation; a model with no measurement or a split layout widens it more).
 */
const learnedInterval = (meta: LearnedMeta) => (r: HeldOutRow) => {
  const ivs = meta.intervals;
  const b = ivs.byPrecision[r.precision] ?? ivs.measuredModel;
  return {
    q10: Math.min(b.q10, ivs.unmeasuredGpu.q10),
    q90: Math.max(b.q90, ivs.unmeasuredGpu.q90),
    rows: 0,
  };
};

export function formatBenchmark(results: GpuResult[]): string {
  const lines = [
    `| GPU (held out) | rows | models | ${VARIANTS.map((v) => `${v}: all other rows`).join(' | ')} | ${VARIANTS.map((v) => `${v}: recorded models' other rows`).join(' | ')} | ceiling: GPU mean error known | ceiling: GPU x model mean known |`,
    `|---|---:|---:|${VARIANTS.map(() => '---:').join('|')}|${VARIANTS.map(() => '---:').join('|')}|---:|---:|`,
  ];
  lines.push(
    `| **mean over GPUs** | ${results.reduce((a, x) => a + x.rows, 0)} | | ${VARIANTS.map((v) => pct(mean(results.map((x) => x.mape[v])))).join(' | ')} | ${VARIANTS.map((v) => pct(mean(results.map((x) => x.ownMape[v])))).join(' | ')} | ${pct(mean(results.map((x) => x.oracleGpu)))} | ${pct(mean(results.map((x) => x.oracleGpuModel)))} |`,
  );
  lines.push(
    `| **mean over rows** | | | ${VARIANTS.map((v) => pct(mean(results.flatMap((x) => x.rowErrors[v])))).join(' | ')} | ${VARIANTS.map((v) => pct(mean(results.flatMap((x) => x.ownRowErrors[v])))).join(' | ')} | | |`,
  );
  for (const x of results)
    lines.push(
      `| ${x.gpu} | ${x.rows} | ${x.models} | ${VARIANTS.map((v) => pct(x.mape[v])).join(' | ')} | ${VARIANTS.map((v) => pct(x.ownMape[v])).join(' | ')} | ${pct(x.oracleGpu)} | ${pct(x.oracleGpuModel)} |`,
    );
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const ex = examples(loadMeasurements(), loadEfficiency());
  const settings = loadCalibrationSettings();
  // --grid: score a small grid of transfer settings around the shipped ones on the same draws;
  // choose on the even-indexed GPUs only, and read the odd ones as the held-out check.
  const grid: TransferSettings[] = process.argv.includes('--grid')
    ? [0.05, 0.1, 0.2].flatMap((consistencyFloor) =>
        [300, 1000].flatMap((evidenceHalfWeight) =>
          [2, 3].flatMap((minimumMatches) =>
            [1, 10].map((sameChipWeight) => ({
              ...settings.transfer,
              consistencyFloor,
              evidenceHalfWeight,
              minimumMatches,
              sameChipWeight,
            })),
          ),
        ),
      )
    : [];
  const results = runBenchmark(ex, settings, (s) => console.error(s), grid);
  console.log(`${DRAWS} draws of ${RUNS} runs (${RUNS} different models) per GPU, seed ${SEED}\n`);
  console.log(formatBenchmark(results));
  // The transfer's constants were chosen on the even-indexed GPUs (sorted by id); the odd ones never informed them.
  const gpuOrder = [...new Set(ex.map((e) => e.row.gpu))].sort();
  const half = (parity: number) => results.filter((x) => gpuOrder.indexOf(x.gpu) % 2 === parity);
  console.log('\nmean over GPUs of all other rows, by half (transfer constants chosen on the even half):');
  for (const [name, part] of [
    ['even GPUs (tuning)', half(0)],
    ['odd GPUs (held out)', half(1)],
    ['all GPUs', results],
  ] as const)
    console.log(`  ${name}: ${VARIANTS.map((v) => `${v} ${pct(meanOverGpus(part, v))}`).join(', ')}`);
  if (grid.length) {
    console.log('\ntransfer settings grid (mean over GPUs of all other rows), sorted by the even half:');
    const scored = grid.map((g, c) => ({
      g,
      even: mean(half(0).map((x) => x.candidateMape[c])),
      odd: mean(half(1).map((x) => x.candidateMape[c])),
      all: mean(results.map((x) => x.candidateMape[c])),
    }));
    for (const x of scored.sort((a, b) => a.even - b.even))
      console.log(`  even ${pct(x.even)}  odd ${pct(x.odd)}  all ${pct(x.all)}  ${JSON.stringify(x.g)}`);
  }
  // Intervals: measured on the even half, their coverage checked on the odd half (and on all).
  // Pooled P10/P90 under-cover a GPU they were not measured on (GPUs differ in how far off they
  // are), so the calibrated interval is the even half's P5/P95: an 80% interval for a new GPU.
  const meta = JSON.parse(readFileSync(LEARNED_META_FILE, 'utf8')) as LearnedMeta;
  const rowsOf = (part: GpuResult[]) => part.flatMap((x) => x.shippedLogErrors);
  const recordedRows = (part: GpuResult[]) => rowsOf(part).filter((r) => r.recordedModel);
  const transferredRows = (part: GpuResult[]) =>
    rowsOf(part).filter((r) => !r.recordedModel && r.transferShare > 0);
  const pooled = quantiles(recordedRows(half(0)), 0.1);
  const modelOnGpu = quantiles(recordedRows(half(0)), 0.05);
  const transferred = quantiles(transferredRows(half(0)), 0.1);
  const show = (iv: Interval) => `${iv.q10}..${iv.q90}`;
  console.log(
    '\nintervals of the shipped prediction measured on the even half; share of held-out rows inside:',
  );
  for (const [name, part] of [
    ['odd GPUs', half(1)],
    ['all GPUs', results],
  ] as const) {
    const recorded = recordedRows(part),
      other = transferredRows(part);
    console.log(
      `  ${name}: recorded models' other rows (${recorded.length}): even P5/P95 ${show(modelOnGpu)} ${pct(coverage(recorded, () => modelOnGpu))}, even P10/P90 ${show(pooled)} ${pct(coverage(recorded, () => pooled))}, seeds/calibration.json ${show(settings.modelOnGpu)} ${pct(coverage(recorded, () => settings.modelOnGpu))};` +
        ` other models' transferred rows (${other.length}): even P10/P90 ${show(transferred)} ${pct(coverage(other, () => transferred))}, the learned unmeasured-GPU interval (what they get) ${pct(coverage(other, learnedInterval(meta)))}`,
    );
  }
  const repeats = repeatInterval(ex);
  console.log(
    `\nrepeats of one configuration (${repeats.rows} rows): P10/P90 of log(step / its repeats' geometric mean) ${show(repeats)}, seeds/calibration.json ${show(settings.sameConfiguration)}`,
  );
  if (process.argv.includes('--write')) {
    const file = new URL('../seeds/calibration.json', import.meta.url);
    const json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    json.modelOnGpu = modelOnGpu;
    json.sameConfiguration = repeats;
    writeFileSync(file, JSON.stringify(json, null, 2) + '\n');
    console.log(`wrote modelOnGpu and sameConfiguration to ${file.pathname}`);
  }
}
