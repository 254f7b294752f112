// The constraint search: GPU type x precision x batch size per GPU x GPUs per node x nodes.
// Everything that does not depend on the GPU count (the compute part of a step and the memory per
// GPU) is computed once per (GPU, precision, batch) and reused across node counts, so a candidate
// costs a communication estimate and a few multiplications.
import type { SoftwareStack } from '../predictor/software.js';
import { memoryPerGpu, fits } from '../predictor/memory.js';
import {
  dataParallelOf,
  planParallelism,
  type Parallelism,
  type PlanParallelism,
} from '../predictor/parallel.js';
import { unsupportedReason } from '../predictor/precision.js';
import { costOf, InputError } from '../predictor/predict.js';
import {
  combine,
  scaleBreakdown,
  communicationTime,
  computeTime,
  defaultEfficiency,
  type Breakdown,
  type ComputeTime,
  type Efficiency,
} from '../predictor/step.js';
import type { GpuSpec, ModelDef, Precision } from '../predictor/types.js';
import { shardedSearch, type ShardedSearch } from './parallel-search.js';

export type Objective = 'COST' | 'TIME';

export const REJECT_REASONS = {
  UNSUPPORTED_PRECISION: 'the GPU cannot run this precision mode',
  OUT_OF_MEMORY:
    'does not fit in GPU memory (with parallelismSearch, not with any ZeRO stage, tensor/pipeline parallelism or recomputation searched either)',
  MISSES_DEADLINE: 'finishes after the deadline',
  OVER_BUDGET: 'costs more than the budget',
  NO_PRICE: 'the catalog has no price for this GPU (give one in prices)',
  TOO_MANY_GPUS: 'uses more GPUs than maxGpus',
  GLOBAL_BATCH_MISMATCH: 'cannot reach the fixed global batch with whole accumulation steps',
} as const;
export type RejectReason = keyof typeof REJECT_REASONS;

export type ParallelismSearch = 'off' | 'auto' | 'all';

export interface RecommendRequest {
  model: ModelDef;
  /** Total work in the model's throughput unit. */
  samples: number;
  objective: Objective;
  deadlineHours?: number;
  /** Require the deadline to hold at the upper end of the prediction interval (P90). */
  deadlineConfidence?: boolean;
  budgetUsd?: number;
  gpus: GpuSpec[];
  precisions: Precision[];
  maxNodes: number;
  maxGpus?: number;
  gpusPerNodeChoices: number[];
  batchSizes: number[];
  /** When set, every plan trains with this global batch, accumulating gradients as needed. */
  globalBatch?: number;
  prices?: Record<string, number>;
  interNodeGbps: (gpu: GpuSpec) => number;
  fp32UsesTf32?: boolean;
  /** Software stack (predictor/software.ts); absent = PYTORCH_EAGER. */
  stack?: SoftwareStack;
  limit: number;
  /** Refuse searches larger than this many candidates. */
  maxCandidates?: number;
  /**
   * Tensor/pipeline parallelism, ZeRO sharding and recomputation (optimizer/parallel-search.ts):
   * 'off' (the default here): plain data parallelism only; 'auto' (the API's default): searched on
   * the layouts where plain data parallelism does not fit; 'all': on every layout, each keeping
   * whichever plan is faster. A plan found this way carries `parallelism`; pass it to `predict`.
   */
  parallelismSearch?: ParallelismSearch;
  /** Stop enumerating after this many milliseconds and rank the candidates found so far (status TIMEOUT). */
  timeBudgetMs?: number;
  /**
   * Milliseconds the work after the search (ranking, a learned correction) takes per candidate
   * found: the search stops early enough to leave that time inside timeBudgetMs. Default 0.
   */
  reserveMsPerCandidate?: number;
}

/** COMPLETE: every candidate was evaluated; TIMEOUT: the time budget ran out first, plans are the best of those evaluated. */
export type SearchStatus = 'COMPLETE' | 'TIMEOUT';

export interface Plan {
  rank: number;
  gpu: GpuSpec;
  nodes: number;
  gpusPerNode: number;
  batchSizePerGpu: number;
  gradAccumSteps: number;
  precision: Precision;
  stepTimeMs: number;
  /** Interval of the step time (10th and 90th percentile of held-out errors); equal to stepTimeMs for the analytical estimate. */
  stepTimeMsP10: number;
  stepTimeMsP90: number;
  analyticalStepTimeMs: number;
  throughput: number;
  throughputUnit: string;
  totalHours: number;
  totalHoursP90: number;
  /** Which predictor answered: 'analytical' or the learned model's name. */
  predictor: string;
  /** Which case the prediction is: measured / calibrated from the same model / unmeasured. */
  evidence: string;
  /** null when neither the catalog nor the request gives a price for the GPU. */
  costUsd: number | null;
  priceUsdPerGpuHour: number | null;
  memoryGbPerGpu: number;
  breakdown: Breakdown;
  /** How the plan splits the model: plain data parallelism is dataParallel = GPUs, the rest 1 or 0. */
  parallelism: PlanParallelism;
}

export interface Recommendation {
  status: SearchStatus;
  evaluated: number;
  feasible: number;
  plans: Plan[];
  /** Plans no other plan beats on both cost and time, fastest first. */
  paretoFront: Plan[];
  rejected: { reason: RejectReason; description: string; count: number }[];
}

/** Largest GPUs-per-node a GPU type is sold in (DGX-2 holds 16 V100-SXM3). */
export const maxGpusPerNode = (gpu: GpuSpec): number => (gpu.id.startsWith('V100-SXM3') ? 16 : 8);

/** A feasible candidate, kept small: plans are materialized only for what is returned. */
export interface Candidate {
  gpuIndex: number;
  precision: Precision;
  batch: number;
  accum: number;
  gpusPerNode: number;
  nodes: number;
  stepTimeMs: number;
  hours: number;
  cost: number;
  memoryGb: number;
  price: number | null;
  analyticalStepMs: number;
  stepLoMs: number;
  stepHiMs: number;
  hoursHi: number;
  evidence?: string;
  compute: ComputeTime;
  commTotalMs: number;
  commExposedMs: number;
  /** Set when the plan is not plain data parallelism (optimizer/parallel-search.ts), with its communication by kind. */
  parallelism?: Parallelism;
  commDataParallelMs?: number;
  commPipelineMs?: number;
}

export function searchSize(
  r: Pick<RecommendRequest, 'gpus' | 'precisions' | 'batchSizes' | 'gpusPerNodeChoices' | 'maxNodes'>,
): number {
  return r.gpus.length * r.precisions.length * r.batchSizes.length * r.gpusPerNodeChoices.length * r.maxNodes;
}

/** Candidates that pass every constraint not involving time (precision, price, GPUs, memory, global batch). */
export interface Search {
  /** true when the time budget stopped the enumeration early. */
  timedOut?: boolean;
  evaluated: number;
  rejected: Map<RejectReason, number>;
  candidates: Candidate[];
}

/**
 * Multipliers on each candidate's analytical step time (same order as Search.candidates): the
 * learned correction's estimate and its interval. Absent: the analytical estimate stands.
 */
export interface TimeScale {
  mid: ArrayLike<number>;
  lo?: ArrayLike<number>;
  hi?: ArrayLike<number>;
  /** Per candidate: which case its prediction is (measured / calibrated / unmeasured). */
  cases?: string[];
  predictor: string;
}

export function recommend(r: RecommendRequest, eff: Efficiency = defaultEfficiency()): Recommendation {
  return rankCandidates(r, searchCandidates(r, eff));
}

export function searchCandidates(r: RecommendRequest, eff: Efficiency = defaultEfficiency()): Search {
  const size = searchSize(r);
  if (r.maxCandidates !== undefined && size > r.maxCandidates) {
    throw new InputError(
      'input',
      `the search would enumerate ${size} candidates (gpus x precisions x batchSizes x gpusPerNode x maxNodes), more than the limit of ${r.maxCandidates}: narrow gpus, precisions, batchSizes or maxNodes`,
    );
  }
  const cost = costOf(r.model);
  const rejected = new Map<RejectReason, number>();
  const reject = (why: RejectReason, n = 1) => rejected.set(why, (rejected.get(why) ?? 0) + n);
  const candidates: Candidate[] = [];
  let evaluated = 0;
  const needPrice = r.objective === 'COST' || r.budgetUsd !== undefined;
  const stopAt = r.timeBudgetMs === undefined ? Infinity : performance.now() + r.timeBudgetMs;
  let timedOut = false;

  r.gpus.forEach((gpu, gpuIndex) => {
    if (timedOut) return;
    const price = r.prices?.[gpu.id] ?? gpu.priceUsdPerGpuHour;
    const perNode = r.gpusPerNodeChoices.filter((g) => g <= maxGpusPerNode(gpu));
    const layouts = perNode.length * r.maxNodes;
    const netGbps = r.interNodeGbps(gpu);
    for (const precision of r.precisions) {
      const unsupported = unsupportedReason(gpu, precision) !== null;
      for (const batch of r.batchSizes) {
        if (
          stopAt !== Infinity &&
          performance.now() + candidates.length * (r.reserveMsPerCandidate ?? 0) >= stopAt
        ) {
          timedOut = true;
          break;
        }
        evaluated += layouts;
        if (unsupported) {
          reject('UNSUPPORTED_PRECISION', layouts);
          continue;
        }
        if (needPrice && price === null) {
          reject('NO_PRICE', layouts);
          continue;
        }
        const single = memoryPerGpu(r.model, cost, precision, batch, false, eff);
        const multi = memoryPerGpu(r.model, cost, precision, batch, true, eff);
        const computeByAccum = new Map<number, ComputeTime>();
        let sharded: ShardedSearch | undefined;
        for (const g of perNode) {
          for (let nodes = 1; nodes <= r.maxNodes; nodes++) {
            const gpus = g * nodes;
            if (r.maxGpus !== undefined && gpus > r.maxGpus) {
              reject('TOO_MANY_GPUS');
              continue;
            }
            const memory = gpus > 1 ? multi : single;
            const plainFits = fits(memory, gpu);
            if ((!plainFits && r.parallelismSearch === 'auto') || r.parallelismSearch === 'all') {
              // Sharding, tensor and pipeline parallelism, recomputation: see parallel-search.ts.
              sharded ??= shardedSearch(
                r,
                { model: r.model, cost, gpu, gpuIndex, precision, batch, price, netGbps },
                eff,
              );
              const found = sharded.best(g, nodes, plainFits);
              if (typeof found !== 'string') {
                candidates.push(found);
                continue;
              }
              if (!plainFits) {
                reject(found);
                continue;
              }
            }
            if (!plainFits) {
              reject('OUT_OF_MEMORY');
              continue;
            }
            let accum = 1;
            if (r.globalBatch !== undefined) {
              accum = r.globalBatch / (batch * gpus);
              if (!Number.isInteger(accum) || accum < 1) {
                reject('GLOBAL_BATCH_MISMATCH');
                continue;
              }
            }
            let compute = computeByAccum.get(accum);
            if (!compute) {
              compute = computeTime(
                r.model,
                cost,
                gpu,
                {
                  precision,
                  batchSizePerGpu: batch,
                  gpusPerNode: 1,
                  nodes: 1,
                  gradAccumSteps: accum,
                  fp32UsesTf32: r.fp32UsesTf32 ?? true,
                  interNodeGbps: netGbps,
                  ...(r.stack ? { stack: r.stack } : {}),
                },
                eff,
              );
              computeByAccum.set(accum, compute);
            }
            const comm = communicationTime(
              compute.gradientBytes,
              compute.backwardMs,
              gpu,
              { gpusPerNode: g, nodes, interNodeGbps: netGbps, ...(r.stack ? { stack: r.stack } : {}) },
              eff,
            );
            const stepTimeMs =
              compute.forwardMs +
              compute.backwardMs +
              compute.optimizerMs +
              compute.mixedPrecisionMs +
              compute.overheadMs +
              comm.exposedMs;
            candidates.push({
              gpuIndex,
              precision,
              batch,
              accum,
              gpusPerNode: g,
              nodes,
              price,
              analyticalStepMs: stepTimeMs,
              stepTimeMs,
              stepLoMs: stepTimeMs,
              stepHiMs: stepTimeMs,
              hours: 0,
              hoursHi: 0,
              cost: 0,
              memoryGb: memory.totalGb,
              compute,
              commTotalMs: comm.totalMs,
              commExposedMs: comm.exposedMs,
            });
          }
        }
      }
      if (timedOut) break;
    }
  });
  return { timedOut, evaluated, rejected, candidates };
}

/** Applies the time-dependent constraints (deadline, budget) and ranks. */
export function rankCandidates(r: RecommendRequest, search: Search, scale?: TimeScale): Recommendation {
  const units = r.model.unitsPerBatchElement;
  const rejected = new Map(search.rejected);
  const reject = (why: RejectReason) => rejected.set(why, (rejected.get(why) ?? 0) + 1);
  const feasible: Candidate[] = [];
  // Candidates are updated in place: a Search is ranked for one request, never shared.
  search.candidates.forEach((c, i) => {
    c.stepTimeMs = c.analyticalStepMs * (scale ? scale.mid[i] : 1);
    c.stepLoMs = c.analyticalStepMs * (scale?.lo ? scale.lo[i] : 1);
    c.stepHiMs = c.analyticalStepMs * (scale?.hi ? scale.hi[i] : 1);
    c.evidence = scale?.cases?.[i] ?? 'analytical estimate only';
    const gpus = c.gpusPerNode * c.nodes;
    // samples / (units per step) steps, each stepTimeMs long; a step trains one micro-batch per model replica
    const hoursPerStepMs =
      r.samples / (c.batch * c.accum * dataParallelOf(gpus, c.parallelism) * units) / 3.6e6;
    c.hours = hoursPerStepMs * c.stepTimeMs;
    c.hoursHi = hoursPerStepMs * c.stepHiMs;
    c.cost = c.price === null ? Number.NaN : c.hours * gpus * c.price;
    // With deadlineConfidence the deadline must hold at the interval's upper bound.
    const hoursForDeadline = r.deadlineConfidence ? c.hoursHi : c.hours;
    if (r.deadlineHours !== undefined && hoursForDeadline > r.deadlineHours) return reject('MISSES_DEADLINE');
    if (r.budgetUsd !== undefined && !(c.cost <= r.budgetUsd)) return reject('OVER_BUDGET');
    feasible.push(c);
  });

  const key =
    r.objective === 'COST' ? (c: Candidate) => [c.cost, c.hours] : (c: Candidate) => [c.hours, c.cost];
  const order = (a: Candidate, b: Candidate) => {
    const ka = key(a),
      kb = key(b);
    return (
      cmpNum(ka[0], kb[0]) ||
      cmpNum(ka[1], kb[1]) ||
      a.gpuIndex - b.gpuIndex ||
      a.nodes * a.gpusPerNode - b.nodes * b.gpusPerNode ||
      a.batch - b.batch ||
      a.precision.localeCompare(b.precision)
    );
  };
  const top = topN(feasible, Math.max(0, r.limit), order);
  const toPlan = (c: Candidate, rank: number): Plan => {
    const gpu = r.gpus[c.gpuIndex];
    const step = combine(
      c.compute,
      {
        totalMs: c.commTotalMs,
        exposedMs: c.commExposedMs,
        dataParallelMs: c.commDataParallelMs,
        pipelineMs: c.commPipelineMs,
      },
      {
        batchSizePerGpu: c.batch,
        gradAccumSteps: c.accum,
        gpusPerNode: c.gpusPerNode,
        nodes: c.nodes,
        parallelism: c.parallelism,
      },
    );
    const breakdown = scaleBreakdown(step.breakdown, c.stepTimeMs / c.analyticalStepMs);
    return {
      rank,
      gpu,
      nodes: c.nodes,
      gpusPerNode: c.gpusPerNode,
      batchSizePerGpu: c.batch,
      gradAccumSteps: c.accum,
      precision: c.precision,
      stepTimeMs: c.stepTimeMs,
      stepTimeMsP10: c.stepLoMs,
      stepTimeMsP90: c.stepHiMs,
      analyticalStepTimeMs: c.analyticalStepMs,
      throughput: (step.globalBatch * units) / (c.stepTimeMs / 1e3),
      throughputUnit: r.model.throughputUnit,
      totalHours: c.hours,
      totalHoursP90: c.hoursHi,
      costUsd: Number.isFinite(c.cost) ? c.cost : null,
      priceUsdPerGpuHour: c.price,
      memoryGbPerGpu: c.memoryGb,
      breakdown,
      predictor: scale?.predictor ?? 'analytical',
      evidence: c.evidence ?? 'analytical estimate only',
      parallelism: planParallelism(c.gpusPerNode * c.nodes, c.parallelism, c.accum),
    };
  };
  const pareto = paretoFront(feasible.filter((c) => Number.isFinite(c.cost)));
  return {
    status: search.timedOut ? 'TIMEOUT' : 'COMPLETE',
    evaluated: search.evaluated,
    feasible: feasible.length,
    plans: top.map((c, i) => toPlan(c, i + 1)),
    paretoFront: pareto.slice(0, 50).map((c, i) => toPlan(c, i + 1)),
    rejected: [...rejected]
      .map(([reason, count]) => ({ reason, description: REJECT_REASONS[reason], count }))
      .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
  };
}

const cmpNum = (a: number, b: number) => (a === b ? 0 : Number.isNaN(a) ? 1 : Number.isNaN(b) ? -1 : a - b);

/** The n best by `order`, without sorting everything. */
function topN<T>(items: T[], n: number, order: (a: T, b: T) => number): T[] {
  if (items.length <= n * 4) return [...items].sort(order).slice(0, n);
  const best: T[] = [];
  for (const it of items) {
    if (best.length < n) {
      best.push(it);
      if (best.length === n) best.sort(order);
      continue;
    }
    if (n === 0 || order(it, best[n - 1]) >= 0) continue;
    let i = n - 1;
    while (i > 0 && order(it, best[i - 1]) < 0) i--;
    best.splice(i, 0, it);
    best.pop();
  }
  return best.length < n ? best.sort(order) : best;
}

/** Cost-time Pareto front, fastest first: each plan is cheaper than every faster one. */
function paretoFront(cands: Candidate[]): Candidate[] {
  const sorted = [...cands].sort((a, b) => a.hours - b.hours || a.cost - b.cost);
  const front: Candidate[] = [];
  let cheapest = Infinity;
  for (const c of sorted)
    if (c.cost < cheapest) {
      front.push(c);
      cheapest = c.cost;
    }
  return front;
}
