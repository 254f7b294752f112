// Does the CHOICE of a user's three calibration runs matter enough to reach 10% on a new GPU?
//
//   npx tsx bench/calibration-choice.ts [--draws 20] [--seed 5]
//
// Same protocol as bench/calibration.ts: for every GPU in seeds/measurements/train.csv, fit the
// learned correction on every other GPU's rows and predict the GPU's rows without runs. Then:
// 1. Ceilings: the MAPE if the mean log error of every group of the GPU's rows were known exactly
//    and removed, per GPU and per GPU x (precision, math mode, regime, model, ...). A calibration
//    that learns one offset per group from the runs cannot beat its group's ceiling (and 3 runs
//    cannot learn more than 3 groups' offsets).
// 2. Hindsight: the best single offset per group chosen after seeing the errors (MAPE-optimal, not
//    the mean): a bound on ANY choice of runs feeding a per-group offset.
// 3. Rules that pick the 3 runs from what is known before timing (the other GPUs' measurements and
//    the model zoo), against 3 random runs of 3 different models: with the shipped calibration
//    (predictor/learned/calibration.ts, seeds/calibration.json weights) and with per-regime offsets.
// 4. A pointer: 3 runs of the model being predicted (the user's own model), random or one per
//    precision mode, on that model's other rows.
// Reported per half (even-/odd-indexed GPUs sorted by id) and over all GPUs. About 1 minute.
import { loadEfficiency, loadMeasurements } from '../seeds/catalog.js';
import { examples, fit, featuresOf, type Example, PARAMS } from '../predictor/learned/train.js';
import { predictEnsemble, rng } from '../predictor/learned/gbdt.js';
import { calibrate, type RecordedEvidence } from '../predictor/learned/calibration.js';
import { loadCalibrationSettings } from '../seeds/calibration.js';
import { zooModelOf } from '../predictor/measured.js';
import { costOf } from '../predictor/predict.js';
import { DRAWS, rowConfiguration, SEED } from './calibration.js';

type Regime = 'recurrent' | 'convolutional' | 'matmul';

/**
 * The model's compute regime from its own layer list (no hand labels): recurrent when LSTM/GRU
 * layers carry over 20% of its FLOPs (GNMT, Tacotron 2), convolutional when convolutions carry
 * over half (CNNs, WaveGlow, Jasper), otherwise matmul (transformers, recommenders).
 */
function regimeOf(e: Example): Regime {
  const def = zooModelOf(e.row);
  if (!def) return 'matmul';
  const share = { rnn: 0, conv: 0, total: 0 };
  for (const l of costOf(def).layers) {
    const f = (l.forwardFlops + l.backwardFlops) * l.count;
    share.total += f;
    if (l.type === 'rnn') share.rnn += f;
    if (l.type.startsWith('conv')) share.conv += f;
  }
  if (share.rnn > 0.2 * share.total) return 'recurrent';
  return share.conv > 0.5 * share.total ? 'convolutional' : 'matmul';
}

interface Row {
  e: Example;
  gpu: string;
  model: string;
  precision: string;
  math: string;
  regime: Regime;
  /** Prediction without runs (learned correction fitted without this GPU). */
  base: number;
  /** log(predicted / measured throughput). */
  logError: number;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const ape = (pred: number, r: Row) => Math.abs(pred - r.e.row.throughput!) / r.e.row.throughput!;

function groupBy<T>(xs: T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
}

/** MAPE with each group's mean log error removed (the exact per-group offset). */
const exactMeanCeiling = (rows: Row[], key: (r: Row) => string) =>
  mean(
    [...groupBy(rows, key).values()].flatMap((g) => {
      const offset = mean(g.map((r) => r.logError));
      return g.map((r) => ape(r.base / Math.exp(offset), r));
    }),
  );

/** MAPE with each group's best offset in hindsight (any of its rows' log errors, or none). */
const hindsightCeiling = (rows: Row[], key: (r: Row) => string) =>
  mean(
    [...groupBy(rows, key).values()].flatMap((g) => {
      const errorsWith = (offset: number) => g.map((r) => ape(r.base / Math.exp(offset), r));
      return [0, ...g.map((r) => r.logError)].map(errorsWith).sort((a, b) => mean(a) - mean(b))[0];
    }),
  );

/** How many other GPUs measured each model, and each (model, precision, batch) configuration. */
function shippedPopularity(all: Row[], gpu: string) {
  const models = new Map<string, Set<string>>(),
    configurations = new Map<string, Set<string>>();
  for (const r of all) {
    if (r.gpu === gpu) continue;
    const c = `${r.model}|${r.precision}|${r.e.aware.exec.batchSizePerGpu}`;
    models.set(r.model, (models.get(r.model) ?? new Set()).add(r.gpu));
    configurations.set(c, (configurations.get(c) ?? new Set()).add(r.gpu));
  }
  return {
    model: (r: Row) => models.get(r.model)?.size ?? 0,
    configuration: (r: Row) =>
      configurations.get(`${r.model}|${r.precision}|${r.e.aware.exec.batchSizePerGpu}`)?.size ?? 0,
  };
}

type Popularity = ReturnType<typeof shippedPopularity>;
const byPopularity = (p: Popularity) => (a: Row, b: Row) =>
  p.configuration(b) - p.configuration(a) || p.model(b) - p.model(a);

/** Rule A: one run per regime (its configuration measured on the most other GPUs), filled to 3 by the most measured. */
function onePerRegime(rows: Row[], p: Popularity): Row[] {
  const picked: Row[] = [];
  for (const regime of ['convolutional', 'matmul', 'recurrent'] as const) {
    const best = rows.filter((r) => r.regime === regime).sort(byPopularity(p))[0];
    if (best) picked.push(best);
  }
  return fillTo3(rows, picked, p);
}

/** Rule B: the 3 models measured on the most other GPUs, each at its most measured configuration. */
const mostMeasuredModels = (rows: Row[], p: Popularity) => fillTo3(rows, [], p, true);

function fillTo3(rows: Row[], picked: Row[], p: Popularity, modelFirst = false): Row[] {
  while (picked.length < 3) {
    const used = new Set(picked.map((r) => r.model));
    const rest = rows
      .filter((r) => !used.has(r.model))
      .sort((a, b) => (modelFirst ? p.model(b) - p.model(a) : 0) || byPopularity(p)(a, b));
    picked.push(rest[0]);
  }
  return picked;
}

function randomRuns(rows: Row[], r: () => number): Row[] {
  const models = [...groupBy(rows, (x) => x.model).entries()].sort(([a], [b]) => a.localeCompare(b));
  const picked: Row[] = [];
  for (let k = 0; k < 3; k++) {
    const [, group] = models.splice(Math.floor(r() * models.length), 1)[0];
    picked.push(group[Math.floor(r() * group.length)]);
  }
  return picked;
}

const evidenceOf = (r: Row): RecordedEvidence => ({
  model: r.model,
  gpu: r.gpu,
  precision: r.e.row.precision,
  framework: r.e.software.framework,
  configuration: rowConfiguration(r.e),
  logError: r.logError,
});

/** MAPE of the other rows with the shipped calibration of the runs (calibrate only, no evidence or transfer). */
function withShippedCalibration(rows: Row[], runs: Row[]): number {
  const { weights } = loadCalibrationSettings();
  const evidence = runs.map(evidenceOf);
  return mean(
    rows
      .filter((r) => !runs.includes(r))
      .map((r) => ape(r.base / calibrate({ ...evidenceOf(r) }, evidence, weights).scale, r)),
  );
}

/** MAPE of the other rows with one shrunk offset per group of `key` (runs' mean, `prior` runs of 0); others get all runs'. */
function withGroupOffsets(rows: Row[], runs: Row[], key: (r: Row) => string, prior: number): number {
  const shrunk = (xs: Row[]) =>
    xs.length ? xs.reduce((a, r) => a + r.logError, 0) / (xs.length + prior) : 0;
  const groups = groupBy(runs, key);
  return mean(
    rows
      .filter((r) => !runs.includes(r))
      .map((r) => ape(r.base / Math.exp(shrunk(groups.get(key(r)) ?? runs)), r)),
  );
}

function main() {
  const ex = examples(loadMeasurements(), loadEfficiency());
  const gpus = [...new Set(ex.map((e) => e.row.gpu))].sort();
  const rows: Row[] = [];
  const regimes = new Map<string, Regime>();
  for (const gpu of gpus) {
    const model = fit(
      ex.filter((e) => e.row.gpu !== gpu),
      true,
      PARAMS,
    );
    for (const e of ex.filter((x) => x.row.gpu === gpu)) {
      const ev = model.evidence.query(e.row.model, e.row.gpu, e.row.precision, e.software.framework);
      const base = e.aware.throughput * Math.exp(predictEnsemble(model.ensemble, featuresOf(e, true, ev)));
      const regime = regimes.get(e.row.model) ?? regimeOf(e);
      regimes.set(e.row.model, regime);
      rows.push({
        e,
        gpu,
        model: e.row.model,
        precision: e.row.precision,
        math: e.aware.dominantMath,
        regime,
        base,
        logError: Math.log(base / e.row.throughput!),
      });
    }
    console.error(`${gpu}: fitted`);
  }
  const perGpu = groupBy(rows, (r) => r.gpu);
  // Each line: a per-GPU figure, then its mean over even-/odd-indexed GPUs and over all.
  const line = (name: string, figure: (rows: Row[], gpu: string) => number | undefined) => {
    const values = gpus.map((g, i) => ({ i, v: figure(perGpu.get(g)!, g) })).filter((x) => x.v !== undefined);
    const part = (parity?: number) =>
      pct(mean(values.filter((x) => parity === undefined || x.i % 2 === parity).map((x) => x.v!)));
    console.log(`| ${name} | ${part(0)} | ${part(1)} | ${part()} | ${values.length} |`);
  };
  const header = (title: string) =>
    console.log(`\n${title}\n\n| | even GPUs | odd GPUs | all | GPUs |\n|---|---:|---:|---:|---:|`);
  const regimeCounts = [...groupBy(rows, (r) => r.regime).entries()].map(([k, v]) => `${k} ${v.length}`);
  console.log(`rows by regime (from each model's layer FLOPs): ${regimeCounts.join(', ')}`);
  console.log(
    `models by regime: ${[...groupBy([...regimes.entries()], ([, r]) => r).entries()].map(([r, ms]) => `${r}: ${ms.map(([m]) => m).join(' ')}`).join('; ')}`,
  );

  header('1. Exact per-group mean error known (mean over GPUs of MAPE on all its rows)');
  line('no runs', (g) => mean(g.map((r) => ape(r.base, r))));
  const groupings: [string, (r: Row) => string][] = [
    ['GPU', () => ''],
    ['GPU x precision mode', (r) => r.precision],
    ['GPU x math mode (fp32/tf32/fp16 tensor)', (r) => r.math],
    ['GPU x regime (conv/matmul/recurrent)', (r) => r.regime],
    ['GPU x regime x math mode', (r) => `${r.regime}|${r.math}`],
    ['GPU x regime x precision mode', (r) => `${r.regime}|${r.precision}`],
    ['GPU x model', (r) => r.model],
    ['GPU x model x precision mode', (r) => `${r.model}|${r.precision}`],
  ];
  for (const [name, key] of groupings) line(name, (g) => exactMeanCeiling(g, key));

  header('2. Best offset per group in hindsight (bounds any choice of runs feeding that offset)');
  for (const [name, key] of groupings.slice(0, 4)) line(name, (g) => hindsightCeiling(g, key));

  header(
    `3. Three runs of 3 different models on the GPU, rest of its rows (random: mean of ${DRAWS} draws, seed ${SEED}; GPUs with >= 4 models)`,
  );
  const enough = (g: Row[]) => new Set(g.map((r) => r.model)).size >= 4;
  const randomDraws = new Map(
    gpus.map((gpu) => {
      const r = rng(SEED);
      return [gpu, Array.from({ length: DRAWS }, () => randomRuns(perGpu.get(gpu)!, r))];
    }),
  );
  const rules: [string, (g: Row[], gpu: string) => Row[][]][] = [
    ['random', (_g, gpu) => randomDraws.get(gpu)!],
    [
      'one per regime, most measured configuration',
      (g, gpu) => [onePerRegime(g, shippedPopularity(rows, gpu))],
    ],
    ['3 most measured models', (g, gpu) => [mostMeasuredModels(g, shippedPopularity(rows, gpu))]],
  ];
  for (const [rule, pick] of rules) {
    line(`${rule}: shipped calibration`, (g, gpu) =>
      enough(g) ? mean(pick(g, gpu).map((runs) => withShippedCalibration(g, runs))) : undefined,
    );
    for (const prior of [1, 3])
      line(`${rule}: per-regime offsets (prior ${prior})`, (g, gpu) =>
        enough(g)
          ? mean(pick(g, gpu).map((runs) => withGroupOffsets(g, runs, (r) => r.regime, prior)))
          : undefined,
      );
  }

  header(
    "4. Pointer: 3 runs of the predicted model itself, that model's other rows (models with >= 6 rows and >= 2 precision modes on the GPU; mean over models, then GPUs)",
  );
  const ownModel = (choose: (m: Row[], p: Popularity, r: () => number) => Row[], key: (r: Row) => string) => {
    return (g: Row[], gpu: string) => {
      const p = shippedPopularity(rows, gpu),
        r = rng(SEED);
      const models = [...groupBy(g, (x) => x.model).values()].filter(
        (m) => m.length >= 6 && new Set(m.map((x) => x.precision)).size >= 2,
      );
      if (!models.length) return undefined;
      return mean(
        models.map((m) =>
          mean(Array.from({ length: DRAWS }, () => withGroupOffsets(m, choose(m, p, r), key, 0))),
        ),
      );
    };
  };
  const randomOfModel = (m: Row[], _p: Popularity, r: () => number) => {
    const rest = [...m];
    return [0, 1, 2].map(() => rest.splice(Math.floor(r() * rest.length), 1)[0]);
  };
  const onePerPrecision = (m: Row[], p: Popularity) => {
    const picked = [...groupBy(m, (x) => x.precision).values()]
      .map((g) => g.sort(byPopularity(p))[0])
      .slice(0, 3);
    const rest = m.filter((x) => !picked.includes(x)).sort(byPopularity(p));
    return [...picked, ...rest].slice(0, 3);
  };
  line(
    'no runs',
    ownModel(
      () => [],
      () => '',
    ),
  );
  line(
    'random 3 runs, one offset',
    ownModel(randomOfModel, () => ''),
  );
  line(
    'random 3 runs, offset per precision mode',
    ownModel(randomOfModel, (r) => r.precision),
  );
  line(
    'one run per precision mode, offset per precision mode',
    ownModel(onePerPrecision, (r) => r.precision),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) main();
