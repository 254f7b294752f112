// Where the roofline's error comes from across GPUs: its mean log error on train.csv's benchmark rows
// grouped by how many times the plain FP32 rate the row's dominant math runs at on its GPU (the
// "tensor speedup": TF32/FP16/BF16 tensor peak over the FP32 peak; 1 for FP32 before Ampere, 2 for FP16
// on GeForce Ampere, whose tensor cores accumulate FP32 at half rate, 16 for FP16 on an A100). The
// catalog's GPUs without a benchmark row the roofline covers are listed with their speedups, to say
// how far beyond the measured range an estimate for them reaches.
//
//   npx tsx bench/tensor-speedup.ts
//
// Above 0: measured faster than the roofline. Not a timing: it reads the shipped constants and the
// rows, and takes seconds (every row's analytical prediction).
import { loadGpus } from '../seeds/catalog.js';
import { trainingExamples } from '../predictor/learned/train.js';
import type { GpuSpec, MathMode } from '../predictor/types.js';

const speedup = (gpu: GpuSpec, math: MathMode): number | undefined => {
  const fp32 = gpu.peakTflops.fp32;
  const peak = gpu.peakTflops[math] ?? fp32;
  return fp32 && peak ? peak / fp32 : undefined;
};
const band = (s: number) => 2 ** Math.round(Math.log2(s));

const rows = trainingExamples().filter((e) => e.kind === 'benchmark');
const groups = new Map<number, { log: number[]; gpus: Map<string, number[]> }>();
for (const e of rows) {
  const s = speedup(e.gpu, e.aware.dominantMath);
  if (s === undefined || !e.row.throughput) continue;
  const g = groups.get(band(s)) ?? { log: [], gpus: new Map<string, number[]>() };
  const err = Math.log(e.row.throughput / e.aware.throughput);
  g.log.push(err);
  const perGpu = g.gpus.get(e.row.gpu) ?? [];
  perGpu.push(err);
  g.gpus.set(e.row.gpu, perGpu);
  groups.set(band(s), g);
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const mape = (xs: number[]) => mean(xs.map((x) => Math.abs(Math.exp(-x) - 1)));

console.log(
  '| tensor speedup | rows | GPUs | mean log(measured / roofline) | roofline MAPE | per GPU (mean log error, rows) |',
);
console.log('| ---: | ---: | ---: | ---: | ---: | --- |');
for (const [s, g] of [...groups].sort(([a], [b]) => a - b))
  console.log(
    `| ${s}x | ${g.log.length} | ${g.gpus.size} | ${mean(g.log).toFixed(3)} | ${(100 * mape(g.log)).toFixed(1)}% | ${[
      ...g.gpus,
    ]
      .sort(([, a], [, b]) => b.length - a.length)
      .map(([gpu, xs]) => `${gpu} ${mean(xs).toFixed(2)} (${xs.length})`)
      .join(', ')} |`,
  );

const measured = new Set(rows.map((e) => e.row.gpu));
const reach = loadGpus()
  .filter((g) => !measured.has(g.id) && g.peakTflops.fp32)
  .map((g) => {
    // The first 16-bit (or TF32) tensor rate the datasheet gives: `speedup` would fall back to the FP32
    // peak for a mode the GPU lacks (BF16 on Volta and Turing) and call it 1x.
    const math = (['bf16', 'fp16', 'tf32'] as const).find((m) => g.peakTflops[m]);
    return { id: g.id, s: math ? speedup(g, math) : undefined };
  })
  .filter((g): g is { id: string; s: number } => g.s !== undefined && g.s > 1)
  .sort((a, b) => b.s - a.s);
console.log(
  `\nCatalog GPUs without a benchmark row the roofline covers, by their 16-bit (or TF32) tensor speedup (measured rows reach ${Math.max(...groups.keys())}x):`,
);
console.log(reach.map((g) => `${g.id} ${g.s.toFixed(1)}x`).join(', '));
