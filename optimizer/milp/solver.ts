// The solver interface the problem families use: solveMip(model, options) answers with a verified
// assignment, which solver produced it, and whether its optimality is proven.
//
//   - HiGHS is the solver of record. It runs in a worker thread (highs-worker.ts) with a time limit
//     and mip_rel_gap 0 (exact optima unless the time limit stops it first, in which case the answer
//     is FEASIBLE with the gap to HiGHS's dual bound). A watchdog terminates a worker that overruns
//     its limit, so no solve hangs a request. If no worker can start, HiGHS runs in-thread (it honours
//     its own time limit) and the `solver` string says so.
//   - javascript-lp-solver is a fast path for small models the caller marks eligible (fleet
//     allocation). Its answer is used only when it is integral and passes verification; otherwise, or
//     when it claims infeasibility, HiGHS answers and a note says why.
//   - Every answer, from either solver, is checked against every bound, integrality requirement and
//     row (verify.ts) before it is returned; a HiGHS answer that fails is an error, never a result.
import { AsyncLocalStorage } from 'node:async_hooks';
import { startWorker, WorkerPool, type PooledWorker } from '../threads.js';
import { highs, HIGHS_VERSION, solveWithHighs, type BackendResult } from './highs.js';
import type { WorkerJob, WorkerReply } from './highs-worker.js';
import { JSLP_VERSION } from './lpsolver.js';
import { modelSize, objectiveOf, withObjective, type MipModel, type MipRow, type MipStart } from './model.js';
import { describeViolations, rounded, verifyMipSolution } from './verify.js';

export type SolverChoice = 'AUTO' | 'HIGHS' | 'JAVASCRIPT_LP_SOLVER';
export type MipStatus = 'OPTIMAL' | 'FEASIBLE' | 'INFEASIBLE' | 'TIME_LIMIT';

/** What every planner built on a MIP reports about its solve (fleet, procurement, federated). */
export interface MipOutcome {
  status: MipStatus;
  bestBound: number | null;
  gap: number | null;
  solver: string;
  optimalityProven: boolean;
  solveTimeMs: number;
  notes: string[];
}

/** The solve report of a plan with no solution: optimality is proven only where infeasibility was. */
export function unsolvedOutcome(
  status: MipStatus,
  solver: string,
  startedAtMs: number,
  notes: string[],
): MipOutcome {
  return {
    status,
    bestBound: null,
    gap: null,
    solver,
    optimalityProven: status === 'INFEASIBLE',
    solveTimeMs: performance.now() - startedAtMs,
    notes,
  };
}

export interface SolveOptions {
  /** Wall-clock limit for HiGHS, seconds. */
  timeLimitSeconds: number;
  /** Relative MIP gap at which HiGHS may stop; 0 (default) for exact optima. */
  mipRelGap?: number;
  /** AUTO: javascript-lp-solver first when `fastPathEligible`, HiGHS otherwise or after it. */
  solver?: SolverChoice;
  /** The caller's judgement that this is a small model of the kind javascript-lp-solver handles well. */
  fastPathEligible?: boolean;
  /** Budget for the javascript-lp-solver attempt, seconds (default min(2, timeLimitSeconds)). */
  jsLpTimeLimitSeconds?: number;
  /** A feasible assignment HiGHS may start from. */
  start?: MipStart;
}

export interface MipSolveResult {
  status: MipStatus;
  /** Verified assignment, integer columns rounded; null when INFEASIBLE or TIME_LIMIT. */
  values: number[] | null;
  objective: number | null;
  bestBound: number | null;
  /** Relative gap between the objective and the best bound; 0 when optimal, null without a solution. */
  gap: number | null;
  /** Which solver answered, and how (worker thread, in-thread fallback). */
  solver: string;
  optimalityProven: boolean;
  timeMs: number;
  /** Why the fast path was not taken, fallbacks, anything the user should know. */
  notes: string[];
}

/** Models with more columns than this never take the javascript-lp-solver fast path under AUTO. */
export const JSLP_MAX_COLUMNS = 1500;
const WORKER_START_TIMEOUT_MS = 20_000;
const WATCHDOG_GRACE_MS = 5_000;
const JSLP_WATCHDOG_GRACE_MS = 1_500;
const RETRY_WORKER_AFTER_MS = 60_000;

// ------------------------------------------------------------------ worker pool

type Outcome =
  | { kind: 'result'; result: BackendResult }
  | { kind: 'killed'; message: string }
  | { kind: 'unavailable'; message: string };

const isTs = import.meta.url.endsWith('.ts');
let workerEntryOverride: URL | undefined;
let watchdogGraceMs: number | undefined;

/** Tests only: point the pool at another worker entry (e.g. one that cannot start, or never answers) and shorten the watchdog's grace. */
export function __setWorkerForTests(o: { entry?: URL; watchdogGraceMs?: number }): void {
  workerEntryOverride = o.entry;
  watchdogGraceMs = o.watchdogGraceMs;
  void shutdownSolverWorkers();
  unavailableUntil = 0;
}

let unavailableUntil = 0;
let unavailableReason = '';
let nextJobId = 1;

const maxWorkers = () => {
  const n = Number(process.env.TRAINPLAN_SOLVER_WORKERS ?? 2);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, 8) : 2;
};
const workersDisabled = () => /^(0|off|false|no)$/i.test(process.env.TRAINPLAN_SOLVER_WORKER ?? '');

const pool = new WorkerPool(() => {
  const entry =
    workerEntryOverride ?? new URL(isTs ? './highs-worker.ts' : './highs-worker.js', import.meta.url);
  return startWorker(entry, { name: 'the solver worker', startTimeoutMs: WORKER_START_TIMEOUT_MS });
}, maxWorkers);

async function runInWorker(job: Omit<WorkerJob, 'id'>, watchdogMs: number): Promise<Outcome> {
  if (workersDisabled())
    return { kind: 'unavailable', message: 'worker threads disabled by TRAINPLAN_SOLVER_WORKER' };
  if (Date.now() < unavailableUntil) return { kind: 'unavailable', message: unavailableReason };
  let slot: PooledWorker;
  try {
    // No deadline: a solve waits for a thread (its own watchdog starts once it has one).
    slot = await pool.acquire();
  } catch (e) {
    unavailableReason = e instanceof Error ? e.message : String(e);
    unavailableUntil = Date.now() + RETRY_WORKER_AFTER_MS;
    return { kind: 'unavailable', message: unavailableReason };
  }
  const id = nextJobId++;
  return new Promise<Outcome>((resolve) => {
    const w = slot.worker;
    const done = (o: Outcome, keep: boolean) => {
      clearTimeout(timer);
      w.off('message', onMessage);
      w.off('error', onError);
      w.off('exit', onExit);
      pool.release(slot, keep);
      resolve(o);
    };
    const onMessage = (m: WorkerReply) => {
      if (m.type === 'result' && m.id === id) done({ kind: 'result', result: m.result }, true);
      else if (m.type === 'error' && m.id === id)
        done(
          {
            kind: 'result',
            result: {
              backend: job.backend,
              status: 'error',
              values: null,
              objective: null,
              bestBound: null,
              timeMs: 0,
              message: m.message,
            },
          },
          true,
        );
    };
    const onError = (e: Error) =>
      done({ kind: 'killed', message: `the solver worker crashed: ${e.message.split('\n')[0]}` }, false);
    const onExit = (code: number) =>
      done({ kind: 'killed', message: `the solver worker exited with code ${code}` }, false);
    const timer = setTimeout(
      () =>
        done(
          { kind: 'killed', message: `terminated by the watchdog after ${(watchdogMs / 1e3).toFixed(1)} s` },
          false,
        ),
      watchdogMs,
    );
    w.on('message', onMessage);
    w.on('error', onError);
    w.on('exit', onExit);
    w.postMessage({ ...job, id } satisfies WorkerJob);
  });
}

/** Terminates every solver worker (tests, shutdown). Idle workers never keep the process alive anyway. */
export function shutdownSolverWorkers(): Promise<void> {
  return pool.shutdown();
}

// ------------------------------------------------------------------ solving

const gapOf = (m: MipModel, obj: number, bound: number | null): number | null => {
  if (bound === null) return null;
  const diff = m.sense === 'min' ? obj - bound : bound - obj;
  const g = Math.max(0, diff) / Math.max(Math.abs(obj), 1e-9);
  return g < 1e-12 ? 0 : g; // floating-point noise between equal primal and dual values
};

/**
 * Runs one backend as it is, unverified (worker, or in-thread HiGHS when no worker starts); the
 * benchmark uses it to see what each solver says on its own. Everything else goes through solveMip.
 */
export async function runBackend(
  backend: BackendResult['backend'],
  m: MipModel,
  timeLimitSeconds: number,
  mipRelGap: number,
  start: MipStart | undefined,
): Promise<{ result: BackendResult | null; where: string; note?: string }> {
  const grace = watchdogGraceMs ?? (backend === 'highs' ? WATCHDOG_GRACE_MS : JSLP_WATCHDOG_GRACE_MS);
  const outcome = await runInWorker(
    { backend, model: m, timeLimitSeconds, mipRelGap, start },
    timeLimitSeconds * 1e3 + grace,
  );
  if (outcome.kind === 'result') return { result: outcome.result, where: 'worker thread' };
  if (outcome.kind === 'killed')
    return { result: null, where: 'worker thread', note: `${backend}: ${outcome.message}` };
  // No worker: HiGHS in-thread honours its time limit; javascript-lp-solver's timeout is not a hard
  // limit, so it is not run in-thread.
  if (backend !== 'highs')
    return {
      result: null,
      where: 'not run',
      note: `javascript-lp-solver skipped: no worker thread (${outcome.message})`,
    };
  const result = solveWithHighs(await highs(), m, { timeLimitSeconds, mipRelGap, start });
  return { result, where: `in-thread: ${outcome.message}` };
}

// ------------------------------------------------------------------ conditioning
//
// HiGHS refuses a model with a NaN or an infinite coefficient (passModel status -1) and works to
// absolute tolerances (1e-7 on rows and reduced costs), so an objective whose coefficients are all
// 1e-12 or all 1e12 is either noise or overflow to it. The input floors keep the planners' models
// inside what it handles; this is the last line: a non-finite coefficient is an error naming the
// model and the row or column, and an objective far from 1 is scaled by a power of two (exact:
// every product and the scaled-back objective are the same numbers) before any solver sees it.
// A row whose largest coefficient lies outside the same range is scaled (coefficients and bounds)
// by the power of two that brings that coefficient near 1: the same set of solutions, exactly,
// and HiGHS's absolute row tolerance (1e-7) then means the same relative slack on every row. The
// answer is still verified against the model as built, so a looser tolerance on a row scaled
// down can only turn into an error, never a wrong plan. Rows already in range are left alone.

/** An objective whose largest coefficient lies outside this range is scaled into it. */
const OBJECTIVE_RANGE = [1e-3, 1e6] as const;

/** The row times 2^e when that is exact (no coefficient or finite bound leaves the normal range); else the row. */
function scaledRow(r: MipRow): { row: MipRow; scaled: boolean } {
  let maxCoefficient = 0;
  for (const a of r.values) maxCoefficient = Math.max(maxCoefficient, Math.abs(a));
  if (maxCoefficient === 0 || (maxCoefficient >= OBJECTIVE_RANGE[0] && maxCoefficient <= OBJECTIVE_RANGE[1]))
    return { row: r, scaled: false };
  const e = -Math.round(Math.log2(maxCoefficient));
  const exact = (x: number) => {
    const y = timesPowerOfTwo(x, e);
    return x === 0 || !Number.isFinite(x) || (Number.isFinite(y) && Math.abs(y) >= 2.2250738585072014e-308);
  };
  if (![...r.values, r.lb, r.ub].every(exact)) return { row: r, scaled: false };
  return {
    row: {
      ...r,
      values: r.values.map((a) => timesPowerOfTwo(a, e)),
      lb: Number.isFinite(r.lb) ? timesPowerOfTwo(r.lb, e) : r.lb,
      ub: Number.isFinite(r.ub) ? timesPowerOfTwo(r.ub, e) : r.ub,
    },
    scaled: true,
  };
}

/** The model as the solvers get it; `objectiveScale` is the power of two its objective was multiplied by. */
function conditioned(m: MipModel): {
  model: MipModel;
  objectiveScale: number;
  why: string;
  rowsScaled: number;
} {
  let maxObj = 0;
  for (const v of m.vars) {
    if (!Number.isFinite(v.obj))
      throw new Error(`${m.name}: column ${v.name} has objective coefficient ${v.obj}`);
    if (Number.isNaN(v.lb) || Number.isNaN(v.ub))
      throw new Error(`${m.name}: column ${v.name} has a NaN bound`);
    maxObj = Math.max(maxObj, Math.abs(v.obj));
  }
  for (const r of m.rows) {
    if (Number.isNaN(r.lb) || Number.isNaN(r.ub)) throw new Error(`${m.name}: row ${r.name} has a NaN bound`);
    for (const a of r.values)
      if (!Number.isFinite(a)) throw new Error(`${m.name}: row ${r.name} has coefficient ${a}`);
  }
  const rows = m.rows.map(scaledRow);
  const rowsScaled = rows.filter((r) => r.scaled).length;
  const withRows: MipModel = rowsScaled === 0 ? m : { ...m, rows: rows.map((r) => r.row) };
  if (maxObj === 0 || (maxObj >= OBJECTIVE_RANGE[0] && maxObj <= OBJECTIVE_RANGE[1]))
    return { model: withRows, objectiveScale: 0, why: '', rowsScaled };
  const objectiveScale = -Math.round(Math.log2(maxObj));
  return {
    model: {
      ...withRows,
      vars: m.vars.map((v) => ({ ...v, obj: timesPowerOfTwo(v.obj, objectiveScale) })),
    },
    objectiveScale,
    why: `up to ${maxObj.toExponential(2)}`,
    rowsScaled,
  };
}

/** x * 2^e, in two steps: 2^e alone overflows for the exponents a subnormal needs (2^1026). */
const timesPowerOfTwo = (x: number, e: number) => {
  const half = Math.trunc(e / 2);
  return x * 2 ** half * 2 ** (e - half);
};

/** A backend's answer on the scaled model (objective times 2^objectiveScale), in the model's own units. */
function unscaled(r: BackendResult | null, objectiveScale: number): BackendResult | null {
  if (!r || objectiveScale === 0) return r;
  return {
    ...r,
    objective: r.objective === null ? null : timesPowerOfTwo(r.objective, -objectiveScale),
    bestBound: r.bestBound === null ? null : timesPowerOfTwo(r.bestBound, -objectiveScale),
  };
}

// ------------------------------------------------------------------ the request's deadline
//
// A planner may solve several models (a diagnosis after an infeasible one, lexicographic phases, a
// search over dropouts), each with the request's whole time limit: a 5 s procurement took 23 s.
// The caller sets one deadline for everything run inside `withSolveDeadline`, and every solve
// gets at most the time left before it.

const solveDeadline = new AsyncLocalStorage<number>();

/** Runs `fn` with every solveMip inside it limited to end by `deadlineAt` (performance.now() ms). */
export function withSolveDeadline<T>(deadlineAt: number, fn: () => T): T {
  return solveDeadline.run(deadlineAt, fn);
}

/** Below this many seconds left, a solve is not started: HiGHS alone takes about that to set up. */
const MIN_SOLVE_SECONDS = 0.05;

export async function solveMip(m: MipModel, options: SolveOptions): Promise<MipSolveResult> {
  const t0 = performance.now();
  const notes: string[] = [];
  let o = options;
  const deadlineAt = solveDeadline.getStore();
  if (deadlineAt !== undefined) {
    const left = (deadlineAt - t0) / 1e3;
    if (left < MIN_SOLVE_SECONDS)
      return {
        status: 'TIME_LIMIT',
        values: null,
        objective: null,
        bestBound: null,
        gap: null,
        solver: 'not run',
        optimalityProven: false,
        timeMs: 0,
        notes: [`${m.name}: not solved: the request's time limit was spent before this solve`],
      };
    if (left < o.timeLimitSeconds) o = { ...o, timeLimitSeconds: left };
  }
  const choice = o.solver ?? 'AUTO';
  const mipRelGap = o.mipRelGap ?? 0;
  const cols = modelSize(m).variables;
  const cond = conditioned(m);
  // objectiveScale is an exponent: 0 means not scaled.
  if (cond.objectiveScale !== 0)
    notes.push(
      `objective scaled by 2^${cond.objectiveScale} for the solver (its coefficients were ${cond.why})`,
    );
  if (cond.rowsScaled > 0)
    notes.push(
      `${cond.rowsScaled} row(s) scaled by a power of two for the solver (coefficients outside 1e-3..1e6)`,
    );

  const tryJsLp =
    choice === 'JAVASCRIPT_LP_SOLVER' ||
    (choice === 'AUTO' && o.fastPathEligible === true && cols <= JSLP_MAX_COLUMNS);
  if (tryJsLp) {
    const budget = Math.min(o.jsLpTimeLimitSeconds ?? 2, o.timeLimitSeconds);
    const { result: scaledResult, note } = await runBackend(
      'javascript-lp-solver',
      cond.model,
      budget,
      0,
      undefined,
    );
    const r = unscaled(scaledResult, cond.objectiveScale);
    if (note) notes.push(note);
    if (r) {
      if (r.values && (r.status === 'optimal' || r.status === 'feasible')) {
        const v = verifyMipSolution(m, r.values, r.objective);
        if (v.length === 0) {
          if (r.status === 'optimal') {
            const values = rounded(m, r.values);
            const objective = objectiveOf(m, values);
            return {
              status: 'OPTIMAL',
              values,
              objective,
              bestBound: objective,
              gap: 0,
              solver: `javascript-lp-solver ${JSLP_VERSION} (worker thread)`,
              optimalityProven: true,
              timeMs: performance.now() - t0,
              notes,
            };
          }
          notes.push(`javascript-lp-solver: ${r.message}; HiGHS answered`);
        } else
          notes.push(
            `javascript-lp-solver's answer failed verification (${describeViolations(v, 3)}); HiGHS answered`,
          );
      } else
        notes.push(
          `javascript-lp-solver ${r.message}${r.status === 'infeasible' ? ' (not trusted without proof)' : ''}; HiGHS answered`,
        );
    }
  } else if (choice === 'AUTO' && o.fastPathEligible && cols > JSLP_MAX_COLUMNS) {
    notes.push(
      `model has ${cols} columns, above the javascript-lp-solver fast-path limit of ${JSLP_MAX_COLUMNS}`,
    );
  }

  // At least a second for HiGHS after the fast path, but never past the request's deadline.
  const deadlineLeft = deadlineAt === undefined ? Infinity : (deadlineAt - performance.now()) / 1e3;
  const remaining = Math.min(
    Math.max(1, o.timeLimitSeconds - (performance.now() - t0) / 1e3),
    Math.max(MIN_SOLVE_SECONDS, deadlineLeft),
  );
  const ran = await runBackend('highs', cond.model, remaining, mipRelGap, o.start);
  const { where, note } = ran;
  const r = unscaled(ran.result, cond.objectiveScale);
  if (note) notes.push(note);
  const solver = `highs ${HIGHS_VERSION} (${where})`;
  const timeMs = performance.now() - t0;
  if (!r)
    return {
      status: 'TIME_LIMIT',
      values: null,
      objective: null,
      bestBound: null,
      gap: null,
      solver,
      optimalityProven: false,
      timeMs,
      notes,
    };
  if (r.status === 'infeasible')
    return {
      status: 'INFEASIBLE',
      values: null,
      objective: null,
      bestBound: null,
      gap: null,
      solver,
      optimalityProven: true,
      timeMs,
      notes,
    };
  if (r.status === 'no-solution') {
    notes.push(`HiGHS: ${r.message} before finding a feasible solution`);
    return {
      status: 'TIME_LIMIT',
      values: null,
      objective: null,
      bestBound: r.bestBound,
      gap: null,
      solver,
      optimalityProven: false,
      timeMs,
      notes,
    };
  }
  if (r.status !== 'optimal' && r.status !== 'feasible')
    throw new Error(`HiGHS failed on ${m.name}: ${r.message}`);
  const v = verifyMipSolution(m, r.values!, r.objective);
  if (v.length) throw new Error(`HiGHS's answer to ${m.name} failed verification: ${describeViolations(v)}`);
  const values = rounded(m, r.values!);
  const objective = objectiveOf(m, values);
  // Optimal: exactly when mipRelGap is 0, else within it; the gap reported is what HiGHS proved.
  if (r.status === 'optimal')
    return {
      status: 'OPTIMAL',
      values,
      objective,
      bestBound: r.bestBound ?? objective,
      gap: r.bestBound === null ? 0 : gapOf(m, objective, r.bestBound),
      solver,
      optimalityProven: true,
      timeMs,
      notes,
    };
  notes.push(`HiGHS: ${r.message}`);
  return {
    status: 'FEASIBLE',
    values,
    objective,
    bestBound: r.bestBound,
    gap: gapOf(m, objective, r.bestBound),
    solver,
    optimalityProven: false,
    timeMs,
    notes,
  };
}

// ------------------------------------------------------------------ lexicographic objectives

export interface LexPhase {
  name: string;
  /** Dense objective coefficients over the model's columns. */
  coefs: number[];
  sense: 'min' | 'max';
  fastPathEligible?: boolean;
  /** How much later phases may give back on this objective: max(abs, rel x |value|). */
  absTol?: number;
  relTol?: number;
}

export interface LexResult {
  /** The last phase solved (its values satisfy every earlier phase's bound). */
  final: MipSolveResult;
  phases: {
    name: string;
    status: MipStatus;
    value: number | null;
    bestBound: number | null;
    gap: number | null;
    proven: boolean;
    solver: string;
  }[];
  /** All phases proven optimal. */
  optimalityProven: boolean;
  solver: string;
  notes: string[];
  timeMs: number;
}

/**
 * Optimizes several objectives in priority order: each phase is solved with every earlier
 * objective held at its optimum (within tolerance), starting from the previous phase's answer.
 * The time limit covers all phases together.
 */
export async function solveLexicographic(
  base: MipModel,
  phases: LexPhase[],
  o: SolveOptions,
): Promise<LexResult> {
  const t0 = performance.now();
  const out: LexResult['phases'] = [];
  const notes: string[] = [];
  let model = base;
  let last: MipSolveResult | undefined;
  for (const [k, p] of phases.entries()) {
    const left = o.timeLimitSeconds - (performance.now() - t0) / 1e3;
    const r = await solveMip(withObjective(model, p.coefs, p.sense, `${base.name}:${p.name}`), {
      ...o,
      timeLimitSeconds: Math.max(1, left),
      fastPathEligible: p.fastPathEligible ?? o.fastPathEligible,
      start: last?.values ?? o.start,
    });
    for (const n of r.notes) notes.push(phases.length > 1 ? `${p.name}: ${n}` : n);
    out.push({
      name: p.name,
      status: r.status,
      value: r.objective,
      bestBound: r.bestBound,
      gap: r.gap,
      proven: r.optimalityProven,
      solver: r.solver,
    });
    if (r.values === null) {
      if (k > 0 && last) {
        // A later phase ran out of time without improving: the previous phase's answer still stands.
        notes.push(
          `${p.name}: no answer within the time limit; the ${phases[k - 1].name} phase's solution is kept`,
        );
        out[k].value = objectiveOf(withObjective(model, p.coefs, p.sense), last.values!);
        out[k].proven = false;
        out[k].bestBound = null;
        out[k].gap = null;
        break;
      }
      last = r;
      break;
    }
    last = r;
    if (k < phases.length - 1) {
      const v = r.objective!;
      const tol = Math.max(p.absTol ?? 1e-7, (p.relTol ?? 1e-7) * Math.abs(v));
      const idx: number[] = [],
        val: number[] = [];
      p.coefs.forEach((c, j) => {
        if (c !== 0) {
          idx.push(j);
          val.push(c);
        }
      });
      model = {
        ...model,
        rows: [
          ...model.rows,
          {
            name: `lex_${p.name}`,
            indices: idx,
            values: val,
            lb: p.sense === 'max' ? v - tol : -Infinity,
            ub: p.sense === 'min' ? v + tol : Infinity,
          },
        ],
      };
    }
  }
  const final = last!;
  const solvers = [...new Set(out.map((x) => x.solver))];
  return {
    final,
    phases: out,
    optimalityProven: out.length === phases.length && out.every((x) => x.proven),
    solver: solvers.length === 1 ? solvers[0] : out.map((x) => `${x.name}: ${x.solver}`).join('; '),
    notes,
    timeMs: performance.now() - t0,
  };
}
