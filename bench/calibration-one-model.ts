// What a user's runs of ONE model on a new GPU do to the predictions of the other models there:
// the usual first step (time your own model at a few batch sizes), where bench/calibration.ts
// records 3 runs of 3 different models.
//
//   npx tsx bench/calibration-one-model.ts [--draws 10] [--seed 5]
//
// For every GPU in train.csv with a model measured at 6 or more configurations and 3 or more
// models: fit the learned correction on every other GPU's rows (the GPU is unmeasured), then, per
// draw, pick one such model, record up to 9 of its rows as runs, and predict the GPU's rows of
// every other model: without the runs, calibrated by them (predictor/learned/calibration.ts), and
// as the server answers (calibration and neighbour transfer, predictor/learned/transfer.ts). MAPE of
// throughput, mean over draws, then over GPUs. About 3 minutes on 2 cores.
import { loadEfficiency, loadMeasurements } from '../seeds/catalog.js';
import { examples, type Example } from '../predictor/learned/train.js';
import { rng } from '../predictor/learned/gbdt.js';
import { calibrate, type RecordedEvidence } from '../predictor/learned/calibration.js';
import { loadCalibrationSettings } from '../seeds/calibration.js';
import {
  exampleConfiguration,
  NeighbourTransfer,
  ShippedConfigurations,
} from '../predictor/learned/transfer.js';
import { gpuChips } from '../predictor/learned/gpu-twins.js';
import { calibrationQueryOf, heldOutGpu, SEED, servedWith, withRecordedRuns } from './calibration.js';

const i = process.argv.indexOf('--draws');
const draws = i >= 0 ? Number(process.argv[i + 1]) : 10;
const ex = examples(loadMeasurements(), loadEfficiency());
const settings = loadCalibrationSettings();
const chips = gpuChips(ex.map((e) => e.gpu));
const ape = (p: number, e: Example) => Math.abs(p - e.row.throughput!) / e.row.throughput!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const VARIANTS = ['no runs', 'runs calibrate', 'calibration and transfer (the server)'] as const;
const overGpus: number[][] = VARIANTS.map(() => []);
console.log(`up to 9 runs of one model per draw, ${draws} draws per GPU, seed ${SEED}; other models' rows\n`);
console.log(`| GPU (held out) | ${VARIANTS.join(' | ')} |\n|---|${VARIANTS.map(() => '---:').join('|')}|`);
for (const gpu of [...new Set(ex.map((e) => e.row.gpu))].sort()) {
  const test = ex.filter((e) => e.row.gpu === gpu);
  const byModel = new Map<string, Example[]>();
  for (const e of test) byModel.set(e.row.model, [...(byModel.get(e.row.model) ?? []), e]);
  const candidates = [...byModel.entries()]
    .filter(([, rows]) => rows.length >= 6)
    .map(([m]) => m)
    .sort();
  if (!candidates.length || byModel.size < 3) continue;
  const { model, predictWith } = heldOutGpu(ex, gpu);
  const shipped = new ShippedConfigurations(ex.filter((e) => e.row.gpu !== gpu).map(exampleConfiguration));
  const r = rng(SEED);
  const perDraw: number[][] = VARIANTS.map(() => []);
  for (let d = 0; d < draws; d++) {
    const timed = candidates[Math.floor(r() * candidates.length)];
    const pool = [...byModel.get(timed)!];
    const recorded: Example[] = [];
    while (recorded.length < 9 && pool.length)
      recorded.push(pool.splice(Math.floor(r() * pool.length), 1)[0]);
    const index = withRecordedRuns(recorded, model.evidence);
    const runs: RecordedEvidence[] = recorded.map((e) => ({
      ...calibrationQueryOf(e),
      logError: Math.log(predictWith(index, e) / e.row.throughput!),
    }));
    const transfer = new NeighbourTransfer(
      shipped,
      recorded.map(exampleConfiguration),
      settings.transfer,
      chips,
    );
    const errors: number[][] = VARIANTS.map(() => []);
    for (const e of test) {
      if (e.row.model === timed) continue;
      const calibrated =
        predictWith(index, e) / calibrate(calibrationQueryOf(e), runs, settings.weights).scale;
      const served = servedWith(transfer, calibrated, e).thr;
      errors[0].push(ape(predictWith(model.evidence, e), e));
      errors[1].push(ape(calibrated, e));
      errors[2].push(ape(served, e));
    }
    errors.forEach((xs, v) => perDraw[v].push(mean(xs)));
  }
  const row = perDraw.map(mean);
  row.forEach((x, v) => overGpus[v].push(x));
  console.log(`| ${gpu} | ${row.map(pct).join(' | ')} |`);
}
console.log(`| **mean over GPUs** | ${overGpus.map((xs) => pct(mean(xs))).join(' | ')} |`);
