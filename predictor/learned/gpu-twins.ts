// The measured GPU an unmeasured one reads as, for the evidence of measured configurations. GPUs
// built on one die with the same SM count and boost clock run the same kernels at the same rates;
// they differ in memory (size, bandwidth) and board. An unmeasured GPU whose die, SMs and clock
// equal a measured GPU's, with no less memory bandwidth, takes that GPU's measurements as evidence
// about itself (H200-SXM reads H100-SXM5's; held out, an A100-SXM4-80GB reads A100-PCIE-80GB's):
// over the GPUs held out whole, with the shipped four-fit correction, 12.9% -> 12.6% MAPE, lower at
// each of the four seeds, and every GPU with a twin lower (bench/held-out.ts gpu). The GPU's own
// datasheet features and roofline stay its own; only the evidence reads the twin.
import type { GpuSpec } from '../types.js';

/**
 * The die a GPU is built on, as the catalog's architecture names it ("Ampere (GA102-850)" ->
 * "GA102"): GPUs of one die differ in clocks, memory and cooling, not in how their kernels run.
 */
export function chipOf(architecture: string): string | undefined {
  return /\(([A-Z]+\d+)/.exec(architecture)?.[1];
}

/** GPU id -> chip, for the GPUs whose architecture names one. */
export const gpuChips = (gpus: readonly { id: string; architecture: string }[]): Map<string, string> =>
  new Map(
    gpus.flatMap((g) => {
      const chip = chipOf(g.architecture);
      return chip ? [[g.id, chip] as [string, string]] : [];
    }),
  );

/**
 * The measured GPU `gpu` reads as: undefined when it is measured itself or no measured GPU has its
 * die, SM count and boost clock with no more memory bandwidth. Of several, the one of the highest
 * bandwidth (the nearest), then the first id.
 */
export function gpuTwin(
  gpu: GpuSpec,
  measured: ReadonlySet<string>,
  specOf: (id: string) => GpuSpec | undefined,
): GpuSpec | undefined {
  if (measured.has(gpu.id)) return undefined;
  const chip = chipOf(gpu.architecture);
  if (!chip || gpu.smCount === null || gpu.boostClockMhz === null) return undefined;
  let best: GpuSpec | undefined;
  for (const id of measured) {
    const o = specOf(id);
    if (!o || chipOf(o.architecture) !== chip) continue;
    if (o.smCount !== gpu.smCount || o.boostClockMhz !== gpu.boostClockMhz) continue;
    if (o.memoryBwGbps > gpu.memoryBwGbps) continue;
    if (
      !best ||
      o.memoryBwGbps > best.memoryBwGbps ||
      (o.memoryBwGbps === best.memoryBwGbps && o.id < best.id)
    )
      best = o;
  }
  return best;
}
