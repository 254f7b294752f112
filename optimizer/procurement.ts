// Procurement: when to buy how many GPUs of each type for a portfolio of recurring training jobs,
// and which runs go to the owned GPUs and which to rented (on-demand) ones, month by month, for the
// lowest total cost of ownership over a horizon of months.
//
// Purchases are scheduled: GPUs ordered in month m arrive leadTimeMonths later and serve from then
// to the end of the horizon (never sold). Costs. Capital: a bought GPU is written off straight-line
// over its lifetime, so it costs price x (months in service within the horizon) / lifetime (a
// horizon beyond the lifetime includes replacements). Power: GPU-hours run on owned GPUs x power (W)
// x electricity price. Rental: whole instances of an offer x hours x its price (or GPU-hours x a
// per-GPU-hour price). Owned capacity in a month is the
// GPUs in service x hoursPerMonth x utilization GPU-hours: runs are assumed to pack back to back, and
// utilization (< 1) is the slack for scheduling, maintenance and idle time.
//
// Months are grouped into segments of consecutive months with identical runs, also split where
// orders can first arrive (month 1 + leadTimeMonths). Within a segment nothing changes, so the GPUs
// in service can be taken constant over it without loss (costs are linear in the months; of the
// counts a nondecreasing schedule takes inside a segment, the cheapest one, held throughout, keeps
// the schedule nondecreasing), and arrivals fall on segment starts. The MIP (g: a segment of w[g]
// months from month s[g]; R[j,g] runs of job j per month in it; N[t,g] = sum_{g' <= g} b[t,g']):
//
//   b[t,g]    integer, GPUs of type t arriving at the start of segment g (ordered s[g] - lead[t] >= 1)
//                                                                     cost price[t] (H - s[g] + 1) / life[t]
//   z[j,c,g]  binary: owned configuration c (on type t) is used for job j in segment g
//   x[j,c,g]  integer, runs of job j per month on owned config c     cost w[g] gpuh(c) kW[t] eur[t]
//   y[j,g]    integer, runs of job j per month rented                cost w[g] rent(j)
//
//   demand[j,g]: sum_c x[j,c,g] + y[j,g]                = R[j,g]
//   cap[t,g]:    sum_{j,c on t} gpuh(c) x[j,c,g] - hoursPerMonth util[t] N[t,g] <= 0
//   fits[j,c,g]: N[t,g] - gpus(c) z[j,c,g]               >= 0    a config needs that many GPUs at once
//   on[j,c,g]:   x[j,c,g] - R[j,g] z[j,c,g]              <= 0
//   most[t]:     sum_g b[t,g]                            <= maxCount[t]
//
// Renting has no capacity limit, so each job is rented only in its cheapest rentable configuration
// (rent(j)); owned configurations are pruned to the Pareto set over (GPUs, GPU-hours per run) per job
// and type: a configuration needing no fewer GPUs and no fewer GPU-hours (hence no less power) than
// another of the same type is never needed. Configurations and their times come from the request's
// CandidatePredictor (optimizer/candidate-predictor.ts), as the fleet's do.
import type { EvidenceLevel } from '../predictor/learned/evidence.js';
import type { SoftwareStack } from '../predictor/software.js';
import type { ModelDef } from '../predictor/types.js';
import type { AttentionImplementation, CatalogGpu, NetworkTransport, Precision } from '../seeds/types.js';
import type { Offer } from './offers.js';
import { predictorOf } from './candidate-predictor.js';
import {
  utilizationOf,
  type CandidateSearch,
  type Plan,
  type PlanOffer,
  type PlanUtilization,
  type RecommendRequest,
} from './search-types.js';
import { MipBuilder, modelSize, type MipModel, type MipStart, type ModelSize } from './milp/model.js';
import {
  solveLexicographic,
  solveMip,
  unsolvedOutcome,
  type MipStatus,
  type MipOutcome,
} from './milp/solver.js';
import { VerificationError } from './milp/verify.js';
import { paretoFilter } from './pareto.js';
import {
  ALL,
  configurationRequest,
  forJob,
  heldHoursOf,
  jobSearch,
  networkUnstated,
  NETWORK_UNSTATED_HINT,
  outOfMemory,
  pricingProblems,
  usable,
  type Blocker,
} from './fleet.js';
import type { PlanParallelism } from '../predictor/parallel.js';

export interface ProcurementJob {
  id: string;
  model: ModelDef;
  /** Work per run in the model's throughput unit. */
  samples: number;
  /** Runs in each month of the horizon (length = horizonMonths). */
  runsByMonth: number[];
  /** Each run must finish within this many hours. */
  deadlineHours: number;
  batchSizes?: number[];
  /** The software stack the job runs under (absent: eager PyTorch). */
  stack?: SoftwareStack;
  /** How the job's attention cores run (absent: predict's default for its model and stack). */
  attention?: AttentionImplementation;
  /** Hold this job's deadline at the P90 step time, or not, whatever the request says (absent: the request's). */
  deadlineConfidence?: boolean;
}

export interface BuyOption {
  usdPerGpu: number;
  lifetimeMonths: number;
  /** Average draw per GPU while it trains, W (host share and cooling included if you want them counted). */
  powerW: number;
  electricityUsdPerKwh: number;
  /** Fraction of an owned GPU's hours that training can use (scheduling, maintenance, idle). */
  utilization: number;
  /** At most this many may be bought over the horizon. */
  maxCount?: number;
  /** Months from ordering to service (default 0: a GPU ordered in month m trains in month m). */
  leadTimeMonths?: number;
}

export interface GpuOption {
  gpu: CatalogGpu;
  buy: BuyOption | null;
  /**
   * On-demand price per GPU-hour (with `rentOffers`: the cheapest offer's, a whole instance used);
   * null: this type cannot be rented. The break-even utilization compares buying with it.
   */
  rentUsdPerGpuHour: number | null;
  /** What renting this type takes: whole instances of one of these offers (absent: GPU-hours at rentUsdPerGpuHour). */
  rentOffers?: Offer[];
}

export interface ProcurementRequest extends CandidateSearch {
  jobs: ProcurementJob[];
  horizonMonths: number;
  hoursPerMonth: number;
  options: GpuOption[];
}

export interface RunConfig extends PlanUtilization {
  gpu: CatalogGpu;
  nodes: number;
  gpusPerNode: number;
  gpus: number;
  batchSizePerGpu: number;
  gradAccumSteps: number;
  precision: Precision;
  /** How a run splits the model over its GPUs. */
  parallelism: PlanParallelism;
  hoursPerRun: number;
  /** Hours of one run at the predictor's P90 step time (equal to hoursPerRun for the analytical estimate). */
  hoursPerRunP90: number;
  gpuHoursPerRun: number;
  /** Power (owned) or rental (rented) cost of one run. */
  usdPerRun: number;
  /** What a run pays per GPU it uses an hour: power (owned), or the rental (a rented instance's price / the GPUs it uses). */
  priceUsdPerGpuHour: number;
  /** The offer a rented run takes whole instances of (nodes = instances); null when owned or rented per GPU-hour. */
  offer: PlanOffer | null;
  /** The inter-node network a run was timed on (a rented one: its offer's, unless the request states one). */
  interNodeGbps: number;
  interNodeTransport: NetworkTransport;
  /** What stands behind the time (the plan's evidence as `recommend` gives it). */
  evidenceLevel: EvidenceLevel;
  evidence: string;
  /** The user's recorded runs that moved the time. */
  calibrationRuns: number;
}

export interface Allocation {
  jobId: string;
  owned: boolean;
  config: RunConfig;
  runsPerMonth: number;
  /** 1-based months this allocation applies to. */
  months: number[];
}

/** GPUs of one type ordered in one month. */
export interface Order {
  gpu: CatalogGpu;
  count: number;
  /** 1-based month of the order, and the first month the GPUs train (orderMonth + leadTimeMonths). */
  orderMonth: number;
  arrivalMonth: number;
  /** Capital charged to the horizon: count x price x months in service / lifetime. */
  capitalUsd: number;
}

/** Everything bought of one type over the horizon. */
export interface Purchase {
  gpu: CatalogGpu;
  count: number;
  capitalUsd: number;
  powerUsd: number;
  /** Share of these GPUs' hours in service that training uses. */
  utilization: number | null;
}

export interface BreakEven {
  gpu: CatalogGpu;
  /** Share of a month's hours an owned GPU must train for buying to cost no more than renting; null when buying never pays. */
  breakEvenUtilization: number | null;
  rentUsdPerGpuHour: number;
  /** Capital per GPU per month plus power per GPU-hour, the two sides of the comparison. */
  capitalUsdPerGpuMonth: number;
  powerUsdPerGpuHour: number;
  /** Utilization the plan gets out of the GPUs it buys of this type (null when it buys none). */
  plannedUtilization: number | null;
  note: string;
}

export interface MonthSummary {
  month: number;
  ownedGpuHours: number;
  ownedCapacityGpuHours: number;
  rentedGpuHours: number;
  powerUsd: number;
  rentalUsd: number;
  /** GPUs in service this month, per type bought. */
  ownedGpus: { gpu: CatalogGpu; count: number }[];
}

export interface ShortJob {
  jobId: string;
  reason: Blocker;
  message: string;
}

export interface ProcurementPlan extends MipOutcome {
  objectiveValue: number | null;
  /** When each purchase is ordered and arrives. */
  orders: Order[];
  purchases: Purchase[];
  allocations: Allocation[];
  months: MonthSummary[];
  capitalUsd: number | null;
  powerUsd: number | null;
  rentalUsd: number | null;
  totalUsd: number | null;
  /** Everything rented at each job's cheapest rental; null when some job cannot be rented. */
  allRentUsd: number | null;
  breakEven: BreakEven[];
  /** Jobs whose runs cannot all be carried (INFEASIBLE only). */
  unplaced: ShortJob[];
  stats: ModelSize & { candidates: number; keptCandidates: number };
}

/** Capital of one GPU serving `months` months of the horizon (straight-line write-off). */
const capitalPerGpu = (b: BuyOption, months: number) => (b.usdPerGpu * months) / b.lifetimeMonths;
const leadOf = (b: BuyOption) => b.leadTimeMonths ?? 0;
const powerPerGpuHour = (b: BuyOption) => (b.powerW / 1000) * b.electricityUsdPerKwh;

/** A job's search on one type: unpriced (owned: its cost is power), or at what renting it takes. */
const search = (
  r: ProcurementRequest,
  job: ProcurementJob,
  o: GpuOption,
  rented: boolean,
  deadline: boolean,
  limit: number,
): RecommendRequest =>
  jobSearch(r, job, o.gpu, {
    price: rented ? o.rentUsdPerGpuHour : null,
    ...(rented && o.rentOffers ? { offers: o.rentOffers } : {}),
    deadlineHours: deadline ? job.deadlineHours : undefined,
    limit,
    objective: rented ? 'COST' : 'TIME',
  });

/** A run's configuration from its plan: owned at `powerUsdPerGpuHour`, or rented as the plan priced it. */
const config = (gpu: CatalogGpu, p: Plan, powerUsdPerGpuHour: number | null): RunConfig => {
  const gpus = p.nodes * p.gpusPerNode;
  const usdPerGpuHour = powerUsdPerGpuHour ?? p.priceUsdPerGpuHour!;
  return {
    gpu,
    nodes: p.nodes,
    gpusPerNode: p.gpusPerNode,
    gpus,
    batchSizePerGpu: p.batchSizePerGpu,
    gradAccumSteps: p.gradAccumSteps,
    precision: p.precision,
    parallelism: p.parallelism,
    hoursPerRun: p.totalHours,
    hoursPerRunP90: p.totalHoursP90,
    gpuHoursPerRun: p.totalHours * gpus,
    usdPerRun: powerUsdPerGpuHour === null ? p.costUsd! : p.totalHours * gpus * usdPerGpuHour,
    priceUsdPerGpuHour: usdPerGpuHour,
    offer: null,
    interNodeGbps: p.interNodeGbps,
    interNodeTransport: p.interNodeTransport,
    evidenceLevel: p.evidenceLevel,
    evidence: p.evidence,
    calibrationRuns: p.calibrationRuns,
    ...utilizationOf(p),
  };
};

export interface ProcurementCandidates {
  /** Per job: owned configurations (pruned) with the option index of their type. */
  owned: { option: number; config: RunConfig }[][];
  /** Per job: the cheapest rental, or null. */
  rent: ({ option: number; config: RunConfig } | null)[];
  /** Jobs no rental was found for while runs across instances of offers that state no network were turned away. */
  rentNetworkUnstated: string[];
  total: number;
}

export async function procurementCandidates(r: ProcurementRequest): Promise<ProcurementCandidates> {
  const predictor = predictorOf(r);
  const owned: ProcurementCandidates['owned'] = [],
    rent: ProcurementCandidates['rent'] = [],
    rentNetworkUnstated: string[] = [];
  let total = 0;
  for (const job of r.jobs) {
    const mine: ProcurementCandidates['owned'][number] = [];
    let best: { option: number; config: RunConfig } | null = null;
    let unstated = false;
    for (const [i, o] of r.options.entries()) {
      if (o.buy) {
        const plans = (await predictor.search(search(r, job, o, false, true, ALL))).plans.filter(usable);
        total += plans.length;
        const cs = plans.map((p) => config(o.gpu, p, powerPerGpuHour(o.buy!)));
        mine.push(
          ...paretoFilter(cs, (c) => [c.gpus, c.gpuHoursPerRun]).map((config) => ({ option: i, config })),
        );
      }
      if (o.rentUsdPerGpuHour !== null) {
        const rec = await predictor.search(search(r, job, o, true, true, ALL));
        unstated ||= networkUnstated(rec);
        const p = rec.plans.find((p) => usable(p) && p.costUsd !== null);
        if (p) {
          total++;
          // The offer it rents, where the type rents from offers (else a per-GPU-hour price, as given).
          const c = { ...config(o.gpu, p, null), offer: o.rentOffers ? p.offer : null };
          if (!best || c.usdPerRun < best.config.usdPerRun) best = { option: i, config: c };
        }
      }
    }
    owned.push(mine);
    rent.push(best);
    if (!best && unstated) rentNetworkUnstated.push(job.id);
  }
  return { owned, rent, rentNetworkUnstated, total };
}

async function diagnose(
  request: ProcurementRequest,
  job: ProcurementJob,
): Promise<{ reason: Blocker; message: string }> {
  const r = forJob(request, job);
  const usableOptions = r.options.filter((o) => o.buy || o.rentUsdPerGpuHour !== null);
  const types = usableOptions.map((o) => o.gpu);
  if (types.length === 0) return { reason: 'INVENTORY', message: 'no GPU type can be bought or rented' };
  const predictor = predictorOf(r);
  // Unpriced, on the request's network: what is asked here is whether any configuration fits and how fast.
  const free = await Promise.all(
    usableOptions.map((o) => predictor.search(search(r, job, o, false, false, ALL))),
  );
  if (!free.some((x) => x.plans.some(usable))) {
    const oom = free.some(outOfMemory);
    return oom
      ? {
          reason: 'MEMORY',
          message: `does not fit in the memory of ${types.map((g) => g.id).join(', ')} at the batch sizes and precisions allowed`,
        }
      : {
          reason: 'INVENTORY',
          message: `none of ${types.map((g) => g.id).join(', ')} supports the precisions allowed`,
        };
  }
  const fastest = free
    .map((x) => x.plans.find(usable))
    .filter((p): p is Plan => !!p)
    .sort((a, b) => heldHoursOf(r, a) - heldHoursOf(r, b))[0];
  return {
    reason: 'DEADLINE',
    message: `the fastest configuration takes ${heldHoursOf(r, fastest).toPrecision(4)} h per run${r.deadlineConfidence ? ' at the P90 step time' : ''} (${fastest.nodes}x${fastest.gpusPerNode} ${fastest.gpu.id}), beyond the ${job.deadlineHours} h deadline`,
  };
}

interface Groups {
  /** Consecutive 1-based months of each segment. */
  months: number[][];
  runs: number[][];
}

/**
 * Segments of consecutive months with identical runs for every job, also split at the first month
 * an order of each buyable type can arrive (1 + its lead time).
 */
function monthGroups(r: ProcurementRequest): Groups {
  const arrivals = new Set(r.options.filter((o) => o.buy).map((o) => 1 + leadOf(o.buy!)));
  const months: number[][] = [],
    runs: number[][] = [];
  for (let m = 1; m <= r.horizonMonths; m++) {
    const v = r.jobs.map((j) => j.runsByMonth[m - 1]);
    const last = runs[runs.length - 1];
    if (last && !arrivals.has(m) && last.every((x, j) => x === v[j])) months[months.length - 1].push(m);
    else {
      months.push([m]);
      runs.push(v);
    }
  }
  return { months, runs };
}

function buildProcurementMip(r: ProcurementRequest, c: ProcurementCandidates, G: Groups, shortfall: boolean) {
  const b = new MipBuilder('procurement');
  const H = r.horizonMonths;
  const nG = G.months.length;
  const w = G.months.map((ms) => ms.length);
  const startOf = (g: number) => G.months[g][0];
  // arrive[t][g]: GPUs of type t arriving at the start of segment g (null where no order can arrive);
  // each bounded by what the owned work could ever need.
  const arrive = r.options.map((o, t) => {
    if (!o.buy) return null;
    let ub = 0;
    for (let g = 0; g < nG; g++) {
      let need = 0;
      r.jobs.forEach((_, j) => {
        const own = c.owned[j].filter((x) => x.option === t);
        if (own.length) need += G.runs[g][j] * Math.max(...own.map((x) => x.config.gpuHoursPerRun));
      });
      ub = Math.max(ub, Math.ceil(need / (r.hoursPerMonth * o.buy.utilization) - 1e-9));
    }
    for (const own of c.owned) for (const x of own) if (x.option === t) ub = Math.max(ub, x.config.gpus);
    if (o.buy.maxCount !== undefined) ub = Math.min(ub, o.buy.maxCount);
    return G.months.map((_, g) =>
      startOf(g) - leadOf(o.buy!) >= 1 && ub > 0
        ? b.addVar(`b_${t}_${g}`, 'integer', 0, ub, capitalPerGpu(o.buy!, H - startOf(g) + 1))
        : null,
    );
  });
  /** N[t,g] as terms: every arrival up to segment g. */
  const inService = (t: number, g: number, coef: number): [number, number][] =>
    (arrive[t] ?? []).slice(0, g + 1).flatMap((v) => (v === null ? [] : [[v, coef] as [number, number]]));
  r.options.forEach((o, t) => {
    const vs = (arrive[t] ?? []).filter((v): v is number => v !== null);
    if (o.buy?.maxCount !== undefined && vs.length > 1)
      b.addRow(
        `most_${t}`,
        vs.map((v) => [v, 1] as [number, number]),
        -Infinity,
        o.buy.maxCount,
      );
  });
  const z: number[][][] = [],
    x: number[][][] = [],
    y: (number | null)[][] = [],
    u: (number | null)[][] = [];
  const capTerms: [number, number][][][] = r.options.map(() => G.months.map(() => []));
  r.jobs.forEach((_, j) => {
    z.push([]);
    x.push([]);
    c.owned[j].forEach((oc, k) => {
      const t = oc.option,
        buy = r.options[t].buy!;
      z[j].push([]);
      x[j].push(
        G.months.map((_, g) => {
          const R = G.runs[g][j];
          if (R === 0 || inService(t, g, 1).length === 0) {
            z[j][k].push(-1);
            return -1;
          }
          const zi = b.addVar(`z_${j}_${k}_${g}`, 'binary', 0, 1);
          z[j][k].push(zi);
          b.addRow(`fits_${j}_${k}_${g}`, [...inService(t, g, 1), [zi, -oc.config.gpus]], 0, Infinity);
          const xi = b.addVar(
            `x_${j}_${k}_${g}`,
            'integer',
            0,
            R,
            w[g] * oc.config.gpuHoursPerRun * powerPerGpuHour(buy),
          );
          b.addRow(
            `on_${j}_${k}_${g}`,
            [
              [xi, 1],
              [zi, -R],
            ],
            -Infinity,
            0,
          );
          capTerms[t][g].push([xi, oc.config.gpuHoursPerRun]);
          return xi;
        }),
      );
    });
    const rent = c.rent[j];
    y.push(
      G.months.map((_, g) =>
        rent && G.runs[g][j] > 0
          ? b.addVar(`y_${j}_${g}`, 'integer', 0, G.runs[g][j], w[g] * rent.config.usdPerRun)
          : null,
      ),
    );
    u.push(
      G.months.map((_, g) =>
        shortfall && G.runs[g][j] > 0 ? b.addVar(`u_${j}_${g}`, 'integer', 0, G.runs[g][j], 0) : null,
      ),
    );
    G.months.forEach((_, g) => {
      const R = G.runs[g][j];
      if (R === 0) return;
      const terms: [number, number][] = [];
      x[j].forEach((xs) => {
        if (xs[g] >= 0) terms.push([xs[g], 1]);
      });
      if (y[j][g] !== null) terms.push([y[j][g]!, 1]);
      if (u[j][g] !== null) terms.push([u[j][g]!, 1]);
      b.addRow(`demand_${j}_${g}`, terms, R, R);
    });
  });
  r.options.forEach((o, t) => {
    if (!o.buy) return;
    G.months.forEach((_, g) => {
      if (capTerms[t][g].length)
        b.addRow(
          `cap_${t}_${g}`,
          [...capTerms[t][g], ...inService(t, g, -r.hoursPerMonth * o.buy!.utilization)],
          -Infinity,
          0,
        );
    });
  });
  return { model: b.build(), arrive, z, x, y, u };
}

/** The procurement MIP and the columns of its decisions (arrive: GPUs bought per type and month group, x: owned runs, y: rented runs). */
type ProcurementMip = ReturnType<typeof buildProcurementMip>;

/** The procurement MIP and its all-rent warm start (bench/solvers.ts hands it to both solvers). */
export async function procurementMip(r: ProcurementRequest): Promise<{
  model: MipModel;
  start: MipStart | undefined;
  candidates: number;
  kept: number;
}> {
  const c = await procurementCandidates(r);
  const m = buildProcurementMip(r, c, monthGroups(r), false);
  return {
    model: m.model,
    start: allRent(m),
    candidates: c.total,
    kept: c.owned.reduce((s, o) => s + o.length, 0) + c.rent.filter(Boolean).length,
  };
}

/**
 * Buy nothing, rent every run: feasible whenever every job can be rented, and a start that lets
 * HiGHS prune from the first node (20 jobs: 5.4 s cold, 1.9 s warm in bench/solvers.ts's instance).
 */
function allRent(m: ProcurementMip): MipStart | undefined {
  const start = new Array<number>(m.model.vars.length).fill(0);
  for (const [j, ys] of m.y.entries()) {
    for (const [g, yi] of ys.entries()) {
      const R = m.model.rows.find((row) => row.name === `demand_${j}_${g}`);
      if (!R) continue;
      if (yi === null) return undefined; // this job cannot be rented
      start[yi] = R.lb;
    }
  }
  return start;
}

/** Ids for a note: the first ten, then how many more. */
const listed = (ids: string[]) =>
  ids.slice(0, 10).join(', ') + (ids.length > 10 ? ` and ${ids.length - 10} more` : '');

export async function planProcurement(r: ProcurementRequest): Promise<ProcurementPlan> {
  const t0 = performance.now();
  const cands = await procurementCandidates(r);
  const G = monthGroups(r);
  const stats0 = {
    candidates: cands.total,
    keptCandidates: cands.owned.reduce((s, o) => s + o.length, 0) + cands.rent.filter(Boolean).length,
  };
  const notes: string[] = [];
  if (cands.rentNetworkUnstated.length)
    notes.push(
      `no rental within the deadline was found for ${listed(cands.rentNetworkUnstated)}: ${NETWORK_UNSTATED_HINT}`,
    );
  const allRentUsd = cands.rent.every(Boolean)
    ? r.jobs.reduce(
        (s, job, j) => s + job.runsByMonth.reduce((a, b) => a + b, 0) * cands.rent[j]!.config.usdPerRun,
        0,
      )
    : null;
  const breakEven = breakEvens(r);
  const none = (
    status: MipStatus,
    solver: string,
    size: ModelSize,
    unplaced: ShortJob[],
  ): ProcurementPlan => ({
    ...unsolvedOutcome(status, solver, t0, notes),
    objectiveValue: null,
    orders: [],
    purchases: [],
    allocations: [],
    months: [],
    capitalUsd: null,
    powerUsd: null,
    rentalUsd: null,
    totalUsd: null,
    allRentUsd,
    breakEven,
    unplaced,
    stats: { ...stats0, ...size },
  });

  const hopeless: ShortJob[] = [];
  for (const [j, job] of r.jobs.entries())
    if (cands.owned[j].length === 0 && !cands.rent[j] && job.runsByMonth.some((x) => x > 0))
      hopeless.push({ jobId: job.id, ...(await diagnose(r, job)) });
  if (hopeless.length)
    return none(
      'INFEASIBLE',
      'none (infeasible before solving: a job has no configuration that meets its deadline)',
      { variables: 0, integers: 0, constraints: 0, nonzeros: 0 },
      hopeless,
    );

  const m = buildProcurementMip(r, cands, G, false);
  const start = allRent(m);
  const res = await solveMip(m.model, { ...r.solve, start });
  notes.push(...res.notes);
  const size = modelSize(m.model);
  if (res.status === 'INFEASIBLE') {
    // Only purchase caps (maxCount) on jobs that cannot be rented can do this: find the runs that do not fit.
    const d = buildProcurementMip(r, cands, G, true);
    const coefs = d.model.vars.map((v) => (v.name.startsWith('u_') ? 1 : 0));
    const lex = await solveLexicographic(d.model, [{ name: 'shortfall', coefs, sense: 'min' }], r.solve);
    const short: ShortJob[] = [];
    if (lex.final.values) {
      const vals = lex.final.values;
      r.jobs.forEach((job, j) => {
        const months = G.months.flatMap((ms, g) =>
          d.u[j][g] !== null && vals[d.u[j][g]!] > 0.5
            ? ms.map((mo) => `${mo}: ${Math.round(vals[d.u[j][g]!])} of ${G.runs[g][j]} runs`)
            : [],
        );
        if (months.length)
          short.push({
            jobId: job.id,
            reason: 'INVENTORY',
            message: `${cands.rent[j] ? '' : 'cannot be rented, and '}the GPUs that may be bought (maxCount) cannot carry all its runs; short in month ${months.slice(0, 6).join(', ')}${months.length > 6 ? ', ...' : ''}`,
          });
      });
    }
    return none('INFEASIBLE', res.solver, size, short);
  }
  if (!res.values) return none(res.status, res.solver, size, []);

  const plan = planFromSolution(r, cands, G, m, res.values, {
    status: res.status,
    solver: res.solver,
    optimalityProven: res.optimalityProven,
    gap: res.gap,
    bestBound: res.bestBound,
    notes,
    allRentUsd,
    breakEven,
    stats: { ...stats0, ...size },
    t0,
  });
  const problems = await verifyProcurementPlan(r, plan);
  if (problems.length) throw new VerificationError(problems);
  return plan;
}

/** How a solve ended (the solve report less its time, taken from t0) and what the answer reports beside the plan itself. */
interface SolveOutcome extends Omit<MipOutcome, 'solveTimeMs'> {
  allRentUsd: number | null;
  breakEven: BreakEven[];
  stats: ProcurementPlan['stats'];
  /** performance.now() when planning began, for the answer's elapsed time. */
  t0: number;
}

function planFromSolution(
  r: ProcurementRequest,
  candidates: ProcurementCandidates,
  groups: Groups,
  mip: ProcurementMip,
  values: number[],
  outcome: SolveOutcome,
): ProcurementPlan {
  const orders: Order[] = [];
  r.options.forEach((o, t) =>
    (mip.arrive[t] ?? []).forEach((bi, g) => {
      if (bi === null || values[bi] < 0.5) return;
      const count = Math.round(values[bi]);
      const arrivalMonth = groups.months[g][0];
      orders.push({
        gpu: o.gpu,
        count,
        orderMonth: arrivalMonth - leadOf(o.buy!),
        arrivalMonth,
        capitalUsd: count * capitalPerGpu(o.buy!, r.horizonMonths - arrivalMonth + 1),
      });
    }),
  );
  const allocations: Allocation[] = [];
  r.jobs.forEach((job, j) => {
    candidates.owned[j].forEach((oc, k) => {
      (mip.x[j][k] ?? []).forEach((xi, g) => {
        if (xi >= 0 && values[xi] > 0.5)
          allocations.push({
            jobId: job.id,
            owned: true,
            config: oc.config,
            runsPerMonth: Math.round(values[xi]),
            months: groups.months[g],
          });
      });
    });
    mip.y[j].forEach((yi, g) => {
      if (yi !== null && values[yi] > 0.5)
        allocations.push({
          jobId: job.id,
          owned: false,
          config: candidates.rent[j]!.config,
          runsPerMonth: Math.round(values[yi]),
          months: groups.months[g],
        });
    });
  });
  // The same configuration at the same runs per month in several month groups reads as one line.
  const merged = new Map<string, Allocation>();
  for (const a of allocations) {
    const c = a.config;
    const key = [
      a.jobId,
      a.owned,
      c.gpu.id,
      c.nodes,
      c.gpusPerNode,
      c.batchSizePerGpu,
      c.precision,
      JSON.stringify(c.parallelism),
      a.runsPerMonth,
    ].join('|');
    const prev = merged.get(key);
    if (prev) prev.months = [...prev.months, ...a.months].sort((x, y) => x - y);
    else merged.set(key, { ...a, months: [...a.months] });
  }
  return summarize(r, orders, [...merged.values()], outcome);
}

/** GPUs of each buyable type in service in each month (index: option, then month - 1). */
function inServiceByMonth(r: ProcurementRequest, orders: Order[]): number[][] {
  return r.options.map((o) => {
    const row = new Array<number>(r.horizonMonths).fill(0);
    for (const x of orders)
      if (x.gpu.id === o.gpu.id)
        for (let m = x.arrivalMonth; m <= r.horizonMonths; m++) row[m - 1] += x.count;
    return row;
  });
}

/** Costs, purchases, month table and break-even from orders and allocations (also used to check a plan). */
function summarize(
  r: ProcurementRequest,
  orders: Order[],
  allocations: Allocation[],
  meta: SolveOutcome,
): ProcurementPlan {
  const H = r.horizonMonths;
  const months: MonthSummary[] = Array.from({ length: H }, (_, i) => ({
    month: i + 1,
    ownedGpuHours: 0,
    ownedCapacityGpuHours: 0,
    rentedGpuHours: 0,
    powerUsd: 0,
    rentalUsd: 0,
    ownedGpus: [],
  }));
  const ownedHoursByType = new Map<string, number>();
  const powerByType = new Map<string, number>();
  for (const a of allocations) {
    for (const mo of a.months) {
      const row = months[mo - 1];
      const gh = a.runsPerMonth * a.config.gpuHoursPerRun;
      if (a.owned) {
        row.ownedGpuHours += gh;
        row.powerUsd += a.runsPerMonth * a.config.usdPerRun;
        ownedHoursByType.set(a.config.gpu.id, (ownedHoursByType.get(a.config.gpu.id) ?? 0) + gh);
        powerByType.set(
          a.config.gpu.id,
          (powerByType.get(a.config.gpu.id) ?? 0) + a.runsPerMonth * a.config.usdPerRun,
        );
      } else {
        row.rentedGpuHours += gh;
        row.rentalUsd += a.runsPerMonth * a.config.usdPerRun;
      }
    }
  }
  const service = inServiceByMonth(r, orders);
  const purchases: Purchase[] = [];
  r.options.forEach((o, t) => {
    const mine = orders.filter((x) => x.gpu.id === o.gpu.id);
    if (!o.buy || mine.length === 0) return;
    const hours = ownedHoursByType.get(o.gpu.id) ?? 0;
    const gpuMonths = service[t].reduce((a, b) => a + b, 0);
    purchases.push({
      gpu: o.gpu,
      count: mine.reduce((a, x) => a + x.count, 0),
      capitalUsd: mine.reduce((a, x) => a + x.capitalUsd, 0),
      powerUsd: powerByType.get(o.gpu.id) ?? 0,
      utilization: gpuMonths > 0 ? hours / (gpuMonths * r.hoursPerMonth) : null,
    });
    months.forEach((row, m) => {
      row.ownedCapacityGpuHours += service[t][m] * r.hoursPerMonth * o.buy!.utilization;
      if (service[t][m] > 0) row.ownedGpus.push({ gpu: o.gpu, count: service[t][m] });
    });
  });
  const capitalUsd = purchases.reduce((s, p) => s + p.capitalUsd, 0);
  const powerUsd = months.reduce((s, x) => s + x.powerUsd, 0);
  const rentalUsd = months.reduce((s, x) => s + x.rentalUsd, 0);
  const breakEven = meta.breakEven.map((b) => {
    const p = purchases.find((x) => x.gpu.id === b.gpu.id);
    return { ...b, plannedUtilization: p ? p.utilization : null };
  });
  const totalUsd = capitalUsd + powerUsd + rentalUsd;
  return {
    status: meta.status,
    objectiveValue: totalUsd,
    bestBound: meta.bestBound ?? (meta.optimalityProven ? totalUsd : null),
    gap: meta.gap ?? (meta.optimalityProven ? 0 : null),
    solver: meta.solver,
    optimalityProven: meta.optimalityProven,
    solveTimeMs: performance.now() - meta.t0,
    notes: meta.notes,
    orders,
    purchases,
    allocations,
    months,
    capitalUsd,
    powerUsd,
    rentalUsd,
    totalUsd,
    allRentUsd: meta.allRentUsd,
    breakEven,
    unplaced: [],
    stats: meta.stats,
  };
}

/**
 * Per GPU type that can be both bought and rented: the utilization u at which owning one GPU
 * (capital/lifetime per month + u x hoursPerMonth x power) costs the same as renting its hours
 * (u x hoursPerMonth x rent): u* = (price / lifetime) / (hoursPerMonth x (rent - power per hour)).
 */
export function breakEvens(r: Pick<ProcurementRequest, 'options' | 'hoursPerMonth'>): BreakEven[] {
  return r.options
    .filter((o) => o.buy && o.rentUsdPerGpuHour !== null)
    .map((o) => {
      const b = o.buy!,
        rent = o.rentUsdPerGpuHour!;
      const capM = b.usdPerGpu / b.lifetimeMonths,
        pwr = powerPerGpuHour(b);
      const u = rent > pwr ? capM / (r.hoursPerMonth * (rent - pwr)) : null;
      const note =
        u === null
          ? 'renting costs no more per hour than the electricity alone: buying never pays'
          : u > b.utilization
            ? `buying pays only above ${(100 * u).toFixed(1)}% utilization, more than the ${(100 * b.utilization).toFixed(0)}% an owned GPU is given`
            : `buying pays once an owned GPU trains more than ${(100 * u).toFixed(1)}% of the time`;
      return {
        gpu: o.gpu,
        breakEvenUtilization: u,
        rentUsdPerGpuHour: rent,
        capitalUsdPerGpuMonth: capM,
        powerUsdPerGpuHour: pwr,
        plannedUtilization: null,
        note,
      };
    });
}

/**
 * Checks a plan from scratch: every order in the horizon with its lead time, purchase caps kept;
 * every month's runs of every job carried exactly, each configuration re-predicted with its layout
 * (memory, deadline, GPU-hours per run); owned configurations no larger than the GPUs in service in
 * each month they run; rented ones on rentable types; each month's owned GPU-hours within the
 * capacity of the GPUs in service that month; and the cost split and total as reported.
 */
export async function verifyProcurementPlan(r: ProcurementRequest, plan: ProcurementPlan): Promise<string[]> {
  const problems: string[] = [];
  if (plan.totalUsd === null) return problems;
  const H = r.horizonMonths;
  const service = inServiceByMonth(r, plan.orders);
  const serving = (id: string, month: number) =>
    service[r.options.findIndex((o) => o.gpu.id === id)]?.[month - 1] ?? 0;
  for (const x of plan.orders) {
    const o = r.options.find((y) => y.gpu.id === x.gpu.id);
    if (!o?.buy) {
      problems.push(`${x.gpu.id} ordered but not offered for sale`);
      continue;
    }
    if (!Number.isInteger(x.count) || x.count <= 0) problems.push(`${x.gpu.id}: ${x.count} GPUs ordered`);
    if (!Number.isInteger(x.orderMonth) || x.orderMonth < 1 || x.arrivalMonth > H)
      problems.push(
        `${x.gpu.id}: ordered in month ${x.orderMonth}, arriving ${x.arrivalMonth}, outside the horizon`,
      );
    if (x.arrivalMonth !== x.orderMonth + leadOf(o.buy))
      problems.push(
        `${x.gpu.id}: ordered in month ${x.orderMonth}, arrives in ${x.arrivalMonth}; the lead time is ${leadOf(o.buy)} months`,
      );
  }
  for (const o of r.options) {
    const total = plan.orders.filter((x) => x.gpu.id === o.gpu.id).reduce((a, x) => a + x.count, 0);
    if (o.buy?.maxCount !== undefined && total > o.buy.maxCount)
      problems.push(`${o.gpu.id}: ${total} bought, at most ${o.buy.maxCount} allowed`);
    const p = plan.purchases.find((x) => x.gpu.id === o.gpu.id);
    if ((p?.count ?? 0) !== total)
      problems.push(`${o.gpu.id}: ${p?.count ?? 0} bought reported, ${total} ordered`);
  }
  const carried = r.jobs.map(() => new Array<number>(H).fill(0));
  const ownedHours = new Map<string, number[]>();
  for (const a of plan.allocations) {
    const j = r.jobs.findIndex((x) => x.id === a.jobId);
    if (j < 0) {
      problems.push(`allocation for unknown job ${a.jobId}`);
      continue;
    }
    const job = r.jobs[j];
    const o = r.options.find((x) => x.gpu.id === a.config.gpu.id);
    if (!o) {
      problems.push(`job ${a.jobId}: ${a.config.gpu.id} is not among the options`);
      continue;
    }
    if (a.owned)
      for (const mo of a.months)
        if (serving(o.gpu.id, mo) < a.config.gpus)
          problems.push(
            `job ${a.jobId}, month ${mo}: ${a.config.gpus} owned ${o.gpu.id} needed at once, ${serving(o.gpu.id, mo)} in service`,
          );
    if (!a.owned && o.rentUsdPerGpuHour === null)
      problems.push(`job ${a.jobId}: ${o.gpu.id} cannot be rented`);
    else if (a.owned && !o.buy) problems.push(`job ${a.jobId}: ${o.gpu.id} cannot be bought`);
    else
      for (const x of pricingProblems(
        r,
        a.config,
        a.owned ? { price: powerPerGpuHour(o.buy!) } : { offers: o.rentOffers, price: o.rentUsdPerGpuHour },
      ))
        problems.push(`job ${a.jobId}: ${x}`);
    if (!Number.isInteger(a.runsPerMonth) || a.runsPerMonth <= 0)
      problems.push(`job ${a.jobId}: ${a.runsPerMonth} runs`);
    const p = await predictorOf(r).predict(configurationRequest(r, job, o.gpu, a.config));
    if (!p.fitsInMemory) problems.push(`job ${a.jobId}: does not fit in ${o.gpu.id} memory`);
    const p90 = p.totalHoursP90 ?? p.totalHours!;
    const mine = forJob(r, job);
    const due = heldHoursOf(mine, { totalHours: p.totalHours!, totalHoursP90: p90 });
    if (!(due <= job.deadlineHours * (1 + 1e-9)))
      problems.push(
        `job ${a.jobId}: a run takes ${due} h${mine.deadlineConfidence ? ' at P90' : ''}, deadline ${job.deadlineHours} h`,
      );
    if (Math.abs(p90 - a.config.hoursPerRunP90) > 1e-6 * Math.max(1, p90))
      problems.push(`job ${a.jobId}: ${a.config.hoursPerRunP90} h per run at P90 reported, ${p90} predicted`);
    if (Math.abs(p.totalHours! * a.config.gpus - a.config.gpuHoursPerRun) > 1e-6 * a.config.gpuHoursPerRun)
      problems.push(
        `job ${a.jobId}: ${a.config.gpuHoursPerRun} GPU-hours per run reported, ${p.totalHours! * a.config.gpus} predicted`,
      );
    // The price per GPU-hour was checked against the power or the offer just above.
    const rate = a.config.priceUsdPerGpuHour;
    if (
      !(
        Math.abs(a.config.usdPerRun - a.config.gpuHoursPerRun * rate) <=
        1e-6 * Math.max(1, a.config.usdPerRun)
      )
    )
      problems.push(
        `job ${a.jobId}: ${a.config.usdPerRun} USD per run reported, ${a.config.gpuHoursPerRun * rate} expected`,
      );
    for (const mo of a.months) {
      if (mo < 1 || mo > H) {
        problems.push(`job ${a.jobId}: month ${mo} outside the horizon`);
        continue;
      }
      carried[j][mo - 1] += a.runsPerMonth;
      if (a.owned) {
        const row = ownedHours.get(o.gpu.id) ?? new Array<number>(H).fill(0);
        row[mo - 1] += a.runsPerMonth * a.config.gpuHoursPerRun;
        ownedHours.set(o.gpu.id, row);
      }
    }
  }
  r.jobs.forEach((job, j) =>
    job.runsByMonth.forEach((need, m) => {
      if (carried[j][m] !== need)
        problems.push(`job ${job.id}, month ${m + 1}: ${carried[j][m]} runs planned, ${need} needed`);
    }),
  );
  for (const [id, row] of ownedHours) {
    const o = r.options.find((x) => x.gpu.id === id)!;
    row.forEach((h, m) => {
      const cap = serving(id, m + 1) * r.hoursPerMonth * (o.buy?.utilization ?? 0);
      if (h > cap * (1 + 1e-9) + 1e-9)
        problems.push(
          `${id}, month ${m + 1}: ${h.toFixed(1)} owned GPU-hours planned, capacity ${cap.toFixed(1)}`,
        );
    });
  }
  const capital = plan.orders.reduce((sum, x) => {
    const o = r.options.find((y) => y.gpu.id === x.gpu.id);
    return o?.buy ? sum + x.count * capitalPerGpu(o.buy, H - x.arrivalMonth + 1) : sum;
  }, 0);
  const sums = { capital, power: 0, rental: 0 };
  for (const a of plan.allocations)
    sums[a.owned ? 'power' : 'rental'] += a.runsPerMonth * a.months.length * a.config.usdPerRun;
  const close = (a: number, b: number | null) =>
    b !== null && Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a));
  if (!close(sums.capital, plan.capitalUsd))
    problems.push(`capital reported ${plan.capitalUsd}, recomputed ${sums.capital}`);
  if (!close(sums.power, plan.powerUsd))
    problems.push(`power reported ${plan.powerUsd}, recomputed ${sums.power}`);
  if (!close(sums.rental, plan.rentalUsd))
    problems.push(`rental reported ${plan.rentalUsd}, recomputed ${sums.rental}`);
  if (!close(sums.capital + sums.power + sums.rental, plan.totalUsd))
    problems.push(`total reported ${plan.totalUsd}, recomputed ${sums.capital + sums.power + sums.rental}`);
  return problems;
}
