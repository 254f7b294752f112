// Fleet planning: several training jobs share a GPU inventory and run at the same time. One
// configuration per job (GPU type, nodes, GPUs per node, batch size, precision), every deadline met,
// no GPU type used beyond its inventory, minimum total cost or minimum makespan.
//
// The MIP (columns x[j,c] binary: job j runs candidate c; s[j] binary: job j left out, only when
// unplaced jobs are allowed or while diagnosing an infeasible fleet; T continuous: the makespan):
//
//   assign[j]:  sum_c x[j,c] (+ s[j])                  = 1      every job placed once (or left out)
//   cap[t]:     sum_{j,c on t} gpus(c) x[j,c]          <= inventory[t]   (on-demand types: no row)
//   mk[j]:      T - sum_c hours(c) x[j,c]              >= 0      (MAKESPAN only)
//
// Objectives, in priority order (optimizer/milp/solver.ts solveLexicographic):
//   placement (when jobs may be left out): min sum_j priority[j] s[j]
//   COST:      min sum cost(c) x[j,c]
//   MAKESPAN:  min T, then min sum cost(c) x[j,c] at that makespan (GPU-hours when a price is unknown)
//
// Candidates come from the predictor through optimizer/recommend.ts (one search per job and GPU
// type, the deadline and the type's inventory as constraints), so deadlines and memory are already
// met by every column; the MIP only couples the jobs through the inventory.
import { predict, InputError } from '../predictor/predict.js';
import type { ModelDef } from '../predictor/types.js';
import type { CatalogGpu, Precision } from '../seeds/types.js';
import { recommend } from './recommend.js';
import type { CandidateSearch, Plan, RecommendRequest } from './search-types.js';
import { MipBuilder, modelSize, withObjective, type MipModel, type ModelSize } from './milp/model.js';
import { solveLexicographic, type LexPhase, type MipStatus, type MipOutcome } from './milp/solver.js';
import { VerificationError } from './milp/verify.js';
import { paretoFilter } from './pareto.js';

export type FleetObjective = 'COST' | 'MAKESPAN';
/** Why a job cannot be placed. */
export type Blocker = 'DEADLINE' | 'MEMORY' | 'INVENTORY';

export interface FleetJob {
  id: string;
  model: ModelDef;
  /** Total work in the model's throughput unit. */
  samples: number;
  deadlineHours: number;
  /** Weight of placing this job when not every job fits (allowUnplaced); default 1. */
  priority: number;
  /** Per-GPU batch sizes to consider (default: the model's typical ones). */
  batchSizes?: number[];
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
  prices: Record<string, number>;
  objective: FleetObjective;
  /** Leave jobs out (highest total priority placed first) rather than answer INFEASIBLE. */
  allowUnplaced: boolean;
}

export interface FleetCandidate {
  job: number;
  gpu: CatalogGpu;
  onDemand: boolean;
  nodes: number;
  gpusPerNode: number;
  gpus: number;
  batchSizePerGpu: number;
  gradAccumSteps: number;
  precision: Precision;
  stepTimeMs: number;
  totalHours: number;
  costUsd: number | null;
  priceUsdPerGpuHour: number | null;
  memoryGbPerGpu: number;
}

export interface FleetAssignment extends FleetCandidate {
  jobId: string;
  deadlineHours: number;
}

export interface UnplacedJob {
  jobId: string;
  reason: Blocker;
  message: string;
}

export interface GpuUsage {
  gpu: CatalogGpu;
  used: number;
  available: number | null;
  onDemand: boolean;
}

export interface FleetPlan extends MipOutcome {
  objective: FleetObjective;
  /** Total cost (COST) or the longest job's hours (MAKESPAN); null without a plan. */
  objectiveValue: number | null;
  assignments: FleetAssignment[];
  unplaced: UnplacedJob[];
  gpuUsage: GpuUsage[];
  totalCostUsd: number | null;
  makespanHours: number | null;
  stats: ModelSize & { candidates: number; keptCandidates: number };
}

/** recommend()'s limit when every plan is wanted (the first plans by its ranking may not be usable). */
export const ALL = Number.MAX_SAFE_INTEGER;

interface GpuType {
  gpu: CatalogGpu;
  limit: number | null;
  price: number | null;
  field: string;
}

function availableTypes(r: FleetRequest): GpuType[] {
  const types: GpuType[] = [];
  const inInventory = new Set<string>();
  r.inventory.forEach((it, i) => {
    inInventory.add(it.gpu.id);
    if (it.count <= 0) return;
    const price = it.priceUsdPerGpuHour ?? r.prices[it.gpu.id] ?? it.gpu.priceUsdPerGpuHour;
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
      const price = r.prices[g.id] ?? g.priceUsdPerGpuHour;
      if (r.objective === 'COST' && price === null) continue; // cannot be costed: not offered
      types.push({ gpu: g, limit: null, price, field: 'onDemand' });
    }
  }
  return types;
}

const searchFor = (
  r: FleetRequest,
  job: FleetJob,
  t: GpuType,
  o: { deadline: boolean; cap: boolean; limit: number; objective: 'COST' | 'TIME' },
): RecommendRequest => ({
  model: job.model,
  samples: job.samples,
  objective: o.objective,
  deadlineHours: o.deadline ? job.deadlineHours : undefined,
  gpus: [t.gpu],
  precisions: r.precisions,
  maxNodes: r.maxNodes,
  maxGpus: o.cap && t.limit !== null ? t.limit : undefined,
  gpusPerNodeChoices: r.gpusPerNodeChoices,
  batchSizes: job.batchSizes ?? job.model.batchSizes,
  prices: t.price === null ? undefined : { [t.gpu.id]: t.price },
  interNodeGbps: r.interNodeGbps,
  fp32UsesTf32: r.fp32UsesTf32,
  limit: o.limit,
});

const toCandidate = (job: number, t: GpuType, p: Plan): FleetCandidate => ({
  job,
  gpu: t.gpu,
  onDemand: t.limit === null,
  nodes: p.nodes,
  gpusPerNode: p.gpusPerNode,
  gpus: p.nodes * p.gpusPerNode,
  batchSizePerGpu: p.batchSizePerGpu,
  gradAccumSteps: p.gradAccumSteps,
  precision: p.precision,
  stepTimeMs: p.stepTimeMs,
  totalHours: p.totalHours,
  costUsd: p.costUsd,
  priceUsdPerGpuHour: t.price,
  memoryGbPerGpu: p.memoryGbPerGpu,
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
  p.memoryGbPerGpu <= p.gpu.memoryGb;

/** Whether a search found configurations that do not fit in memory (rejected, or returned oversized). */
export const outOfMemory = (rec: { plans: Plan[]; rejected: { reason: string }[] }): boolean =>
  rec.rejected.some((x) => x.reason === 'OUT_OF_MEMORY') ||
  rec.plans.some((p) => p.memoryGbPerGpu > p.gpu.memoryGb);

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
export function fleetCandidates(r: FleetRequest): FleetCandidates {
  const types = availableTypes(r);
  const all: FleetCandidate[][] = [],
    kept: FleetCandidate[][] = [];
  r.jobs.forEach((job, j) => {
    const mine: FleetCandidate[] = [],
      pruned: FleetCandidate[] = [];
    for (const t of types) {
      const rec = recommend(
        searchFor(r, job, t, {
          deadline: true,
          cap: true,
          limit: ALL,
          objective: t.price === null ? 'TIME' : 'COST',
        }),
        r.efficiency,
      );
      // `usable` re-checks what the MIP relies on (finite hours and cost, memory fit) rather than trust it.
      const cands = rec.plans.filter(usable).map((p) => toCandidate(j, t, p));
      mine.push(...cands);
      pruned.push(
        ...paretoFilter(cands, (c) => {
          const k = c.costUsd === null ? [c.totalHours] : [c.costUsd, c.totalHours];
          return t.limit === null ? k : [c.gpus, ...k];
        }),
      );
    }
    all.push(mine);
    kept.push(pruned);
  });
  return { types, all, kept };
}

/** Why a job has no candidate: memory, deadline, or the inventory (too few GPUs or no usable type). */
function diagnoseJob(r: FleetRequest, job: FleetJob, types: GpuType[]): { reason: Blocker; message: string } {
  if (types.length === 0)
    return {
      reason: 'INVENTORY',
      message:
        'no GPU type is available: the inventory is empty' +
        (r.allowOnDemand ? ' and no on-demand type has a price' : ' and allowOnDemand is off'),
    };
  const unconstrained = types.map((t) =>
    recommend(
      searchFor(r, job, t, { deadline: false, cap: false, limit: ALL, objective: 'TIME' }),
      r.efficiency,
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
    const meeting = recommend(
      searchFor(r, job, t, { deadline: true, cap: false, limit: ALL, objective: 'TIME' }),
      r.efficiency,
    ).plans.filter(usable);
    if (meeting.length) {
      const fewest = meeting.reduce((m, p) => Math.min(m, p.nodes * p.gpusPerNode), Infinity);
      return {
        reason: 'INVENTORY',
        message: `meets its ${job.deadlineHours} h deadline only with at least ${fewest} ${t.gpu.id} GPUs; the inventory holds ${t.limit}`,
      };
    }
  }
  let fastest: { hours: number; text: string } | undefined;
  for (const t of runnable) {
    const p = recommend(
      searchFor(r, job, t, { deadline: false, cap: true, limit: ALL, objective: 'TIME' }),
      r.efficiency,
    ).plans.find(usable);
    if (p && (!fastest || p.totalHours < fastest.hours))
      fastest = {
        hours: p.totalHours,
        text: `${p.nodes}x${p.gpusPerNode} ${t.gpu.id}, ${p.precision}, batch ${p.batchSizePerGpu}`,
      };
  }
  return {
    reason: 'DEADLINE',
    message: `the fastest configuration available takes ${fastest ? `${fastest.hours.toPrecision(4)} h (${fastest.text})` : 'longer'}, beyond the ${job.deadlineHours} h deadline`,
  };
}

function buildFleetMip(
  r: FleetRequest,
  kept: FleetCandidate[][],
  skippable: boolean[],
  limits: Map<string, number>,
) {
  const b = new MipBuilder(`fleet-${r.objective.toLowerCase()}`);
  const x: number[][] = kept.map((cs, j) => cs.map((_, c) => b.addVar(`x_${j}_${c}`, 'binary', 0, 1)));
  const s: (number | null)[] = kept.map((_, j) => (skippable[j] ? b.addVar(`s_${j}`, 'binary', 0, 1) : null));
  const maxHours = Math.max(1, ...kept.flat().map((c) => c.totalHours));
  const T = r.objective === 'MAKESPAN' ? b.addVar('T', 'continuous', 0, maxHours) : null;
  kept.forEach((cs, j) => {
    const terms: [number, number][] = cs.map((_, c) => [x[j][c], 1]);
    if (s[j] !== null) terms.push([s[j]!, 1]);
    b.addRow(`assign_${j}`, terms, 1, 1);
    if (T !== null)
      b.addRow(
        `mk_${j}`,
        [[T, 1], ...cs.map((c, k): [number, number] => [x[j][k], -c.totalHours])],
        0,
        Infinity,
      );
  });
  for (const [id, limit] of limits) {
    const terms: [number, number][] = [];
    kept.forEach((cs, j) =>
      cs.forEach((c, k) => {
        if (c.gpu.id === id && !c.onDemand) terms.push([x[j][k], c.gpus]);
      }),
    );
    if (terms.length) b.addRow(`cap_${id}`, terms, -Infinity, limit);
  }
  const model = b.build();
  const n = model.vars.length;
  const dense = (f: (j: number, c: FleetCandidate) => number) => {
    const v = new Array<number>(n).fill(0);
    kept.forEach((cs, j) =>
      cs.forEach((c, k) => {
        v[x[j][k]] = f(j, c);
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
    x,
    s,
    T,
    costKnown,
    placement,
    makespan,
    cost: dense((_, c) => c.costUsd ?? 0),
    gpuHours: dense((_, c) => c.totalHours * c.gpus),
  };
}

/**
 * The fleet MIP with its primary objective (total cost, or the makespan) and every job placed: what
 * bench/solvers.ts hands both solvers. Throws when a job has no candidate.
 */
export function fleetMip(r: FleetRequest): { model: MipModel; candidates: number; kept: number } {
  const { types, all, kept } = fleetCandidates(r);
  if (kept.some((c) => c.length === 0)) throw new Error('a job has no candidate');
  const limits = new Map(types.filter((t) => t.limit !== null).map((t) => [t.gpu.id, t.limit!]));
  const m = buildFleetMip(
    r,
    kept,
    kept.map(() => false),
    limits,
  );
  return {
    model: withObjective(m.model, r.objective === 'COST' ? m.cost : m.makespan, 'min'),
    candidates: all.reduce((n, c) => n + c.length, 0),
    kept: kept.reduce((n, c) => n + c.length, 0),
  };
}

const cmpHours = (a: number, b: number) => a <= b * (1 + 1e-9) + 1e-12;

export async function planFleet(r: FleetRequest): Promise<FleetPlan> {
  const t0 = performance.now();
  const { types, all, kept } = fleetCandidates(r);
  const limits = new Map(types.filter((t) => t.limit !== null).map((t) => [t.gpu.id, t.limit!]));
  const stats0 = {
    candidates: all.reduce((n, c) => n + c.length, 0),
    keptCandidates: kept.reduce((n, c) => n + c.length, 0),
  };
  const notes: string[] = [];

  // Jobs without any candidate cannot be placed whatever the others do.
  const hopeless = new Map<number, { reason: Blocker; message: string }>();
  kept.forEach((cs, j) => {
    if (cs.length === 0) hopeless.set(j, diagnoseJob(r, r.jobs[j], types));
  });
  const unplacedFrom = (m: Map<number, { reason: Blocker; message: string }>): UnplacedJob[] =>
    [...m].map(([j, d]) => ({ jobId: r.jobs[j].id, ...d }));

  const empty = (
    status: MipStatus,
    solver: string,
    size: ModelSize,
    unplaced: UnplacedJob[],
    extra: Partial<FleetPlan> = {},
  ): FleetPlan => ({
    status,
    objective: r.objective,
    objectiveValue: null,
    bestBound: null,
    gap: null,
    solver,
    optimalityProven: status === 'INFEASIBLE',
    solveTimeMs: performance.now() - t0,
    notes,
    assignments: [],
    unplaced,
    gpuUsage: [],
    totalCostUsd: null,
    makespanHours: null,
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
  const live = kept.map((cs, j) => (hopeless.has(j) ? [] : cs));
  const liveIdx = r.jobs.map((_, j) => j).filter((j) => !hopeless.has(j));
  if (liveIdx.length === 0)
    return empty('OPTIMAL', 'none (no job can be placed)', noModel, unplacedFrom(hopeless), {
      objectiveValue: 0,
      totalCostUsd: 0,
      makespanHours: 0,
      gap: 0,
      bestBound: 0,
      optimalityProven: true,
    });
  const sub = liveIdx.map((j) => live[j]);
  const subReq = { ...r, jobs: liveIdx.map((j) => r.jobs[j]) };

  const solveWith = async (skippable: boolean, placementOnly: boolean) => {
    const m = buildFleetMip(
      subReq,
      sub,
      sub.map(() => skippable),
      limits,
    );
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
    if (!placementOnly) {
      if (r.objective === 'MAKESPAN') {
        phases.push({
          name: 'makespan',
          coefs: m.makespan,
          sense: 'min',
          fastPathEligible: false,
          relTol: 1e-9,
          absTol: 1e-9,
        });
        phases.push(
          m.costKnown
            ? { name: 'cost', coefs: m.cost, sense: 'min', fastPathEligible: true }
            : { name: 'gpu-hours', coefs: m.gpuHours, sense: 'min', fastPathEligible: true },
        );
      } else phases.push({ name: 'cost', coefs: m.cost, sense: 'min', fastPathEligible: true });
    }
    return { m, lex: await solveLexicographic(m.model, phases, r.solve) };
  };

  const { m, lex } = await solveWith(r.allowUnplaced, false);
  notes.push(...lex.notes);
  if (r.objective === 'MAKESPAN' && !m.costKnown)
    notes.push(
      'a price is unknown for some GPU type, so ties in makespan are broken by GPU-hours instead of cost',
    );
  const size = modelSize(m.model);

  if (lex.final.status === 'INFEASIBLE' && !r.allowUnplaced) {
    // Every job can run alone, so the inventory is what binds: find a largest placeable set.
    const diag = await solveWith(true, true);
    notes.push(...diag.lex.notes.map((n) => `diagnosis: ${n}`));
    const d = diag.lex.final;
    const out = new Map(hopeless);
    if (d.values) {
      const used = usage(diag.m.x, sub, d.values);
      sub.forEach((cs, k) => {
        if (d.values![diag.m.s[k]!] < 0.5) return;
        out.set(liveIdx[k], { reason: 'INVENTORY', message: contentionMessage(cs, used, limits) });
      });
    }
    return empty('INFEASIBLE', lex.solver, size, unplacedFrom(out), {
      notes: [
        ...notes,
        'the jobs listed in unplaced are left out by a largest set of jobs that fits the inventory together (weighted by priority)',
      ],
    });
  }
  if (lex.final.values === null) return empty(lex.final.status, lex.solver, size, unplacedFrom(hopeless));

  const values = lex.final.values;
  const assignments: FleetAssignment[] = [];
  const unplaced = new Map(hopeless);
  const used = usage(m.x, sub, values);
  sub.forEach((cs, k) => {
    const j = liveIdx[k];
    const c = cs.findIndex((_, i) => values[m.x[k][i]] > 0.5);
    if (c >= 0)
      assignments.push({ ...cs[c], job: j, jobId: r.jobs[j].id, deadlineHours: r.jobs[j].deadlineHours });
    else
      unplaced.set(j, { reason: 'INVENTORY', message: `left out: ${contentionMessage(cs, used, limits)}` });
  });
  assignments.sort((a, b) => a.job - b.job);
  const plan = finishPlan(r, {
    status: lex.optimalityProven ? 'OPTIMAL' : 'FEASIBLE',
    solver: lex.solver,
    optimalityProven: lex.optimalityProven,
    assignments,
    unplaced: [...unplaced].sort((a, b) => a[0] - b[0]).map(([j, d]) => ({ jobId: r.jobs[j].id, ...d })),
    types,
    notes,
    stats: { ...stats0, ...size },
    t0,
  });
  // The gap and bound of the phase that carries the reported objective.
  const primary = lex.phases.find((p) => p.name === (r.objective === 'COST' ? 'cost' : 'makespan'));
  if (primary && (!lex.optimalityProven || (r.solve.mipRelGap ?? 0) > 0)) {
    plan.gap = primary.gap;
    plan.bestBound = primary.bestBound;
  }
  const problems = verifyFleetPlan(r, plan);
  if (problems.length) throw new VerificationError(problems);
  return plan;
}

function usage(x: number[][], cands: FleetCandidate[][], values: number[]): Map<string, number> {
  const used = new Map<string, number>();
  cands.forEach((cs, k) =>
    cs.forEach((c, i) => {
      if (values[x[k][i]] > 0.5 && !c.onDemand) used.set(c.gpu.id, (used.get(c.gpu.id) ?? 0) + c.gpus);
    }),
  );
  return used;
}

function contentionMessage(
  cs: FleetCandidate[],
  used: Map<string, number>,
  limits: Map<string, number>,
): string {
  const need = new Map<string, number>();
  for (const c of cs) if (!c.onDemand) need.set(c.gpu.id, Math.min(need.get(c.gpu.id) ?? Infinity, c.gpus));
  const parts = [...need].map(
    ([id, n]) =>
      `${n} ${id} (${Math.max(0, (limits.get(id) ?? 0) - (used.get(id) ?? 0))} of ${limits.get(id)} left)`,
  );
  return `the inventory cannot hold it together with the placed jobs; meeting its deadline needs at least ${parts.join(' or ')}`;
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
    t0: number;
  },
): FleetPlan {
  const used = new Map<string, number>();
  for (const a of p.assignments) used.set(a.gpu.id, (used.get(a.gpu.id) ?? 0) + a.gpus);
  const gpuUsage: GpuUsage[] = p.types
    .filter((t) => t.limit !== null || used.has(t.gpu.id))
    .map((t) => ({
      gpu: t.gpu,
      used: used.get(t.gpu.id) ?? 0,
      available: t.limit,
      onDemand: t.limit === null,
    }));
  const costs = p.assignments.map((a) => a.costUsd);
  const totalCostUsd = costs.every((c) => c !== null) ? costs.reduce((s, c) => s + c!, 0) : null;
  const makespanHours = p.assignments.reduce((m, a) => Math.max(m, a.totalHours), 0);
  return {
    status: p.status,
    objective: r.objective,
    objectiveValue: r.objective === 'COST' ? totalCostUsd : makespanHours,
    bestBound: p.optimalityProven ? (r.objective === 'COST' ? totalCostUsd : makespanHours) : null,
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
    stats: p.stats,
  };
}

/**
 * Checks a plan against the request from scratch: every job placed exactly once (or reported
 * unplaced where that is allowed), each configuration re-predicted by the predictor (fits in memory,
 * meets its deadline, hours and cost as reported), the GPU type available and within its inventory
 * in total, and the objective value as reported. Returns the problems found (none: the plan holds).
 */
export function verifyFleetPlan(r: FleetRequest, plan: FleetPlan): string[] {
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
  const used = new Map<string, number>();
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
    if (!r.precisions.includes(a.precision))
      problems.push(`job ${a.jobId}: precision ${a.precision} is not allowed`);
    let p;
    try {
      p = predict(
        {
          model: job.model,
          gpu: t.gpu,
          precision: a.precision,
          batchSizePerGpu: a.batchSizePerGpu,
          gpusPerNode: a.gpusPerNode,
          nodes: a.nodes,
          gradAccumSteps: a.gradAccumSteps,
          fp32UsesTf32: r.fp32UsesTf32,
          interNodeGbps: r.interNodeGbps(t.gpu),
          samples: job.samples,
          priceUsdPerGpuHour: t.price,
        },
        r.efficiency,
      );
    } catch (e) {
      problems.push(`job ${a.jobId}: ${e instanceof Error ? e.message : String(e)}`);
      continue;
    }
    if (!p.fitsInMemory)
      problems.push(
        `job ${a.jobId}: needs ${p.memory.totalGb.toFixed(1)} GB per GPU, ${t.gpu.id} has ${t.gpu.memoryGb}`,
      );
    if (!cmpHours(p.totalHours!, job.deadlineHours))
      problems.push(`job ${a.jobId}: takes ${p.totalHours} h, deadline ${job.deadlineHours} h`);
    if (Math.abs(p.totalHours! - a.totalHours) > 1e-6 * p.totalHours!)
      problems.push(`job ${a.jobId}: reported ${a.totalHours} h, predicted ${p.totalHours} h`);
    if (
      (p.costUsd === null) !== (a.costUsd === null) ||
      (p.costUsd !== null && Math.abs(p.costUsd - a.costUsd!) > 1e-6 * Math.max(1, p.costUsd))
    )
      problems.push(`job ${a.jobId}: reported cost ${a.costUsd}, predicted ${p.costUsd}`);
    if (t.limit !== null) used.set(t.gpu.id, (used.get(t.gpu.id) ?? 0) + a.gpus);
  }
  for (const [id, n] of used) {
    const limit = byId.get(id)!.limit!;
    if (n > limit) problems.push(`${id}: ${n} GPUs in use at once, the inventory holds ${limit}`);
    const reported = plan.gpuUsage.find((u) => u.gpu.id === id);
    if (!reported || reported.used !== n)
      problems.push(`${id}: usage reported ${reported?.used ?? 'nowhere'}, actual ${n}`);
  }
  if (plan.objectiveValue !== null) {
    const v =
      r.objective === 'COST'
        ? plan.assignments.reduce((s, a) => s + (a.costUsd ?? NaN), 0)
        : plan.assignments.reduce((s, a) => Math.max(s, a.totalHours), 0);
    if (!(Math.abs(v - plan.objectiveValue) <= 1e-6 * Math.max(1, Math.abs(v))))
      problems.push(`objective value reported ${plan.objectiveValue}, recomputed ${v}`);
  }
  return problems;
}
