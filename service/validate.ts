// Input checks shared by every entry point (GraphQL resolvers, the CLI): each failure is an
// InputError that names the field and says what is allowed; the API turns it into BAD_USER_INPUT.
import { InputError } from '../predictor/input-error.js';
import type { MasterWeights, OptimizerState, Parallelism, RecomputeModule } from '../predictor/parallel.js';

export { InputError };

/** Large bounds read better as 1e+18 than as nineteen digits. */
const fmt = (x: number) => (Number.isFinite(x) && Math.abs(x) >= 1e6 ? x.toExponential() : String(x));

export function finiteNumber(
  field: string,
  v: number,
  min: number,
  max: number,
  opts: { exclusiveMin?: boolean } = {},
): number {
  const below = opts.exclusiveMin ? !(v > min) : !(v >= min);
  if (!Number.isFinite(v) || below || v > max) {
    throw new InputError(
      field,
      `must be a finite number ${opts.exclusiveMin ? '>' : '>='} ${fmt(min)} and <= ${fmt(max)} (got ${fmt(v)})`,
    );
  }
  return v;
}

/**
 * A number the model can use: finite, from `floor` to `max`. Positive inputs have a floor, not just
 * "> 0": a subnormal bandwidth or sample count passes "> 0" and then overflows a step time to
 * Infinity, or underflows hours and cost to 0, or leaves a solver coefficients it cannot scale.
 * `orZero` also allows exactly 0 (a free GPU, a client with no data).
 */
export function inRange(
  field: string,
  v: number,
  floor: number,
  max: number,
  opts: { orZero?: boolean; unit?: string } = {},
): number {
  const ok = Number.isFinite(v) && v <= max && (v >= floor || (opts.orZero === true && v === 0));
  if (!ok) {
    const unit = opts.unit ? ` ${opts.unit}` : '';
    throw new InputError(
      field,
      `must be ${opts.orZero ? '0 or ' : ''}a finite number from ${fmt(floor)} to ${fmt(max)}${unit} (got ${fmt(v)})`,
    );
  }
  return v;
}

export function integer(field: string, v: number, min: number, max: number): number {
  if (!Number.isInteger(v) || v < min || v > max)
    throw new InputError(field, `must be an integer from ${fmt(min)} to ${fmt(max)} (got ${fmt(v)})`);
  return v;
}

export function nonEmpty<T>(field: string, list: T[] | undefined | null, max: number): T[] | undefined {
  if (list === undefined || list === null) return undefined;
  if (list.length === 0)
    throw new InputError(field, 'must not be an empty list (leave it out for the default)');
  if (list.length > max) throw new InputError(field, `lists at most ${max} entries (got ${list.length})`);
  return list;
}

/**
 * Smallest positive values the API accepts (see inRange): each is far below any real job and keeps
 * every derived quantity (hours, cost, solver coefficients) finite and within about 1e12 of the
 * others, which is what HiGHS's default tolerances (1e-6 to 1e-9) can still tell apart.
 */
export const FLOORS = {
  /** One sample (image, sequence or token): less is not training work. */
  samples: 1,
  /** 100 Mbit/s: slower than any cluster network; at 1e-300 Gbps an all-reduce takes Infinity hours. */
  gbps: 0.1,
  /** 3.6 seconds. */
  hours: 0.001,
  /** One cent. */
  usd: 0.01,
  /** A hundredth of a cent per GPU-hour (0 itself, a GPU already paid for, is allowed). */
  price: 1e-4,
  /** Fleet job priorities are relative weights from 1e-3 to 1e3: a ratio above 1e6 falls inside the solver's tolerances (a 1e-7 priority was treated as 0 and its job left out). */
  priority: 1e-3,
  /** 1 GFLOPS: a microcontroller; devices slower than that do not train. */
  tflops: 1e-3,
  /** 0.1 GB/s of device memory bandwidth. */
  memoryBwGbps: 0.1,
  /** 10 MB of device memory. */
  memoryGb: 0.01,
  /** 10 kbit/s client links. */
  mbps: 0.01,
  /** Solver time limits below 0.1 s only measure the solver's start-up. */
  seconds: 0.1,
} as const;

/** Largest values the API accepts: far beyond any real job, small enough that nothing overflows or runs long. */
export const LIMITS = {
  samples: 1e18,
  /**
   * Per GPU: NCF trains with 2^20 user-item pairs per GPU (DeepLearningExamples' default, the zoo's
   * ncf_neumf), so a sample-sized batch can be far larger than an image one.
   */
  batchSize: 1e7,
  nodes: 4096,
  gpusPerNode: 16,
  gradAccum: 4096,
  gbps: 1e5,
  price: 1e4,
  hours: 1e7,
  priority: 1e3,
  usd: 1e12,
  limit: 200,
  listLength: 100,
  /** More than any GPU's memory: a larger headroom is a mistake. */
  memoryHeadroomGb: 1024,
} as const;

/**
 * `prices: [{gpu, usdPerGpuHour}]` as a map; `check` refuses an unknown GPU. The same GPU twice is
 * refused rather than letting the last entry win silently: the two prices disagree and only the
 * client knows which one it meant.
 */
export function priceList(
  field: string,
  prices: { gpu: string; usdPerGpuHour: number }[] | undefined | null,
  check: (field: string, gpu: string) => unknown,
): Record<string, number> {
  const out: Record<string, number> = {};
  const firstAt = new Map<string, number>();
  for (const [i, p] of (nonEmpty(field, prices, LIMITS.listLength) ?? []).entries()) {
    check(`${field}[${i}].gpu`, p.gpu);
    const earlier = firstAt.get(p.gpu);
    if (earlier !== undefined)
      throw new InputError(
        `${field}[${i}].gpu`,
        `${p.gpu.slice(0, 80)} is already priced by ${field}[${earlier}]; give one price per GPU type`,
      );
    firstAt.set(p.gpu, i);
    out[p.gpu] = inRange(`${field}[${i}].usdPerGpuHour`, p.usdPerGpuHour, FLOORS.price, LIMITS.price, {
      orZero: true,
    });
  }
  return out;
}

/** Tensor/pipeline/context/expert parallelism, ZeRO and recomputation as a request or a recorded run gives them. */
export interface ParallelismInput {
  tensorParallel: number;
  pipelineParallel: number;
  zeroStage: number;
  recompute: Parallelism['recompute'];
  recomputeModules?: RecomputeModule[] | null;
  optimizerState?: OptimizerState | null;
  masterWeights?: MasterWeights | null;
  virtualPipelineStages?: number;
  contextParallel?: number;
  expertParallel?: number;
}

/**
 * A request's or a recorded run's parallelism as predict takes it: GraphQL's nulls as absent fields.
 * The values themselves are checked against the model and layout by predict (parallel.ts
 * checkParallelism).
 */
export function parallelismOf(p: ParallelismInput | null | undefined): Parallelism | undefined {
  if (p == null) return undefined;
  return {
    ...p,
    zeroStage: p.zeroStage as Parallelism['zeroStage'],
    optimizerState: p.optimizerState ?? undefined,
    masterWeights: p.masterWeights ?? undefined,
    recomputeModules: p.recomputeModules ?? undefined,
  };
}
