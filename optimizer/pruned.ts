// The learned correction applied only where it can change the answer. The correction multiplies
// each candidate's analytical step time by a factor the tree ensemble gives; over a group of
// candidates that differ only in their node count, that factor is bounded by the ensemble's range
// over the box of the group's features (predictor/learned/bounds.ts). From those bounds each
// candidate's hours and cost (estimate and P90) are bounded, and a candidate is corrected exactly
// only if, within its bounds, it could:
//   - be among the `limit` best plans: its best case beats the limit-th best worst case of the
//     candidates that are feasible whatever the correction;
//   - be on the Pareto front: no surely feasible candidate is, at its worst, both strictly faster
//     and no dearer than this one at its best;
//   - be feasible or not depending on the correction (deadline, budget): counts must be exact;
//   - be the best candidate a deadline or budget turned away (the notes describe it), or the best
//     that joins instances of an offer stating no network (turned away whatever the correction);
//   - be the fastest a deadline turned away or the cheapest a budget did (an empty answer names them).
// Everything else is counted (feasible, or rejected for the reason it surely fails) without being
// corrected, and the answer is the same as correcting every candidate (test/pruning.test.ts).
// Bounding a group costs several times what correcting one candidate costs, so the bounds pay only
// where groups hold several candidates each (many node counts of plain data parallelism); elsewhere
// every candidate is corrected (`auto`, BOUNDS_COST_IN_CORRECTIONS), for the same answer.
import { joinsUnstatedNetwork, rankCandidates, TIE_RESOLUTION, timeAndCost } from './recommend.js';
import {
  runOptionsOf,
  type Candidate,
  type Recommendation,
  type RecommendRequest,
  type RejectReason,
  type Search,
} from './search-types.js';
import { Turns } from '../predictor/turns.js';
import { combine } from '../predictor/step.js';
import { modelFeaturesOf, type Software } from '../predictor/learned/features.js';
import {
  singleGpuReference,
  type CorrectionInput,
  type LearnedPredictor,
} from '../predictor/learned/model.js';
import type { UserEvidence } from '../predictor/learned/calibration.js';

export interface PruneStats {
  /** Candidates the search kept (every constraint but time checked). */
  candidates: number;
  /** Of those, how many were corrected exactly. */
  corrected: number;
  /** Feature boxes the candidates make (bounded when pruned). */
  groups: number;
  /** Whether the bounds were used (else every candidate was corrected). */
  pruned: boolean;
}

/**
 * Whether to correct only the candidates the answer can depend on: `always`, `never` (correct every
 * candidate), or `auto`: where the bounds cost less than correcting every candidate would.
 */
export type Pruning = 'auto' | 'always' | 'never';

/**
 * What bounding one group of candidates costs, in corrections of one candidate: about 4 on two cores
 * (`BENCH_RUNS=3 npx tsx bench/pruning.ts`, correctAndRank alone, bounds against correcting every
 * candidate, median of 3): ResNet-50 on the catalog's offers up to 8 nodes, 18,021 candidates in
 * 6,179 groups, 378 ms against 307 ms (61 us per group, 17 per candidate); up to 64 nodes, 98,148 in
 * 7,658 groups, 476 against 1,185 ms; BERT-large fastest up to 8 nodes, 25,960 in 9,183 groups, 447
 * against 303 ms; Llama 3 8B under MEGATRON with parallel layouts (a group each), 9,057 in 8,972
 * groups, 301 against 93 ms. (Measured with AWS's and Azure's instance networks stated; before, with
 * fewer offers joined across instances: 13,872 in 4,995 groups, 252 against 156 ms.) Both hold the
 * event loop: onnxruntime runs on its thread too (in runs of onnx.ts RUN_ROWS rows).
 */
export const BOUNDS_COST_IN_CORRECTIONS = 4;

/**
 * Node counts 1, 2-7, 8-31, 32 and more: one feature box each keeps log_nodes narrow enough; a box per
 * power of two bounded 60% more boxes for fewer pruned candidates and no faster search (bench/pruning.ts).
 */
const nodeBucket = (nodes: number) => (nodes === 1 ? 0 : nodes < 8 ? 1 : nodes < 32 ? 2 : 3);

/**
 * Whether two candidates share a feature box: plain data parallelism differing only in node count,
 * within one node bucket. The search lists a box's members next to each other.
 */
const sameGroup = (a: Candidate, b: Candidate) =>
  !a.parallelism &&
  !b.parallelism &&
  a.gpuIndex === b.gpuIndex &&
  a.optionIndex === b.optionIndex &&
  a.precision === b.precision &&
  a.batch === b.batch &&
  a.accum === b.accum &&
  a.gpusPerNode === b.gpusPerNode &&
  nodeBucket(a.nodes) === nodeBucket(b.nodes);

/** How many feature boxes the candidates make. */
function groupCount(cands: readonly Candidate[]): number {
  let groups = 0;
  for (let i = 0; i < cands.length; i++) if (i === 0 || !sameGroup(cands[i - 1], cands[i])) groups++;
  return groups;
}

export interface CorrectedSearch {
  recommendation: Recommendation;
  stats: PruneStats;
}

/** The correction input of one candidate: its features are those `correct` sees. */
export function correctionInput(
  r: RecommendRequest,
  search: Search,
  c: Candidate,
  software: Software,
): CorrectionInput {
  const gpu = r.gpus[c.gpuIndex];
  const option = search.options[c.optionIndex];
  // Layout and stack are features of the learned model (the LLM runs it trained on ran split
  // layouts under tuned stacks): both go in, the breakdown carries the split's costs.
  const exec = {
    precision: c.precision,
    batchSizePerGpu: c.batch,
    gpusPerNode: c.gpusPerNode,
    nodes: c.nodes,
    gradAccumSteps: c.accum,
    fp32UsesTf32: r.fp32UsesTf32 ?? true,
    interNodeGbps: option.interNodeGbps,
    interNodeTransport: option.interNodeTransport,
    parallelism: c.parallelism,
    ...runOptionsOf(r),
  };
  const step = combine(
    c.compute,
    {
      totalMs: c.commTotalMs,
      exposedMs: c.commExposedMs,
      waitMs: c.commWaitMs,
      dataParallelMs: c.commDataParallelMs,
      pipelineMs: c.commPipelineMs,
    },
    exec,
  );
  return {
    modelId: r.model.id,
    model: modelFeaturesOf(r.model),
    gpu,
    exec,
    stepMs: c.analyticalStepMs,
    breakdown: step.breakdown,
    dominantMath: c.compute.dominantMath,
    software,
  };
}

/**
 * Corrects every candidate the answer depends on (all of them with `prune: 'never'`, or where the
 * bounds would cost more, see Pruning) and ranks. A user's recorded runs (`user`) move evidence
 * features and calibrate each prediction in ways the bounds do not cover, so with them every
 * candidate is corrected. `checkBudget` throws when the request's time is up: it is called as the
 * bounds give the event loop back (predictor/turns.ts) and after onnxruntime answers, so the
 * correction, like the search, never answers after the budget.
 */
export async function correctAndRank(
  r: RecommendRequest,
  search: Search,
  learned: LearnedPredictor,
  software: Software,
  prune: Pruning = 'auto',
  user?: UserEvidence,
  checkBudget: () => void = () => {},
): Promise<CorrectedSearch> {
  const all = search.candidates;
  const groups = groupCount(all);
  const bounded =
    !user && (prune === 'always' || (prune === 'auto' && all.length > BOUNDS_COST_IN_CORRECTIONS * groups));
  const needed = bounded ? await neededCandidates(r, search, learned, software, checkBudget) : undefined;
  const keep = needed ? all.filter((_, i) => needed.exact[i]) : all;
  const k = await learned.correct(
    keep.map((c) => correctionInput(r, search, c, software)),
    user,
  );
  checkBudget();
  const reduced: Search = needed
    ? {
        ...search,
        candidates: keep,
        rejected: addCounts(search.rejected, needed.rejected),
        prunedFeasible: (search.prunedFeasible ?? 0) + needed.feasible,
      }
    : search;
  return {
    recommendation: rankCandidates(r, reduced, {
      mid: k.mid,
      lo: k.lo,
      hi: k.hi,
      caseOf: k.caseOf,
      boundBy: k.boundBy,
      precisionUnmeasured: k.precisionUnmeasured,
      calibrationRuns: k.runs,
      predictor: learned.name,
    }),
    stats: { candidates: all.length, corrected: keep.length, groups, pruned: bounded },
  };
}

function addCounts(a: Map<RejectReason, number>, b: Map<RejectReason, number>): Map<RejectReason, number> {
  const out = new Map(a);
  for (const [k, v] of b) out.set(k, (out.get(k) ?? 0) + v);
  return out;
}

/**
 * Per candidate, bounds of the correction's factor on its step time: [kLo, kHi], and its interval
 * factors (P10, P90 over the estimate), exact per group; and for plain data parallelism on several
 * GPUs, bounds of the floor `correct` puts under the corrected step (the same GPU alone at this batch,
 * model.ts singleGpuReference, plus the candidate's exposed synchronisation), in ms, for the
 * estimate [floorLo, floorHi] and its P90 [floorP90Lo, floorP90Hi] (0 where there is no floor).
 * The reference depends only on what a group shares.
 */
async function factorBounds(
  r: RecommendRequest,
  search: Search,
  learned: LearnedPredictor,
  software: Software,
  turns: Turns,
  checkBudget: () => void,
) {
  const cands = search.candidates;
  const n = cands.length;
  const kLo = new Float64Array(n),
    kHi = new Float64Array(n),
    p90 = new Float64Array(n);
  const floorLo = new Float64Array(n),
    floorHi = new Float64Array(n),
    floorP90Lo = new Float64Array(n),
    floorP90Hi = new Float64Array(n);
  const at = learned.varyingFeatureIndex;
  const d = learned.featureCount;
  const lo = new Float64Array(d),
    hi = new Float64Array(d);
  for (let start = 0; start < n;) {
    // A million candidates take seconds to bound: the event loop is given back as the search gives it.
    if (turns.due()) {
      await turns.pause();
      checkBudget();
    }
    let end = start + 1;
    while (end < n && sameGroup(cands[start], cands[end])) end++;
    const first = cands[start];
    const item = correctionInput(r, search, first, software);
    learned.writeFeaturesOf(item, lo);
    hi.set(lo);
    if (end - start > 1) {
      // Members differ only in node count: the step time, its communication share and the counts.
      let stepMin = Infinity,
        stepMax = -Infinity,
        commMin = Infinity,
        commMax = -Infinity,
        nodesMin = Infinity,
        nodesMax = -Infinity;
      for (let i = start; i < end; i++) {
        const c = cands[i];
        const step = c.analyticalStepMs;
        const frac = c.commExposedMs / step;
        stepMin = Math.min(stepMin, step);
        stepMax = Math.max(stepMax, step);
        commMin = Math.min(commMin, frac);
        commMax = Math.max(commMax, frac);
        nodesMin = Math.min(nodesMin, c.nodes);
        nodesMax = Math.max(nodesMax, c.nodes);
      }
      const b = item.breakdown;
      lo[at.logStep] = Math.log(stepMin);
      hi[at.logStep] = Math.log(stepMax);
      const share = (index: number, ms: number) => {
        lo[index] = ms / stepMax;
        hi[index] = ms / stepMin;
      };
      share(at.fracForward, b.forwardMs);
      share(at.fracBackward, b.backwardMs);
      share(at.fracOptimizer, b.optimizerMs);
      share(at.fracMixedPrecision, b.mixedPrecisionMs);
      share(at.fracOverhead, b.overheadMs);
      lo[at.fracComm] = commMin;
      hi[at.fracComm] = commMax;
      const g = first.gpusPerNode;
      lo[at.logGpus] = Math.log(g * nodesMin);
      hi[at.logGpus] = Math.log(g * nodesMax);
      lo[at.logNodes] = Math.log(nodesMin);
      hi[at.logNodes] = Math.log(nodesMax);
    }
    const [outLo, outHi] = learned.bounds.range(lo, hi);
    // The model predicts log(measured throughput / analytical): time scales by exp(-output), and by
    // the calibration on the architecture's published runs (one per group: it is per GPU, stack and
    // precision).
    const published = learned.publishedCalibrationOf(item)?.scale ?? 1;
    const a = Math.exp(-outHi) * published,
      z = Math.exp(-outLo) * published;
    // The interval depends on the step's host and communication shares (model.ts regimesOf),
    // which differ with the node count: each member's own, through the regimes it is in (all else
    // the interval reads is the group's).
    const byRegimes = new Map<string, number>();
    for (let i = start; i < end; i++) {
      kLo[i] = a;
      kHi[i] = z;
      const c = cands[i];
      const own =
        i === start
          ? item
          : {
              ...item,
              stepMs: c.analyticalStepMs,
              breakdown: { ...item.breakdown, communicationMs: c.commExposedMs },
            };
      const key = learned
        .regimesOf(own)
        .map((x) => x.regime.regime)
        .join();
      let q90 = byRegimes.get(key);
      if (q90 === undefined) {
        q90 = Math.exp(learned.intervalOf(own).q90);
        byRegimes.set(key, q90);
      }
      p90[i] = q90;
    }
    // The floor: one point (the reference's features do not vary within a group), bounded exactly.
    const ref = singleGpuReference(item);
    if (ref) {
      learned.writeFeaturesOf(ref, lo);
      const [refLo, refHi] = learned.bounds.range(lo, lo);
      const refQ90 = Math.exp(learned.intervalOf(ref).q90);
      const refPublished = learned.publishedCalibrationOf(ref)?.scale ?? 1;
      const fLo = ref.stepMs * Math.exp(-refHi) * refPublished,
        fHi = ref.stepMs * Math.exp(-refLo) * refPublished;
      // Plus each candidate's exposed synchronisation, as correct() adds it (not learned: exact).
      for (let i = start; i < end; i++)
        if (cands[i].gpusPerNode * cands[i].nodes > 1) {
          const sync = cands[i].commExposedMs;
          floorLo[i] = fLo + sync;
          floorHi[i] = fHi + sync;
          floorP90Lo[i] = fLo * refQ90 + sync;
          floorP90Hi[i] = fHi * refQ90 + sync;
        }
    }
    start = end;
  }
  return { kLo, kHi, p90, floorLo, floorHi, floorP90Lo, floorP90Hi };
}

const CLASS = { FEASIBLE: 0, DEADLINE: 1, BUDGET: 2, UNSURE: 3, NETWORK: 4 } as const;
const TURNED_AWAY: Partial<Record<number, RejectReason>> = {
  [CLASS.DEADLINE]: 'MISSES_DEADLINE',
  [CLASS.BUDGET]: 'OVER_BUDGET',
  [CLASS.NETWORK]: 'NETWORK_UNSTATED',
};

/** Which candidates must be corrected exactly, and what the others count as. */
async function neededCandidates(
  r: RecommendRequest,
  search: Search,
  learned: LearnedPredictor,
  software: Software,
  checkBudget: () => void,
): Promise<{ exact: Uint8Array; feasible: number; rejected: Map<RejectReason, number> }> {
  const cands = search.candidates;
  const n = cands.length;
  const turns = new Turns();
  const { kLo, kHi, p90, floorLo, floorHi, floorP90Lo, floorP90Hi } = await factorBounds(
    r,
    search,
    learned,
    software,
    turns,
    checkBudget,
  ).finally(() => turns.end());
  const units = r.model.unitsPerBatchElement;
  const rankP90 = r.rankBy === 'P90';
  const byCost = r.objective === 'COST';
  const cls = new Uint8Array(n);
  const keyLo = new Float64Array(n),
    keyHi = new Float64Array(n);
  // The Pareto front's metrics at each candidate's best (lo) and worst (hi) case.
  const frontHoursLo = new Float64Array(n),
    frontHoursHi = new Float64Array(n),
    frontCostLo = new Float64Array(n),
    frontCostHi = new Float64Array(n);
  // What the constraint that turned a candidate away reads, best and worst case: hours (at P90 with
  // deadlineConfidence) for the deadline, cost for the budget.
  const nearLo = new Float64Array(n),
    nearHi = new Float64Array(n);
  const scratch = { ...cands[0] } as Candidate;
  for (let i = 0; i < n; i++) {
    const c = cands[i];
    // Best and worst case of hours and cost, computed the way rankCandidates computes them.
    scratch.batch = c.batch;
    scratch.accum = c.accum;
    scratch.gpusPerNode = c.gpusPerNode;
    scratch.nodes = c.nodes;
    scratch.parallelism = c.parallelism;
    scratch.price = c.price;
    scratch.stepTimeMs = Math.max(c.analyticalStepMs * kLo[i], floorLo[i]);
    scratch.stepHiMs = Math.max(c.analyticalStepMs * kLo[i] * p90[i], floorP90Lo[i]);
    timeAndCost(r, scratch, units);
    const hLo = scratch.hours,
      hHiLo = scratch.hoursHi,
      cLo = scratch.cost,
      cHiLo = scratch.costHi;
    scratch.stepTimeMs = Math.max(c.analyticalStepMs * kHi[i], floorHi[i]);
    scratch.stepHiMs = Math.max(c.analyticalStepMs * kHi[i] * p90[i], floorP90Hi[i]);
    timeAndCost(r, scratch, units);
    const hHi = scratch.hours,
      hHiHi = scratch.hoursHi,
      cHi = scratch.cost,
      cHiHi = scratch.costHi;
    // Deadline (at P90 with deadlineConfidence), then budget, as rankCandidates applies them.
    let deadline: number = CLASS.FEASIBLE;
    if (r.deadlineHours !== undefined) {
      const [dLo, dHi] = r.deadlineConfidence ? [hHiLo, hHiHi] : [hLo, hHi];
      deadline =
        dLo > r.deadlineHours ? CLASS.DEADLINE : dHi <= r.deadlineHours ? CLASS.FEASIBLE : CLASS.UNSURE;
    }
    let budget: number = CLASS.FEASIBLE;
    if (r.budgetUsd !== undefined)
      budget = !(cLo <= r.budgetUsd) ? CLASS.BUDGET : cHi <= r.budgetUsd ? CLASS.FEASIBLE : CLASS.UNSURE;
    // rankCandidates drops a candidate whose numbers overflowed (NOT_FINITE): unless that surely
    // cannot happen within the bounds, it is corrected exactly.
    const surelyFinite =
      hLo > 0 &&
      hHiHi < Infinity &&
      Math.max(c.analyticalStepMs * kHi[i], floorHi[i]) < Infinity &&
      cHi !== Infinity &&
      cHiHi !== Infinity;
    // rankCandidates turns away a multi-instance candidate on an assumed network before the deadline.
    const unstated = joinsUnstatedNetwork(search, c);
    cls[i] = !surelyFinite
      ? CLASS.UNSURE
      : unstated
        ? CLASS.NETWORK
        : deadline === CLASS.DEADLINE
          ? CLASS.DEADLINE
          : deadline === CLASS.UNSURE
            ? CLASS.UNSURE
            : budget === CLASS.FEASIBLE
              ? CLASS.FEASIBLE
              : budget;
    const [kl, kh] = byCost ? (rankP90 ? [cHiLo, cHiHi] : [cLo, cHi]) : rankP90 ? [hHiLo, hHiHi] : [hLo, hHi];
    // NaN (no price) ranks last, as in candidateOrder.
    keyLo[i] = Number.isNaN(kl) ? Infinity : kl;
    keyHi[i] = Number.isNaN(kh) ? Infinity : kh;
    frontHoursLo[i] = rankP90 ? hHiLo : hLo;
    frontHoursHi[i] = rankP90 ? hHiHi : hHi;
    frontCostLo[i] = rankP90 ? cHiLo : cLo;
    frontCostHi[i] = rankP90 ? cHiHi : cHi;
    const [nl, nh] =
      cls[i] === CLASS.BUDGET ? [cLo, cHi] : r.deadlineConfidence ? [hHiLo, hHiHi] : [hLo, hHi];
    nearLo[i] = nl;
    nearHi[i] = nh;
  }

  // The limit-th smallest worst case among the surely feasible: a best case above it cannot rank.
  const limit = Math.max(0, r.limit);
  // Widened by the ranking's tie resolution: a best case that rounds to the same key may still win on time.
  const rankThreshold = kthSmallest(keyHi, cls, CLASS.FEASIBLE, limit) * (1 + TIE_RESOLUTION);
  // The best worst case each reason surely turned away: a best case above it cannot be its best.
  const rejectThreshold = Object.values(CLASS).map(() => Infinity);
  // The fastest (cheapest) worst case the deadline (budget) surely turned away: a best case above it
  // cannot be the nearest to meeting it.
  const nearThreshold = Object.values(CLASS).map(() => Infinity);
  for (let i = 0; i < n; i++)
    if (TURNED_AWAY[cls[i]]) {
      rejectThreshold[cls[i]] = Math.min(rejectThreshold[cls[i]], keyHi[i] * (1 + TIE_RESOLUTION));
      nearThreshold[cls[i]] = Math.min(nearThreshold[cls[i]], nearHi[i]);
    }

  const dominatedOnFront = paretoDominated(cls, frontHoursLo, frontHoursHi, frontCostLo, frontCostHi);
  const exact = new Uint8Array(n);
  let feasible = 0;
  const rejected = new Map<RejectReason, number>();
  const count = (why: RejectReason) => rejected.set(why, (rejected.get(why) ?? 0) + 1);
  for (let i = 0; i < n; i++) {
    const k = cls[i];
    if (k === CLASS.UNSURE) exact[i] = 1;
    else if (k === CLASS.FEASIBLE) {
      const couldRank = keyLo[i] <= rankThreshold;
      const couldBeOnFront = Number.isFinite(frontCostLo[i]) && !dominatedOnFront[i];
      if (couldRank || couldBeOnFront) exact[i] = 1;
      else feasible++;
    } else if (
      keyLo[i] <= rejectThreshold[k] ||
      ((k === CLASS.DEADLINE || k === CLASS.BUDGET) && nearLo[i] <= nearThreshold[k])
    )
      exact[i] = 1;
    else count(TURNED_AWAY[k]!);
  }
  return { exact, feasible, rejected };
}

/** The k-th smallest of `values` over entries of class `which` (Infinity when fewer than k). */
function kthSmallest(values: Float64Array, cls: Uint8Array, which: number, k: number): number {
  if (k === 0) return -Infinity;
  // A max-heap of the k smallest so far.
  const heap = new Float64Array(k);
  let size = 0;
  for (let i = 0; i < values.length; i++) {
    if (cls[i] !== which) continue;
    const v = values[i];
    if (size < k) {
      let j = size++;
      heap[j] = v;
      while (j > 0) {
        const p = (j - 1) >> 1;
        if (heap[p] >= heap[j]) break;
        [heap[p], heap[j]] = [heap[j], heap[p]];
        j = p;
      }
    } else if (v < heap[0]) {
      heap[0] = v;
      let j = 0;
      for (;;) {
        const a = 2 * j + 1,
          b = a + 1;
        let m = j;
        if (a < k && heap[a] > heap[m]) m = a;
        if (b < k && heap[b] > heap[m]) m = b;
        if (m === j) break;
        [heap[m], heap[j]] = [heap[j], heap[m]];
        j = m;
      }
    }
  }
  return size < k ? Infinity : heap[0];
}

const BUCKETS = 4096;

/**
 * Per candidate: true when some surely feasible candidate is, at its worst, strictly faster and no
 * dearer than this one at its best; then it is off the Pareto front whatever the correction, and
 * leaving it out changes no other candidate's place there (whatever it would have excluded, the
 * faster one excludes too). Worst cases are binned by hours on a log scale; a bin wholly below a
 * candidate's best-case hours holds only strictly faster candidates.
 */
function paretoDominated(
  cls: Uint8Array,
  hoursLo: Float64Array,
  hoursHi: Float64Array,
  costLo: Float64Array,
  costHi: Float64Array,
): Uint8Array {
  const n = cls.length;
  const out = new Uint8Array(n);
  let hMin = Infinity,
    hMax = -Infinity;
  for (let i = 0; i < n; i++)
    if (cls[i] === CLASS.FEASIBLE && Number.isFinite(costHi[i]) && hoursHi[i] > 0) {
      hMin = Math.min(hMin, hoursHi[i]);
      hMax = Math.max(hMax, hoursHi[i]);
    }
  if (!(hMin < Infinity)) return out;
  const lnMin = Math.log(hMin);
  const scale = hMax > hMin ? (BUCKETS - 1) / (Math.log(hMax) - lnMin) : 0;
  const bucket = (h: number) =>
    h < hMin ? -1 : h > hMax ? BUCKETS : Math.floor((Math.log(h) - lnMin) * scale);
  const cheapest = new Float64Array(BUCKETS).fill(Infinity);
  for (let i = 0; i < n; i++)
    if (cls[i] === CLASS.FEASIBLE && Number.isFinite(costHi[i]) && hoursHi[i] > 0) {
      const b = bucket(hoursHi[i]);
      if (costHi[i] < cheapest[b]) cheapest[b] = costHi[i];
    }
  // cheapestBelow[b]: the cheapest worst case in bins 0..b-1.
  const cheapestBelow = new Float64Array(BUCKETS + 1);
  cheapestBelow[0] = Infinity;
  for (let b = 0; b < BUCKETS; b++) cheapestBelow[b + 1] = Math.min(cheapestBelow[b], cheapest[b]);
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(costLo[i])) continue;
    const b = bucket(hoursLo[i]);
    if (b <= 0) continue;
    if (cheapestBelow[Math.min(b, BUCKETS)] <= costLo[i]) out[i] = 1;
  }
  return out;
}
