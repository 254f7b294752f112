// How far the learned correction moves a precision away from its 16-bit sibling on the same
// configuration, against what the roofline says. For every benchmark row measured at `from`, the
// same configuration at `to` on the same GPU: the roofline's step-time ratio to/from and the shipped
// model's, per GPU. AMP_BF16 (no training row) is read as AMP_FP16 by the correction
// (predictor/learned/precision-twins.ts), so its ratio should be the roofline's; BF16 has rows of
// its own (the LLM runs; BART, train.csv's only BF16 model, is outside the zoo), so its ratio to
// FP16 (apex O2) is the trees' own reading.
//
//   npx tsx bench/precision-twins.ts [AMP_FP16 AMP_BF16 | FP16 BF16 | ...]     (seconds)
import { PRECISIONS, type Precision } from '../predictor/types.js';
import { LearnedPredictor } from '../predictor/learned/model.js';
import { correctedMoved } from '../test/moved-configurations.js';

const precisionArg = (s: string | undefined, dflt: Precision): Precision => {
  if (s === undefined) return dflt;
  if (!(PRECISIONS as readonly string[]).includes(s)) throw new Error(`unknown precision ${s}`);
  return s as Precision;
};
const from = precisionArg(process.argv[2], 'AMP_FP16');
const to = precisionArg(process.argv[3], 'AMP_BF16');

// Only where the GPU has a rate for `to` (the roofline covers the configuration there).
const { pairs, movedPairs, asMeasured, moved } = await correctedMoved(
  await LearnedPredictor.load(),
  (r) => r.precision === from,
  (r) => ({ ...r, precision: to }),
);

const byGpu = new Map<string, { roofline: number; learned: number }[]>();
pairs.forEach((e, i) => {
  const roofline = movedPairs[i].aware.stepMs / e.aware.stepMs;
  const list = byGpu.get(e.row.gpu) ?? [];
  list.push({ roofline, learned: (roofline * moved.mid[i]) / asMeasured.mid[i] });
  byGpu.set(e.row.gpu, list);
});
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
console.log(`step time ${to} / ${from} on the same configuration, per GPU (rows measured at ${from})`);
console.log('GPU                 rows  roofline  learned  learned range');
const all: { roofline: number; learned: number }[] = [];
for (const [gpu, v] of [...byGpu].sort(([x], [y]) => x.localeCompare(y))) {
  all.push(...v);
  const l = v.map((x) => x.learned);
  const roofline = mean(v.map((x) => x.roofline)).toFixed(3);
  const range = `${Math.min(...l).toFixed(2)}-${Math.max(...l).toFixed(2)}`;
  console.log(
    `${gpu.padEnd(18)} ${String(v.length).padStart(5)}  ${roofline.padStart(8)}  ${mean(l).toFixed(3).padStart(7)}  ${range}`,
  );
}
const gap = all.map((x) => Math.abs(x.learned / x.roofline - 1));
console.log(
  `all ${all.length} rows: roofline ${mean(all.map((x) => x.roofline)).toFixed(3)}, learned ${mean(all.map((x) => x.learned)).toFixed(3)}; |learned / roofline - 1| mean ${(100 * mean(gap)).toFixed(1)}%, max ${(100 * Math.max(...gap)).toFixed(1)}%`,
);
