// The constraint search: GPU type x precision x batch size per GPU x GPUs per node x nodes.
// Everything that does not depend on the GPU count (the compute part of a step and the memory per
// GPU) is computed once per (GPU, precision, batch) and reused across node counts, so a candidate
// costs a communication estimate and a few multiplications.
import { fits, memoryPerGpu, type PlainMemoryOptions } from '../predictor/memory.js';
import { dataParallelOf, parallelStructure, planParallelism } from '../predictor/parallel.js';
import { unsupportedReason } from '../predictor/precision.js';
import { costOf, InputError } from '../predictor/predict.js';
import { publishedArchitecturesOf } from '../predictor/published-runs.js';
import { DEFAULT_STACK, stackEffects } from '../predictor/software.js';
import { modelFlopsPerSample, utilization } from '../predictor/utilization.js';
import { aboveBestPublishedWords } from '../predictor/published-mfu.js';
import {
  combine,
  parallelCommunicationTime,
  computeTime,
  scaleBreakdown,
  stepMs,
  type ComputeTime,
  type Efficiency,
} from '../predictor/step.js';
import type { Precision } from '../seeds/types.js';
import {
  evidenceLevel,
  evidenceRank,
  seedsMeasured,
  type EvidenceLevel,
} from '../predictor/learned/evidence.js';
import {
  fewestReplicasPerGpu,
  MICRO_BATCHES_PER_STAGE,
  pipelineDegreesOf,
  searchShare,
  shardedSearch,
  type ShardedSearch,
} from './parallel-search.js';
import {
  datedOffer,
  dominated,
  priceAgeText,
  perGpuOffer,
  pricingOptions,
  STALE_PRICE_DAYS,
  type Offer,
  type PricingOption,
} from './offers.js';
import { usualGlobalBatch, usualGlobalBatchOf } from './global-batch.js';
import { loadGpus } from '../seeds/catalog.js';
import { SLICE_MS, Turns } from '../predictor/turns.js';
import {
  REJECT_REASONS,
  runOptionsOf,
  SearchTimeout,
  type Candidate,
  type FitBeyond,
  type OtherGpuFit,
  type Plan,
  type Recommendation,
  type RecommendRequest,
  type RejectReason,
  type Search,
  type TimeScale,
} from './search-types.js';

export {
  REJECT_REASONS,
  SearchTimeout,
  type Candidate,
  type FitBeyond,
  type Objective,
  type ParallelismSearch,
  type Plan,
  type PlanOffer,
  type RankBy,
  type Recommendation,
  type RecommendRequest,
  type RejectReason,
  type Search,
  type SearchStatus,
  type TimeScale,
} from './search-types.js';

/** What a request sizes plain data parallelism's memory with in `precision` (attention, LoRA, stack, a user's peaks). */
const plainMemory = (r: RecommendRequest, precision: Precision): PlainMemoryOptions => ({
  attention: r.attention,
  frozenBase: r.frozenBase,
  stack: r.stack,
  activationScale: r.activationScales?.[precision],
});

/** Whether a request ranks or bounds by cost, so that a GPU no offer prices cannot be planned. */
const needsPrice = (r: Pick<RecommendRequest, 'objective' | 'budgetUsd'>) =>
  r.objective === 'COST' || r.budgetUsd !== undefined;

/** The offers a request prices from: its own, or (library callers) a per-GPU price for each GPU. */
export function offersOf(r: Pick<RecommendRequest, 'offers' | 'prices' | 'gpus'>): Offer[] {
  if (r.offers) return r.offers;
  return r.gpus.flatMap((g) => {
    const own = r.prices?.[g.id];
    const price = own ?? g.priceUsdPerGpuHour;
    return price === null ? [] : [perGpuOffer(g.id, price, own !== undefined ? 'prices' : g.priceSource)];
  });
}

/** Per GPU (same order as r.gpus), how it can be paid for. */
export function optionsOf(r: RecommendRequest): PricingOption[][] {
  const offers = offersOf(r);
  return r.gpus.map((g) => pricingOptions(g, offers, r.interNodeGbps, r.interNodeTransport));
}

/** Candidates the search enumerates: per GPU, pricing option x precision x batch x GPUs per node that option holds x nodes. */
export function searchSize(r: RecommendRequest, options: PricingOption[][] = optionsOf(r)): number {
  let layouts = 0;
  options.forEach((opts) => {
    for (const o of opts) layouts += r.gpusPerNodeChoices.filter((g) => g <= o.maxPerNode).length;
  });
  return layouts * r.precisions.length * r.batchSizes.length * r.maxNodes;
}

export function recommend(r: RecommendRequest, eff: Efficiency): Recommendation {
  return rankCandidates(r, searchCandidates(r, eff));
}

/** Every candidate of the request, evaluated here at once (library callers, the coupled planners). */
export function searchCandidates(r: RecommendRequest, eff: Efficiency): Search {
  const steps = searchSteps(r, eff);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * searchCandidates for a server: the same search, giving the event loop back whenever its share of
 * the slice has run (predictor/turns.ts), so the process keeps answering its probes (/health,
 * /ready) and reading other requests while long searches run (a request may ask for up to
 * maxTimeBudgetMs). The answer is the same: only when the work runs changes, and the budget still
 * counts from arrival.
 */
export async function searchCandidatesYielding(
  r: RecommendRequest,
  eff: Efficiency,
  sliceMs = SLICE_MS,
): Promise<Search> {
  const steps = searchSteps(r, eff);
  const turns = new Turns(sliceMs);
  try {
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
      if (turns.due()) await turns.pause();
    }
  } finally {
    turns.end();
  }
}
/** The search, one (GPU, precision, batch size) group per step: the drivers above decide when to pause. */
function* searchSteps(r: RecommendRequest, eff: Efficiency): Generator<void, Search, void> {
  const headroomGb = r.memoryHeadroomGb ?? eff.memory.defaultMemoryHeadroomGb;
  // How the request's workload runs (stack, LoRA, layout, attention): the same for every step timed.
  const how = runOptionsOf(r);
  const optionsByGpu = optionsOf(r);
  const size = searchSize(r, optionsByGpu);
  if (r.maxCandidates !== undefined && size > r.maxCandidates) {
    throw new InputError(
      'input',
      `the search would enumerate ${size} candidates (offers x precisions x batchSizes x gpusPerNode x maxNodes), more than the limit of ${r.maxCandidates}: narrow gpus, providers, precisions, batchSizes or maxNodes`,
    );
  }
  const cost = costOf(r.model);
  const rejected = new Map<RejectReason, number>();
  const reject = (why: RejectReason, n = 1) => rejected.set(why, (rejected.get(why) ?? 0) + n);
  const candidates: Candidate[] = [];
  const options: PricingOption[] = [];
  const levels: EvidenceLevel[] = [];
  const unpricedGpus: string[] = [];
  const smallestOomBatch = new Map<string, number>();
  // Per GPU: why its memory was never checked (a price or evidence rule turned it away first), or null once it was.
  const unchecked: (RejectReason | null)[] = r.gpus.map(() => 'UNSUPPORTED_PRECISION');
  let evaluated = 0;
  const needPrice = needsPrice(r);
  const stopAt = r.timeBudgetMs === undefined ? Infinity : performance.now() + r.timeBudgetMs;
  const measured = r.measured ?? seedsMeasured();
  const minRank = evidenceRank(r.minEvidence ?? 'UNMEASURED');
  const maxGlobal = r.globalBatch === undefined ? (r.maxGlobalBatch ?? usualGlobalBatch(r.model)) : Infinity;
  const share = searchShare();
  const publishedAs = publishedArchitecturesOf(r.model);
  const structure = parallelStructure(cost, r.model.layers);

  for (const [gpuIndex, gpu] of r.gpus.entries()) {
    const level = evidenceLevel(measured, r.model.id, gpu.id, publishedAs);
    levels.push(level);
    const opts = optionsByGpu[gpuIndex];
    const firstOption = options.length;
    options.push(...opts);
    if (opts[0].offer === null) unpricedGpus.push(gpu.id);
    const layoutsOf = (o: PricingOption) =>
      r.gpusPerNodeChoices.filter((g) => g <= o.maxPerNode).length * r.maxNodes;
    const gpuLayouts = opts.reduce((a, o) => a + layoutsOf(o), 0);
    // Which options another makes pointless, per GPUs per node, on one node and across nodes.
    const dominatedAt = new Map<number, [boolean[], boolean[]]>();
    for (const g of r.gpusPerNodeChoices)
      dominatedAt.set(g, [dominated(opts, g, false), dominated(opts, g, true)]);
    // The fewest replicas per GPU a layout that splits the model trains, per GPUs per node (the widest TP).
    const fewestReplicasAt = new Map(
      r.gpusPerNodeChoices.map((g) => [g, fewestReplicasPerGpu(structure, gpu, g)]),
    );
    for (const precision of r.precisions) {
      const unsupported = unsupportedReason(gpu, precision) !== null;
      for (const batch of r.batchSizes) {
        yield;
        if (performance.now() >= stopAt) throw new SearchTimeout(r.timeBudgetMs!, size);
        evaluated += gpuLayouts;
        if (unsupported) {
          reject('UNSUPPORTED_PRECISION', gpuLayouts);
          continue;
        }
        if (needPrice && opts[0].offer === null) {
          reject('NO_PRICE', gpuLayouts);
          if (unchecked[gpuIndex] !== null) unchecked[gpuIndex] = 'NO_PRICE';
          continue;
        }
        if (evidenceRank(level) < minRank) {
          reject('BELOW_MIN_EVIDENCE', gpuLayouts);
          if (unchecked[gpuIndex] !== null) unchecked[gpuIndex] = 'BELOW_MIN_EVIDENCE';
          continue;
        }
        unchecked[gpuIndex] = null;
        const single = memoryPerGpu(r.model, cost, precision, batch, false, eff, plainMemory(r, precision));
        const multi = memoryPerGpu(r.model, cost, precision, batch, true, eff, plainMemory(r, precision));
        const computeByAccum = new Map<number, ComputeTime>();
        opts.forEach((option, o) => {
          let sharded: ShardedSearch | undefined;
          const optionIndex = firstOption + o;
          for (const g of r.gpusPerNodeChoices) {
            if (g > option.maxPerNode) continue;
            const [deadOne, deadMany] = dominatedAt.get(g)!;
            for (let nodes = 1; nodes <= r.maxNodes; nodes++) {
              const gpus = g * nodes;
              if ((nodes === 1 ? deadOne : deadMany)[o]) {
                reject('DOMINATED_OFFER');
                continue;
              }
              if (r.maxGpus !== undefined && gpus > r.maxGpus) {
                reject('TOO_MANY_GPUS');
                continue;
              }
              const price = option.nodeUsdPerHour(g);
              const memory = gpus > 1 ? multi : single;
              const plainFits = fits(memory, gpu, headroomGb);
              // Plain data parallelism above the global batch cap: a layout with TP trains fewer
              // replicas, so it may keep within the cap where plain does not (searched only where one can).
              const plainOverCap =
                r.globalBatch === undefined &&
                batch * gpus > maxGlobal &&
                batch * gpus * fewestReplicasAt.get(g)! <= maxGlobal;
              if (
                ((!plainFits || plainOverCap) && r.parallelismSearch === 'auto') ||
                r.parallelismSearch === 'all'
              ) {
                // Sharding, tensor and pipeline parallelism, recomputation: see parallel-search.ts.
                sharded ??= shardedSearch(
                  r,
                  {
                    model: r.model,
                    cost,
                    gpu,
                    gpuIndex,
                    precision,
                    batch,
                    price,
                    netGbps: option.interNodeGbps,
                    netTransport: option.interNodeTransport,
                    maxGlobalBatch: maxGlobal,
                    share,
                  },
                  eff,
                );
                const found = sharded.best(g, nodes, plainFits);
                if (typeof found !== 'string') {
                  found.price = price;
                  found.optionIndex = optionIndex;
                  candidates.push(found);
                  continue;
                }
                if (!plainFits) {
                  if (found === 'OUT_OF_MEMORY') noteOom(smallestOomBatch, gpuIndex, precision, batch);
                  reject(found);
                  continue;
                }
              }
              if (!plainFits) {
                noteOom(smallestOomBatch, gpuIndex, precision, batch);
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
              } else if (batch * gpus > maxGlobal) {
                reject('GLOBAL_BATCH_TOO_LARGE');
                continue;
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
                    interNodeGbps: option.interNodeGbps,
                    ...how,
                  },
                  eff,
                );
                computeByAccum.set(accum, compute);
              }
              const comm = parallelCommunicationTime(
                compute,
                gpu,
                {
                  gpusPerNode: g,
                  nodes,
                  gradAccumSteps: accum,
                  interNodeGbps: option.interNodeGbps,
                  interNodeTransport: option.interNodeTransport,
                  ...(r.stack ? { stack: r.stack } : {}),
                },
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
                optionIndex,
                analyticalStepMs: stepTimeMs,
                stepTimeMs,
                stepLoMs: stepTimeMs,
                stepHiMs: stepTimeMs,
                hours: 0,
                hoursHi: 0,
                cost: 0,
                costHi: 0,
                memoryGb: memory.totalGb,
                compute,
                commTotalMs: comm.totalMs,
                commExposedMs: comm.exposedMs,
                commWaitMs: comm.waitMs ?? 0,
              });
            }
          }
        });
      }
    }
  }
  // Nothing fitted: say where something would (the note names it), not only that nothing did.
  const nothingFits = candidates.length === 0 && (rejected.get('OUT_OF_MEMORY') ?? 0) > 0;
  const fitBeyond = nothingFits
    ? yield* fewestNodesThatFit(r, optionsByGpu, eff, stopAt, (i) => unchecked[i] === null)
    : undefined;
  const fitOtherGpus = nothingFits ? yield* otherGpusThatFit(r, eff, stopAt, unchecked) : undefined;
  return {
    size,
    evaluated,
    rejected,
    candidates,
    options,
    levels,
    unpricedGpus,
    smallestOomBatch,
    maxGlobalBatch: maxGlobal,
    sharded: candidates.some((c) => c.parallelism),
    ...(fitBeyond ? { fitBeyond } : {}),
    ...(fitOtherGpus ? { fitOtherGpus } : {}),
  };
}

/** What the memory-only fit scans share over a request: its smallest batch, one search share, and the request without a global batch (memory is what is asked). */
interface FitScan {
  relaxed: RecommendRequest;
  cost: ReturnType<typeof costOf>;
  batch: number;
  share: ReturnType<typeof searchShare>;
}

const fitScanOf = (r: RecommendRequest): FitScan => ({
  relaxed: { ...r, globalBatch: undefined, maxGlobalBatch: undefined },
  cost: costOf(r.model),
  batch: Math.min(...r.batchSizes),
  share: searchShare(),
});

/**
 * The layouts a fit scan reads for one GPU and precision: the search's own, at the scan's batch,
 * with no global batch cap and no price (memory does not read the network; the option's is given).
 */
const fitSearch = (
  scan: FitScan,
  gpu: RecommendRequest['gpus'][number],
  gpuIndex: number,
  precision: Precision,
  option: PricingOption,
  eff: Efficiency,
): ShardedSearch =>
  shardedSearch(
    scan.relaxed,
    {
      model: scan.relaxed.model,
      cost: scan.cost,
      gpu,
      gpuIndex,
      precision,
      batch: scan.batch,
      price: null,
      netGbps: option.interNodeGbps,
      netTransport: option.interNodeTransport,
      maxGlobalBatch: Infinity,
      share: scan.share,
    },
    eff,
  );

/**
 * The most GPUs per node the search puts on a GPU with these pricing options (0: none of the
 * request's choices), and the most nodes of that many the request allows (maxNodes, or maxGpus).
 */
function widestNodes(r: RecommendRequest, opts: readonly PricingOption[]): { g: number; nodes: number } {
  const perNode = Math.max(...opts.map((o) => o.maxPerNode));
  const g = Math.max(0, ...r.gpusPerNodeChoices.filter((c) => c <= perNode));
  return { g, nodes: r.maxGpus === undefined ? r.maxNodes : Math.min(r.maxNodes, Math.floor(r.maxGpus / g)) };
}

/**
 * GPUs whose memory the search did not check on which some layout of the model fits within the
 * request's limits (maxNodes, maxGpus, its most GPUs per node), at its smallest batch per GPU, in one
 * of its precisions: catalog GPUs it did not list (UNLISTED), and listed ones a price or evidence
 * rule turned away first (NO_PRICE, BELOW_MIN_EVIDENCE). What "choose GPUs with more memory" can
 * point to. Memory only, as fewestNodesThatFit; most memory first. Undefined when there are no such
 * GPUs, or the time budget ran out first.
 */
function* otherGpusThatFit(
  r: RecommendRequest,
  eff: Efficiency,
  stopAt: number,
  unchecked: readonly (RejectReason | null)[],
): Generator<void, OtherGpuFit[] | undefined, void> {
  const asked = new Set(r.gpus.map((g) => g.id));
  type Gpu = RecommendRequest['gpus'][number];
  const others: [Gpu, OtherGpuFit['why']][] = [
    ...r.gpus.flatMap((g, i): [Gpu, OtherGpuFit['why']][] => {
      const why = unchecked[i];
      return why === 'NO_PRICE' || why === 'BELOW_MIN_EVIDENCE' ? [[g, why]] : [];
    }),
    ...loadGpus()
      .filter((g) => !asked.has(g.id))
      .map((g): [Gpu, OtherGpuFit['why']] => [g, 'UNLISTED']),
  ];
  if (!others.length) return undefined;
  const scan = fitScanOf(r);
  // Plain data parallelism needs the same memory on any GPU and count (one GPU's, per precision).
  const plain = new Map(
    r.precisions.map((p) => [
      p,
      memoryPerGpu(r.model, scan.cost, p, scan.batch, false, eff, plainMemory(r, p)),
    ]),
  );
  const headroomGb = r.memoryHeadroomGb ?? eff.memory.defaultMemoryHeadroomGb;
  const fit: [Gpu, OtherGpuFit['why']][] = [];
  for (const [gpu, asked] of others) {
    const opts = optionsOf({ ...r, gpus: [gpu] })[0];
    // Listing a GPU no offer prices would not help a ranking by cost: say that too.
    const why = asked === 'UNLISTED' && needsPrice(r) && opts[0].offer === null ? 'UNLISTED_NO_PRICE' : asked;
    // As many per node as the search would put there: the most its offers (or the GPU) hold.
    const { g, nodes } = widestNodes(r, opts);
    if (g === 0 || nodes < 1) continue;
    for (const precision of r.precisions) {
      if (unsupportedReason(gpu, precision) !== null) continue;
      yield;
      if (performance.now() >= stopAt) return undefined;
      if (
        fits(plain.get(precision)!, gpu, headroomGb) ||
        fitSearch(scan, gpu, 0, precision, opts[0], eff).fewestNodes(g, 1, nodes) !== null
      ) {
        fit.push([gpu, why]);
        break;
      }
    }
  }
  return fit.sort(([a], [b]) => b.memoryGb - a.memoryGb).map(([gpu, why]) => ({ gpu: gpu.id, why }));
}

/** Most nodes fewestNodesThatFit looks at: the API's limit on a plan's nodes (service/validate.ts LIMITS.nodes). */
export const FIT_SCAN_NODES = 4096;
/** Node counts fewestNodesThatFit scans between turns (a model with experts is scanned node by node). */
const FIT_SCAN_SLICE = 64;

/**
 * Per GPU of the request: the fewest nodes, past what the request allowed (maxNodes, maxGpus), on
 * which some layout of the model fits in memory, at the smallest batch per GPU it lists, on its
 * most GPUs per node, in whichever of its precisions fits on the fewest (the faster on a tie),
 * with the fastest such layout; fewest GPUs first. Memory only: no price, network, deadline,
 * budget, global batch or evidence rule is applied (whoever raises maxNodes meets those in the
 * search itself). Layouts are searched as parallelismSearch AUTO does, whatever the request
 * asked: plain data parallelism needs the same memory on any number of nodes, so only splitting
 * the model can make it fit. Up to FIT_SCAN_NODES (parallel-search.ts fewestNodes: fitting is not
 * monotone in nodes, since TP x PP must divide the GPUs); a GPU on which nothing fits even there
 * is left out. Undefined when the request's time budget ran out first.
 */
function* fewestNodesThatFit(
  r: RecommendRequest,
  optionsByGpu: PricingOption[][],
  eff: Efficiency,
  stopAt: number,
  /** Whether the search checked this GPU's memory (up to its limits): only those are scanned past them. */
  memoryChecked: (gpuIndex: number) => boolean,
): Generator<void, FitBeyond[] | undefined, void> {
  const scan = fitScanOf(r);
  const batch = scan.batch;
  const found: FitBeyond[] = [];
  for (const [gpuIndex, gpu] of r.gpus.entries()) {
    if (!memoryChecked(gpuIndex)) continue;
    const opts = optionsByGpu[gpuIndex];
    // The search tried up to the most nodes the request allows.
    const { g, nodes: searched } = widestNodes(r, opts);
    if (g === 0) continue;
    const firstUnsearched = 1 + searched;
    let best: (FitBeyond & { msPerSample: number }) | undefined;
    for (const precision of r.precisions) {
      if (unsupportedReason(gpu, precision) !== null) continue;
      yield;
      const sharded = fitSearch(scan, gpu, gpuIndex, precision, opts[0], eff);
      // In slices of nodes, so that a search node by node (experts) yields and keeps to the time budget.
      const fewestFrom = function* (from: number): Generator<void, number | null | undefined, void> {
        const to = best ? best.nodes : FIT_SCAN_NODES;
        for (let first = from; first <= to; first += FIT_SCAN_SLICE) {
          yield;
          if (performance.now() >= stopAt) return undefined;
          const n = sharded.fewestNodes(g, first, Math.min(to, first + FIT_SCAN_SLICE - 1));
          if (n !== null) return n;
        }
        return null;
      };
      let nodes = yield* fewestFrom(firstUnsearched);
      // Past the time budget the note says less rather than the request failing.
      if (nodes === undefined) return undefined;
      while (nodes !== null) {
        const plan = sharded.best(g, nodes, false);
        if (typeof plan !== 'string' && plan.parallelism) {
          const p = plan.parallelism;
          // Ties on nodes go to the faster precision (per sample: layouts differ in micro-batches and DP).
          const msPerSample =
            plan.stepTimeMs / ((batch * plan.accum * g * nodes) / (p.tensorParallel * p.pipelineParallel));
          if (!best || nodes < best.nodes || msPerSample < best.msPerSample)
            best = {
              gpu: gpu.id,
              gpusPerNode: g,
              nodes,
              precision,
              batch,
              parallelism: p,
              memoryGb: plan.memoryGb,
              msPerSample,
            };
          break;
        }
        nodes = yield* fewestFrom(nodes + 1);
        if (nodes === undefined) return undefined;
      }
    }
    if (best) {
      const { msPerSample: _, ...fit } = best;
      found.push(fit);
    }
  }
  return found.sort((a, b) => a.gpusPerNode * a.nodes - b.gpusPerNode * b.nodes || a.nodes - b.nodes);
}

const oomKey = (gpuIndex: number, precision: Precision) => `${gpuIndex}|${precision}`;
function noteOom(m: Map<string, number>, gpuIndex: number, precision: Precision, batch: number): void {
  const k = oomKey(gpuIndex, precision);
  m.set(k, Math.min(m.get(k) ?? Infinity, batch));
}

/**
 * Whether a candidate joins several instances of an offer that states no network: its time across
 * them would rest on a guess, so it is turned away (NETWORK_UNSTATED) whatever its correction.
 */
export const joinsUnstatedNetwork = (search: Search, c: Candidate): boolean =>
  c.nodes > 1 && search.options[c.optionIndex].networkAssumed;

/** Applies the time-dependent constraints (deadline, budget) and ranks. */
export function rankCandidates(r: RecommendRequest, search: Search, scale?: TimeScale): Recommendation {
  const units = r.model.unitsPerBatchElement;
  const rejected = new Map(search.rejected);
  const feasible: Candidate[] = [];
  const order = candidateOrder(r);
  // The best candidate each time-dependent constraint turned away: it bound the answer if it beats plan 1.
  const bestRejected = new Map<RejectReason, Candidate>();
  // The candidate each turned away that came nearest to meeting it (an empty answer names it).
  const nearest = new Map<'MISSES_DEADLINE' | 'OVER_BUDGET', Candidate>();
  const reject = (why: RejectReason, c: Candidate) => {
    rejected.set(why, (rejected.get(why) ?? 0) + 1);
    const b = bestRejected.get(why);
    if (!b || order(c, b) < 0) bestRejected.set(why, c);
    if (why === 'MISSES_DEADLINE' || why === 'OVER_BUDGET') {
      const n = nearest.get(why);
      const by = (x: Candidate) =>
        why === 'OVER_BUDGET' ? x.cost : r.deadlineConfidence ? x.hoursHi : x.hours;
      if (!n || by(c) < by(n)) nearest.set(why, c);
    }
  };
  // Candidates are updated in place: a Search is ranked for one request, never shared.
  // Where each candidate is in the scale's arrays: the plans shown read their evidence by it.
  const scaleIndex = new Map<Candidate, number>();
  search.candidates.forEach((c, i) => {
    scaleIndex.set(c, i);
    c.stepTimeMs = c.analyticalStepMs * (scale ? scale.mid[i] : 1);
    c.stepLoMs = c.analyticalStepMs * (scale?.lo ? scale.lo[i] : 1);
    c.stepHiMs = c.analyticalStepMs * (scale?.hi ? scale.hi[i] : 1);
    c.boundBy = scale?.boundBy?.[i] ?? [];
    c.precisionUnmeasured = scale?.precisionUnmeasured?.[i] ?? false;
    timeAndCost(r, c, units);
    // With deadlineConfidence the deadline must hold at the interval's upper bound.
    // One candidate whose numbers overflowed must not sink the answer (GraphQL refuses Infinity) nor rank first.
    if (!(c.hours > 0 && c.hoursHi < Infinity && c.stepTimeMs < Infinity) || c.cost === Infinity)
      return reject('NOT_FINITE', c);
    // A time across instances whose network no one states is a guess: it is not ranked (the notes
    // say when it would have been plan 1, so a user who knows the network can give it).
    if (joinsUnstatedNetwork(search, c)) return reject('NETWORK_UNSTATED', c);
    const hoursForDeadline = r.deadlineConfidence ? c.hoursHi : c.hours;
    if (r.deadlineHours !== undefined && hoursForDeadline > r.deadlineHours)
      return reject('MISSES_DEADLINE', c);
    if (r.budgetUsd !== undefined && !(c.cost <= r.budgetUsd)) return reject('OVER_BUDGET', c);
    feasible.push(c);
  });

  const top = topN(feasible, Math.max(0, r.limit), order);
  const today = r.today ?? new Date();
  // One sample's model FLOPs, the same for every plan of the request (utilization.ts).
  const flopsPerSample = modelFlopsPerSample(costOf(r.model), r.frozenBase);
  const toPlan = (c: Candidate, rank: number): Plan => {
    const gpu = r.gpus[c.gpuIndex];
    const option = search.options[c.optionIndex];
    const step = combine(
      c.compute,
      {
        totalMs: c.commTotalMs,
        exposedMs: c.commExposedMs,
        waitMs: c.commWaitMs,
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
    const offer = option.offer;
    const used = utilization(
      flopsPerSample * step.globalBatch,
      c.stepTimeMs,
      c.gpusPerNode * c.nodes,
      gpu,
      c.compute.dominantMath,
    );
    // Every plan says it where its MFU is above the best published run's, as predict does: a fleet's
    // or a procurement's run carries its plan's evidence.
    const overPublished = aboveBestPublishedWords(used, gpu.id, c.compute.dominantMath);
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
      dominantMath: c.compute.dominantMath,
      ...used,
      totalHours: c.hours,
      totalHoursP90: c.hoursHi,
      costUsd: Number.isFinite(c.cost) ? c.cost : null,
      costUsdP90: Number.isFinite(c.costHi) ? c.costHi : null,
      priceUsdPerGpuHour: c.price === null ? null : c.price / c.gpusPerNode,
      offer: offer && datedOffer(offer, today),
      interNodeGbps: option.interNodeGbps,
      interNodeTransport: option.interNodeTransport,
      interNodeNetworkSource: option.networkSource,
      interNodeNetworkAssumed: option.networkAssumed,
      evidenceLevel: search.levels[c.gpuIndex],
      calibrationRuns: scale?.calibrationRuns?.[scaleIndex.get(c)!] ?? 0,
      memoryGbPerGpu: c.memoryGb,
      breakdown,
      predictor: scale?.predictor ?? 'analytical',
      evidence:
        (scale?.caseOf?.(scaleIndex.get(c)!) ?? 'analytical estimate only') +
        (overPublished ? `; this ${overPublished}` : ''),
      boundBy: c.boundBy ?? [],
      precisionUnmeasured: c.precisionUnmeasured ?? false,
      parallelism: planParallelism(c.gpusPerNode * c.nodes, c.parallelism, c.accum),
    };
  };
  const front = paretoFront(
    feasible.filter((c) => Number.isFinite(c.cost)),
    r.rankBy === 'P90',
  );
  const plans = top.map((c, i) => toPlan(c, i + 1));
  const paretoPlans = front.slice(0, PARETO_SHOWN).map((c, i) => toPlan(c, i + 1));
  return {
    status: 'COMPLETE',
    evaluated: search.evaluated,
    feasible: feasible.length + (search.prunedFeasible ?? 0),
    plans,
    paretoFront: paretoPlans,
    rejected: [...rejected]
      .map(([reason, count]) => ({ reason, description: REJECT_REASONS[reason], count }))
      .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
    notes: notesOf(r, search, plans, top[0], bestRejected, order, front.length, toPlan, rejected, nearest),
  };
}

/** Paretofront plans shown (fastest first). */
export const PARETO_SHOWN = 50;

/** Hours and cost of a candidate from its step times (estimate and P90). */
export function timeAndCost(r: RecommendRequest, c: Candidate, units = r.model.unitsPerBatchElement): void {
  const gpus = c.gpusPerNode * c.nodes;
  // samples / (units per step) steps, each stepTimeMs long; a step trains one micro-batch per model replica
  const hoursPerStepMs =
    r.samples / (c.batch * c.accum * dataParallelOf(gpus, c.parallelism) * units) / 3.6e6;
  c.hours = hoursPerStepMs * c.stepTimeMs;
  c.hoursHi = hoursPerStepMs * c.stepHiMs;
  // Whole instances: a node is one instance, paid for whatever share of its GPUs the plan uses.
  c.cost = c.price === null ? Number.NaN : c.hours * c.nodes * c.price;
  c.costHi = c.price === null ? Number.NaN : c.hoursHi * c.nodes * c.price;
}

/** Ranking order: the objective at the estimate or at P90, then the other, then a fixed tie-break. */
export function candidateOrder(r: Pick<RecommendRequest, 'objective' | 'rankBy'>) {
  const p90 = r.rankBy === 'P90';
  const cost = (c: Candidate) => tieKey(p90 ? c.costHi : c.cost);
  const hours = (c: Candidate) => tieKey(p90 ? c.hoursHi : c.hours);
  const [first, second] = r.objective === 'COST' ? [cost, hours] : [hours, cost];
  return (a: Candidate, b: Candidate) =>
    cmpNum(first(a), first(b)) ||
    cmpNum(second(a), second(b)) ||
    a.gpuIndex - b.gpuIndex ||
    a.optionIndex - b.optionIndex ||
    a.nodes * a.gpusPerNode - b.nodes * b.gpusPerNode ||
    a.nodes - b.nodes ||
    a.batch - b.batch ||
    a.accum - b.accum ||
    a.precision.localeCompare(b.precision);
}

const usd = (x: number) => `$${x < 100 ? x.toPrecision(3) : Math.round(x).toLocaleString('en-US')}`;
const hrs = (x: number) => `${x < 10 ? x.toPrecision(3) : Math.round(x)} h`;

/** Plain-words notes: what bound the answer, and what to be wary of. */
function notesOf(
  r: RecommendRequest,
  search: Search,
  plans: Plan[],
  best: Candidate | undefined,
  bestRejected: Map<RejectReason, Candidate>,
  order: (a: Candidate, b: Candidate) => number,
  frontSize: number,
  toPlan: (c: Candidate, rank: number) => Plan,
  /** Every rejection: the search's and the ranking's (deadline, budget, network). */
  rejected: ReadonlyMap<RejectReason, number>,
  /** Of the candidates the deadline (budget) turned away, the fastest (cheapest). */
  nearest: ReadonlyMap<'MISSES_DEADLINE' | 'OVER_BUDGET', Candidate>,
): string[] {
  const notes: string[] = [];
  const top = plans[0];
  const describe = (p: Plan) =>
    `${p.nodes} x ${p.gpusPerNode} ${p.gpu.id} at ${p.precision}, batch ${p.batchSizePerGpu}: ${hrs(p.totalHours)}${p.costUsd === null ? '' : `, ${usd(p.costUsd)}`}`;
  // An empty answer says why first, and how near the deadline or budget came to being met.
  if (!top) {
    const late = nearest.get('MISSES_DEADLINE'),
      dear = nearest.get('OVER_BUDGET');
    notes.push(
      noPlanNote(r, rejected, search.fitBeyond, search.fitOtherGpus, {
        ...(late
          ? {
              deadline: `the fastest of them is ${describe(toPlan(late, 0))}${r.deadlineConfidence ? `, P90 ${hrs(late.hoursHi)}` : ''}`,
            }
          : {}),
        ...(dear ? { budget: `the cheapest of them is ${describe(toPlan(dear, 0))}` } : {}),
      }),
    );
  }
  const beats = (why: RejectReason) => {
    const c = bestRejected.get(why);
    return c && (!best || order(c, best) < 0) ? toPlan(c, 0) : undefined;
  };
  const deadline = beats('MISSES_DEADLINE');
  if (deadline)
    notes.push(
      `deadline bound the answer: a better plan (${describe(deadline)}${r.deadlineConfidence ? `, P90 ${hrs(deadline.totalHoursP90)}` : ''}) finishes after ${r.deadlineHours} h`,
    );
  const budget = beats('OVER_BUDGET');
  if (budget)
    notes.push(
      `budget bound the answer: a better plan (${describe(budget)}) costs more than ${usd(r.budgetUsd!)}`,
    );
  const unstated = beats('NETWORK_UNSTATED');
  if (unstated?.offer)
    notes.push(
      `network bound the answer: a better plan (${describe(unstated)}) joins ${unstated.nodes} ${unstated.offer.provider} ${unstated.offer.instance} instances, whose network the offer does not state; it was not ranked on the assumed ${unstated.interNodeGbps} Gbps: to rank such plans, give the network you will get between them, for this offer (the offer in offers with its interNodeGbps) or for every offer (interNodeGbps)`,
    );
  if (top && top.nodes === r.maxNodes && r.maxNodes > 0)
    notes.push(`maxNodes bound the answer: plan 1 uses all ${r.maxNodes} nodes; allowing more may do better`);
  if (
    top &&
    r.maxGpus !== undefined &&
    top.nodes * top.gpusPerNode * 2 > r.maxGpus &&
    (search.rejected.get('TOO_MANY_GPUS') ?? 0) > 0
  )
    notes.push(`maxGpus bound the answer: layouts above ${r.maxGpus} GPUs were not searched`);
  if (top) {
    const oom = search.smallestOomBatch.get(oomKey(r.gpus.indexOf(top.gpu), top.precision));
    if (
      oom !== undefined &&
      oom > top.batchSizePerGpu &&
      top.batchSizePerGpu === Math.max(...r.batchSizes.filter((b) => b < oom))
    )
      notes.push(
        `memory bound the answer: on ${top.gpu.id} at ${top.precision} a batch of ${oom} per GPU does not fit, so plan 1 runs ${top.batchSizePerGpu}`,
      );
  }
  const usual = usualGlobalBatchOf(r.model);
  const tooLarge = search.rejected.get('GLOBAL_BATCH_TOO_LARGE') ?? 0;
  if (tooLarge > 0)
    notes.push(
      `global batch cap bound the search: ${tooLarge} candidates would train with a global batch above ${search.maxGlobalBatch} (${r.maxGlobalBatch === undefined ? `this model's usual: ${usual.basis}` : 'maxGlobalBatch'}); scaling out further changes the training recipe, not only its speed — raise maxGlobalBatch or fix globalBatch to search it`,
    );
  if (frontSize > PARETO_SHOWN)
    notes.push(
      `candidate cap: paretoFront lists the ${PARETO_SHOWN} fastest of ${frontSize} plans on the front`,
    );
  // Without a fixed global batch a pipeline runs a few micro-batches per stage, while LLM recipes
  // accumulate to one: pipelines then carry a bubble the recipes do not (Llama 3 70B on AWS H100s
  // under MEGATRON: plan 1 6% dearer than at its usual 4,096 sequences, where a pipeline wins; 15%
  // before interleaved schedules were searched).
  const structure = parallelStructure(costOf(r.model), r.model.layers);
  const interleaves = stackEffects(r.stack ?? DEFAULT_STACK).interleavedPipeline;
  if (r.globalBatch === undefined && search.sharded && pipelineDegreesOf(structure).length > 1)
    notes.push(
      `global batch: without globalBatch a pipeline here runs ${MICRO_BATCHES_PER_STAGE} micro-batches per stage, a bubble of (PP - 1)/(${MICRO_BATCHES_PER_STAGE + 1} PP - 1) of its compute${interleaves ? `, or (PP - 1)/(${MICRO_BATCHES_PER_STAGE} PP v + PP - 1) with v chunks per stage` : ''}; a training recipe accumulates to a fixed global batch (${usual.batch} ${r.model.batchElement}s for this model: ${usual.basis}), where a pipeline runs many more and may rank first: give globalBatch to plan at yours`,
    );
  if (top) {
    const global = top.batchSizePerGpu * top.gradAccumSteps * top.parallelism.dataParallel;
    if (global > usual.batch)
      notes.push(
        `warning: plan 1 trains with a global batch of ${global} ${r.model.batchElement}s, above this model's usual range (up to ${usual.batch}: ${usual.basis}); convergence at that batch is not what the prediction covers`,
      );
    if (top.offer?.priceStale)
      notes.push(
        `warning: plan 1's price ${priceAgeText(top.offer)}; prices older than ${STALE_PRICE_DAYS} days are flagged stale`,
      );
    const pp = top.parallelism.pipelineParallel;
    const blocks = structure.blocks;
    if (pp > 1 && blocks % pp !== 0)
      notes.push(
        `plan 1 splits ${r.model.id}'s ${blocks} transformer blocks over ${pp} pipeline stages unevenly (${Math.ceil(blocks / pp)} on the heaviest): set the split in the framework (Megatron-Core's decoder_first_pipeline_num_layers and decoder_last_pipeline_num_layers, or account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split); its time assumes balanced stages, as the published runs of such splits are predicted, and its memory the heaviest stage`,
      );
    const chunks = top.parallelism.virtualPipelineStages;
    if (chunks > 1)
      notes.push(
        `plan 1 interleaves its pipeline: each of its ${pp} stages runs ${chunks} chunks of ${blocks / (pp * chunks)} transformer block(s) (${r.stack === 'TORCH_COMPILE' ? `torchtitan: pipeline_parallel_schedule Interleaved1F1B, ${chunks} stages per rank` : `Megatron-Core: virtual_pipeline_model_parallel_size ${chunks}`}), which divides the bubble by ${chunks} and sends ${chunks} times as many activations between stages; on plain 1F1B its time is longer`,
      );
    if (top.boundBy.includes('host'))
      notes.push(
        "warning: plan 1's step is host-bound: kernel launches and per-step framework work on the CPU are a tenth of it or more, and no GPU figure says how fast a machine's CPU does them (its P10-P90 is the wider one measured on such runs); time a few steps on the machine you would rent (trainplan harness) and record them (recordMeasurements)",
      );
    if (top.boundBy.includes('communication'))
      notes.push(
        "warning: plan 1's step is communication-bound: exposed gradient synchronisation is a tenth of it or more, so its time rests on the links between its GPUs and nodes (interNodeGbps; its P10-P90 is the wider one measured on such runs)",
      );
    if (top.precisionUnmeasured)
      notes.push(
        `warning: plan 1 trains ${r.model.id} in ${top.precision}, which none of its measurements ran on any GPU: its time rests on other models' ${top.precision} rows (its P10-P90 is the wider one measured on such pairs held out); compare a plan in a precision it was measured in, or time a few steps (trainplan harness) and record them (recordMeasurements)`,
      );
    // A plan that needs more of the GPUs' peak than any published run reached in its math (tuned
    // stacks on the GPUs they were tuned for) is more likely too fast than too slow.
    const overPublished = aboveBestPublishedWords(top, top.gpu.id, top.dominantMath);
    if (overPublished)
      notes.push(
        `warning: plan 1's ${overPublished}; time a few steps (trainplan harness) and record them (recordMeasurements)`,
      );
    if (top.evidenceLevel === 'UNMEASURED')
      notes.push(
        `warning: plan 1 runs on ${top.gpu.id}, which has no measurements (datasheet figures only); minEvidence: GPU_MEASURED keeps to measured GPUs`,
      );
  }
  if (search.unpricedGpus.length)
    notes.push(
      `${search.unpricedGpus.length} GPU types have no offer and are ${needsPrice(r) ? 'not ranked' : 'predicted but not priced'} (${search.unpricedGpus.join(', ')}): give an offer for them in offers`,
    );
  return notes;
}

/**
 * Why an answer has no plan, and what to change: the reasons candidates were turned away that a
 * request can do something about (`rejected` counts them; a deadline or budget that turned away
 * the best candidate has its own note, naming it), so that an empty list never reaches a person
 * without a reason. GPUs without a price and precisions a GPU lacks turn candidates away in every
 * search; they are the reason only when nothing else is.
 */
function noPlanNote(
  r: RecommendRequest,
  rejected: ReadonlyMap<RejectReason, number>,
  fitBeyond: readonly FitBeyond[] | undefined,
  fitOtherGpus: readonly OtherGpuFit[] | undefined,
  /** How near the candidates the deadline and the budget turned away came, in words. */
  nearest: { deadline?: string; budget?: string },
): string {
  const off = r.parallelismSearch === 'off';
  const gpus = `up to ${r.maxNodes} node${r.maxNodes > 1 ? 's' : ''}${r.maxGpus === undefined ? '' : ` and ${r.maxGpus} GPUs (maxGpus)`}`;
  const within = `${r.maxNodes} node${r.maxNodes > 1 ? 's' : ''}`;
  const named = (why: OtherGpuFit['why']) => {
    const ids = (fitOtherGpus ?? []).filter((f) => f.why === why).map((f) => f.gpu);
    return `${ids.slice(0, OTHER_GPUS_SHOWN).join(', ')}${ids.length > OTHER_GPUS_SHOWN ? ` and ${ids.length - OTHER_GPUS_SHOWN} more` : ''}`;
  };
  // Per reason the search did not check them: what the note says of them.
  const otherRemedies: [OtherGpuFit['why'], string][] = [
    ['UNLISTED', 'not in gpus: list them'],
    [
      'UNLISTED_NO_PRICE',
      'not in gpus and which no offer prices: list them with offers or prices, or set objective TIME',
    ],
    ['NO_PRICE', 'which no offer prices: give offers or prices for them, or set objective TIME'],
    ['BELOW_MIN_EVIDENCE', 'below minEvidence: lower it'],
  ];
  const otherGpus =
    fitOtherGpus === undefined
      ? ''
      : fitOtherGpus.length === 0
        ? ` (none of the GPU types it did not search holds it on ${within} either)`
        : ` (a layout fits on ${within} of ${otherRemedies
            .filter(([why]) => fitOtherGpus.some((f) => f.why === why))
            .map(([why, remedy]) => `${named(why)}, ${remedy}`)
            .join('; ')})`;
  const moreNodes =
    fitBeyond === undefined
      ? 'allow more nodes (maxNodes)'
      : fitBeyond.length === 0
        ? `no layout fits even on ${FIT_SCAN_NODES.toLocaleString('en-US')} nodes of these GPUs at batch ${Math.min(...r.batchSizes)}`
        : `allow more nodes (${r.maxGpus === undefined ? 'maxNodes' : 'maxNodes, maxGpus'}): ${fitsText(fitBeyond.slice(0, FITS_SHOWN))}${fitBeyond.length > FITS_SHOWN ? ` (${fitBeyond.length - FITS_SHOWN} more GPU types fit on more)` : ''}${off ? ', searched as parallelismSearch AUTO' : ''}`;
  // What turned candidates away, and what to change.
  const remedies: [RejectReason, string, string][] = [
    [
      'OUT_OF_MEMORY',
      `out of GPU memory on ${gpus}${off ? ' with plain data parallelism' : ', with every ZeRO stage, tensor and pipeline parallelism and recomputation searched'}`,
      `${off ? 'search ZeRO, tensor and pipeline parallelism (parallelismSearch AUTO), ' : ''}${moreNodes}${fitBeyond === undefined ? ' or' : fitBeyond.length ? ', or' : ';'} choose GPUs with more memory${otherGpus}`,
    ],
    [
      'MISSES_DEADLINE',
      'finishing after the deadline',
      `allow more hours (deadlineHours${nearest.deadline ? `: ${nearest.deadline}` : ''}) or more nodes`,
    ],
    [
      'OVER_BUDGET',
      'costing more than the budget',
      `raise budgetUsd${nearest.budget ? ` (${nearest.budget})` : ''}`,
    ],
    ['GLOBAL_BATCH_TOO_LARGE', 'above the global batch cap', 'raise maxGlobalBatch or fix globalBatch'],
    [
      'GLOBAL_BATCH_MISMATCH',
      'globalBatch out of reach with whole accumulation steps',
      'choose another globalBatch',
    ],
    ['TOO_MANY_GPUS', 'more GPUs than maxGpus', 'raise maxGpus'],
    ['BELOW_MIN_EVIDENCE', 'less measurement behind them than minEvidence asks for', 'lower minEvidence'],
    [
      'NOT_FINITE',
      'a step, hours or cost that is not a finite number',
      'move inputs from the edges of their ranges',
    ],
    [
      'NETWORK_UNSTATED',
      'joining instances of an offer that states no network between them',
      'give the network you will get (interNodeGbps)',
    ],
    ['NO_PRICE', 'on GPUs no offer prices', 'give offers or prices for them, or set objective TIME'],
    ['UNSUPPORTED_PRECISION', 'in precision modes the GPU cannot run', 'list others in precisions'],
  ];
  const counted = remedies.filter(([why]) => (rejected.get(why) ?? 0) > 0);
  const always = new Set<RejectReason>(['NO_PRICE', 'UNSUPPORTED_PRECISION']);
  const causes = counted.some(([why]) => !always.has(why))
    ? counted.filter(([why]) => !always.has(why))
    : counted;
  // The reason that turned most away first.
  causes.sort((a, b) => rejected.get(b[0])! - rejected.get(a[0])!);
  const said = causes.map(([why, what, fix]) => {
    const n = rejected.get(why)!;
    return `${what} (${n.toLocaleString('en-US')} candidate${n > 1 ? 's' : ''}): ${fix}`;
  });
  return `no plan: every candidate was turned away${said.length ? `; ${said.join('; ')}` : ''}`;
}

/** GPU types the no-plan note names where a layout would fit on more nodes. */
const FITS_SHOWN = 3;
/** GPU types the request did not list that the no-plan note names where a layout fits within its nodes. */
const OTHER_GPUS_SHOWN = 5;

/** "the fewest where a layout fits are 4 nodes of 8 H100-SXM5-80GB (BF16, batch 1 per GPU: TP 8, PP 4, ZeRO-1, full recompute, 71 GB per GPU); ..." */
function fitsText(fits: readonly FitBeyond[]): string {
  const one = (f: FitBeyond) => {
    const p = f.parallelism;
    const layout = [
      `TP ${p.tensorParallel}`,
      `PP ${p.pipelineParallel}${(p.virtualPipelineStages ?? 1) > 1 ? ` x ${p.virtualPipelineStages} chunks` : ''}`,
      ...((p.expertParallel ?? 1) > 1 ? [`EP ${p.expertParallel}`] : []),
      `ZeRO-${p.zeroStage}`,
      ...(p.recompute === 'none' ? [] : [`${p.recompute} recompute`]),
    ].join(', ');
    return `${f.nodes.toLocaleString('en-US')} node${f.nodes > 1 ? 's' : ''} of ${f.gpusPerNode} ${f.gpu} (${f.precision}, batch ${f.batch} per GPU: ${layout}; ${f.memoryGb.toFixed(1)} GB per GPU)`;
  };
  return `the fewest on which a layout fits ${fits.length > 1 ? 'are' : 'is'} ${fits.map(one).join('; ')}`;
}

/**
 * What the ranking compares: the value to float32 precision (7 significant digits). Plans that cost the
 * same up to rounding (N instances of a floored data-parallel step cost what one does, computed along
 * different paths) then tie on cost and rank by time, not by the last bit of a division. Monotone, so
 * the order stays a total order; optimizer/pruned.ts allows the same resolution (TIE_RESOLUTION).
 */
const tieKey = (x: number) => (Math.abs(x) < 1e37 ? Math.fround(x) : x);
/** Relative width within which tieKey may make two values equal (two float32 steps). */
export const TIE_RESOLUTION = 2.5e-7;

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

/** Cost-time Pareto front, fastest first: each plan is cheaper than every faster one (at P90 with `p90`). */
export function paretoFront(cands: Candidate[], p90 = false): Candidate[] {
  const hours = (c: Candidate) => (p90 ? c.hoursHi : c.hours);
  const cost = (c: Candidate) => (p90 ? c.costHi : c.cost);
  const sorted = [...cands].sort(
    (a, b) =>
      hours(a) - hours(b) ||
      cost(a) - cost(b) ||
      a.gpuIndex - b.gpuIndex ||
      a.optionIndex - b.optionIndex ||
      a.nodes - b.nodes ||
      a.gpusPerNode - b.gpusPerNode ||
      a.batch - b.batch ||
      a.accum - b.accum ||
      a.precision.localeCompare(b.precision),
  );
  const front: Candidate[] = [];
  let cheapest = Infinity;
  for (const c of sorted)
    if (cost(c) < cheapest) {
      front.push(c);
      cheapest = cost(c);
    }
  return front;
}
