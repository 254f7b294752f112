// Does one run's measured peak size the same model's other configurations better?
//
//   npx tsx bench/memory-calibration.ts
//
// The published LLM runs that state their peak memory (torchtitan's: the caching allocator's peak
// reserved, compared with trainplan's total less the CUDA context and NCCL's buffers, as
// `trainplan memory-check` does) are grouped by model, precision and framework. For each ordered
// pair of runs (a, b) of a group, a is taken as the user's run: the activation scale that makes
// the prediction at a's configuration meet a's published peak (predictor/memory-calibration.ts's
// correction, solved here on reserved memory since that is what the rows publish), applied to b's
// configuration. Error: |predicted - published| / published at b, without a's scale, with it as it
// came, and as the server takes it (1 where a's peak agrees with its prediction within
// seeds/calibration.json's `agreement`); means over the pairs. A run the guards say cannot tell
// its scale is left out. About 3 seconds.
import { llmCases, llmMemory } from '../predictor/memory-check.js';
import { loadEfficiency } from '../seeds/catalog.js';
import { loadCalibrationSettings } from '../seeds/calibration.js';
import { allocatedGb } from '../predictor/memory-calibration.js';

const eff = loadEfficiency();
const guards = loadCalibrationSettings().memory;
const cases = llmCases().filter((c) => c.publishedPeakGb !== null && c.decoder);
/** Predicted peak reserved (GiB) at a case's configuration with its activations scaled by s. */
const peakAt = (c: (typeof cases)[number], s: number) =>
  llmMemory(c, eff, s)!.totalGb - eff.memory.cudaContextGb - eff.memory.ncclBuffersGb;

const groups = new Map<string, typeof cases>();
for (const c of cases) {
  const key = `${c.model} ${c.precision} ${c.framework.split(' ')[0]}`;
  groups.set(key, [...(groups.get(key) ?? []), c]);
}
const rows: string[] = [];
const pct = (x: number, n: number) => `${((100 * x) / n).toFixed(1)}%`;
let pairs = 0,
  unusable = 0;
const total = [0, 0, 0];
for (const [key, group] of groups) {
  if (group.length < 2) continue;
  const sums = [0, 0, 0];
  let n = 0;
  for (const a of group) {
    // The run's implied scale, as predictor/memory-calibration.ts takes it (on reserved memory
    // here): the prediction is linear in the scale, so two evaluations solve for it.
    const m = llmMemory(a, eff)!;
    const p1 = peakAt(a, 1),
      p2 = peakAt(a, 2);
    const raw = 1 + (a.publishedPeakGb! - p1) / (p2 - p1);
    if (
      m.activationsGb < guards.minActivationShare * allocatedGb(m) ||
      raw < guards.minScale ||
      raw > guards.maxScale
    ) {
      unusable += group.length - 1;
      continue;
    }
    const taken = Math.abs(Math.log(a.publishedPeakGb! / p1)) <= guards.agreement ? 1 : raw;
    for (const b of group) {
      if (b === a) continue;
      const error = (s: number) => Math.abs(peakAt(b, s) / b.publishedPeakGb! - 1);
      sums[0] += error(1);
      sums[1] += error(raw);
      sums[2] += error(taken);
      n++;
    }
  }
  if (!n) continue;
  pairs += n;
  sums.forEach((x, i) => (total[i] += x));
  rows.push(`| ${key} | ${group.length} | ${n} | ${sums.map((x) => pct(x, n)).join(' | ')} |`);
}
console.log(
  '| model, precision, framework | runs with a peak | pairs | without the run | its scale as it came | as the server takes it |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
for (const r of rows) console.log(r);
console.log(`| **all** | ${cases.length} | ${pairs} | ${total.map((x) => pct(x, pairs)).join(' | ')} |`);
if (unusable) console.log(`(${unusable} pairs whose run cannot tell its scale: left out)`);
