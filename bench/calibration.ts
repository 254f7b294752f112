// How much three recorded runs help on a GPU the shipped measurements never saw.
//
//   npx tsx bench/calibration.ts [--draws 20] [--seed 5] [--write]
//
// For every GPU in seeds/measurements/train.csv: fit the learned correction on every other GPU's
// rows (so the GPU is unmeasured, as a new GPU is), then, per draw, record 3 of its rows from 3
// different models as a user's runs and predict all its other rows: without the runs, with the
// runs as evidence only (the learned model's same-model features), with the runs' calibration
// (predictor/learned/calibration.ts), and with both (what the server does). Error: mean absolute
// percentage error of throughput on the GPU's other rows, averaged over the draws; the table's
// "all" lines are the mean over GPUs and the mean over rows; the same on the recorded models'
// other rows (their other batch sizes, GPU counts, precisions); and two ceilings: the error if
// the GPU's mean error (or its mean error per model) were known exactly. --write stores the
// P10/P90 of calibrated errors where the model has runs on the GPU (seeds/calibration.json,
// modelOnGpu). About 2 minutes on 2 cores (27 fits).
import { loadEfficiency, loadMeasurements } from '../seeds/catalog.js';
import { examples, fit, featuresOf, type Example, PARAMS } from '../predictor/learned/train.js';
import { EvidenceIndex } from '../predictor/learned/evidence.js';
import { predictEnsemble, rng } from '../predictor/learned/gbdt.js';
import {
  calibrate,
  configurationKey,
  type CalibrationWeights,
  type RecordedEvidence,
} from '../predictor/learned/calibration.js';
import { loadCalibrationSettings } from '../seeds/calibration.js';
import { readFileSync, writeFileSync } from 'node:fs';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const DRAWS = arg('draws', 20);
const SEED = arg('seed', 5);

/** Exact-configuration identity of a measurement row (the same key the server builds for a run). */
export const rowConfiguration = (e: Example) =>
  configurationKey({
    model: e.row.model,
    seqOrImage: e.model.seqOrImage,
    gpu: e.row.gpu,
    precision: e.row.precision,
    framework: e.software.framework,
    batchSizePerGpu: e.aware.exec.batchSizePerGpu,
    gpusPerNode: e.aware.exec.gpusPerNode,
    nodes: e.aware.exec.nodes,
    gradAccumSteps: e.aware.exec.gradAccumSteps,
    parallelism: e.aware.exec.parallelism,
  });

const ape = (pred: number, e: Example) => Math.abs(pred - e.row.throughput!) / e.row.throughput!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

const VARIANTS = ['no runs', 'runs as evidence only', 'runs calibrate only', 'both (shipped)'] as const;
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
  /** log(measured step / calibrated step) of every predicted row of a recorded model (for the interval). */
  logErrors: number[];
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

function drawRuns(rows: Example[], r: () => number): number[] | undefined {
  const byModel = new Map<string, number[]>();
  rows.forEach((e, i) => byModel.set(e.row.model, [...(byModel.get(e.row.model) ?? []), i]));
  const models = [...byModel.keys()].sort();
  if (models.length < 4) return undefined; // 3 runs and at least one other model to predict
  const picked: number[] = [];
  const pool = [...models];
  for (let k = 0; k < 3; k++) {
    const m = pool.splice(Math.floor(r() * pool.length), 1)[0];
    const idx = byModel.get(m)!;
    picked.push(idx[Math.floor(r() * idx.length)]);
  }
  return picked;
}

export function runBenchmark(
  ex: Example[],
  weights: CalibrationWeights,
  log: (s: string) => void = () => {},
): GpuResult[] {
  const gpus = [...new Set(ex.map((e) => e.row.gpu))].sort();
  const results: GpuResult[] = [];
  for (const gpu of gpus) {
    const test = ex.filter((e) => e.row.gpu === gpu);
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
    const base = test.map((e) => predictWith(model.evidence, e));
    const r = rng(SEED);
    const perDraw = emptyRecord(),
      rowErrors = emptyRecord();
    const ownPerDraw = emptyRecord(),
      ownRowErrors = emptyRecord();
    const logErrors: number[] = [];
    for (let d = 0; d < DRAWS; d++) {
      const picked = drawRuns(test, r);
      if (!picked) break;
      const recorded = picked.map((i) => test[i]);
      // The runs join the shipped evidence the way the server merges them (analytical residuals).
      const index = new EvidenceIndex(
        recorded.map((e) => ({
          model: e.row.model,
          gpu: e.row.gpu,
          precision: e.row.precision,
          framework: e.software.framework,
          logResidual: Math.log(e.row.throughput! / e.aware.throughput),
        })),
      );
      index.addAggregated(model.evidence.aggregated());
      const runEvidence = (withIndex: boolean): RecordedEvidence[] =>
        recorded.map((e) => {
          const predicted = withIndex ? predictWith(index, e) : base[test.indexOf(e)];
          return {
            model: e.row.model,
            gpu: e.row.gpu,
            precision: e.row.precision,
            framework: e.software.framework,
            configuration: rowConfiguration(e),
            // step time is inversely proportional to throughput
            logError: Math.log(predicted / e.row.throughput!),
          };
        });
      const runsBase = runEvidence(false),
        runsIndexed = runEvidence(true);
      const errs = emptyRecord(),
        own = emptyRecord();
      const recordedModels = new Set(recorded.map((e) => e.row.model));
      test.forEach((e, i) => {
        if (picked.includes(i)) return;
        const q = {
          model: e.row.model,
          gpu: e.row.gpu,
          precision: e.row.precision,
          framework: e.software.framework,
          configuration: rowConfiguration(e),
        };
        const indexed = predictWith(index, e);
        const both = indexed / calibrate(q, runsIndexed, weights).scale;
        const row: Record<Variant, number> = {
          'no runs': ape(base[i], e),
          'runs as evidence only': ape(indexed, e),
          'runs calibrate only': ape(base[i] / calibrate(q, runsBase, weights).scale, e),
          'both (shipped)': ape(both, e),
        };
        for (const v of VARIANTS) {
          errs[v].push(row[v]);
          if (recordedModels.has(e.row.model)) own[v].push(row[v]);
        }
        if (recordedModels.has(e.row.model)) logErrors.push(Math.log(both / e.row.throughput!));
      });
      for (const v of VARIANTS) {
        perDraw[v].push(mean(errs[v]));
        rowErrors[v].push(...errs[v]);
        if (own[v].length) ownPerDraw[v].push(mean(own[v]));
        ownRowErrors[v].push(...own[v]);
      }
    }
    if (!perDraw['no runs'].length) {
      log(`${gpu}: fewer than 4 models measured, skipped`);
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
      logErrors,
    };
    results.push(res);
    log(`${gpu}: ${res.rows} rows, ${VARIANTS.map((v) => `${v} ${pct(res.mape[v])}`).join(', ')}`);
  }
  return results;
}

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
  const results = runBenchmark(ex, loadCalibrationSettings().weights, (s) => console.error(s));
  console.log(`${DRAWS} draws of 3 runs (3 different models) per GPU, seed ${SEED}\n`);
  console.log(formatBenchmark(results));
  const all = results.flatMap((x) => x.logErrors).sort((a, b) => a - b);
  const q = (p: number) => Number(all[Math.round(p * (all.length - 1))].toFixed(3));
  const interval = { q10: q(0.1), q90: q(0.9), rows: all.length };
  console.log(
    `\nlog(measured / calibrated step) on the recorded models' other rows: P10 ${interval.q10}, P90 ${interval.q90} (${all.length} predictions)`,
  );
  if (process.argv.includes('--write')) {
    const file = new URL('../seeds/calibration.json', import.meta.url);
    const json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    json.modelOnGpu = interval;
    writeFileSync(file, JSON.stringify(json, null, 2) + '\n');
    console.log(`wrote modelOnGpu to ${file.pathname}`);
  }
}
