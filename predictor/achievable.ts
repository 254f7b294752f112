// Achievable performance instead of datasheet peaks: what GEMM kernels, memory streams and NCCL
// all-reduces measured on real GPUs (seeds/achievable/achievable.json, derived from
// shared/data/achievable by seeds/achievable/derive.py; the derivation is written there).
//
// A GEMM table maps a kernel's ideal time (FLOPs / the datasheet peak of its math mode) to the time
// the kernel measured. Expressed that way a table carries over to a GPU that was not measured: the
// same ideal time on a GPU with twice the peak is half the work, so it sits further down the
// latency-bound part of the curve. For a GPU without its own table the nearest measured architecture's
// table is used, scaled by the GPU's own datasheet peak, and `achievableBasis` says so.
import { loadAchievable, type Curve } from '../seeds/tables.js';
import type { Generation, GpuSpec, MathMode } from './types.js';

const data = loadAchievable;

/** The GEMM table each architecture is measured by, or the nearest measured one. */
const GEMM_TABLE: Record<Generation, string> = {
  hopper: 'H100',
  blackwell: 'B200',
  ampere: 'A100',
  // Ada's and older tensor cores are closest to Ampere's (no Hopper warp-group MMA); Ada FP8 falls back below.
  ada: 'A100',
  turing: 'A100',
  volta: 'A100',
  pascal: 'A100',
  cdna3: 'MI300X',
  cdna2: 'MI300X',
  cdna: 'MI300X',
  tpu: 'H100',
  unknown: 'H100',
};
/** GPUs measured by a table of their own (beyond their architecture's). */
const OWN_GEMM_TABLE: Record<string, string> = { GB200: 'GB200' };
/** The GPU each GEMM table was measured on. */
const TABLE_GPU: Record<string, string> = {
  H100: 'H100-SXM5-80GB',
  B200: 'B200',
  GB200: 'GB200',
  A100: 'A100-SXM4-80GB',
  MI300X: 'MI300X',
};
/** Same tensor cores, other element type: the curve to use where a table lacks a math mode. */
const MATH_FALLBACK: Record<MathMode, MathMode[]> = {
  fp32: ['tf32', 'bf16', 'fp16'],
  tf32: ['bf16', 'fp16'],
  fp16: ['bf16'],
  bf16: ['fp16'],
  fp8: [],
  // No FP4 kernel was measured anywhere here: FP4 takes the FP8 curve at the FP4 peak (unmeasured).
  fp4: ['fp8'],
};

export interface GemmBasis {
  table: string;
  math: MathMode;
  curve: Curve;
  /** True when the curve was measured on this GPU in this math mode. */
  measured: boolean;
}

const basisCache = new Map<string, GemmBasis>();
/** The GEMM curve a GPU's math mode runs on: its own, its architecture's, or the nearest measured one. */
export function gemmBasis(gpu: GpuSpec, math: MathMode): GemmBasis {
  const key = `${gpu.id}|${math}`;
  let b = basisCache.get(key);
  if (b) return b;
  const tables = [OWN_GEMM_TABLE[gpu.id], GEMM_TABLE[gpu.generation], 'H100'].filter((t): t is string => !!t);
  for (const m of [math, ...MATH_FALLBACK[math]])
    for (const t of tables) {
      const e = data().gemm[t]?.[m];
      if (!e) continue;
      b = { table: t, math: m, curve: e.points, measured: m === math && TABLE_GPU[t] === gpu.id };
      basisCache.set(key, b);
      return b;
    }
  // Every math mode reaches H100's bf16 curve through the fallbacks above; this is unreachable with the shipped file.
  throw new Error(`achievable.json has no GEMM curve for ${gpu.id} ${math}`);
}

/** Log-log interpolation of a measured curve; flat below its first point, linear (constant efficiency) past its last. */
function interpolate(curve: Curve, x: number): number {
  const first = curve[0],
    last = curve[curve.length - 1];
  if (x <= first[0]) return first[1];
  if (x >= last[0]) return (last[1] * x) / last[0];
  let i = 1;
  while (curve[i][0] < x) i++;
  const [x0, y0] = curve[i - 1],
    [x1, y1] = curve[i];
  const t = Math.log(x / x0) / Math.log(x1 / x0);
  return Math.exp(Math.log(y0) + t * Math.log(y1 / y0));
}

/**
 * Seconds one GEMM kernel of `flops` takes on `gpu` in `math`, as the measured kernels ran (before any
 * framework overhead): its ideal time at the datasheet peak, looked up on the measured curve.
 */
export function gemmSeconds(gpu: GpuSpec, math: MathMode, flops: number, peakTflops: number): number {
  const idealUs = (flops / (peakTflops * 1e12)) * 1e6;
  return interpolate(gemmBasis(gpu, math).curve, idealUs) * 1e-6;
}

/**
 * The measured GPUs a GPU without its own measurement borrows from, nearest first: its architecture's
 * measured GPU (Blackwell's memory bandwidth, not measured on GB200, falls back to H100's fraction);
 * architectures with none (Ada, Turing, Volta, Pascal, TPU) take A100's.
 */
const NEAREST_MEASURED: Partial<Record<Generation, string[]>> = {
  hopper: ['H100-SXM5-80GB'],
  blackwell: ['GB200', 'H100-SXM5-80GB'],
  ampere: ['A100-SXM4-80GB'],
  cdna3: ['MI300X'],
  cdna2: ['MI300X'],
  cdna: ['MI300X'],
};
/** A per-GPU measurement table's entry for this GPU: its own, or its nearest measured GPU's. */
function ownOrNearest<T>(table: Record<string, T>, gpu: GpuSpec): { entry: T; measuredOn: string } {
  // Asked once per layer of every candidate (memory bandwidth): looked up once per table and GPU.
  let byGpu = nearestCache.get(table);
  if (!byGpu) nearestCache.set(table, (byGpu = new Map()));
  const known = byGpu.get(gpu.id) as { entry: T; measuredOn: string } | undefined;
  if (known) return known;
  for (const id of [gpu.id, ...(NEAREST_MEASURED[gpu.generation] ?? []), 'A100-SXM4-80GB'])
    if (table[id]) {
      const found = { entry: table[id], measuredOn: id };
      byGpu.set(gpu.id, found);
      return found;
    }
  // A100 is in every table the derivation writes (seeds/achievable/derive.py); unreachable with the shipped file.
  throw new Error(`achievable.json has no measurement for ${gpu.id} or A100-SXM4-80GB`);
}
const nearestCache = new Map<object, Map<string, { entry: unknown; measuredOn: string }>>();

/** Fraction of the datasheet memory bandwidth a STREAM Triad reached: this GPU's, or its nearest measured one's. */
export function memoryFraction(gpu: GpuSpec): { fraction: number; measuredOn: string } {
  const { entry, measuredOn } = ownOrNearest(data().memory, gpu);
  return { fraction: entry.fractionOfDatasheet, measuredOn };
}

/**
 * FLOP/s a fused attention kernel reaches: FlashAttention-2 as measured on this GPU, or the fraction of
 * the dense 16-bit tensor peak it reached on the nearest measured architecture, times this GPU's peak.
 * Its two GEMMs share the SMs with the softmax, masking and rescaling between them, so it runs well
 * below a plain GEMM (H100: 328 TFLOPS against ~700 for a large BF16 GEMM). Null where no 16-bit
 * peak is known. On Blackwell the reference is FA2 on GB200 (15% of peak): Blackwell-specific
 * kernels (cuDNN, FA4) are faster, and no measurement of them is in the data.
 */
export function attentionFlops(gpu: GpuSpec): { flops: number; measuredOn: string } | null {
  const { entry, measuredOn } = ownOrNearest(data().attention, gpu);
  if (measuredOn === gpu.id) return { flops: entry.tflops * 1e12, measuredOn };
  const peak = gpu.peakTflops.bf16 ?? gpu.peakTflops.fp16;
  if (!peak) return null;
  return { flops: entry.fractionOf16BitPeak * peak * 1e12, measuredOn };
}

/** The measured all-reduce curve a GPU's node uses: its own, or its nearest measured architecture's. */
function allReduceCurve(gpu: GpuSpec) {
  return ownOrNearest(data().allReduce, gpu).entry;
}

/**
 * Fraction of the per-direction link bandwidth an all-reduce of `messageBytes` reaches as NCCL bus
 * bandwidth: small messages are latency-bound, large ones approach the link (H100's NVLink SHARP
 * goes beyond it). Interpolated in log(message size); flat past both ends of the measurements.
 */
export function allReduceLinkFraction(gpu: GpuSpec, messageBytes: number): number {
  return alongSizeCurve(allReduceCurve(gpu).points, messageBytes);
}

/**
 * Fraction of the per-direction link bandwidth an all-to-all reaches when each GPU holds
 * `tensorBytes` and sends (n-1)/n of it to the others (mixture-of-experts dispatch and combine).
 * Measured on 8-GPU H100 and B200 hosts (XLA's collective perf table): NCCL's all-to-all is pairwise
 * sends, well below the all-reduce's bus bandwidth at the same size (0.63 of H100's NVLink at 128 MiB).
 * Other GPUs take their architecture's measured curve, or H100's.
 */
export function allToAllLinkFraction(
  gpu: GpuSpec,
  tensorBytes: number,
): { fraction: number; measuredOn: string } {
  const table = data().allToAll;
  // Asked for every mixture-of-experts step a search times: the curve's GPU is looked up once per
  // table and GPU, not with a list built per call.
  let byGpu = allToAllSources.get(table);
  if (!byGpu) allToAllSources.set(table, (byGpu = new Map()));
  let id = byGpu.get(gpu.id);
  if (id === undefined) {
    id =
      [gpu.id, ...(gpu.generation === 'blackwell' ? ['B200'] : []), 'H100-SXM5-80GB'].find((g) => table[g]) ??
      'H100-SXM5-80GB';
    byGpu.set(gpu.id, id);
  }
  return { fraction: alongSizeCurve(table[id].points, tensorBytes), measuredOn: id };
}
const allToAllSources = new WeakMap<object, Map<string, string>>();

/** A [bytes, fraction] curve at `bytes`: interpolated in log(bytes), flat past the largest size, latency-bound below the smallest. */
function alongSizeCurve(pts: [number, number][], messageBytes: number): number {
  // Below the smallest message measured (1 KiB) the time stays the latency: bandwidth falls with size.
  if (messageBytes <= pts[0][0]) return (pts[0][1] * Math.max(1, messageBytes)) / pts[0][0];
  const last = pts[pts.length - 1];
  if (messageBytes >= last[0]) return last[1];
  let i = 1;
  while (pts[i][0] < messageBytes) i++;
  const [x0, y0] = pts[i - 1],
    [x1, y1] = pts[i];
  const t = Math.log(messageBytes / x0) / Math.log(x1 / x0);
  return y0 + t * (y1 - y0);
}

/** One line for `evidence`: which measured tables an estimate for this GPU rests on. */
export function achievableBasis(gpu: GpuSpec, math: MathMode): string {
  const g = gemmBasis(gpu, math);
  const tableGpu = TABLE_GPU[g.table];
  const mem = memoryFraction(gpu).measuredOn;
  const ar = allReduceCurve(gpu).gpu;
  const gemm = g.measured
    ? `GEMM rates measured on ${gpu.id}`
    : `GEMM rates from ${tableGpu}'s measured ${g.math} kernels scaled by ${gpu.id}'s datasheet ${math} peak` +
      (math === 'fp4' ? ' (no FP4 kernel measured: FP8 curve)' : '');
  const memory =
    mem === gpu.id ? 'memory bandwidth measured' : `memory bandwidth as a fraction measured on ${mem}`;
  const link = ar === gpu.id ? 'all-reduce measured' : `all-reduce curve of ${ar} scaled by its link`;
  const fa = attentionFlops(gpu);
  const attention = !fa
    ? ''
    : fa.measuredOn === gpu.id
      ? '; fused attention rate measured (FlashAttention-2)'
      : `; fused attention at the fraction of peak FlashAttention-2 reached on ${fa.measuredOn}`;
  return `${gemm}; ${memory}; ${link}${attention}`;
}
