// Fleet planning over time: several training jobs share a GPU inventory. Per job one configuration
// (GPU type, nodes, GPUs per node, batch size, precision, and the layout: ZeRO/FSDP, tensor and
// pipeline parallelism, recomputation, as `recommend` searches them) and a start time, such that at
// no moment the running jobs use more GPUs of a type than the inventory holds, every job starts at
// or after its release and ends by its deadline (both hours from time 0), and the total cost, the
// makespan or the weighted completion time is minimal. Jobs that do not fit side by side run one
// after another.
//
// The MIP is time-indexed: time 0..H is cut into `timeSlots` slots of D = H / timeSlots hours
// (H: the latest deadline, or the latest release plus every job's slowest configuration back to back
// when that is sooner: no left-justified schedule ends later). A job may start at its release or at
// any slot boundary after it; a start a (hours) with a configuration of h hours occupies the slots
// floor(a/D) .. ceil((a+h)/D) - 1, which hold the run entirely, so a plan that respects the slots
// respects the inventory at every moment (checked by replaying the schedule, verifyFleetPlan).
//
//   x[j,c,a]  binary: job j runs candidate c from time a      s[j] binary: job j left out
//   T         continuous: the makespan (MAKESPAN)
//
//   assign[j]:   sum_{c,a} x[j,c,a] (+ s[j])                          = 1
//   cap[t,k]:    sum_{j,c on t, a: slot k in occupancy(a, h_c)} gpus(c) x[j,c,a] <= inventory[t]
//   mk[j]:       T - sum_{c,a} (a + h_c) x[j,c,a]                       >= 0   (MAKESPAN)
//   x[j,c,a] exists only for release[j] <= a and a + h_c <= deadline[j]
//
// Objectives, in priority order (optimizer/milp/solver.ts solveLexicographic):
//   placement (when jobs may be left out): min sum_j priority[j] s[j]
//   COST:                min sum cost(c) x,             then the earliest completions: min sum (a + h_c) x
//   MAKESPAN:            min T,                         then min cost (GPU-hours when a price is unknown)
//   WEIGHTED_COMPLETION: min sum priority[j] (a + h_c) x, then min cost
//
// On-demand configurations bind no inventory: they start at the job's release. After the solve the
// schedule is left-justified in continuous time (each job, in order of its start, moves to the
// earliest moment its GPUs are free): no job starts later, so no objective gets worse, and the grid
// only costs what a start between two boundaries could have saved.
//
// Candidates come from the request's CandidatePredictor (optimizer/candidate-predictor.ts:
// recommend's search, timed by the analytical estimate or by the learned correction with a user's
// runs; one search per job and GPU type, with the job's window deadline - release and the type's
// inventory as constraints), so memory and the window are already met by every column.
import { costOf, InputError, type PredictRequest } from '../predictor/predict.js';
import { defaultSearchPrecisions } from '../predictor/precision.js';
import { isPlain, type Parallelism, type PlanParallelism } from '../predictor/parallel.js';
import type { SoftwareStack } from '../predictor/software.js';
import type { ModelDef } from '../predictor/types.js';
import type { EvidenceLevel } from '../predictor/learned/evidence.js';
import type { AttentionImplementation, CatalogGpu, NetworkTransport, Precision } from '../seeds/types.js';
import { predictorOf } from './candidate-predictor.js';
import { pricingOptions, type Offer } from './offers.js';
import {
  utilizationOf,
  type CandidateSearch,
  type Plan,
  type PlanOffer,
  type PlanUtilization,
  type RecommendRequest,
} from './search-types.js';
import { MipBuilder, modelSize, withObjective, type MipModel, type ModelSize } from './milp/model.js';
import {
  solveLexicographic,
  unsolvedOutcome,
  type LexPhase,
  type MipStatus,
  type MipOutcome,
} from './milp/solver.js';
import { VerificationError } from './milp/verify.js';
import { paretoFilter } from './pareto.js';

export type FleetObjective = 'COST' | 'MAKESPAN' | 'WEIGHTED_COMPLETION';
/** Why a job cannot be placed. */
export type Blocker = 'DEADLINE' | 'MEMORY' | 'INVENTORY';

export interface FleetJob {
  id: string;
  model: ModelDef;
  /** Total work in the model's throughput unit. */
  samples: number;
  /** Earliest start, hours from time 0 (default 0). */
  releaseHours: number;
  /** Latest end, hours from time 0. */
  deadlineHours: number;
  /** Weight of placing this job when not every job fits (allowUnplaced), and of its completion time (WEIGHTED_COMPLETION); default 1. */
  priority: number;
  /** Per-GPU batch sizes to consider (default: the model's typical ones). */
  batchSizes?: number[];
  /** The software stack the job runs under (absent: eager PyTorch). */
  stack?: SoftwareStack;
  /** How the job's attention cores run (absent: predict's default for its model and stack). */
  attention?: AttentionImplementation;
  /** Hold this job's deadline at the P90 step time, or not, whatever the request says (absent: the request's). */
  deadlineConfidence?: boolean;
}

export interface InventoryItem {
  gpu: CatalogGpu;
  count: number;
  /** Price of these GPUs per GPU-hour (default: request prices, then the catalog). */
  priceUsdPerGpuHour?: number;
}

export interface FleetRequest extends CandidateSearch {
  jobs: FleetJob[];
  inventory: InventoryItem[];
  /** GPU types not in the inventory may be rented without limit. */
  allowOnDemand: boolean;
  /** Which types may be rented when allowOnDemand (types in the inventory are excluded: their count caps them). */
  onDemandGpus: CatalogGpu[];
  /** Per-GPU-hour prices of inventory types without their own (and, without `offers`, of rented ones). */
  prices: Record<string, number>;
  /**
   * What on-demand GPUs rent (optimizer/offers.ts; the service resolves them as `recommend` does):
   * every rented run is whole instances of one offer, on the network the offer states. Absent
   * (library callers): each type rents per GPU-hour at `prices` or the catalog's price.
   */
  offers?: Offer[];
  objective: FleetObjective;
  /** Leave jobs out (highest total priority placed first) rather than answer INFEASIBLE. */
  allowUnplaced: boolean;
  /** Slots the time-indexed model cuts the horizon into (default 48). */
  timeSlots?: number;
}

export const DEFAULT_TIME_SLOTS = 48;

export interface FleetCandidate extends PlanUtilization {
  job: number;
  gpu: CatalogGpu;
  onDemand: boolean;
  nodes: number;
  gpusPerNode: number;
  gpus: number;
  batchSizePerGpu: number;
  gradAccumSteps: number;
  precision: Precision;
  /** How the configuration splits the model (plain data parallelism, or ZeRO/TP/PP/recompute). */
  parallelism: PlanParallelism;
  stepTimeMs: number;
  totalHours: number;
  /** Hours at the predictor's P90 step time (equal to totalHours for the analytical estimate). */
  totalHoursP90: number;
  /** Hours the schedule holds the run's GPUs: totalHours, or totalHoursP90 with deadlineConfidence. */
  heldHours: number;
  costUsd: number | null;
  /** What the run pays per GPU it uses an hour (a rented instance's price / the GPUs it uses). */
  priceUsdPerGpuHour: number | null;
  /** The offer a rented run takes whole instances of (nodes = instances); null for the inventory's GPUs. */
  offer: PlanOffer | null;
  /** The inter-node network the run was timed on, Gbps (a rented run: its offer's, unless the request states one). */
  interNodeGbps: number;
  interNodeTransport: NetworkTransport;
  memoryGbPerGpu: number;
  /** What stands behind the time (the plan's evidence as `recommend` gives it). */
  evidenceLevel: EvidenceLevel;
  evidence: string;
  /** The user's recorded runs that moved the time. */
  calibrationRuns: number;
}

export interface FleetAssignment extends FleetCandidate {
  jobId: string;
  releaseHours: number;
  deadlineHours: number;
  /** When the job starts and ends, hours from time 0. */
  startHours: number;
  endHours: number;
}

export interface UnplacedJob {
  jobId: string;
  reason: Blocker;
  message: string;
}

export interface GpuUsage {
  gpu: CatalogGpu;
  /** Most GPUs of this type in use at one moment. */
  used: number;
  available: number | null;
  onDemand: boolean;
}

export interface FleetPlan extends MipOutcome {
  objective: FleetObjective;
  /** Total cost (COST), the last job's end (MAKESPAN) or sum of priority x end (WEIGHTED_COMPLETION); null without a plan. */
  objectiveValue: number | null;
  assignments: FleetAssignment[];
  unplaced: UnplacedJob[];
  gpuUsage: GpuUsage[];
  totalCostUsd: number | null;
  makespanHours: number | null;
  weightedCompletionHours: number | null;
  /** Length of one slot of the time-indexed model (starts lie on multiples of it before left-justifying); null when no model was built. */
  slotHours: number | null;
  stats: ModelSize & { candidates: number; keptCandidates: number };
}

/** The predictor's layout of a plan, as `predict` takes it (undefined for plain data parallelism). */
export function layoutOf(p: PlanParallelism): Parallelism | undefined {
  // Interleaving, context and expert parallelism and the recomputed modules ride along where a plan
  // has them, so the layout predicted is the plan's own, not a copy that lost them.
  const q: Parallelism = {
    tensorParallel: p.tensorParallel,
    pipelineParallel: p.pipelineParallel,
    zeroStage: p.zeroStage,
    recompute: p.recompute,
    ...(p.recomputeModules ? { recomputeModules: p.recomputeModules } : {}),
    ...(p.virtualPipelineStages > 1 ? { virtualPipelineStages: p.virtualPipelineStages } : {}),
    ...(p.contextParallel > 1 ? { contextParallel: p.contextParallel } : {}),
    ...(p.expertParallel > 1 ? { expertParallel: p.expertParallel } : {}),
  };
  return isPlain(q) ? undefined : q;
}

/** recommend()'s limit when every plan is wanted (the first plans by its ranking may not be usable). */
export const ALL = Number.MAX_SAFE_INTEGER;

interface GpuType {
  gpu: CatalogGpu;
  limit: number | null;
  /** Per GPU-hour: an inventory type's price, or a rented one's without `offers`; null when unknown or offers price it. */
  price: number | null;
  /** A rented type's offers (FleetRequest.offers, at least one); absent for the inventory, without `offers`, or unpriced. */
  offers?: Offer[];
  field: string;
}

/**
 * What an inventory type is charged per GPU-hour, and where the price comes from: the item's own,
 * the request's `prices`, else the catalog's (gpus.csv's lowest market price, or the server's price
 * file where it names the GPU); null when none is known.
 */
export function inventoryPrice(
  r: Pick<FleetRequest, 'prices'>,
  it: InventoryItem,
): { price: number | null; from: 'item' | 'prices' | 'catalog' } {
  if (it.priceUsdPerGpuHour !== undefined) return { price: it.priceUsdPerGpuHour, from: 'item' };
  const given = r.prices[it.gpu.id];
  return given !== undefined
    ? { price: given, from: 'prices' }
    : { price: it.gpu.priceUsdPerGpuHour, from: 'catalog' };
}

function availableTypes(r: FleetRequest): GpuType[] {
  const types: GpuType[] = [];
  const inInventory = new Set<string>();
  r.inventory.forEach((it, i) => {
    inInventory.add(it.gpu.id);
    if (it.count <= 0) return;
    const { price } = inventoryPrice(r, it);
    if (r.objective === 'COST' && price === null)
      throw new InputError(
        `inventory[${i}].usdPerGpuHour`,
        `the catalog has no price for ${it.gpu.id}; give usdPerGpuHour (objective COST needs one)`,
      );
    types.push({ gpu: it.gpu, limit: it.count, price, field: `inventory[${i}]` });
  });
  if (r.allowOnDemand) {
    for (const g of r.onDemandGpus) {
      if (inInventory.has(g.id)) continue;
      if (r.offers) {
        const offers = r.offers.filter((o) => o.gpuId === g.id);
        if (offers.length) types.push({ gpu: g, limit: null, price: null, offers, field: 'onDemand' });
        // No offer: under COST it cannot be costed (not rented); otherwise it is planned unpriced.
        else if (r.objective !== 'COST') types.push({ gpu: g, limit: null, price: null, field: 'onDemand' });
        continue;
      }
      const price = r.prices[g.id] ?? g.priceUsdPerGpuHour;
      if (r.objective === 'COST' && price === null) continue; // cannot be costed: not offered
      types.push({ gpu: g, limit: null, price, field: 'onDemand' });
    }
  }
  return types;
}

/** On-demand types that no offer rents (left out under objective COST), for the plan's notes. */
export function unofferedTypes(r: FleetRequest): string[] {
  if (!r.allowOnDemand || !r.offers) return [];
  const owned = new Set(r.inventory.map((it) => it.gpu.id));
  const offered = new Set(r.offers.map((o) => o.gpuId));
  return r.onDemandGpus.filter((g) => !owned.has(g.id) && !offered.has(g.id)).map((g) => g.id);
}

/** Whether a type's runs have a price: offers, or a per-GPU-hour price. */
const priced = (t: GpuType) => t.offers !== undefined || t.price !== null;

/** The precisions one job's candidates are searched in (CandidateSearch.precisionsByDefault). */
export function jobPrecisions(r: CandidateSearch, model: ModelDef): Precision[] {
  if (!r.precisionsByDefault) return r.precisions;
  const defaults = defaultSearchPrecisions(costOf(model));
  return r.precisions.filter((p) => defaults.includes(p));
}

/** What of a coupled job (a fleet's or a procurement's) its searches and its verification read. */
type CoupledJob = Pick<
  FleetJob,
  'model' | 'samples' | 'batchSizes' | 'stack' | 'attention' | 'deadlineConfidence'
>;

/**
 * The request as one job's searches, schedule and checks read it: with the job's own
 * deadlineConfidence where it states one (a job that must not be late held at its P90 hours, the
 * others at their estimates).
 */
export const forJob = <R extends Pick<CandidateSearch, 'deadlineConfidence'>>(
  r: R,
  job: Pick<FleetJob, 'deadlineConfidence'>,
): R =>
  job.deadlineConfidence === undefined || job.deadlineConfidence === (r.deadlineConfidence ?? false)
    ? r
    : { ...r, deadlineConfidence: job.deadlineConfidence };

/**
 * A coupled job's search on one GPU type, as `recommend` takes it: the request's search space, the
 * job's model, batch sizes and stack, the GPU type at `price` or renting its `offers` (neither: unpriced), and the layouts
 * `recommend` searches (ZeRO/FSDP, tensor and pipeline parallelism, recomputation) wherever plain data
 * parallelism does not fit or trains above the global batch cap, so large models are planned too.
 */
export const jobSearch = (
  r: CandidateSearch,
  job: CoupledJob,
  gpu: CatalogGpu,
  o: {
    price: number | null;
    /** What the GPU rents (instead of `price`): the search prices whole instances of these, on each one's network. */
    offers?: Offer[];
    deadlineHours?: number;
    maxGpus?: number;
    limit: number;
    objective: 'COST' | 'TIME';
  },
): RecommendRequest => ({
  model: job.model,
  samples: job.samples,
  objective: o.objective,
  deadlineHours: o.deadlineHours,
  ...(o.deadlineHours !== undefined && forJob(r, job).deadlineConfidence ? { deadlineConfidence: true } : {}),
  gpus: [gpu],
  precisions: jobPrecisions(r, job.model),
  maxNodes: r.maxNodes,
  maxGpus: o.maxGpus,
  gpusPerNodeChoices: r.gpusPerNodeChoices,
  batchSizes: job.batchSizes ?? job.model.batchSizes,
  ...(job.stack ? { stack: job.stack } : {}),
  ...(job.attention ? { attention: job.attention } : {}),
  ...(o.offers
    ? { offers: o.offers, ...(r.interNodeGbpsStated ? { interNodeGbps: r.interNodeGbps } : {}) }
    : { prices: o.price === null ? undefined : { [gpu.id]: o.price }, interNodeGbps: r.interNodeGbps }),
  ...(r.interNodeTransport ? { interNodeTransport: r.interNodeTransport } : {}),
  fp32UsesTf32: r.fp32UsesTf32,
  ...(r.channelsLast !== undefined ? { channelsLast: r.channelsLast } : {}),
  limit: o.limit,
  parallelismSearch: 'auto',
});

const searchFor = (
  r: FleetRequest,
  job: FleetJob,
  t: GpuType,
  o: { deadline: boolean; cap: boolean; limit: number; objective: 'COST' | 'TIME' },
): RecommendRequest =>
  jobSearch(r, job, t.gpu, {
    price: t.price,
    ...(t.offers ? { offers: t.offers } : {}),
    deadlineHours: o.deadline ? windowHours(job) : undefined,
    maxGpus: o.cap && t.limit !== null ? t.limit : undefined,
    limit: o.limit,
    objective: o.objective,
  });

/**
 * A coupled plan's configuration as `predict` takes it, to verify it against what its predictor
 * says: the request's precision rules, the job's samples and stack, the plan's layout, network and price.
 */
export const configurationRequest = (
  r: CandidateSearch,
  job: CoupledJob,
  gpu: CatalogGpu,
  c: Pick<
    FleetCandidate,
    | 'precision'
    | 'batchSizePerGpu'
    | 'gpusPerNode'
    | 'nodes'
    | 'gradAccumSteps'
    | 'parallelism'
    | 'priceUsdPerGpuHour'
    | 'interNodeGbps'
    | 'interNodeTransport'
  >,
): PredictRequest => ({
  model: job.model,
  gpu,
  precision: c.precision,
  batchSizePerGpu: c.batchSizePerGpu,
  gpusPerNode: c.gpusPerNode,
  nodes: c.nodes,
  gradAccumSteps: c.gradAccumSteps,
  fp32UsesTf32: r.fp32UsesTf32,
  ...(r.channelsLast !== undefined ? { channelsLast: r.channelsLast } : {}),
  // The network it was timed on: the offer's for a rented run, as its search found it.
  interNodeGbps: c.interNodeGbps,
  interNodeTransport: c.interNodeTransport,
  samples: job.samples,
  ...(job.stack ? { stack: job.stack } : {}),
  ...(job.attention ? { attention: job.attention } : {}),
  priceUsdPerGpuHour: c.priceUsdPerGpuHour,
  parallelism: layoutOf(c.parallelism),
});

/**
 * The hours a run is held to its deadline with, and (in a fleet) holds its GPUs for: the estimate,
 * or with deadlineConfidence its P90 (FleetCandidate.heldHours).
 */
export const heldHoursOf = (
  r: Pick<CandidateSearch, 'deadlineConfidence'>,
  p: Pick<Plan, 'totalHours' | 'totalHoursP90'>,
) => (r.deadlineConfidence ? p.totalHoursP90 : p.totalHours);

/** Hours between a job's release and its deadline: what its run must fit in. */
export const windowHours = (job: Pick<FleetJob, 'releaseHours' | 'deadlineHours'>): number =>
  job.deadlineHours - job.releaseHours;

const toCandidate = (r: FleetRequest, job: number, t: GpuType, p: Plan): FleetCandidate => ({
  job,
  gpu: t.gpu,
  onDemand: t.limit === null,
  nodes: p.nodes,
  gpusPerNode: p.gpusPerNode,
  gpus: p.nodes * p.gpusPerNode,
  batchSizePerGpu: p.batchSizePerGpu,
  gradAccumSteps: p.gradAccumSteps,
  precision: p.precision,
  parallelism: p.parallelism,
  stepTimeMs: p.stepTimeMs,
  totalHours: p.totalHours,
  totalHoursP90: p.totalHoursP90,
  heldHours: heldHoursOf(r, p),
  costUsd: p.costUsd,
  priceUsdPerGpuHour: t.offers ? p.priceUsdPerGpuHour : t.price,
  offer: t.offers ? p.offer : null,
  interNodeGbps: p.interNodeGbps,
  interNodeTransport: p.interNodeTransport,
  memoryGbPerGpu: p.memoryGbPerGpu,
  evidenceLevel: p.evidenceLevel,
  evidence: p.evidence,
  calibrationRuns: p.calibrationRuns,
  ...utilizationOf(p),
});

/**
 * A plan the predictor could really evaluate and that fits: finite, positive hours (and cost, when
 * priced), and memory within the GPU's (checked here too, so a search that lets an oversized plan
 * through never reaches the MIP; verification would reject it anyway).
 */
export const usable = (p: Plan): boolean =>
  Number.isFinite(p.totalHours) &&
  p.totalHours > 0 &&
  (p.priceUsdPerGpuHour === null || (p.costUsd !== null && Number.isFinite(p.costUsd))) &&
  p.memoryGbPerGpu <= p.gpu.usableMemoryGb;

/**
 * Whether a search turned away runs joining several instances of an offer that states no network
 * between them (recommend's NETWORK_UNSTATED: not timed on a guess), and what to do about it.
 */
export const networkUnstated = (rec: { rejected: { reason: string }[] }): boolean =>
  rec.rejected.some((x) => x.reason === 'NETWORK_UNSTATED');
export const NETWORK_UNSTATED_HINT =
  'runs joining several instances of an offer that states no network between them were not planned: give interNodeGbps (the network you will get) to plan them';

/** Whether a search found configurations that do not fit in memory (rejected, or returned oversized). */
export const outOfMemory = (rec: { plans: Plan[]; rejected: { reason: string }[] }): boolean =>
  rec.rejected.some((x) => x.reason === 'OUT_OF_MEMORY') ||
  rec.plans.some((p) => p.memoryGbPerGpu > p.gpu.usableMemoryGb);

export interface FleetCandidates {
  types: GpuType[];
  /** Every configuration that meets the job's deadline and memory within its type's inventory. */
  all: FleetCandidate[][];
  /** What the MIP sees: the non-dominated ones. */
  kept: FleetCandidate[][];
}

/**
 * Candidates per job, pruned before the MIP is built. Per job and GPU type only the Pareto set over
 * (GPUs used, cost, hours) is kept: a candidate that uses no fewer GPUs of the same type, costs no
 * less and takes no less time than another can be swapped for it in any plan without breaking the
 * inventory or a deadline and without raising cost or makespan, so dropping it never loses the
 * optimum. For on-demand types the GPU count binds nothing, so only (cost, hours) count. Cost is
 * left out when a price is unknown (MAKESPAN without prices).
 */
export async function fleetCandidates(r: FleetRequest): Promise<FleetCandidates> {
  const types = availableTypes(r);
  const predictor = predictorOf(r);
  const all: FleetCandidate[][] = [],
    kept: FleetCandidate[][] = [];
  for (const [j, job] of r.jobs.entries()) {
    const mine: FleetCandidate[] = [],
      pruned: FleetCandidate[] = [];
    for (const t of types) {
      const rec = await predictor.search(
        searchFor(r, job, t, {
          deadline: true,
          cap: true,
          limit: ALL,
          objective: priced(t) ? 'COST' : 'TIME',
        }),
      );
      // `usable` re-checks what the MIP relies on (finite hours and cost, memory fit) rather than trust it.
      const cands = rec.plans.filter(usable).map((p) => toCandidate(forJob(r, job), j, t, p));
      mine.push(...cands);
      pruned.push(
        ...paretoFilter(cands, (c) => {
          const k = c.costUsd === null ? [c.heldHours] : [c.costUsd, c.heldHours];
          return t.limit === null ? k : [c.gpus, ...k];
        }),
      );
    }
    all.push(mine);
    kept.push(pruned);
  }
  return { types, all, kept };
}

/** Why a job has no candidate: memory, deadline, or the inventory (too few GPUs or no usable type). */
async function diagnoseJob(
  request: FleetRequest,
  job: FleetJob,
  types: GpuType[],
): Promise<{ reason: Blocker; message: string }> {
  const r = forJob(request, job);
  const predictor = predictorOf(r);
  if (types.length === 0)
    return {
      reason: 'INVENTORY',
      message:
        'no GPU type is available: the inventory is empty' +
        (r.allowOnDemand ? ' and no offer or price rents an on-demand type' : ' and allowOnDemand is off'),
    };
  const unconstrained = await Promise.all(
    types.map((t) =>
      predictor.search(searchFor(r, job, t, { deadline: false, cap: false, limit: ALL, objective: 'TIME' })),
    ),
  );
  const runnable = types.filter((_, i) => unconstrained[i].plans.some(usable));
  if (runnable.length === 0) {
    if (unconstrained.some(outOfMemory))
      return {
        reason: 'MEMORY',
        message: `does not fit in the memory of any available GPU type (${types.map((t) => t.gpu.id).join(', ')}) at the batch sizes and precisions allowed`,
      };
    return {
      reason: 'INVENTORY',
      message: `no available GPU type (${types.map((t) => t.gpu.id).join(', ')}) supports the precisions allowed`,
    };
  }
  // Meets the deadline on some limited type if it could have more GPUs than the inventory holds?
  for (const t of runnable) {
    if (t.limit === null) continue;
    const meeting = (
      await predictor.search(
        searchFor(r, job, t, { deadline: true, cap: false, limit: ALL, objective: 'TIME' }),
      )
    ).plans.filter(usable);
    if (meeting.length) {
      const fewest = meeting.reduce((m, p) => Math.min(m, p.nodes * p.gpusPerNode), Infinity);
      return {
        reason: 'INVENTORY',
        message: `meets its ${job.releaseHours > 0 ? `deadline (${windowHours(job)} h after its release)` : `${job.deadlineHours} h deadline`} only with at least ${fewest} ${t.gpu.id} GPUs; the inventory holds ${t.limit}`,
      };
    }
  }
  let fastest: { hours: number; text: string } | undefined;
  let unstated = false;
  for (const t of runnable) {
    const rec = await predictor.search(
      searchFor(r, job, t, { deadline: false, cap: true, limit: ALL, objective: 'TIME' }),
    );
    unstated ||= networkUnstated(rec);
    const p = rec.plans.find(usable);
    if (p && (!fastest || heldHoursOf(r, p) < fastest.hours))
      fastest = {
        hours: heldHoursOf(r, p),
        text: `${p.nodes}x${p.gpusPerNode} ${t.gpu.id}, ${p.precision}, batch ${p.batchSizePerGpu}`,
      };
  }
  return {
    reason: 'DEADLINE',
    message:
      `the fastest configuration available takes ${fastest ? `${fastest.hours.toPrecision(4)} h${r.deadlineConfidence ? ' at the P90 step time' : ''} (${fastest.text})` : 'longer'}, beyond ${job.releaseHours > 0 ? `the ${windowHours(job)} h between its release (${job.releaseHours} h) and its deadline (${job.deadlineHours} h)` : `the ${job.deadlineHours} h deadline`}` +
      (unstated ? `; ${NETWORK_UNSTATED_HINT}` : ''),
  };
}

/** The time grid: the horizon and the length of a slot. */
export interface TimeGrid {
  horizonHours: number;
  slotHours: number;
  /** No left-justified schedule starts a job later than this. */
  latestStartHours: number;
}

/**
 * H = the latest deadline, or sooner the latest release plus every job's slowest configuration
 * back to back (a left-justified schedule starts each job at its release or when another ends, so
 * none ends later); slots of H / timeSlots hours.
 */
export function timeGrid(r: FleetRequest, kept: FleetCandidate[][]): TimeGrid {
  const live = kept.map((cs, j) => ({ cs, job: r.jobs[j] })).filter((x) => x.cs.length > 0);
  const slowest = live.map((x) => Math.max(...x.cs.map((c) => c.heldHours)));
  const lastRelease = Math.max(0, ...live.map((x) => x.job.releaseHours));
  const backToBack = lastRelease + slowest.reduce((a, b) => a + b, 0);
  const horizonHours = Math.max(
    1e-9,
    Math.min(Math.max(...live.map((x) => x.job.deadlineHours)), backToBack),
  );
  const slotHours = horizonHours / (r.timeSlots ?? DEFAULT_TIME_SLOTS);
  // On the grid a run occupies at most ceil(h / D) + 1 slots; back to back they bound every start.
  const latestStartHours =
    (Math.ceil(lastRelease / slotHours - 1e-9) +
      slowest.reduce((a, h) => a + Math.ceil(h / slotHours - 1e-9) + 1, 0)) *
    slotHours;
  return { horizonHours, slotHours, latestStartHours };
}

/** One column of the MIP: a candidate started at a moment, and the slots it occupies. */
interface Start {
  cand: number;
  at: number;
  firstSlot: number;
  lastSlot: number;
}

const within = (end: number, deadline: number) => end <= deadline * (1 + 1e-12) + 1e-12;

/** Start times of a candidate: the release, then every slot boundary after it that still meets the deadline. */
function startsOf(job: FleetJob, c: FleetCandidate, k: number, g: TimeGrid): Start[] {
  const occupy = (at: number): Start => ({
    cand: k,
    at,
    firstSlot: Math.floor(at / g.slotHours + 1e-9),
    lastSlot: Math.ceil((at + c.heldHours) / g.slotHours - 1e-9) - 1,
  });
  if (!within(job.releaseHours + c.heldHours, job.deadlineHours)) return [];
  const out = [occupy(job.releaseHours)];
  if (c.onDemand) return out; // nothing to wait for: the release is the best start
  for (let s = Math.floor(job.releaseHours / g.slotHours + 1e-9) + 1; ; s++) {
    const at = s * g.slotHours;
    if (at > g.latestStartHours + 1e-9 || !within(at + c.heldHours, job.deadlineHours)) break;
    out.push(occupy(at));
  }
  return out;
}

function buildFleetMip(
  r: FleetRequest,
  kept: FleetCandidate[][],
  skippable: boolean[],
  limits: Map<string, number>,
  g: TimeGrid,
) {
  const b = new MipBuilder(`fleet-${r.objective.toLowerCase().replace('_', '-')}`);
  const starts: Start[][] = kept.map((cs, j) => cs.flatMap((c, k) => startsOf(r.jobs[j], c, k, g)));
  const x: number[][] = starts.map((ss, j) =>
    ss.map((st) =>
      b.addVar(
        `x_${j}_${st.cand}_${st.firstSlot}${st.at === r.jobs[j].releaseHours ? 'r' : ''}`,
        'binary',
        0,
        1,
      ),
    ),
  );
  const s: (number | null)[] = kept.map((_, j) => (skippable[j] ? b.addVar(`s_${j}`, 'binary', 0, 1) : null));
  const endOf = (j: number, st: Start) => st.at + kept[j][st.cand].heldHours;
  const maxEnd = Math.max(1, ...starts.flatMap((ss, j) => ss.map((st) => endOf(j, st))));
  const T = r.objective === 'MAKESPAN' ? b.addVar('T', 'continuous', 0, maxEnd) : null;
  starts.forEach((ss, j) => {
    const terms: [number, number][] = ss.map((_, i) => [x[j][i], 1]);
    if (s[j] !== null) terms.push([s[j]!, 1]);
    b.addRow(`assign_${j}`, terms, 1, 1);
    if (T !== null)
      b.addRow(
        `mk_${j}`,
        [[T, 1], ...ss.map((st, i): [number, number] => [x[j][i], -endOf(j, st)])],
        0,
        Infinity,
      );
  });
  // cap[t,k]: per type and slot, the GPUs of every run occupying it. A row that no choice of the
  // jobs can overfill (each job's largest use of that slot summed) is left out.
  for (const [id, limit] of limits) {
    const bySlot = new Map<number, { terms: [number, number][]; most: Map<number, number> }>();
    starts.forEach((ss, j) =>
      ss.forEach((st, i) => {
        const c = kept[j][st.cand];
        if (c.gpu.id !== id || c.onDemand) return;
        for (let k = st.firstSlot; k <= st.lastSlot; k++) {
          let e = bySlot.get(k);
          if (!e) bySlot.set(k, (e = { terms: [], most: new Map() }));
          e.terms.push([x[j][i], c.gpus]);
          e.most.set(j, Math.max(e.most.get(j) ?? 0, c.gpus));
        }
      }),
    );
    for (const [k, e] of [...bySlot].sort((a, b2) => a[0] - b2[0])) {
      const worst = [...e.most.values()].reduce((a, v) => a + v, 0);
      if (worst > limit) b.addRow(`cap_${id}_${k}`, e.terms, -Infinity, limit);
    }
  }
  const model = b.build();
  const n = model.vars.length;
  const dense = (f: (j: number, c: FleetCandidate, st: Start) => number) => {
    const v = new Array<number>(n).fill(0);
    starts.forEach((ss, j) =>
      ss.forEach((st, i) => {
        v[x[j][i]] = f(j, kept[j][st.cand], st);
      }),
    );
    return v;
  };
  const costKnown = kept.flat().every((c) => c.costUsd !== null);
  const placement = new Array<number>(n).fill(0);
  s.forEach((v, j) => {
    if (v !== null) placement[v] = r.jobs[j].priority;
  });
  const makespan = new Array<number>(n).fill(0);
  if (T !== null) makespan[T] = 1;
  return {
    model,
    starts,
    x,
    s,
    T,
    costKnown,
    placement,
    makespan,
    cost: dense((_, c) => c.costUsd ?? 0),
    gpuHours: dense((_, c) => c.totalHours * c.gpus),
    completion: dense((j, _, st) => endOf(j, st)),
    weightedCompletion: dense((j, _, st) => r.jobs[j].priority * endOf(j, st)),
  };
}

type Built = ReturnType<typeof buildFleetMip>;

/** The objectives solved one after another (see the top of this file). */
function phasesFor(r: FleetRequest, m: Built, skippable: boolean, placementOnly: boolean): LexPhase[] {
  const phases: LexPhase[] = [];
  if (skippable)
    phases.push({
      name: 'placement',
      coefs: m.placement,
      sense: 'min',
      fastPathEligible: true,
      absTol: 1e-6,
      relTol: 1e-9,
    });
  if (placementOnly) return phases;
  const cost: LexPhase = m.costKnown
    ? { name: 'cost', coefs: m.cost, sense: 'min', fastPathEligible: true }
    : { name: 'gpu-hours', coefs: m.gpuHours, sense: 'min', fastPathEligible: true };
  const tight = { relTol: 1e-9, absTol: 1e-9 };
  if (r.objective === 'MAKESPAN')
    phases.push(
      { name: 'makespan', coefs: m.makespan, sense: 'min', fastPathEligible: false, ...tight },
      cost,
    );
  else if (r.objective === 'WEIGHTED_COMPLETION')
    phases.push(
      {
        name: 'weighted-completion',
        coefs: m.weightedCompletion,
        sense: 'min',
        // Completion-time objectives: javascript-lp-solver claimed a feasible 20-job one infeasible
        // and ran out its budget on others (bench/solvers.ts), so HiGHS takes them directly.
        fastPathEligible: false,
        ...tight,
      },
      cost,
    );
  else
    phases.push(
      { ...cost, relTol: 1e-9, absTol: 1e-7 },
      { name: 'completion', coefs: m.completion, sense: 'min', fastPathEligible: false },
    );
  return phases;
}

/**
 * The fleet MIP with its primary objective (total cost, the makespan or the weighted completion
 * time) and every job placed: what bench/solvers.ts hands both solvers. Throws when a job has no candidate.
 */
export async function fleetMip(r: FleetRequest): Promise<{
  model: MipModel;
  candidates: number;
  kept: number;
  grid: TimeGrid;
}> {
  const { types, all, kept } = await fleetCandidates(r);
  if (kept.some((c) => c.length === 0)) throw new Error('a job has no candidate');
  const limits = new Map(types.filter((t) => t.limit !== null).map((t) => [t.gpu.id, t.limit!]));
  const grid = timeGrid(r, kept);
  const m = buildFleetMip(
    r,
    kept,
    kept.map(() => false),
    limits,
    grid,
  );
  const primary = { COST: m.cost, MAKESPAN: m.makespan, WEIGHTED_COMPLETION: m.weightedCompletion }[
    r.objective
  ];
  return {
    model: withObjective(m.model, primary, 'min'),
    candidates: all.reduce((n, c) => n + c.length, 0),
    kept: kept.reduce((n, c) => n + c.length, 0),
    grid,
  };
}

export async function planFleet(r: FleetRequest): Promise<FleetPlan> {
  const t0 = performance.now();
  const { types, all, kept } = await fleetCandidates(r);
  const limits = new Map(types.filter((t) => t.limit !== null).map((t) => [t.gpu.id, t.limit!]));
  const stats0 = {
    candidates: all.reduce((n, c) => n + c.length, 0),
    keptCandidates: kept.reduce((n, c) => n + c.length, 0),
  };
  const notes: string[] = [];

  // Jobs without any candidate cannot be placed whatever the others do.
  const hopeless = new Map<number, { reason: Blocker; message: string }>();
  for (const [j, cs] of kept.entries())
    if (cs.length === 0) hopeless.set(j, await diagnoseJob(r, r.jobs[j], types));
  const unplacedFrom = (m: Map<number, { reason: Blocker; message: string }>): UnplacedJob[] =>
    [...m].sort((a, b) => a[0] - b[0]).map(([j, d]) => ({ jobId: r.jobs[j].id, ...d }));

  const empty = (
    status: MipStatus,
    solver: string,
    size: ModelSize,
    unplaced: UnplacedJob[],
    extra: Partial<FleetPlan> = {},
  ): FleetPlan => ({
    ...unsolvedOutcome(status, solver, t0, notes),
    objective: r.objective,
    objectiveValue: null,
    assignments: [],
    unplaced,
    gpuUsage: [],
    totalCostUsd: null,
    makespanHours: null,
    weightedCompletionHours: null,
    slotHours: null,
    stats: { ...stats0, ...size },
    ...extra,
  });
  const noModel: ModelSize = { variables: 0, integers: 0, constraints: 0, nonzeros: 0 };

  if (hopeless.size > 0 && !r.allowUnplaced)
    return empty(
      'INFEASIBLE',
      'none (infeasible before solving: a job has no configuration that meets its deadline within the inventory)',
      noModel,
      unplacedFrom(hopeless),
    );

  // The jobs the MIP decides about (hopeless ones, when allowed, are simply left out).
  const liveIdx = r.jobs.map((_, j) => j).filter((j) => !hopeless.has(j));
  if (liveIdx.length === 0)
    return empty('OPTIMAL', 'none (no job can be placed)', noModel, unplacedFrom(hopeless), {
      objectiveValue: 0,
      totalCostUsd: 0,
      makespanHours: 0,
      weightedCompletionHours: 0,
      gap: 0,
      bestBound: 0,
      optimalityProven: true,
    });
  const sub = liveIdx.map((j) => kept[j]);
  const subReq = { ...r, jobs: liveIdx.map((j) => r.jobs[j]) };
  const grid = timeGrid(subReq, sub);

  const solveWith = async (skippable: boolean, placementOnly: boolean) => {
    const m = buildFleetMip(
      subReq,
      sub,
      sub.map(() => skippable),
      limits,
      grid,
    );
    return { m, lex: await solveLexicographic(m.model, phasesFor(r, m, skippable, placementOnly), r.solve) };
  };

  const { m, lex } = await solveWith(r.allowUnplaced, false);
  notes.push(...lex.notes);
  if (r.objective !== 'COST' && !m.costKnown)
    notes.push('a price is unknown for some GPU type, so ties are broken by GPU-hours instead of cost');
  const size = modelSize(m.model);

  if (lex.final.status === 'INFEASIBLE' && !r.allowUnplaced) {
    // Every job can run alone, so the inventory over time is what binds: find a largest placeable set.
    const diag = await solveWith(true, true);
    notes.push(...diag.lex.notes.map((n) => `diagnosis: ${n}`));
    const d = diag.lex.final;
    const out = new Map(hopeless);
    if (d.values)
      sub.forEach((cs, k) => {
        if (d.values![diag.m.s[k]!] < 0.5) return;
        out.set(liveIdx[k], { reason: 'INVENTORY', message: contentionMessage(subReq.jobs[k], cs, limits) });
      });
    return empty('INFEASIBLE', lex.solver, size, unplacedFrom(out), {
      slotHours: grid.slotHours,
      notes: [
        ...notes,
        'the jobs listed in unplaced are left out by a largest set of jobs that fits the inventory over time (weighted by priority)',
      ],
    });
  }
  if (lex.final.values === null)
    return empty(lex.final.status, lex.solver, size, unplacedFrom(hopeless), { slotHours: grid.slotHours });

  const values = lex.final.values;
  const chosen: FleetAssignment[] = [];
  const unplaced = new Map(hopeless);
  sub.forEach((cs, k) => {
    const j = liveIdx[k];
    const i = m.x[k].findIndex((xi) => values[xi] > 0.5);
    if (i < 0) {
      unplaced.set(j, {
        reason: 'INVENTORY',
        message: `left out: ${contentionMessage(r.jobs[j], cs, limits)}`,
      });
      return;
    }
    const st = m.starts[k][i];
    const c = cs[st.cand];
    chosen.push({
      ...c,
      job: j,
      jobId: r.jobs[j].id,
      releaseHours: r.jobs[j].releaseHours,
      deadlineHours: r.jobs[j].deadlineHours,
      startHours: st.at,
      endHours: st.at + c.heldHours,
    });
  });
  const gridValue = objectiveOfPlan(r, chosen);
  const assignments = leftJustify(chosen, limits).sort((a, b) => a.job - b.job);
  const shifted = objectiveOfPlan(r, assignments);
  if (shifted < gridValue * (1 - 1e-9))
    notes.push(
      `left-justified after solving: the ${r.objective.toLowerCase().replace('_', ' ')} is ${shifted.toPrecision(6)}, ${gridValue.toPrecision(6)} with starts on the ${grid.slotHours.toPrecision(4)} h grid`,
    );
  const plan = finishPlan(r, {
    status: lex.optimalityProven ? 'OPTIMAL' : 'FEASIBLE',
    solver: lex.solver,
    optimalityProven: lex.optimalityProven,
    assignments,
    unplaced: unplacedFrom(unplaced),
    types,
    notes,
    stats: { ...stats0, ...size },
    slotHours: grid.slotHours,
    t0,
  });
  // The gap and bound of the phase that carries the reported objective (on the grid).
  const primaryName = { COST: 'cost', MAKESPAN: 'makespan', WEIGHTED_COMPLETION: 'weighted-completion' }[
    r.objective
  ];
  const primary = lex.phases.find((p) => p.name === primaryName);
  if (primary && (!lex.optimalityProven || (r.solve.mipRelGap ?? 0) > 0)) {
    plan.gap = primary.gap;
    plan.bestBound = primary.bestBound;
  }
  const problems = await verifyFleetPlan(r, plan);
  if (problems.length) throw new VerificationError(problems);
  return plan;
}

/** Total cost, last end, or sum of priority x end, of a set of assignments. */
function objectiveOfPlan(r: FleetRequest, as: FleetAssignment[]): number {
  if (r.objective === 'COST') return as.reduce((s, a) => s + (a.costUsd ?? NaN), 0);
  if (r.objective === 'MAKESPAN') return as.reduce((s, a) => Math.max(s, a.endHours), 0);
  const weight = new Map(r.jobs.map((j) => [j.id, j.priority]));
  return as.reduce((s, a) => s + weight.get(a.jobId)! * a.endHours, 0);
}

/** A run of some GPUs over [start, end). */
interface Interval {
  start: number;
  end: number;
  gpus: number;
}

/** GPUs in use at moment t (intervals are half-open: a run ending at t frees its GPUs for one starting at t). */
const inUseAt = (runs: Interval[], t: number) =>
  runs.reduce((n, x) => (x.start <= t && t < x.end ? n + x.gpus : n), 0);

/** Most GPUs in use at once: the usage only rises where a run starts. */
export function peakUse(runs: Interval[]): number {
  return runs.reduce((m, x) => Math.max(m, inUseAt(runs, x.start)), 0);
}

/**
 * Moves every inventory job, in order of its start, to the earliest moment from its release at which
 * its GPUs are free for its whole run. The solved schedule is one such placement, so no job starts
 * later than it did: at any moment after a job's solved start, the jobs placed before it use no more
 * than they did in the solved schedule (they start no later and run as long).
 */
function leftJustify(as: FleetAssignment[], limits: Map<string, number>): FleetAssignment[] {
  const placed = new Map<string, Interval[]>();
  const order = [...as].sort((a, b) => a.startHours - b.startHours || a.job - b.job);
  return order.map((a) => {
    if (a.onDemand) return a;
    const runs = placed.get(a.gpu.id) ?? [];
    const limit = limits.get(a.gpu.id)!;
    const fits = (t: number) =>
      [t, ...runs.filter((x) => x.start > t && x.start < t + a.heldHours).map((x) => x.start)].every(
        (u) => inUseAt(runs, u) + a.gpus <= limit,
      );
    const times = [a.releaseHours, ...runs.map((x) => x.end).filter((e) => e > a.releaseHours)].sort(
      (p, q) => p - q,
    );
    const start = times.find((t) => t <= a.startHours && fits(t)) ?? a.startHours;
    runs.push({ start, end: start + a.heldHours, gpus: a.gpus });
    placed.set(a.gpu.id, runs);
    return { ...a, startHours: start, endHours: start + a.heldHours };
  });
}

function contentionMessage(job: FleetJob, cs: FleetCandidate[], limits: Map<string, number>): string {
  const need = new Map<string, FleetCandidate>();
  for (const c of cs) {
    if (c.onDemand) continue;
    const b = need.get(c.gpu.id);
    if (!b || c.gpus < b.gpus || (c.gpus === b.gpus && c.heldHours < b.heldHours)) need.set(c.gpu.id, c);
  }
  const parts = [...need.values()].map(
    (c) => `${c.gpus} of the ${limits.get(c.gpu.id)} ${c.gpu.id} for ${c.heldHours.toPrecision(4)} h`,
  );
  return `the inventory cannot hold it between its release (${job.releaseHours} h) and its deadline (${job.deadlineHours} h) together with the placed jobs; its smallest configuration needs ${parts.join(' or ')}`;
}

function finishPlan(
  r: FleetRequest,
  p: {
    status: MipStatus;
    solver: string;
    optimalityProven: boolean;
    assignments: FleetAssignment[];
    unplaced: UnplacedJob[];
    types: GpuType[];
    notes: string[];
    stats: FleetPlan['stats'];
    slotHours: number;
    t0: number;
  },
): FleetPlan {
  const runs = new Map<string, Interval[]>();
  for (const a of p.assignments)
    runs.set(a.gpu.id, [
      ...(runs.get(a.gpu.id) ?? []),
      { start: a.startHours, end: a.endHours, gpus: a.gpus },
    ]);
  const gpuUsage: GpuUsage[] = p.types
    .filter((t) => t.limit !== null || runs.has(t.gpu.id))
    .map((t) => ({
      gpu: t.gpu,
      used: peakUse(runs.get(t.gpu.id) ?? []),
      available: t.limit,
      onDemand: t.limit === null,
    }));
  // (With deadlineConfidence every run is scheduled for its P90 hours: none is.)
  const late = p.assignments.filter((a) => a.startHours + a.totalHoursP90 > a.deadlineHours * (1 + 1e-9));
  if (late.length)
    p.notes.push(
      `at the P90 step time these jobs would end after their deadline, even starting as planned: ${late
        .map(
          (a) =>
            `${a.jobId} (${(a.startHours + a.totalHoursP90).toPrecision(4)} h, deadline ${a.deadlineHours} h)`,
        )
        .join(', ')}; give them deadlines with room, or more GPUs, to plan for a slow run`,
    );
  const costs = p.assignments.map((a) => a.costUsd);
  const totalCostUsd = costs.every((c) => c !== null) ? costs.reduce((s, c) => s + c!, 0) : null;
  const makespanHours = p.assignments.reduce((m, a) => Math.max(m, a.endHours), 0);
  const weight = new Map(r.jobs.map((j) => [j.id, j.priority]));
  const weightedCompletionHours = p.assignments.reduce((s, a) => s + weight.get(a.jobId)! * a.endHours, 0);
  const objectiveValue =
    r.objective === 'COST'
      ? totalCostUsd
      : r.objective === 'MAKESPAN'
        ? makespanHours
        : weightedCompletionHours;
  return {
    status: p.status,
    objective: r.objective,
    objectiveValue,
    bestBound: p.optimalityProven ? objectiveValue : null,
    gap: p.optimalityProven ? 0 : null,
    solver: p.solver,
    optimalityProven: p.optimalityProven,
    solveTimeMs: performance.now() - p.t0,
    notes: p.notes,
    assignments: p.assignments,
    unplaced: p.unplaced,
    gpuUsage,
    totalCostUsd,
    makespanHours,
    weightedCompletionHours,
    slotHours: p.slotHours,
    stats: p.stats,
  };
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a));

/** How a coupled plan's configuration says it pays for its GPUs and which network it was timed on. */
type Paid = Pick<
  FleetCandidate,
  'gpu' | 'gpusPerNode' | 'offer' | 'priceUsdPerGpuHour' | 'interNodeGbps' | 'interNodeTransport'
>;

/**
 * What is wrong with how a coupled plan's configuration pays for its GPUs. A rented one (its type
 * has `offers`) takes whole instances of one of them, no more GPUs per node than an instance holds,
 * at the price per GPU and on the network the offer gives (pricingOptions, as its search priced
 * it); any other pays `price` per GPU-hour on the request's network.
 */
export function pricingProblems(
  r: CandidateSearch,
  c: Paid,
  paid: { offers?: readonly Offer[]; price: number | null },
): string[] {
  if (paid.offers) {
    const offer = c.offer
      ? paid.offers.find(
          (o) =>
            o.provider === c.offer!.provider &&
            o.instance === c.offer!.instance &&
            o.gpuId === c.gpu.id &&
            o.usdPerHour === c.offer!.usdPerHour &&
            o.gpusPerInstance === c.offer!.gpusPerInstance &&
            o.billing === c.offer!.billing,
        )
      : undefined;
    if (!offer)
      return [
        c.offer
          ? `rents ${c.offer.provider} ${c.offer.instance} at $${c.offer.usdPerHour}/h, which is not an offer for ${c.gpu.id}`
          : `rents ${c.gpu.id} but names no offer`,
      ];
    const [o] = pricingOptions(
      c.gpu,
      [offer],
      r.interNodeGbpsStated ? r.interNodeGbps : undefined,
      r.interNodeTransport,
    );
    const problems: string[] = [];
    if (c.gpusPerNode > o.maxPerNode)
      problems.push(`${c.gpusPerNode} GPUs per node on ${offer.instance}, which holds ${o.maxPerNode}`);
    const price = o.nodeUsdPerHour(c.gpusPerNode)! / c.gpusPerNode;
    if (c.priceUsdPerGpuHour === null || !close(c.priceUsdPerGpuHour, price))
      problems.push(`pays ${c.priceUsdPerGpuHour} per GPU-hour, the offer ${price}`);
    if (c.interNodeGbps !== o.interNodeGbps || c.interNodeTransport !== o.interNodeTransport)
      problems.push(
        `timed on ${c.interNodeGbps} Gbps ${c.interNodeTransport}, the offer's network is ${o.interNodeGbps} Gbps ${o.interNodeTransport}`,
      );
    return problems;
  }
  const problems: string[] = [];
  if (c.offer)
    problems.push(`names the offer ${c.offer.instance}, but ${c.gpu.id} is not rented from offers`);
  if (
    (c.priceUsdPerGpuHour === null) !== (paid.price === null) ||
    (c.priceUsdPerGpuHour !== null && !close(c.priceUsdPerGpuHour, paid.price!))
  )
    problems.push(`pays ${c.priceUsdPerGpuHour} per GPU-hour, its price is ${paid.price}`);
  const net = r.interNodeGbps(c.gpu),
    transport = r.interNodeTransport ?? 'RDMA';
  if (c.interNodeGbps !== net || c.interNodeTransport !== transport)
    problems.push(
      `timed on ${c.interNodeGbps} Gbps ${c.interNodeTransport}, the request's network is ${net} Gbps ${transport}`,
    );
  return problems;
}

/**
 * Checks a plan against the request from scratch: every job placed exactly once (or reported
 * unplaced where that is allowed); each configuration re-predicted by the predictor with its layout
 * (fits in memory, hours and cost as reported); each run within its release and deadline; the
 * schedule replayed per GPU type: at no moment more GPUs in use than the inventory holds; the
 * reported peak usage and objective value as recomputed. Returns the problems found (none: the plan holds).
 */
export async function verifyFleetPlan(r: FleetRequest, plan: FleetPlan): Promise<string[]> {
  const problems: string[] = [];
  if (plan.assignments.length === 0 && plan.objectiveValue === null) return problems; // no plan to check
  const types = availableTypes(r);
  const byId = new Map(types.map((t) => [t.gpu.id, t]));
  const seen = new Map<string, number>();
  for (const a of plan.assignments) seen.set(a.jobId, (seen.get(a.jobId) ?? 0) + 1);
  for (const u of plan.unplaced) seen.set(u.jobId, (seen.get(u.jobId) ?? 0) + 1);
  for (const job of r.jobs) {
    const n = seen.get(job.id) ?? 0;
    if (n !== 1) problems.push(`job ${job.id} appears ${n} times in the plan`);
  }
  if (plan.unplaced.length && !r.allowUnplaced && plan.status !== 'INFEASIBLE')
    problems.push(`jobs left out (${plan.unplaced.map((u) => u.jobId).join(', ')}) but allowUnplaced is off`);
  const runs = new Map<string, Interval[]>();
  for (const a of plan.assignments) {
    const job = r.jobs.find((x) => x.id === a.jobId);
    if (!job) {
      problems.push(`assignment for unknown job ${a.jobId}`);
      continue;
    }
    const t = byId.get(a.gpu.id);
    if (!t) {
      problems.push(
        `job ${a.jobId}: ${a.gpu.id} is not available (not in the inventory${r.allowOnDemand ? ' nor on demand' : ', on-demand off'})`,
      );
      continue;
    }
    if (
      a.nodes < 1 ||
      a.nodes > r.maxNodes ||
      !r.gpusPerNodeChoices.includes(a.gpusPerNode) ||
      a.gpus !== a.nodes * a.gpusPerNode
    )
      problems.push(`job ${a.jobId}: layout ${a.nodes}x${a.gpusPerNode} is not allowed`);
    // The job's own precisions: those its candidates were searched in (FP8 left out by default for a CNN).
    if (!jobPrecisions(r, job.model).includes(a.precision))
      problems.push(`job ${a.jobId}: precision ${a.precision} is not allowed`);
    for (const x of pricingProblems(r, a, t)) problems.push(`job ${a.jobId}: ${x}`);
    let p;
    try {
      p = await predictorOf(r).predict(configurationRequest(r, job, t.gpu, a));
    } catch (e) {
      problems.push(`job ${a.jobId}: ${e instanceof Error ? e.message : String(e)}`);
      continue;
    }
    if (!p.fitsInMemory)
      problems.push(
        `job ${a.jobId}: needs ${p.memory.totalGb.toFixed(1)} GB per GPU, ${t.gpu.id} has ${t.gpu.usableMemoryGb.toFixed(1)} usable`,
      );
    if (Math.abs(p.totalHours! - a.totalHours) > 1e-6 * p.totalHours!)
      problems.push(`job ${a.jobId}: reported ${a.totalHours} h, predicted ${p.totalHours} h`);
    const p90 = p.totalHoursP90 ?? p.totalHours!;
    if (!close(a.totalHoursP90, p90))
      problems.push(`job ${a.jobId}: reported ${a.totalHoursP90} h at P90, predicted ${p90} h`);
    const mine = forJob(r, job);
    const held = heldHoursOf(mine, { totalHours: p.totalHours!, totalHoursP90: p90 });
    if (
      (p.costUsd === null) !== (a.costUsd === null) ||
      (p.costUsd !== null && Math.abs(p.costUsd - a.costUsd!) > 1e-6 * Math.max(1, p.costUsd))
    )
      problems.push(`job ${a.jobId}: reported cost ${a.costUsd}, predicted ${p.costUsd}`);
    if (!(a.startHours >= job.releaseHours - 1e-9))
      problems.push(
        `job ${a.jobId}: starts at ${a.startHours} h, before its release at ${job.releaseHours} h`,
      );
    if (!close(a.endHours, a.startHours + held))
      problems.push(
        `job ${a.jobId}: ends at ${a.endHours} h, but starts at ${a.startHours} h and takes ${held} h${mine.deadlineConfidence ? ' at P90' : ''}`,
      );
    if (!within(a.startHours + held, job.deadlineHours))
      problems.push(
        `job ${a.jobId}: ends at ${a.startHours + held} h${mine.deadlineConfidence ? ' at P90' : ''}, deadline ${job.deadlineHours} h`,
      );
    // The replay takes the times as reported (each checked against the prediction just above).
    if (t.limit !== null)
      runs.set(t.gpu.id, [
        ...(runs.get(t.gpu.id) ?? []),
        { start: a.startHours, end: a.endHours, gpus: a.gpus },
      ]);
  }
  // Replay: the usage of a type only rises where a run starts, so checking every start checks every moment.
  for (const [id, rs] of runs) {
    const limit = byId.get(id)!.limit!;
    for (const x of rs) {
      const n = inUseAt(rs, x.start);
      if (n > limit) {
        problems.push(
          `${id}: ${n} GPUs in use at ${+x.start.toPrecision(6)} h, the inventory holds ${limit}`,
        );
        break;
      }
    }
    const reported = plan.gpuUsage.find((u) => u.gpu.id === id);
    const peak = peakUse(rs);
    if (!reported || reported.used !== peak)
      problems.push(`${id}: peak usage reported ${reported?.used ?? 'nowhere'}, replayed ${peak}`);
  }
  if (plan.objectiveValue !== null) {
    const v = objectiveOfPlan(r, plan.assignments);
    if (!(Math.abs(v - plan.objectiveValue) <= 1e-6 * Math.max(1, Math.abs(v))))
      problems.push(`objective value reported ${plan.objectiveValue}, recomputed ${v}`);
  }
  return problems;
}
