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
export const KNOBS: Knob[] = [
  mathKnob('fp32'),
  mathKnob('tf32'),
  mathKnob('fp16'),
  knob('memoryEfficiency', 0.4, 1),
  knob('kernelOverheadUs', 2, 40),
  knob('minKernelUs', 1, 10),
  knob('stepOverheadMs', 0, 20),
  knob('linkEfficiency', 0.3, 1),
  knob('networkEfficiency', 0.3, 0.95),
  knob('overlapFraction', 0, 1),
];

/** Mean absolute log error, each model weighted equally (GNMT's 400 rows must not outvote EfficientNet's 20). */
export function loss(rows: Measurement[], eff: Efficiency): number {
  const byModel = new Map<string, { sum: number; n: number }>();
  for (const row of rows) {
    if (!row.throughput) continue;
    const p = predictRow(row, eff);
    if (p.predictedThroughput === undefined) continue;
    const m = byModel.get(row.model) ?? { sum: 0, n: 0 };
    m.sum += Math.abs(Math.log(p.predictedThroughput / row.throughput));
    m.n++;
    byModel.set(row.model, m);
  }
  if (!byModel.size) return Infinity;
  let total = 0;
  for (const m of byModel.values()) total += m.sum / m.n;
  return total / byModel.size;
}

// A move must lower the mean |log error| by this much to be taken. Along a flat direction (the
// all-reduce's link efficiency moves 0.69 -> 0.78 for under 1e-4) smaller gains are drift, and
// what drifts here moves what is predicted elsewhere (the LLM campaigns' all-reduces).
const MIN_GAIN = 1e-4;

const clone = (e: Efficiency): Efficiency => JSON.parse(JSON.stringify(e)) as Efficiency;

export function calibrate(
  rows: Measurement[],
  start: Efficiency,
  rounds = 4,
  log: (s: string) => void = () => {},
): { efficiency: Efficiency; loss: number } {
  let best = clone(start);
  let bestLoss = loss(rows, best);
  const fp8Ratio = start.matmulEfficiency.fp8 / start.matmulEfficiency.fp16;
  log(`start: mean |log error| ${bestLoss.toFixed(4)}`);
  let step = 0.5;
  for (let round = 0; round < rounds; round++) {
    for (const k of KNOBS) {
      for (const dir of [1, -1]) {
        let improved = true;
        while (improved) {
          improved = false;
          const cur = k.get(best);
          const next = Math.min(
            k.max,
            Math.max(k.min, cur === 0 ? (dir > 0 ? 0.1 : 0) : cur * Math.exp(dir * step)),
          );
          if (next === cur) break;
          const trial = clone(best);
          k.set(trial, next);
          const l = loss(rows, trial);
          if (l < bestLoss - MIN_GAIN) {
            best = trial;
            bestLoss = l;
            improved = true;
          }
        }
      }
    }
    log(`round ${round + 1} (step ${step.toFixed(3)}): mean |log error| ${bestLoss.toFixed(4)}`);
    step /= 2;
  }
  best.matmulEfficiency.fp8 = Math.min(1, best.matmulEfficiency.fp16 * fp8Ratio);
  best.matmulEfficiency.bf16 = best.matmulEfficiency.fp16;
  best.matmulEfficiency.fp4 = best.matmulEfficiency.fp8;
  return { efficiency: best, loss: bestLoss };
}
