// Training and validating the learned correction: target log(measured / analytical) per
// measurement row (train.csv's benchmark rows and the published LLM runs, each LLM run predicted at
// its own layout and software stack); gradient-boosted trees; cross-validation that holds out whole
// GPUs, models (LLM runs by model family), sources or (model, GPU, precision) combinations, never
// random rows.
import { getGpu, loadEfficiency, loadMeasurements, type Measurement } from '../../seeds/catalog.js';
import { fittedLlmRuns, loadLlmArchitectures, type LlmRun } from '../../seeds/llm.js';
import { familyOf, llmSourceOf, predictLlmRun } from '../llm.js';
import { predictRow, zooModelOf } from '../measured.js';
import { stackOfFramework, type SoftwareStack } from '../software.js';
import type { Efficiency } from '../step.js';
import type { Breakdown, Execution } from '../step.js';
import type { GpuSpec, MathMode } from '../types.js';
import { EvidenceIndex, NO_EVIDENCE, type Evidence, type EvidenceRow } from './evidence.js';
import {
  featureNames,
  frameworkOf,
  modelFeaturesOf,
  writeFeatures,
  type ModelFeatures,
  type Software,
} from './features.js';
import { averageEnsembles, predictEnsemble, rng, trainGbdt, type Ensemble, type GbdtParams } from './gbdt.js';

/** One row's analytical view, for one variant (precision-aware or not). */
interface Analytical {
  throughput: number;
  stepMs: number;
  breakdown: Breakdown;
  dominantMath: MathMode;
  exec: Execution;
}

export interface Example {
  /** A train.csv row, or an LLM run in the same shape (throughput = tokens/s per GPU). */
  row: Measurement;
  /** 'benchmark': train.csv (stock framework code, plain data parallelism); 'llm': llm_train.csv. */
  kind: 'benchmark' | 'llm';
  /** What leave-one-model-out holds out together: the model, or an LLM's family (Llama-3.1-8B and -70B together). */
  family: string;
  /** The publisher (train.csv's source column; an LLM run's repository or page). */
  source: string;
  /** The LLM run the row came from (its analytical view is recomputed when a fold refits stack effects). */
  run?: LlmRun;
  software: Software;
  gpu: GpuSpec;
  model: ModelFeatures;
  aware: Analytical;
  unaware: Analytical;
}

/**
 * The trees' parameters, and how many fits `fit` averages. Each member draws its own row subsample
 * and evidence dropout (seeds seed, seed + 1000, ...), so their mean varies less with the draw than
 * one fit does; member 0 is the single fit, so `members: 1` is it exactly.
 */
export interface TrainParams extends GbdtParams {
  members: number;
}

// 90 trees at rate 0.13 against 120 at 0.1: the same 14.7% on held-out combinations, 17.2% vs
// 16.5% on held-out GPUs, and onnxruntime at 62 ms instead of 107 ms for 100,000 candidates on two
// cores (bench/learned.ts), inside the 100 ms a recommend can spend on it. Four members make 360
// trees, about 4.8x that inference time; the pruning (optimizer/pruned.ts) keeps the corrected
// candidates few, so a 1M-candidate search's learned/analytical ratio went from 1.3-1.9 to 1.6-2.9.
// Eight members held out whole GPUs at 12.57 / 12.45 / 12.43 / 12.67% (seeds 7-10, mean 12.53%,
// against four's 12.6%; `npx tsx bench/held-out.ts gpu --members 8`): not worth twice the trees.
export const PARAMS: TrainParams = {
  members: 4,
  trees: 90,
  depth: 5,
  learningRate: 0.13,
  minLeaf: 10,
  subsample: 0.8,
  lambda: 2,
  seed: 7,
};

const analytical = (row: Measurement, eff: Efficiency): Analytical | undefined => {
  const p = predictRow(row, eff);
  if (!p.prediction || !p.predictedThroughput) return undefined;
  return {
    throughput: p.predictedThroughput,
    stepMs: p.prediction.stepTimeMs,
    breakdown: p.prediction.breakdown,
    dominantMath: p.prediction.dominantMath,
    exec: p.prediction.execution,
  };
};

/**
 * Rows the analytical predictor can predict, each with both variants. The precision-unaware
 * variant predicts every row as plain FP32 (no TF32, no tensor cores): what a predictor that
 * ignores precision sees.
 */
export function examples(rows: Measurement[], eff: Efficiency): Example[] {
  const out: Example[] = [];
  for (const row of rows) {
    if (!row.throughput || row.throughput <= 0) continue;
    const aware = analytical(row, eff);
    const unaware = analytical({ ...row, precision: 'FP32', flags: '' }, eff);
    const gpu = getGpu(row.gpu);
    const model = zooModelOf(row);
    if (!aware || !unaware || !gpu || !model) continue;
    out.push({
      row,
      kind: 'benchmark',
      family: row.model,
      source: row.source,
      software: { framework: frameworkOf(row.framework), xla: row.flags.includes('xla') },
      gpu,
      model: modelFeaturesOf(model),
      aware,
      unaware,
    });
  }
  return out;
}

/** The latest published version of each dense LLM run with a measured throughput (seeds/llm.ts fittedLlmRuns). */
export const latestLlmRuns = fittedLlmRuns;

/** A run in train.csv's shape: what the evidence index and the tables read. */
function llmMeasurement(run: LlmRun, precision: Measurement['precision']): Measurement {
  return {
    id: run.id,
    source: llmSourceOf(run),
    framework: run.framework,
    model: run.model,
    variant: '',
    gpu: run.gpu,
    system: '',
    numGpus: run.numGpus,
    numNodes: run.numGpus / Math.min(run.gpusPerNode, run.numGpus),
    gpusPerNode: Math.min(run.gpusPerNode, run.numGpus),
    batchSizePerGpu: run.microBatch,
    globalBatchSize: run.globalBatch,
    gradAccumSteps: null,
    seqLenOrImageSize: run.seqLen,
    precision,
    precisionRaw: run.precision,
    throughput: run.tokensPerSecondPerGpu,
    throughputUnit: 'tokens/s/GPU',
    software: run.software,
    confidence: '',
    flags: '',
    provenance: run.source,
    raw: {},
  };
}

/**
 * The published LLM runs the analytical predictor covers, each predicted at its own layout under the
 * stack its framework names (seeds/software.json's effects as they stand when called: a fold that
 * refits them calls this again). `stackOf` lets a caller predict under another stack.
 */
export function llmExamples(
  eff: Efficiency,
  runs: LlmRun[] = latestLlmRuns(),
  stackOf: (r: LlmRun) => SoftwareStack = (r) => stackOfFramework(r.framework),
): Example[] {
  const archs = new Map(loadLlmArchitectures().map((a) => [a.model, a]));
  const out: Example[] = [];
  for (const run of runs) {
    const stack = stackOf(run);
    const aware = predictLlmRun(run, archs, stack, eff);
    const unaware = predictLlmRun(run, archs, stack, eff, 'FP32');
    const gpu = getGpu(run.gpu);
    if (!aware.prediction || !unaware.prediction || !aware.model || !gpu) continue;
    const view = (p: typeof aware): Analytical => ({
      throughput: p.tokensPerSecondPerGpu!,
      stepMs: p.prediction!.stepTimeMs,
      breakdown: p.prediction!.breakdown,
      dominantMath: p.prediction!.dominantMath,
      exec: p.prediction!.execution,
    });
    out.push({
      row: llmMeasurement(run, run.precision as Measurement['precision']),
      kind: 'llm',
      family: familyOf(run.model),
      source: llmSourceOf(run),
      run,
      software: { framework: frameworkOf(run.framework), xla: false },
      gpu,
      model: modelFeaturesOf(aware.model),
      aware: view(aware),
      unaware: view(unaware),
    });
  }
  return out;
}

/** Every row the learned correction trains on: train.csv's benchmark rows, then the LLM runs. */
export function trainingExamples(eff: Efficiency = loadEfficiency()): Example[] {
  return [...examples(loadMeasurements(), eff), ...llmExamples(eff)];
}

export const target = (e: Example, aware: boolean) =>
  Math.log(e.row.throughput! / (aware ? e.aware : e.unaware).throughput);

/**
 * The evidence an example's features see. LLM runs get none and give none: they are keyed by the
 * published model names (Llama-3.1-70B), which no zoo model or user query uses, so at run time no
 * LLM-style query finds evidence; training them with evidence would teach the trees a case that
 * never occurs (and made held-out families worse).
 */
export function evidenceOf(e: Example, index: EvidenceIndex, aware = true): Evidence {
  if (e.kind === 'llm') return NO_EVIDENCE;
  return index.query(e.row.model, e.row.gpu, e.row.precision, e.software.framework, aware);
}

export function evidenceRows(ex: Example[], aware: boolean): EvidenceRow[] {
  return ex
    .filter((e) => e.kind !== 'llm')
    .map((e) => ({
      model: e.row.model,
      gpu: e.row.gpu,
      precision: e.row.precision,
      framework: e.software.framework,
      logResidual: target(e, aware),
    }));
}

export function featuresOf(e: Example, aware: boolean, ev: Evidence): number[] {
  const a = aware ? e.aware : e.unaware;
  const out: number[] = new Array(featureNames(aware).length).fill(0);
  writeFeatures(out, 0, aware, e.model, e.gpu, a.exec, a.stepMs, a.breakdown, a.dominantMath, ev, e.software);
  return out;
}

/**
 * Evidence dropout: some training rows see less evidence than they have, so the model also
 * learns the cases a user query will be in (an unmeasured GPU, an unmeasured model).
 */
export function dropEvidence(ev: Evidence, r: () => number): Evidence {
  const x = r();
  if (x < 0.15) return { ...NO_EVIDENCE, exactN: ev.exactN };
  // An unmeasured GPU: nothing from this GPU. (`model` still counts this GPU's rows at other
  // precisions, which an unmeasured GPU has none of; reading every field as if the GPU had no rows,
  // its same-die twin standing in, gave held-out GPUs a mean of 12.69% at seeds 7-10 against 12.6%,
  // and held-out combinations 11.46% against 11.45%: no gain, so the cheaper clearing stays.)
  if (x < 0.4) return withoutEvidence(ev, ['sameGpu', 'sameGpuSameMath', 'sameFramework']);
  // A GPU without measured neighbours: nothing from other GPUs at this precision.
  if (x < 0.55)
    return withoutEvidence(ev, [
      'samePrecision',
      'sibling',
      'samePrecisionFramework',
      'nearestGpu',
      'trend',
      'trendSlope',
      'trendGpus',
      'trendPoints',
    ]);
  return ev;
}

/** `ev` with the named evidence features (and their counts) as NO_EVIDENCE has them. */
function withoutEvidence(ev: Evidence, features: (keyof Evidence)[]): Evidence {
  const out = { ...ev };
  const clear = <K extends keyof Evidence>(k: K) => {
    out[k] = NO_EVIDENCE[k];
  };
  for (const f of features) {
    clear(f);
    const n = `${f}N` as keyof Evidence;
    if (n in NO_EVIDENCE) clear(n);
  }
  if (features.includes('nearestGpu')) clear('nearestGpuDistance');
  return out;
}

/**
 * More peak FLOPS must never predict a slower step. The analytical step time already falls with
 * peak; the correction t = log(measured / analytical throughput) must then not fall with it either.
 * Every feature that moves with peak FLOPS (all else equal) is constrained in the direction that
 * keeps t non-decreasing as peak rises: up with peak are the peaks, the ridge point and the shares
 * of the step that are not math; down with peak are the analytical step and the forward/backward
 * shares.
 */
const RISES_WITH_PEAK = [
  'log_peak_dominant',
  'log_ridge_point',
  'log_peak_fp32',
  'frac_optimizer',
  'frac_mixed_precision',
  'frac_comm_exposed',
  'frac_overhead',
];
const FALLS_WITH_PEAK = ['log_analytical_step_ms', 'frac_forward', 'frac_backward'];
export function monotoneConstraints(aware: boolean): number[] {
  return featureNames(aware).map((n) =>
    RISES_WITH_PEAK.includes(n) ? 1 : FALLS_WITH_PEAK.includes(n) ? -1 : 0,
  );
}

export function fit(
  train: Example[],
  aware: boolean,
  params: TrainParams = PARAMS,
): { ensemble: Ensemble; evidence: EvidenceIndex } {
  // A GPU the fold holds out reads its same-die twin's rows, as an unmeasured GPU does at run time.
  const evidence = EvidenceIndex.ofMeasured(evidenceRows(train, aware));
  const y = train.map((e) => target(e, aware));
  // A row's evidence is the same for every member; only its dropout is drawn per member.
  const rowEvidence = train.map((e) => evidenceOf(e, evidence, aware));
  const members = Array.from({ length: params.members }, (_, m) => {
    const seed = params.seed + 1000 * m;
    const r = rng(seed + 1);
    const X = train.map((e, i) => featuresOf(e, aware, dropEvidence(rowEvidence[i], r)));
    return trainGbdt(X, y, { ...params, seed, monotone: monotoneConstraints(aware) });
  });
  return { ensemble: averageEnsembles(members), evidence };
}

/** Predicted throughput (row's unit) for held-out rows, from a model fitted without them. */
export function predictHeldOut(
  test: Example[],
  model: { ensemble: Ensemble; evidence: EvidenceIndex },
  aware: boolean,
): number[] {
  return test.map((e) => {
    const ev = evidenceOf(e, model.evidence, aware);
    return (
      (aware ? e.aware : e.unaware).throughput *
      Math.exp(predictEnsemble(model.ensemble, featuresOf(e, aware, ev)))
    );
  });
}

export type Split = 'gpu' | 'combination' | 'precision' | 'model' | 'family' | 'generation' | 'source';

/** What one fold of a split holds out together. */
export function foldKey(e: Example, split: Split): string {
  switch (split) {
    case 'gpu':
      return e.row.gpu;
    case 'model':
      return e.row.model;
    case 'family':
      return e.kind === 'llm' ? `LLM family ${e.family}` : e.row.model;
    case 'generation':
      return e.gpu.generation;
    case 'source':
      return e.source;
    case 'combination':
      return `${e.row.model}|${e.row.gpu}|${e.row.precision}`;
    case 'precision':
      return `${e.row.model}|${e.row.precision}`;
  }
}

/**
 * Folds: one per GPU, one per model, one per model family (benchmark rows: per model; LLM runs: Llama-3.1-8B
 * and -70B together), one per source, one per GPU
 * generation (architecture), 10 folds of whole (model, GPU, precision) combinations (seeded shuffle),
 * or 10 folds of whole (model, precision) pairs: every GPU's rows of a model in one precision held out
 * together, a model's precisions in different folds (the i-th model's j-th precision in fold
 * (i + j) mod 10), so a held-out precision's model is still measured in its others.
 */
export function folds(ex: Example[], split: Split, k = 10, seed = 11): number[][] {
  const key = (e: Example) => foldKey(e, split);
  const groups = [...new Set(ex.map(key))].sort();
  const r = rng(seed);
  const assign = new Map<string, number>();
  if (split === 'precision') {
    const models = [...new Set(ex.map((e) => e.row.model))].sort();
    const seen = new Map<string, number>();
    for (const g of groups) {
      const model = g.slice(0, g.lastIndexOf('|'));
      const j = seen.get(model) ?? 0;
      seen.set(model, j + 1);
      assign.set(g, (models.indexOf(model) + j) % k);
    }
  } else if (split !== 'combination') groups.forEach((g, i) => assign.set(g, i));
  else {
    const shuffled = groups
      .map((g) => [r(), g] as const)
      .sort((a, b) => a[0] - b[0])
      .map(([, g]) => g);
    shuffled.forEach((g, i) => assign.set(g, i % k));
  }
  const n = split === 'combination' || split === 'precision' ? k : groups.length;
  const out: number[][] = Array.from({ length: n }, () => []);
  ex.forEach((e, i) => out[assign.get(key(e))!].push(i));
  return out.filter((f) => f.length);
}

/**
 * Before a fold is fitted: the examples as that fold must see them, given which are held out (the
 * LLM runs' analytical view under stack effects fitted without the held-out runs; see
 * cli/train-predictor.ts). Identity by default.
 */
export type FoldView = (ex: Example[], heldOut: ReadonlySet<number>) => Example[];

/**
 * One fold's fit: the examples as the fold sees them (`view`), and the trees fitted on all but the
 * held-out ones (`inFold`).
 */
export function fitWithout(
  ex: Example[],
  inFold: ReadonlySet<number>,
  aware: boolean,
  params: TrainParams = PARAMS,
  view: FoldView = (x) => x,
): { seen: Example[]; model: ReturnType<typeof fit> } {
  const seen = view(ex, inFold);
  return {
    seen,
    model: fit(
      seen.filter((_, j) => !inFold.has(j)),
      aware,
      params,
    ),
  };
}

/** Out-of-fold predicted throughput for every example (in the example's own analytical frame). */
export function crossValidate(
  ex: Example[],
  split: Split,
  aware: boolean,
  params: TrainParams = PARAMS,
  log: (s: string) => void = () => {},
  view: FoldView = (x) => x,
): number[] {
  const pred = new Array<number>(ex.length).fill(Number.NaN);
  const fs = folds(ex, split);
  fs.forEach((fold, i) => {
    const { seen, model } = fitWithout(ex, new Set(fold), aware, params, view);
    const p = predictHeldOut(
      fold.map((j) => seen[j]),
      model,
      aware,
    );
    fold.forEach((j, t) => {
      pred[j] = p[t];
    });
    log(`  ${split} fold ${i + 1}/${fs.length} (${fold.length} rows)`);
  });
  return pred;
}
