// The constraint search: GPU type x precision x batch size per GPU x GPUs per node x nodes.
// Everything that does not depend on the GPU count (the compute part of a step and the memory per
// GPU) is computed once per (GPU, precision, batch) and reused across node counts, so a candidate
// costs a communication estimate and a few multiplications.
import { fits, memoryPerGpu } from '../predictor/memory.js';
import { dataParallelOf, planParallelism } from '../predictor/parallel.js';
import { unsupportedReason } from '../predictor/precision.js';
import { costOf, InputError } from '../predictor/predict.js';
import {
  combine,
  communicationTime,
  computeTime,
  scaleBreakdown,
  stepMs,
  type ComputeTime,
  type Efficiency,
} from '../predictor/step.js';
import { shardedSearch, type ShardedSearch } from './parallel-search.js';
import {
  REJECT_REASONS,
  searchSize,
  type Candidate,
  type Plan,
  type Recommendation,
  type RecommendRequest,
  type RejectReason,
  type Search,
  type TimeScale,
} from './search-types.js';

export {
  REJECT_REASONS,
  searchSize,
  type Candidate,
  type Objective,
  type ParallelismSearch,
  type Plan,
  type Recommendation,
  type RecommendRequest,
  type RejectReason,
  type Search,
  type SearchStatus,
  type TimeScale,
} from './search-types.js';

export function recommend(r: RecommendRequest, eff: Efficiency): Recommendation {
  return rankCandidates(r, searchCandidates(r, eff));
}

export function searchCandidates(r: RecommendRequest, eff: Efficiency): Search {
  const headroomGb = r.memoryHeadroomGb ?? eff.memory.defaultMemoryHeadroomGb;
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
    const perNode = r.gpusPerNodeChoices.filter((g) => g <= gpu.maxGpusPerNode);
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
        const single = memoryPerGpu(r.model, cost, precision, batch, false, eff, r.attention);
        const multi = memoryPerGpu(r.model, cost, precision, batch, true, eff, r.attention);
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
            const plainFits = fits(memory, gpu, headroomGb);
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
            const stepTimeMs = stepMs(compute, comm);
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
    // One candidate whose numbers overflowed must not sink the answer (GraphQL refuses Infinity) nor rank first.
    if (!(c.hours > 0 && c.hoursHi < Infinity && c.stepTimeMs < Infinity) || c.cost === Infinity)
      return reject('NOT_FINITE');
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
