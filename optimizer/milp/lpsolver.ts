// javascript-lp-solver 1.0.3 on a MipModel: the pure-JS fast path for small fleet models.
//
// With its defaults it is unreliable (in trials on GPU-allocation and min-max models before it was
// adopted, it ran into its timeout even on 5-job models and then returned a FRACTIONAL solution
// flagged feasible); with {presolve: false,
// useMIRCuts: true} it was fast and right on 40/40 random GPU-allocation models but failed min-max
// models. So: those options, a timeout, and the answer is only a candidate: `isIntegral` must be
// true, and solver.ts verifies it against every row before it is used. Its `timeout` is checked only
// between branch-and-bound nodes, so it is not a hard limit: solver.ts runs it in a worker it can
// terminate.
//
// Its best-first branch and bound (no tolerance) stops either because the node queue is empty (the
// incumbent is optimal) or because the timeout passed; it does not say which, so an answer returned
// clearly before the timeout counts as proven optimal and any later one as merely feasible.
import lpDefault from 'javascript-lp-solver';
import type { Model as JsLpModel, SolveResult, SolverAPI } from 'javascript-lp-solver';
import type { BackendResult } from './highs.js';
import type { MipModel } from './model.js';

const jsLp = lpDefault as unknown as SolverAPI;
export const JSLP_VERSION = '1.0.3';
export const JSLP_OPTIONS = { presolve: false, useMIRCuts: true } as const;

const OBJ = '__objective';
const col = (j: number) => `x${j}`;
const row = (i: number) => `r${i}`;

export function toJsLpModel(m: MipModel, timeoutMs: number): JsLpModel {
  const constraints: JsLpModel['constraints'] = {};
  const variables: JsLpModel['variables'] = {};
  const ints: Record<string, 1> = {},
    binaries: Record<string, 1> = {},
    unrestricted: Record<string, 1> = {};
  m.vars.forEach((v, j) => {
    const coefs: Record<string, number> = { [OBJ]: v.obj };
    if (v.type === 'binary') binaries[col(j)] = 1;
    else {
      if (v.type === 'integer') ints[col(j)] = 1;
      if (v.lb < 0) unrestricted[col(j)] = 1;
      // jsLP columns are >= 0 unless unrestricted; other bounds become rows.
      const bound: { min?: number; max?: number } = {};
      if (v.lb !== 0 && Number.isFinite(v.lb)) bound.min = v.lb;
      if (Number.isFinite(v.ub)) bound.max = v.ub;
      if (bound.min !== undefined || bound.max !== undefined) {
        constraints[`b${j}`] = bound;
        coefs[`b${j}`] = 1;
      }
    }
    variables[col(j)] = coefs;
  });
  m.rows.forEach((r, i) => {
    if (r.indices.length === 0) return; // an empty row is checked by verify, not by the solver
    if (r.lb === r.ub) constraints[row(i)] = { equal: r.lb };
    else {
      const bound: { min?: number; max?: number } = {};
      if (Number.isFinite(r.lb)) bound.min = r.lb;
      if (Number.isFinite(r.ub)) bound.max = r.ub;
      constraints[row(i)] = bound;
    }
    r.indices.forEach((j, k) => {
      variables[col(j)][row(i)] = r.values[k];
    });
  });
  return {
    optimize: OBJ,
    opType: m.sense,
    constraints,
    variables,
    ints,
    binaries,
    unrestricted,
    options: { ...JSLP_OPTIONS, timeout: timeoutMs },
  };
}

export function solveWithJsLp(m: MipModel, timeLimitSeconds: number): BackendResult {
  const t0 = performance.now();
  const timeoutMs = Math.max(1, Math.round(timeLimitSeconds * 1e3));
  const res = jsLp.Solve(toJsLpModel(m, timeoutMs)) as SolveResult;
  const timeMs = performance.now() - t0;
  const base = { backend: 'javascript-lp-solver' as const, bestBound: null, timeMs };
  if (!res.feasible)
    return { ...base, status: 'infeasible', values: null, objective: null, message: 'reported infeasible' };
  if (res.bounded === false)
    return { ...base, status: 'unbounded', values: null, objective: null, message: 'reported unbounded' };
  const hasInts = m.vars.some((v) => v.type !== 'continuous');
  if (hasInts && res.isIntegral !== true)
    return {
      ...base,
      status: 'no-solution',
      values: null,
      objective: null,
      message: `returned a fractional solution (isIntegral ${String(res.isIntegral)})`,
    };
  const values = m.vars.map((_, j) => {
    const v = res[col(j)];
    return typeof v === 'number' ? v : 0;
  });
  const inTime = timeMs < 0.9 * timeoutMs;
  return {
    ...base,
    status: inTime ? 'optimal' : 'feasible',
    values,
    objective: res.result,
    bestBound: inTime ? res.result : null,
    message: inTime
      ? 'branch and bound finished before its timeout'
      : `answered after ${Math.round(timeMs)} ms, at or past its ${timeoutMs} ms timeout: optimality not proven`,
  };
}
