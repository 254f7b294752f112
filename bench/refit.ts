// What `trainplan calibrate refit` adds to three recorded runs on a GPU the shipped measurements
// never saw.
//
//   npx tsx bench/refit.ts [--draws 5] [--seed 5] [--gpus A40,GH200]
//   npx tsx bench/refit.ts --shipped   (a refit with no runs against seeds/predictor.onnx, then exit)
//
// The protocol of bench/calibration.ts: for every GPU of seeds/measurements/train.csv, fit the
// learned correction on every other GPU's rows (the GPU is unmeasured, as a new GPU is); per draw,
// record 3 of its rows from 3 different models as a user's runs (the same draws: the same seed and
// drawing function, so the first draws equal that bench's) and predict all its other rows:
//   (a) no runs;
//   (b) today's server: the runs as evidence, their calibration and the neighbour transfer;
//   (c) the refit alone: the correction refitted on the other GPUs' rows plus the 3 runs (the
//       production refit's own function, refitModel), with its evidence, no calibration;
//   (d) the refit as the server uses it: the refit's prediction, calibrated by the runs' errors
//       against the refit's own prediction (so the runs are not counted twice), plus the transfer.
// Error: MAPE of throughput on the GPU's other rows, mean over draws; "all" lines: mean over GPUs
// and over rows. Also: how far the refit moves the other rows' prediction (mean |refit / no-run - 1|).
// Control (a'): the same rows fitted with another seed and no runs. Appending three rows shifts every
// tree's row subsample, so a refit differs from the shipped fit by that noise as well as by the
// runs; (a') and its movement say how much of (c) refitting alone gives.
// Rows: train.csv's benchmark rows, as bench/calibration.ts (the production refit also trains on
// the LLM runs; none is on a held-out GPU's benchmark rows). Two fits per GPU plus one per draw:
// 27 x (2 + draws) fits, about 15 minutes at 5 draws on 2 loaded cores.
import { readFileSync } from 'node:fs';
import { LEARNED_META_FILE, LEARNED_MODEL_FILE, loadEfficiency, loadMeasurements } from '../seeds/catalog.js';
import {
  evidenceOf,
  examples,
  featuresOf,
  fit,
  PARAMS,
  trainingExamples,
  type Example,
} from '../predictor/learned/train.js';
import { loadOnnxCorrection } from '../predictor/learned/onnx.js';
import { featureNames } from '../predictor/learned/features.js';
import type { LearnedMeta } from '../predictor/learned/model.js';
import { EvidenceIndex } from '../predictor/learned/evidence.js';
import { predictEnsemble, rng, type Ensemble } from '../predictor/learned/gbdt.js';
import { calibrate, type RecordedEvidence } from '../predictor/learned/calibration.js';
import { loadCalibrationSettings, type CalibrationSettings } from '../seeds/calibration.js';
import {
  exampleConfiguration,
  NeighbourTransfer,
  ShippedConfigurations,
} from '../predictor/learned/transfer.js';
import { gpuChips } from '../predictor/learned/gpu-twins.js';
import { refitModel } from '../predictor/learned/refit.js';
import { calibrationQueryOf, drawRuns, withRecordedRuns } from './calibration.js';

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const DRAWS = Number(arg('draws') ?? 5);
const SEED = Number(arg('seed') ?? 5);

const VARIANTS = [
  '(a) no runs',
  "(a') no runs, trees fitted with another seed",
  '(b) runs: evidence + calibration + transfer (today)',
  '(c) refit only',
  '(d) refit + calibration + transfer',
] as const;
type Variant = (typeof VARIANTS)[number];

const ape = (pred: number, e: Example) => Math.abs(pred - e.row.throughput!) / e.row.throughput!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

interface Model {
  ensemble: Ensemble;
  evidence: EvidenceIndex;
}

const predictWith = (model: Model, index: EvidenceIndex, e: Example) =>
  e.aware.throughput *
  Math.exp(
    predictEnsemble(
      model.ensemble,
      featuresOf(e, true, index.query(e.row.model, e.row.gpu, e.row.precision, e.software.framework)),
    ),
  );

/**
 * The server's answer for `rows` with `recorded` as a user's runs: `index` is the evidence the
 * model sees (the runs merged in, or, for a refit, its own index, which holds them already); the
 * runs calibrate by their errors against the model's prediction with that evidence
 * (service/measurements.ts); the neighbour transfer blends in (predictor/learned/model.ts).
 */
function serverAnswer(
  model: Model,
  index: EvidenceIndex,
  recorded: Example[],
  rows: Example[],
  transfer: NeighbourTransfer,
  settings: CalibrationSettings,
  withCalibration: boolean,
): number[] {
  const runs: RecordedEvidence[] = recorded.map((e) => ({
    ...calibrationQueryOf(e),
    logError: Math.log(predictWith(model, index, e) / e.row.throughput!),
  }));
  return rows.map((e) => {
    const q = calibrationQueryOf(e);
    const predicted = predictWith(model, index, e);
    if (!withCalibration) return predicted;
    const both = predicted / calibrate(q, runs, settings.weights).scale;
    const t = transfer.query(exampleConfiguration(e));
    return t
      ? Math.exp((1 - t.share) * Math.log(both) + t.share * (Math.log(e.aware.throughput) + t.logResidual))
      : both;
  });
}

interface GpuResult {
  gpu: string;
  rows: number;
  mape: Record<Variant, number>;
  rowErrors: Record<Variant, number[]>;
  /** Mean |refit / no-run prediction - 1| on the other rows; the same for the reseeded fit. */
  moved: number;
  reseedMoved: number;
}

function run(ex: Example[], onlyGpus?: string[]): GpuResult[] {
  const settings = loadCalibrationSettings();
  const chips = gpuChips(ex.map((e) => e.gpu));
  const gpus = [...new Set(ex.map((e) => e.row.gpu))].sort().filter((g) => !onlyGpus || onlyGpus.includes(g));
  const results: GpuResult[] = [];
  for (const gpu of gpus) {
    const test = ex.filter((e) => e.row.gpu === gpu);
    const train = ex.filter((e) => e.row.gpu !== gpu);
    const base = fit(train, true, PARAMS);
    const reseeded = fit(train, true, { ...PARAMS, seed: PARAMS.seed + 1 });
    const shipped = new ShippedConfigurations(train.map(exampleConfiguration));
    const r = rng(SEED);
    const perDraw = Object.fromEntries(VARIANTS.map((v) => [v, [] as number[]])) as Record<Variant, number[]>;
    const rowErrors = Object.fromEntries(VARIANTS.map((v) => [v, [] as number[]])) as Record<
      Variant,
      number[]
    >;
    const moved: number[] = [],
      reseedMoved: number[] = [];
    for (let d = 0; d < DRAWS; d++) {
      const picked = drawRuns(test, r);
      if (!picked) break;
      const recorded = picked.map((i) => test[i]);
      const others = test.filter((_, i) => !picked.includes(i));
      const merged = withRecordedRuns(recorded, base.evidence);
      const transfer = new NeighbourTransfer(
        shipped,
        recorded.map(exampleConfiguration),
        settings.transfer,
        chips,
      );
      const refit = refitModel(train, recorded, PARAMS);
      const answers: Record<Variant, number[]> = {
        '(a) no runs': others.map((e) => predictWith(base, base.evidence, e)),
        "(a') no runs, trees fitted with another seed": others.map((e) =>
          predictWith(reseeded, reseeded.evidence, e),
        ),
        '(b) runs: evidence + calibration + transfer (today)': serverAnswer(
          base,
          merged,
          recorded,
          others,
          transfer,
          settings,
          true,
        ),
        '(c) refit only': serverAnswer(refit, refit.evidence, recorded, others, transfer, settings, false),
        '(d) refit + calibration + transfer': serverAnswer(
          refit,
          refit.evidence,
          recorded,
          others,
          transfer,
          settings,
          true,
        ),
      };
      for (const v of VARIANTS) {
        const errs = others.map((e, i) => ape(answers[v][i], e));
        perDraw[v].push(mean(errs));
        rowErrors[v].push(...errs);
      }
      reseedMoved.push(
        mean(
          others.map((_, i) =>
            Math.abs(
              answers["(a') no runs, trees fitted with another seed"][i] / answers['(a) no runs'][i] - 1,
            ),
          ),
        ),
      );
      moved.push(
        mean(others.map((_, i) => Math.abs(answers['(c) refit only'][i] / answers['(a) no runs'][i] - 1))),
      );
    }
    if (!perDraw['(a) no runs'].length) {
      console.error(`${gpu}: fewer than 4 models measured, skipped`);
      continue;
    }
    const res: GpuResult = {
      gpu,
      rows: test.length,
      mape: Object.fromEntries(VARIANTS.map((v) => [v, mean(perDraw[v])])) as Record<Variant, number>,
      rowErrors,
      moved: mean(moved),
      reseedMoved: mean(reseedMoved),
    };
    results.push(res);
    console.error(`${gpu}: ${VARIANTS.map((v) => `${v} ${pct(res.mape[v])}`).join(', ')}`);
  }
  return results;
}

/**
 * --shipped: the refit's fit with no runs, on every training row, against the shipped model: the
 * trees' outputs (onnxruntime on seeds/predictor.onnx) and the evidence must be the same, or the
 * refit is not the shipped final fit (or the shipped model is out of date with its data).
 */
async function checkShipped(): Promise<void> {
  const rows = trainingExamples();
  const model = refitModel(rows, []);
  const X = rows.map((e) => featuresOf(e, true, evidenceOf(e, model.evidence)));
  const ort = await loadOnnxCorrection(LEARNED_MODEL_FILE.pathname, featureNames(true).length, 1);
  const out = await ort.run(Float32Array.from(X.flat()), X.length);
  const diff = Math.max(...X.map((x, i) => Math.abs(out[i] - predictEnsemble(model.ensemble, x))));
  const meta = JSON.parse(readFileSync(LEARNED_META_FILE, 'utf8')) as LearnedMeta;
  const sameEvidence = JSON.stringify(meta.evidence) === JSON.stringify(model.evidence.aggregated());
  console.log(
    `refit with no runs on ${rows.length} training rows (shipped: ${meta.trainedRows}): max |correction - shipped model's| ${diff.toExponential(2)}; evidence ${sameEvidence ? 'identical' : 'DIFFERENT'}`,
  );
}

if (process.argv.includes('--shipped')) {
  await checkShipped();
  process.exit(0);
}

const ex = examples(loadMeasurements(), loadEfficiency());
const results = run(ex, arg('gpus')?.split(','));
console.log(`${DRAWS} draws of 3 runs (3 different models) per GPU, seed ${SEED}\n`);
console.log(
  `| GPU (held out) | rows | ${VARIANTS.join(' | ')} | refit moves other rows by | another seed moves them by |`,
);
console.log(`|---|---:|${VARIANTS.map(() => '---:').join('|')}|---:|---:|`);
console.log(
  `| **mean over GPUs** | ${results.reduce((a, x) => a + x.rows, 0)} | ${VARIANTS.map((v) => pct(mean(results.map((x) => x.mape[v])))).join(' | ')} | ${pct(mean(results.map((x) => x.moved)))} | ${pct(mean(results.map((x) => x.reseedMoved)))} |`,
);
console.log(
  `| **mean over rows** | | ${VARIANTS.map((v) => pct(mean(results.flatMap((x) => x.rowErrors[v])))).join(' | ')} | | |`,
);
for (const x of results)
  console.log(
    `| ${x.gpu} | ${x.rows} | ${VARIANTS.map((v) => pct(x.mape[v])).join(' | ')} | ${pct(x.moved)} | ${pct(x.reseedMoved)} |`,
  );
const better = (a: Variant, b: Variant) => results.filter((x) => x.mape[a] < x.mape[b] - 1e-9).length;
console.log(
  `\nGPUs where (d) beats (b): ${better('(d) refit + calibration + transfer', '(b) runs: evidence + calibration + transfer (today)')} of ${results.length}; where (b) beats (d): ${better('(b) runs: evidence + calibration + transfer (today)', '(d) refit + calibration + transfer')}`,
);
