// Fits the analytical predictor's few global constants (seeds/efficiency.json) to measured rows.
// Coordinate descent in log space on the mean absolute log error, which treats over- and
// under-prediction alike and is not dominated by the largest throughputs.
import type { Measurement } from '../seeds/catalog.js';
import { predictRow } from '../predictor/measured.js';
import type { Efficiency } from '../predictor/step.js';

type Knob = {
  get: (e: Efficiency) => number;
  set: (e: Efficiency, v: number) => void;
  min: number;
  max: number;
  name: string;
};

const knob = <K extends keyof Efficiency>(name: K, min: number, max: number): Knob => ({
  name,
  min,
  max,
  get: (e) => e[name] as number,
  set: (e, v) => {
    (e[name] as number) = v;
  },
});
// FP32 on CUDA cores has no measured kernel table: it runs on the TF32 tensor-core curve (achievable.ts),
// whose large-kernel efficiency (about 0.7) is below what SGEMM reaches (about 0.9), so its fraction
// may exceed 1 by that ratio.
const mathKnob = (m: keyof Efficiency['matmulEfficiency']): Knob => ({
  name: `matmulEfficiency.${m}`,
  min: 0.2,
  max: m === 'fp32' ? 1.3 : 1,
  get: (e) => e.matmulEfficiency[m],
  set: (e, v) => {
    e.matmulEfficiency[m] = v;
  },
});

/**
 * BF16 (8 rows) and FP8 (none) have too little data to fit: bf16 runs on the same tensor cores at the
 * fp16 rate, so it takes fp16's efficiency; fp8 keeps its starting ratio to fp16.
 */
// Bounds are what the hardware makes physically plausible (no framework beats the measured kernels,
// STREAM or nccl-tests it is a fraction of; a launch costs microseconds, not milliseconds): without them the fit absorbs what
// the zoo's model definitions miss into absurd constants. The learned correction (issue 3) is
// the place for per-model effects.
/**
 * What one GPU's step costs, fitted on every row; and the network's efficiency, since no scaling pair
 * crosses nodes (DeepLearningExamples' multi-node rows accumulate fewer micro-batches than their
 * one-GPU rows, so they are not twins).
 */
export const ROW_KNOBS: Knob[] = [
  mathKnob('fp32'),
  mathKnob('tf32'),
  mathKnob('fp16'),
  knob('memoryEfficiency', 0.4, 1),
  knob('kernelOverheadUs', 2, 40),
  knob('minKernelUs', 1, 10),
  knob('stepOverheadMs', 0, 20),
  knob('networkEfficiency', 0.3, 0.95),
];
/**
 * What more GPUs cost: fitted on scaling pairs only (scalingLoss), where the compute constants cancel.
 * A coefficient of variation above 0.1 would be a 10% spread of one GPU's steps, which nobody trains with.
 * linkEfficiency is held: on the pairs it trades against overlapInterference (it ran to 1 for no gain),
 * and it moves the tuned stacks' collectives, which the pairs never ran (efficiency.json's _about).
 */
export const SCALING_KNOBS: Knob[] = [
  knob('stragglerCv', 0, 0.1),
  knob('overlapInterference', 0, 1),
  knob('overlapFraction', 0, 1),
];

/** Mean absolute log error, each model weighted equally (GNMT's 400 rows must not outvote EfficientNet's 20). */
export function loss(rows: Measurement[], eff: Efficiency): number {
  const byModel = new Map<string, { sum: number; n: number }>();
  for (const row of rows) {
    if (!row.throughput) continue;
    const p = predictRow(row, eff);
    if (p.predictedThroughput === undefined) continue;
    add(byModel, row.model, Math.abs(Math.log(p.predictedThroughput / row.throughput)));
  }
  return meanOverModels(byModel);
}

function add(byModel: Map<string, { sum: number; n: number }>, model: string, x: number) {
  const m = byModel.get(model) ?? { sum: 0, n: 0 };
  m.sum += x;
  m.n++;
  byModel.set(model, m);
}

function meanOverModels(byModel: Map<string, { sum: number; n: number }>): number {
  if (!byModel.size) return Infinity;
  let total = 0;
  for (const m of byModel.values()) total += m.sum / m.n;
  return total / byModel.size;
}

/** A multi-GPU row and the one-GPU row of the same benchmark: same source, code, model, GPU, precision and batch per GPU. */
export interface ScalingPair {
  one: Measurement;
  many: Measurement;
}

/**
 * Every multi-GPU row with a one-GPU twin. Their throughput ratio is what the GPU count costs on that
 * benchmark (all-reduce, overlap, waiting for the slowest GPU) with whatever the predictor gets wrong
 * about one GPU's step divided out. Lambda names a system per GPU count ("8xA100_PCIe"), so the count
 * prefix is dropped to match the twins.
 */
export function scalingPairs(rows: Measurement[]): ScalingPair[] {
  const key = (r: Measurement) =>
    [
      r.source,
      r.framework,
      r.model,
      r.variant,
      r.gpu,
      (r.system ?? '').replace(/^\d+x/, ''),
      r.precision,
      r.batchSizePerGpu,
      r.gradAccumSteps,
      r.seqLenOrImageSize,
      r.software,
      r.flags,
    ].join('|');
  const ones = new Map<string, Measurement>();
  for (const r of rows) if (r.numGpus === 1 && r.throughput) ones.set(key(r), r);
  const pairs: ScalingPair[] = [];
  for (const r of rows) {
    const one = r.numGpus > 1 && r.throughput ? ones.get(key(r)) : undefined;
    if (one) pairs.push({ one, many: r });
  }
  return pairs;
}

/**
 * Mean absolute log error of the predicted scaling ratios (multi-GPU throughput over its one-GPU
 * twin's), each model weighted equally. One-GPU predictions do not read the scaling constants, so they
 * are computed once per set of compute constants (`oneGpu`).
 */
export function scalingLoss(
  pairs: ScalingPair[],
  eff: Efficiency,
  oneGpu: Map<Measurement, number | undefined> = new Map(),
): number {
  const byModel = new Map<string, { sum: number; n: number }>();
  for (const { one, many } of pairs) {
    if (!oneGpu.has(one)) oneGpu.set(one, predictRow(one, eff).predictedThroughput);
    const p1 = oneGpu.get(one);
    const p = predictRow(many, eff).predictedThroughput;
    if (p1 === undefined || p === undefined) continue;
    add(byModel, many.model, Math.abs(Math.log(p / p1 / (many.throughput! / one.throughput!))));
  }
  return meanOverModels(byModel);
}

// A move must lower the mean |log error| by this much to be taken. Along a flat direction (the
// all-reduce's link efficiency moves 0.69 -> 0.78 for under 1e-4) smaller gains are drift, and
// what drifts here moves what is predicted elsewhere (the LLM campaigns' all-reduces).
const MIN_GAIN = 1e-4;

const clone = (e: Efficiency): Efficiency => JSON.parse(JSON.stringify(e)) as Efficiency;

/** Coordinate descent in log steps over `knobs`, halving the step each round. */
function descend(
  knobs: Knob[],
  start: Efficiency,
  lossOf: (e: Efficiency) => number,
  rounds: number,
  log: (s: string) => void,
  label: string,
): { efficiency: Efficiency; loss: number } {
  let best = clone(start);
  let bestLoss = lossOf(best);
  log(`${label} start: mean |log error| ${bestLoss.toFixed(4)}`);
  let step = 0.5;
  for (let round = 0; round < rounds; round++) {
    for (const k of knobs) {
      for (const dir of [1, -1]) {
        let improved = true;
        while (improved) {
          improved = false;
          const cur = k.get(best);
          const next = Math.min(
            k.max,
            Math.max(k.min, cur === 0 ? (dir > 0 ? k.max / 10 : 0) : cur * Math.exp(dir * step)),
          );
          if (next === cur) break;
          const trial = clone(best);
          k.set(trial, next);
          const l = lossOf(trial);
          if (l < bestLoss - MIN_GAIN) {
            best = trial;
            bestLoss = l;
            improved = true;
          }
        }
      }
    }
    log(`${label} round ${round + 1} (step ${step.toFixed(3)}): mean |log error| ${bestLoss.toFixed(4)}`);
    step /= 2;
  }
  return { efficiency: best, loss: bestLoss };
}

/**
 * Two stages, each on what only its constants explain. First the scaling constants on the scaling
 * pairs' ratios (the one-GPU step's errors cancel there, so the per-model errors of the zoo cannot
 * leak into the all-reduce's constants); then the compute constants (and the network's) on every row,
 * the scaling ones held. Returns the mean |log error| over every row and, separately, over the scaling ratios.
 */
export function calibrate(
  rows: Measurement[],
  start: Efficiency,
  rounds = 4,
  log: (s: string) => void = () => {},
): { efficiency: Efficiency; loss: number; scalingLoss: number } {
  const fp8Ratio = start.matmulEfficiency.fp8 / start.matmulEfficiency.fp16;
  const pairs = scalingPairs(rows);
  log(`${pairs.length} scaling pairs (a multi-GPU row and its one-GPU twin)`);
  const oneGpu = new Map<Measurement, number | undefined>();
  const scaled = descend(SCALING_KNOBS, start, (e) => scalingLoss(pairs, e, oneGpu), rounds, log, 'scaling');
  const fitted = descend(ROW_KNOBS, scaled.efficiency, (e) => loss(rows, e), rounds, log, 'all rows');
  const best = fitted.efficiency;
  best.matmulEfficiency.fp8 = Math.min(1, best.matmulEfficiency.fp16 * fp8Ratio);
  best.matmulEfficiency.bf16 = best.matmulEfficiency.fp16;
  best.matmulEfficiency.fp4 = best.matmulEfficiency.fp8;
  best.stragglerFittedGpus = Math.max(0, ...pairs.map((p) => p.many.numGpus));
  return { efficiency: best, loss: fitted.loss, scalingLoss: scalingLoss(pairs, best) };
}
