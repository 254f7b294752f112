// npm run train:predictor: cross-validates the learned correction (held-out GPUs, held-out
// (model, GPU, precision) combinations, held-out models), prints the tables, fits the final model
// on every row, checks onnxruntime reproduces it, and writes seeds/predictor.onnx, predictor.json
// and PREDICTOR_CARD.md. Deterministic: the same data and seed give the same files.
// `--evaluate-only` prints the validation without writing anything.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { FITTED_STACKS, fitStack, fp8Pairs, LLM_CARD_HEADING } from './evaluate-llm.js';
import { overrideStackEffects, stackOfFramework, type SoftwareStack } from '../predictor/software.js';
import type { Efficiency } from '../predictor/step.js';
import { llmSourceOf } from '../predictor/llm.js';
import {
  LEARNED_META_FILE,
  LEARNED_MODEL_FILE,
  loadEfficiency,
  loadExcludedMeasurements,
  PREDICTOR_CARD_FILE,
} from '../seeds/catalog.js';
import {
  crossValidate,
  fit,
  llmExamples,
  trainingExamples,
  type FoldView,
  PARAMS,
  featuresOf,
  evidenceOf,
  type Example,
  type Split,
} from '../predictor/learned/train.js';
import { featureNames, FEATURE_VERSION } from '../predictor/learned/features.js';
import { TRAINED_AS } from '../predictor/learned/precision-twins.js';
import { softwareRelease } from '../predictor/learned/evidence.js';
import { predictEnsemble } from '../predictor/learned/gbdt.js';
import { ensembleToOnnx, loadOnnxCorrection } from '../predictor/learned/onnx.js';
import {
  heldOutInterval,
  PRECISION_MATHS,
  precisionMathOf,
  REGIME_MIN_SHARE,
  REGIMES,
  regimesIn,
  regimeShare,
  widenInterval,
  type Interval,
  type LearnedMeta,
  type PrecisionMath,
  type Regime,
  type RegimeInterval,
} from '../predictor/learned/model.js';
import { PRECISIONS, type Precision } from '../predictor/types.js';
import {
  calibrateGenerations,
  type GenerationCalibration,
} from '../predictor/learned/generation-intervals.js';

import { pathToFileURL } from 'node:url';

const progress = (s: string) => console.error(s);

/**
 * A fold's view of the LLM runs: the tuned stacks' effects (seeds/software.json) are fitted on the
 * LLM runs, so a fold that holds LLM runs out refits them on the runs it trains on (the grid of
 * cli/evaluate-llm.ts) and re-predicts every LLM run under those effects; the held-out runs never
 * shape their own analytical estimate. A stack none of whose runs is left keeps unfitted effects.
 * Benchmark rows run PYTORCH_EAGER, which no fit touches.
 */
export function stackRefitView(eff: Efficiency): FoldView {
  return (ex, heldOut) => {
    if (!ex.some((e, i) => heldOut.has(i) && e.kind === 'llm')) return ex;
    const trainRuns = ex.flatMap((e, i) => (!heldOut.has(i) && e.run ? [e.run] : []));
    const restores = FITTED_STACKS.map((stack) => {
      const { loss: _loss, ...effects } = fitStack(
        trainRuns.filter((r) => stackOfFramework(r.framework) === stack),
        stack,
        eff,
      );
      return overrideStackEffects(stack, effects);
    });
    try {
      const again = new Map(
        llmExamples(
          eff,
          ex.flatMap((e) => (e.run ? [e.run] : [])),
        ).map((e) => [e.row.id, e]),
      );
      return ex.map((e) => (e.kind === 'llm' ? (again.get(e.row.id) ?? e) : e));
    } finally {
      restores.reverse().forEach((restore) => restore());
    }
  };
}

/**
 * Leave-one-generation-out cross-validation: the intervals of GPUs of an unmeasured generation or
 * vendor, and their coverage measured on each generation held out of the calibration as well.
 */
export function generationCalibration(ex: Example[], unmeasuredGpu: Interval): GenerationCalibration {
  progress(
    'cross-validation holding out whole GPU generations (for the intervals of unmeasured generations and vendors)',
  );
  const byGeneration = crossValidate(
    ex,
    'generation',
    true,
    PARAMS,
    progress,
    stackRefitView(loadEfficiency()),
  );
  return calibrateGenerations(
    ex.map((e, i) => ({
      generation: e.gpu.generation,
      logError: Math.log(byGeneration[i] / e.row.throughput!),
    })),
    unmeasuredGpu,
  );
}

const GENERATION_HEADING = '## Unmeasured generations and vendors';

/**
 * The benchmark rows of models measured in more than one precision: what the whole (model, precision)
 * split speaks for (a model measured in one precision only is a whole-model case, which the
 * leave-one-model-out interval covers).
 */
export function otherPrecisionMeasured(ex: Example[]): (e: Example) => boolean {
  const precisionsOf = new Map<string, Set<string>>();
  for (const e of ex)
    precisionsOf.set(e.row.model, (precisionsOf.get(e.row.model) ?? new Set()).add(e.row.precision));
  return (e) => e.kind === 'benchmark' && precisionsOf.get(e.row.model)!.size > 1;
}

/**
 * The interval of a precision a measured model never ran (learned/model.ts unmeasuredPrecision), by
 * its matmul math: the held-out errors of those rows under the (model, precision) split. TF32 is left
 * out, as unmeasuredPrecision never applies to it (its FP32-labelled rows ran TF32 matmuls).
 */
export function unmeasuredPrecisionIntervals(
  ex: Example[],
  byPrecisionPair: number[],
): Record<PrecisionMath, Interval> {
  const counted = otherPrecisionMeasured(ex);
  const errs = (m: PrecisionMath) =>
    ex.flatMap((e, i) =>
      counted(e) && e.row.precision !== 'TF32' && precisionMathOf(e.row.precision) === m
        ? [Math.log(byPrecisionPair[i] / e.row.throughput!)]
        : [],
    );
  return Object.fromEntries(PRECISION_MATHS.map((m) => [m, heldOutInterval(errs(m))])) as Record<
    PrecisionMath,
    Interval
  >;
}

/** An interval as the card writes it: log step-time error, then as factors on the step time. */
const stepFactors = (i: Interval) =>
  `[${i.q10}, ${i.q90}] (x${Math.exp(i.q10).toFixed(2)} to x${Math.exp(i.q90).toFixed(2)})`;

/** The model card's section on GPUs of unmeasured generations and vendors. */
function generationSection(cal: GenerationCalibration, gpu: Interval): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const iv = (i: Interval) =>
    `[${i.q10}, ${i.q90}] (x${Math.exp(i.q10).toFixed(2)} to x${Math.exp(i.q90).toFixed(2)} on the step time)`;
  const rows = cal.coverage
    .map(
      (c) =>
        `| ${c.generation} | ${c.rows} | ${pct(c.gpuInterval)} | ${pct(c.generationInterval)} | ${pct(c.vendorInterval)} |`,
    )
    .join('\n');
  return `${GENERATION_HEADING}

A GPU that is the only unmeasured one of a measured generation gets the leave-one-GPU-out interval ${iv(gpu)}. A GPU of a generation no measured GPU belongs to (Blackwell, Ada, ...) gets the P10/P90 of leave-one-generation-out errors, ${iv(cal.unmeasuredGeneration)}; one of a vendor with no measured GPU at all (AMD, Google) gets the widest per-generation interval, ${iv(cal.unmeasuredVendor)}: every measured row is NVIDIA's, so no vendor can be held out, and the worst generation seen is the floor. Coverage of the P10-P90 interval on each generation held out of both training and calibration (the interval computed from the other generations' held-out errors; 80% intended):

| held-out generation | rows | leave-one-GPU-out interval | leave-one-generation-out interval | widest-generation (vendor) interval |
|---|---:|---:|---:|---:|
${rows}
`;
}

/** Replaces (or appends) the generation section of the model card. */
function writeGenerationSection(cal: GenerationCalibration, gpu: Interval): void {
  const card = readFileSync(PREDICTOR_CARD_FILE, 'utf8');
  const at = card.indexOf(GENERATION_HEADING);
  const head = at < 0 ? card.trimEnd() + '\n\n' : card.slice(0, at);
  const next = at < 0 ? -1 : card.indexOf('\n## ', at + GENERATION_HEADING.length);
  const tail = next < 0 ? '' : card.slice(next + 1);
  writeFileSync(PREDICTOR_CARD_FILE, head + generationSection(cal, gpu) + (tail ? '\n' + tail : ''));
}

/**
 * The LLM runs' errors held out by model family, per software stack with at least 30 runs: the
 * stacks are predicted with very different errors (bench/llm-intervals.ts), so each gets its own.
 */
export function llmRunsByStack(ex: Example[], byFamily: number[]): Partial<Record<SoftwareStack, Interval>> {
  const groups = new Map<SoftwareStack, number[]>();
  ex.forEach((e, i) => {
    if (e.kind !== 'llm') return;
    const stack = stackOfFramework(e.run!.framework);
    groups.set(stack, [...(groups.get(stack) ?? []), Math.log(byFamily[i] / e.row.throughput!)]);
  });
  const out: Partial<Record<SoftwareStack, Interval>> = {};
  for (const [stack, errs] of [...groups].sort(([a], [b]) => a.localeCompare(b)))
    if (errs.length >= 30) out[stack] = heldOutInterval(errs);
  return out;
}

/**
 * `--generation-intervals`: adds the generation and vendor intervals (and their coverage) to the
 * shipped seeds/predictor.json without refitting the model, whose trees do not depend on them.
 */
export function writeGenerationIntervals(): GenerationCalibration {
  const meta = JSON.parse(readFileSync(LEARNED_META_FILE, 'utf8')) as LearnedMeta;
  const cal = generationCalibration(trainingExamples(), meta.intervals.unmeasuredGpu);
  meta.intervals.unmeasuredGeneration = cal.unmeasuredGeneration;
  meta.intervals.unmeasuredVendor = cal.unmeasuredVendor;
  meta.validation.generationCoverage = cal.coverage;
  writeFileSync(LEARNED_META_FILE, JSON.stringify(meta, null, 1) + '\n');
  writeGenerationSection(cal, meta.intervals.unmeasuredGpu);
  return cal;
}

/** `log` receives every progress line (the CLI turns the folds into a progress bar). */
/**
 * The tables report one draw of the trees' row subsampling (seed PARAMS.seed), and a held-out error
 * moves by about half a point from seed to seed: the two main splits again at three more seeds, so
 * the card says how far its headline figures are one draw's (bench/held-out.ts runs the same seeds).
 */
export const SPREAD_SEEDS = [PARAMS.seed, PARAMS.seed + 1, PARAMS.seed + 2, PARAMS.seed + 3];

export async function trainPredictor(
  writeFiles: boolean,
  log: (line: string) => void = (line) => console.error(line),
): Promise<void> {
  const eff = loadEfficiency();
  const ex = trainingExamples(eff);
  const view = stackRefitView(eff);
  const isLlm = (e: Example) => e.kind === 'llm';
  log(
    `${ex.length} measured rows the analytical predictor covers (${ex.filter(isLlm).length} of them LLM runs)`,
  );
  const ape = (pred: number, e: Example) => Math.abs(pred - e.row.throughput!) / e.row.throughput!;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '–');
  const mape = (pred: number[], which: (e: Example) => boolean = () => true) =>
    Number(mean(ex.flatMap((e, i) => (which(e) ? [ape(pred[i], e)] : []))).toFixed(4));

  interface Variant {
    name: string;
    pred: number[];
  }
  function table(
    title: string,
    variants: Variant[],
    groupBy: (e: Example) => string,
    filter?: (e: Example) => boolean,
    order?: (a: string, b: string) => number,
  ): string {
    const which = filter ?? (() => true);
    const groups = [...new Set(ex.filter(which).map(groupBy))].sort(order);
    const head = `| ${title} | rows | ${variants.map((v) => v.name).join(' | ')} |`;
    const lines = [head, `|---|---:|${variants.map(() => '---:').join('|')}|`];
    const row = (label: string, idx: number[]) =>
      `| ${label} | ${idx.length} | ${variants.map((v) => pct(mean(idx.map((i) => ape(v.pred[i], ex[i]))))).join(' | ')} |`;
    const rows = (f: (e: Example) => boolean) => ex.flatMap((e, i) => (which(e) && f(e) ? [i] : []));
    lines.push(
      row(
        '**all**',
        rows(() => true),
      ),
    );
    if (!filter) {
      lines.push(
        row(
          'benchmark rows (train.csv)',
          rows((e) => !isLlm(e)),
        ),
      );
      lines.push(row('LLM runs (llm_train.csv)', rows(isLlm)));
    }
    for (const g of groups)
      lines.push(
        row(
          g,
          rows((e) => groupBy(e) === g),
        ),
      );
    return lines.join('\n');
  }
  const llmFamily = (e: Example) => `${e.family} (${e.row.precision === 'FP8' ? 'FP8' : 'BF16'})`;

  // LLM runs' analytical estimate under the stack effects fitted on all of them (seeds/software.json).
  const analyticalAware = ex.map((e) => e.aware.throughput);
  const analyticalUnaware = ex.map((e) => e.unaware.throughput);
  const sections: string[] = [];
  const summary: Record<string, Record<string, number>> = {};
  const oof: Partial<Record<Split, number[]>> = {};
  for (const split of ['combination', 'gpu'] as Split[]) {
    log(
      `cross-validation holding out whole ${split === 'gpu' ? 'GPUs' : '(model, GPU, precision) combinations'}`,
    );
    const aware = crossValidate(ex, split, true, PARAMS, log, view);
    const unaware = crossValidate(ex, split, false, PARAMS, log, view);
    oof[split] = aware;
    const variants = [
      { name: 'analytical, precision-unaware', pred: analyticalUnaware },
      { name: 'analytical', pred: analyticalAware },
      { name: 'learned, precision-unaware (ablation)', pred: unaware },
      { name: 'learned (shipped)', pred: aware },
    ];
    summary[split] = Object.fromEntries(variants.map((v) => [v.name, mape(v.pred)]));
    summary[`${split}, benchmark rows`] = Object.fromEntries(
      variants.map((v) => [v.name, mape(v.pred, (e) => !isLlm(e))]),
    );
    summary[`${split}, LLM runs`] = Object.fromEntries(variants.map((v) => [v.name, mape(v.pred, isLlm)]));
    const what =
      split === 'gpu'
        ? 'Held out: whole GPUs (leave-one-GPU-out)'
        : 'Held out: whole (model, GPU, precision) combinations (10 folds)';
    sections.push(
      [
        `### ${what}`,
        table('precision', variants, (e) => e.row.precision),
        table('GPU architecture', variants, (e) => e.gpu.generation),
        ...(split === 'gpu'
          ? [
              table('GPU', variants, (e) => e.row.gpu),
              // What a user on today's software should read: the rows' own framework releases.
              table(
                'framework release (benchmark rows)',
                variants,
                (e) => softwareRelease(e.row) ?? 'not stated',
                (e) => !isLlm(e),
                (a, b) => a.localeCompare(b, 'en', { numeric: true }),
              ),
            ]
          : []),
        table('source', variants, (e) => e.source),
        table('LLM model family (precision)', variants, llmFamily, isLlm),
      ].join('\n\n'),
    );
  }
  const spreadSeeds = SPREAD_SEEDS;
  const seedSpread: Record<string, number[]> = {};
  for (const split of ['gpu', 'combination'] as Split[]) {
    log(
      `seed spread: holding out whole ${split === 'gpu' ? 'GPUs' : 'combinations'} at seeds ${spreadSeeds.slice(1).join(', ')}`,
    );
    seedSpread[split] = spreadSeeds.map((seed) =>
      mape(
        seed === PARAMS.seed ? oof[split]! : crossValidate(ex, split, true, { ...PARAMS, seed }, log, view),
        (e) => !isLlm(e),
      ),
    );
  }
  const spreadLine = (split: string) => {
    const v = seedSpread[split];
    return `${v.map((x) => `${(100 * x).toFixed(1)}%`).join(' / ')} (mean ${((100 * v.reduce((a, b) => a + b, 0)) / v.length).toFixed(1)}%)`;
  };
  log('cross-validation holding out whole models (for the interval of unmeasured models)');
  const byModel = crossValidate(ex, 'model', true, PARAMS, log, view);
  log('cross-validation holding out whole model families (LLM runs: Llama-3.1-8B and -70B together)');
  const byFamily = crossValidate(ex, 'family', true, PARAMS, log, view);
  log('cross-validation holding out whole sources (publishers)');
  const bySource = crossValidate(ex, 'source', true, PARAMS, log, view);
  log(
    'cross-validation holding out whole (model, precision) pairs (for the interval of a precision a model never ran)',
  );
  const byPrecisionPair = crossValidate(ex, 'precision', true, PARAMS, log, view);
  for (const [name, pred] of [
    ['model', byModel],
    ['family', byFamily],
    ['source', bySource],
    ['precision', byPrecisionPair],
  ] as const) {
    summary[name] = { analytical: mape(analyticalAware), 'learned (shipped)': mape(pred) };
    summary[`${name}, benchmark rows`] = {
      analytical: mape(analyticalAware, (e) => !isLlm(e)),
      'learned (shipped)': mape(pred, (e) => !isLlm(e)),
    };
    summary[`${name}, LLM runs`] = {
      analytical: mape(analyticalAware, isLlm),
      'learned (shipped)': mape(pred, isLlm),
    };
  }
  const twoColumns = (pred: number[]) => [
    { name: 'analytical', pred: analyticalAware },
    { name: 'learned (shipped)', pred },
  ];
  const byModelAndFamily = (title: string, groupBy: (e: Example) => string) =>
    table(
      title,
      [
        { name: 'analytical', pred: analyticalAware },
        { name: 'learned, model held out', pred: byModel },
        { name: 'learned, model family held out', pred: byFamily },
      ],
      groupBy,
      isLlm,
    );
  sections.push(
    [
      '### Held out: whole models (leave-one-model-out), and LLM runs by whole model family',
      byModelAndFamily('LLM model family (precision)', llmFamily),
      byModelAndFamily('LLM runs by source', (e) => e.source),
      byModelAndFamily('LLM runs by precision', (e) => e.row.precision),
      byModelAndFamily('LLM runs by stack', (e) => e.aware.exec.stack ?? 'PYTORCH_EAGER'),
      table(
        'model (benchmark rows)',
        twoColumns(byModel),
        (e) => e.row.model,
        (e) => !isLlm(e),
      ),
    ].join('\n\n'),
  );
  // A model measured in other precisions but never in this one (BF16 for every benchmark model,
  // apex-O2 FP16 for every CNN but SSD300): its fold held the precision out on every GPU, while the
  // model's other precisions stayed (folds()).
  sections.push(
    [
      '### Held out: whole (model, precision) pairs (a precision the model never ran)',
      `Every GPU's rows of a model in one precision held out together (10 folds; a model's precisions in different folds, so its other precisions stay measured), on the benchmark rows of the models measured in more than one precision; the combination split's figure for the same rows beside it. This is what an estimate for a precision the model was never measured in (BF16 for every benchmark model, apex-O2 FP16 for every CNN but SSD300) rests on: its interval is at least these rows' held-out errors.`,
      table(
        'precision',
        [
          { name: 'analytical', pred: analyticalAware },
          { name: 'learned, combination held out', pred: oof.combination! },
          { name: 'learned, precision held out', pred: byPrecisionPair },
        ],
        (e) => e.row.precision,
        otherPrecisionMeasured(ex),
      ),
    ].join('\n\n'),
  );
  sections.push(
    [
      '### Held out: whole sources (leave-one-source-out)',
      table('source', twoColumns(bySource), (e) => e.source),
      table('LLM model family (precision)', twoColumns(bySource), llmFamily, isLlm),
    ].join('\n\n'),
  );

  // FP8/BF16 speed ratios of the H100 runs published in both precisions at the same layout: the
  // analytical estimate, and the learned one with the run's model family held out.
  const llmIdx = ex.flatMap((e, i) => (e.run ? [i] : []));
  const pairsOf = (pred: number[]) =>
    fp8Pairs(llmIdx.map((i) => ({ run: ex[i].run!, tokensPerSecondPerGpu: pred[i] })));
  const analyticalPairs = pairsOf(analyticalAware),
    learnedPairs = pairsOf(byFamily);
  const pairError = (x: { measured: number; predicted: number }) =>
    Math.abs(x.predicted - x.measured) / x.measured;
  const pairLine = (name: string, ps: typeof analyticalPairs) =>
    `${name}: predicted mean ${mean(ps.map((x) => x.predicted)).toFixed(2)}, mean |error| ${pct(mean(ps.map(pairError)))}, within 10%: ${ps.filter((x) => pairError(x) <= 0.1).length}/${ps.length}`;
  sections.push(
    [
      `### FP8/BF16 speed ratio on H100 (${analyticalPairs.length} runs published in both precisions at the same layout; measured mean ${mean(analyticalPairs.map((x) => x.measured)).toFixed(2)})`,
      `${pairLine('analytical', analyticalPairs)}; ${pairLine('learned, model family held out', learnedPairs)}.`,
      '',
      '| source | model | GPUs | TP/PP/CP/VP | measured | analytical | learned (family held out) |',
      '|---|---|---:|---|---:|---:|---:|',
      ...analyticalPairs.map((a, i) => {
        const r = a.run;
        return `| ${llmSourceOf(r)} | ${r.model} | ${r.numGpus} | ${r.tensorParallel}/${r.pipelineParallel}/${r.contextParallel}/${r.virtualPipeline} | ${a.measured.toFixed(2)} | ${a.predicted.toFixed(2)} | ${learnedPairs[i].predicted.toFixed(2)} |`;
      }),
    ].join('\n'),
  );

  // Interval: quantiles of log(actual step / predicted step) = log(predicted / measured throughput), out of fold.
  const logStepErr = (pred: number[], idx: number[]) =>
    idx.map((i) => Math.log(pred[i] / ex[i].row.throughput!));
  const all = ex.map((_, i) => i);
  // Host- and communication-bound benchmark rows: their own held-out errors, per case.
  const inRegime = (r: Regime) =>
    all.filter((i) => !isLlm(ex[i]) && regimeShare(r, ex[i].aware) >= REGIME_MIN_SHARE);
  const byRegime: RegimeInterval[] = REGIMES.flatMap((regime) => {
    const idx = inRegime(regime);
    if (idx.length < 30) return [];
    return [
      {
        regime,
        minShare: REGIME_MIN_SHARE,
        measured: heldOutInterval(logStepErr(oof.combination!, idx)),
        unmeasuredModel: heldOutInterval(logStepErr(byModel, idx)),
        unmeasuredGpu: heldOutInterval(logStepErr(oof.gpu!, idx)),
      },
    ];
  });
  const inAnyRegime = (i: number) => regimesIn(byRegime, ex[i].aware).length > 0;
  // Per precision from the benchmark rows: stock code under plain data parallelism, as a default
  // query runs, in no regime (those rows widen their own intervals). LLM-style queries (a tuned
  // stack or a split layout) take the LLM runs' interval.
  const byPrecision: Partial<Record<Precision, Interval>> = {};
  for (const p of PRECISIONS) {
    const idx = all.filter((i) => ex[i].row.precision === p && !isLlm(ex[i]) && !inAnyRegime(i));
    if (idx.length >= 30) byPrecision[p] = heldOutInterval(logStepErr(oof.combination!, idx));
  }
  const unmeasuredGpu = heldOutInterval(logStepErr(oof.gpu!, all));
  const generations = generationCalibration(ex, unmeasuredGpu);
  const intervals = {
    byPrecision,
    measuredModel: heldOutInterval(logStepErr(oof.combination!, all)),
    unmeasuredModel: heldOutInterval(logStepErr(byModel, all)),
    unmeasuredPrecision: unmeasuredPrecisionIntervals(ex, byPrecisionPair),
    unmeasuredGpu,
    unmeasuredGeneration: generations.unmeasuredGeneration,
    unmeasuredVendor: generations.unmeasuredVendor,
    llmRuns: heldOutInterval(
      logStepErr(
        byFamily,
        all.filter((i) => isLlm(ex[i])),
      ),
    ),
    llmRunsByStack: llmRunsByStack(ex, byFamily),
    byRegime,
  };
  // The interval a held-out combination gets (measured model and GPU): with or without the regimes'.
  const measuredInterval = (i: number, regimes: boolean): Interval => {
    if (isLlm(ex[i])) return intervals.llmRuns;
    let iv = byPrecision[ex[i].row.precision] ?? intervals.measuredModel;
    if (regimes)
      for (const { regime } of regimesIn(byRegime, ex[i].aware)) iv = widenInterval(iv, regime.measured);
    return iv;
  };
  const covered = (i: number, regimes: boolean) => {
    const s = Math.log(oof.combination![i] / ex[i].row.throughput!);
    const iv = measuredInterval(i, regimes);
    return s >= iv.q10 && s <= iv.q90 ? 1 : 0;
  };
  const coverage = mean(all.map((i) => covered(i, true)));
  // The regime's quantiles come from the errors they are checked on; a check that does not: the
  // GPUs in two halves (alternate by name), each half's rows against the interval of the other's.
  const gpuNames = [...new Set(ex.map((e) => e.row.gpu))].sort();
  const half = (i: number) => gpuNames.indexOf(ex[i].row.gpu) % 2;
  const otherHalfCovered = (idx: number[]) =>
    mean(
      idx.map((i) => {
        const other = heldOutInterval(
          logStepErr(
            oof.combination!,
            idx.filter((j) => half(j) !== half(i)),
          ),
        );
        const base = measuredInterval(i, false);
        const s = Math.log(oof.combination![i] / ex[i].row.throughput!);
        return s >= Math.min(base.q10, other.q10) && s <= Math.max(base.q90, other.q90) ? 1 : 0;
      }),
    );
  const regimeCoverage = byRegime.map((r) => {
    const idx = inRegime(r.regime);
    return {
      regime: r.regime,
      rows: idx.length,
      otherHalfOfGpus: Number(otherHalfCovered(idx).toFixed(4)),
      withoutRegime: Number(mean(idx.map((i) => covered(i, false))).toFixed(4)),
      withRegime: Number(mean(idx.map((i) => covered(i, true))).toFixed(4)),
    };
  });
  const outside = all.filter((i) => !isLlm(ex[i]) && !inAnyRegime(i));
  const otherCoverage = mean(outside.map((i) => covered(i, true)));

  const report = `${sections.join('\n\n')}\n\nMAPE summary: ${JSON.stringify(summary)}\nInterval (P10-P90 of held-out step-time error) coverage on the combination split: ${pct(coverage)} (80% expected); ${regimeCoverage.map((r) => `${r.regime}-bound rows (${r.rows}): ${pct(r.withRegime)}, ${pct(r.withoutRegime)} without their regime's interval`).join('; ')}; other benchmark rows ${pct(otherCoverage)}.`;
  console.log(report);

  if (writeFiles) {
    log('fitting the final model on every row');
    const final = fit(ex, true, PARAMS);
    const { members } = PARAMS;
    const names = featureNames(true);
    const bytes = ensembleToOnnx(
      final.ensemble,
      `trainplan learned correction: log(measured/analytical throughput); feature version ${FEATURE_VERSION}; see seeds/PREDICTOR_CARD.md`,
    );
    writeFileSync(LEARNED_MODEL_FILE, bytes);
    // onnxruntime must reproduce the TypeScript ensemble on the training rows.
    const X = ex.map((e) => featuresOf(e, true, evidenceOf(e, final.evidence)));
    const ort = await loadOnnxCorrection(LEARNED_MODEL_FILE.pathname, names.length);
    const out = await ort.run(Float32Array.from(X.flat()), X.length);
    const maxDiff = Math.max(...X.map((x, i) => Math.abs(out[i] - predictEnsemble(final.ensemble, x))));
    const inSample = mean(ex.map((e, i) => ape(e.aware.throughput * Math.exp(out[i]), e)));
    log(
      `onnxruntime vs TypeScript: max |difference| ${maxDiff.toExponential(2)}; in-sample MAPE ${pct(inSample)} (not a validation figure)`,
    );
    const meta: LearnedMeta = {
      name: `gbdt-v${FEATURE_VERSION}`,
      featureVersion: FEATURE_VERSION,
      featureNames: names,
      params: { ...PARAMS },
      trainedRows: ex.length,
      evidence: final.evidence.aggregated(),
      intervals,
      validation: {
        mape: summary,
        seedSpread: { seeds: spreadSeeds, benchmarkRowsMape: seedSpread },
        intervalCoverage: Number(coverage.toFixed(4)),
        regimeCoverage,
        generationCoverage: generations.coverage,
        onnxMaxAbsDiff: maxDiff,
        inSampleMape: Number(inSample.toFixed(4)),
      },
    };
    writeFileSync(LEARNED_META_FILE, JSON.stringify(meta, null, 1) + '\n');
    const twins = Object.entries(TRAINED_AS)
      .map(([p, t]) => `${p} is read as ${t!.as} (${t!.why})`)
      .join('; ');
    const card = `# Learned predictor: model card

Written by \`npm run train:predictor\` (cli/train-predictor.ts); do not edit by hand.

- **What it predicts**: a correction to the analytical (roofline) estimate: log(measured throughput / analytical throughput). The shipped prediction is analytical x exp(correction), so outside the data it degrades to the analytical estimate's behaviour rather than to nonsense.
- **Model**: gradient-boosted regression trees (squared error), ${PARAMS.trees} trees, depth ${PARAMS.depth}, learning rate ${PARAMS.learningRate}, min ${PARAMS.minLeaf} rows per leaf, row subsample ${PARAMS.subsample}, L2 ${PARAMS.lambda}, seed ${PARAMS.seed}${members > 1 ? `; the mean of ${members} such fits at seeds ${Array.from({ length: members }, (_, m) => PARAMS.seed + 1000 * m).join(', ')}, each with its own row subsample and evidence dropout (one fit's held-out error moves by several tenths of a point with its seed; the mean moves less and is lower: bench/held-out.ts --members)` : ''}. Trained in TypeScript (predictor/learned/gbdt.ts), exported as an ai.onnx.ml TreeEnsembleRegressor (seeds/predictor.onnx), run with onnxruntime-node. onnxruntime reproduces the TypeScript trees to ${maxDiff.toExponential(1)}.
- **Data**: seeds/measurements/train.csv (NVIDIA DeepLearningExamples and Lambda benchmark tables; see seeds/README.md): ${ex.filter((e) => !isLlm(e)).length} rows the analytical predictor covers (rows of models outside the zoo, GPUs without a memory figure, or precision modes a GPU has no peak for are not used, nor the ${loadExcludedMeasurements().length} rows that contradict the configuration they state: seeds/measurement-checks.ts); and seeds/measurements/llm_train.csv: ${ex.filter(isLlm).length} published LLM training runs (latest version of each; dense models with a published architecture and batch on catalog GPUs), each predicted at its own layout (TP, PP, virtual stages, CP, FSDP/ZeRO, recomputation) under the software stack its framework names, as \`trainplan evaluate --llm\` does. The tuned stacks' effects (seeds/software.json) are fitted on the LLM runs, so every fold that holds LLM runs out refits them on the runs it trains on and re-predicts all LLM runs under those effects before the trees are fitted: a held-out run never shapes its own analytical estimate. The analytical columns below use the effects fitted on all runs.
- **Features** (version ${FEATURE_VERSION}, ${names.length}): ${names.join(', ')}. Layout features (TP, PP, CP, virtual stages, ZeRO stage, recomputation; pipeline-bubble, recomputation, TP- and PP-communication shares of the analytical step) and the stack's effects (fused attention, elementwise traffic left, GEMM fraction, launch cost) tell the LLM runs' regimes from the benchmark rows'. Evidence features are the mean analytical residual of the same model on other configurations (same GPU other precisions; same GPU same matmul math; same precision other GPUs; same precision and framework other GPUs; sibling GPUs of the same generation; any), and the trend of the same model and precision across other GPUs (a ridge-shrunk line through each GPU's mean residual against its log matmul peak, read at this GPU's peak, with its slope and how many GPUs it is through: whether the roofline is further off for this model on bigger GPUs or on smaller ones), never of the row's own (model, GPU, precision); 15-45% of training rows have some evidence dropped so the model also learns the unmeasured cases. A precision no training row ran has no column of its own: ${twins}, by the precision columns, the evidence and the interval alike, while the roofline under them prices the precision itself (predictor/learned/precision-twins.ts; \`npx tsx bench/precision-twins.ts\` compares the step times).
- **Held out**: whole GPUs (a held-out GPU reads the rows of a measured GPU of its die, SM count and clock with no more memory bandwidth as its own evidence, as an unmeasured GPU does at run time: predictor/learned/gpu-twins.ts); whole (model, GPU, precision) combinations (10 folds); whole models; LLM runs by whole model family (Llama-3.1-8B and -70B together; benchmark rows by model); whole sources (train.csv's dle, lambda_pytorch, lambda_tensorflow; each LLM publisher). LLM runs carry no evidence features and give none: they are keyed by published model names no zoo model or query uses, so no LLM-style query finds evidence at run time. Hyperparameters (trees, depth, rate) were chosen earlier by cross-validation on the GPU and combination splits. Two evidence features, same precision and framework on other GPUs and the nearest GPU by datasheet figures, were kept because they lowered the leave-one-GPU-out error (14.3% to 14.0% on benchmark rows in a 90-tree trial; chosen on that split, so its figure is not untouched by the choice); in the same trials they raised the LLM family-held-out error by 1-3 points, which moves by that much with any change of features (15.4-18.2% across trials), so the figure below is one draw of a noisy quantity. Weighting the LLM runs 2x or 4x in training was tried on the model split and dropped (it raised the LLM error).
- **Intervals**: P10/P90 of the held-out log step-time error per precision mode (combination split, benchmark rows in neither regime below), widened to the leave-one-model-out errors for models with no measurements, to the errors of whole (model, precision) pairs held out for a measured model in a precision it was never measured in, by the precision's matmul math (FP32 ${stepFactors(intervals.unmeasuredPrecision.fp32)}, 16 bits or fewer ${stepFactors(intervals.unmeasuredPrecision.reduced)}; never TF32, which FP32 rows on TF32-capable GPUs ran under another label; all rows held out as combinations ${stepFactors(intervals.measuredModel)}), and to the leave-one-GPU-out errors for GPUs with none. A tuned stack or a split layout (what only the LLM runs measured) takes the P10/P90 of the LLM runs' errors held out by model family (per software stack where it has 30 runs or more: ${Object.entries(
      intervals.llmRunsByStack,
    )
      .map(([k, v]) => `${k} ${stepFactors(v!)}, ${v!.rows} runs`)
      .join(
        '; ',
      )}; the other stacks ${stepFactors(intervals.llmRuns)}), widened to the leave-one-model-out errors when no benchmark row measured the model (every LLM, since the published runs give no evidence features; one whose own architecture has published runs on the GPU under the stack takes instead the interval of those runs held out of the trees and of their calibration, predictor/learned/published-calibration.ts, bench/published-calibration.ts), since the LLM interval alone covers some families' held-out runs far less than 80% (bench/llm-intervals.ts). A step whose host part (the roofline's overhead: kernel launches the GPU waits for and per-step framework work) or exposed gradient synchronisation is ${pct(REGIME_MIN_SHARE)} or more of it is host- or communication-bound: no GPU figure says how fast a host does its part or how a box's links behave, and such rows' held-out errors are wider, so its interval is at least the P10/P90 of the held-out errors of the benchmark rows in that regime, per case (combinations, whole models, whole GPUs). Coverage of the P10-P90 interval on held-out combinations: ${pct(coverage)}; ${regimeCoverage.map((r) => `${r.regime}-bound rows (${r.rows}) ${pct(r.withRegime)} (${pct(r.withoutRegime)} with the precision mode's interval alone; ${pct(r.otherHalfOfGpus)} with the regime's interval computed from the rows of the other half of the GPUs)`).join(', ')}, the other benchmark rows ${pct(otherCoverage)}. The regimes' intervals (log step-time error, then as factors on the step): ${byRegime.map((r) => `${r.regime}-bound, held out as combinations ${stepFactors(r.measured)}, as whole models ${stepFactors(r.unmeasuredModel)}, as whole GPUs ${stepFactors(r.unmeasuredGpu)}`).join('; ')}.
- **Seed spread**: the tables report the trees at seed ${PARAMS.seed}. The learned (shipped) MAPE on benchmark rows at seeds ${spreadSeeds.join(', ')}: holding out whole GPUs ${spreadLine('gpu')}; holding out combinations ${spreadLine('combination')}. The seed alone moves each split's figure by several tenths of a point: judge a change by the means.
- **Precision-unaware ablation**: the same pipeline where the analytical estimate treats every row as plain FP32, the precision features are removed, and evidence never comes from the same model on the same GPU (to a predictor that cannot see precision, the other-precision rows there are the row's own configuration; taking them as evidence told the ablation the row's precision, which earlier cards allowed).

## Validation (MAPE of throughput on held-out data)

${sections.join('\n\n')}
`;
    // The LLM section is written by `trainplan evaluate --llm --fit --write` (cli/evaluate-llm.ts): keep it.
    const previous = existsSync(PREDICTOR_CARD_FILE) ? readFileSync(PREDICTOR_CARD_FILE, 'utf8') : '';
    const llmAt = previous.indexOf(LLM_CARD_HEADING);
    writeFileSync(PREDICTOR_CARD_FILE, card);
    writeGenerationSection(generations, unmeasuredGpu);
    if (llmAt >= 0) appendFileSync(PREDICTOR_CARD_FILE, `\n${previous.slice(llmAt)}`);
    log('wrote seeds/predictor.onnx, seeds/predictor.json, seeds/PREDICTOR_CARD.md');
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--generation-intervals'))
    console.log(JSON.stringify(writeGenerationIntervals(), null, 1));
  else await trainPredictor(!process.argv.includes('--evaluate-only'));
}
