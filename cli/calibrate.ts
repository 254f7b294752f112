// Fits the analytical predictor's few global constants (seeds/efficiency.json) to measured rows.
// Coordinate descent in log space on the mean absolute log error, which treats over- and
// under-prediction alike and is not dominated by the largest throughputs.
import type { Measurement } from '../seeds/catalog.js';
import { predictRow } from '../predictor/measured.js';
import type { Efficiency } from '../predictor/step.js';

type Knob = { get: (e: Efficiency) => number; set: (e: Efficiency, v: number) => void; min: number; max: number; name: string };

const knob = <K extends keyof Efficiency>(name: K, min: number, max: number): Knob => ({
  name, min, max, get: (e) => e[name] as number, set: (e, v) => { (e[name] as number) = v; },
});
const mathKnob = (m: keyof Efficiency['matmulEfficiency']): Knob => ({
  name: `matmulEfficiency.${m}`, min: 0.05, max: 1,
  get: (e) => e.matmulEfficiency[m], set: (e, v) => { e.matmulEfficiency[m] = v; },
});

/** FP8 has no training rows: it keeps its ratio to fp16 from the starting file rather than a fit. */
export const KNOBS: Knob[] = [
  mathKnob('fp32'), mathKnob('tf32'), mathKnob('fp16'), mathKnob('bf16'),
  knob('halfEfficiencyKernelGflop', 0.001, 100), knob('memoryEfficiency', 0.2, 1), knob('kernelOverheadUs', 0.5, 50),
  knob('stepOverheadMs', 0, 100), knob('linkEfficiency', 0.1, 1), knob('networkEfficiency', 0.05, 1), knob('overlapFraction', 0, 1),
];

export function loss(rows: Measurement[], eff: Efficiency): number {
  let sum = 0, n = 0;
  for (const row of rows) {
    if (!row.throughput) continue;
    const p = predictRow(row, eff);
    if (p.predictedThroughput === undefined) continue;
    sum += Math.abs(Math.log(p.predictedThroughput / row.throughput));
    n++;
  }
  return n ? sum / n : Infinity;
}

const clone = (e: Efficiency): Efficiency => JSON.parse(JSON.stringify(e)) as Efficiency;

export function calibrate(rows: Measurement[], start: Efficiency, rounds = 4, log: (s: string) => void = () => {}): { efficiency: Efficiency; loss: number } {
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
          const next = Math.min(k.max, Math.max(k.min, cur === 0 ? (dir > 0 ? 0.1 : 0) : cur * Math.exp(dir * step)));
          if (next === cur) break;
          const trial = clone(best);
          k.set(trial, next);
          const l = loss(rows, trial);
          if (l < bestLoss - 1e-6) { best = trial; bestLoss = l; improved = true; }
        }
      }
    }
    log(`round ${round + 1} (step ${step.toFixed(3)}): mean |log error| ${bestLoss.toFixed(4)}`);
    step /= 2;
  }
  best.matmulEfficiency.fp8 = Math.min(1, best.matmulEfficiency.fp16 * fp8Ratio);
  return { efficiency: best, loss: bestLoss };
}
