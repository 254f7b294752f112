// Checks an assignment against every bound, integrality requirement and row of a MipModel, and the
// objective a solver reported against the one recomputed from the assignment. A solver's answer is
// used only when this finds nothing; the problem families then check their decoded plans again
// against the domain (predictor, inventory, deadlines) in their own verify functions.
import { objectiveOf, rowActivity, type MipModel } from './model.js';

export interface Violation {
  kind: 'length' | 'nan' | 'bound' | 'integrality' | 'row' | 'objective';
  /** The column or row at fault. */
  name: string;
  detail: string;
}

export interface Tolerances {
  /** Absolute slack on a bound or row, scaled by max(1, |bound|). */
  feasibility: number;
  /** Largest distance from an integer accepted for an integer or binary column. */
  integrality: number;
  /** Relative difference accepted between the reported and the recomputed objective. */
  objective: number;
}

export const DEFAULT_TOLERANCES: Tolerances = { feasibility: 1e-6, integrality: 1e-6, objective: 1e-6 };

const slack = (bound: number, tol: number) => tol * Math.max(1, Math.abs(bound));

export function verifyMipSolution(
  m: MipModel,
  x: ArrayLike<number>,
  reportedObjective?: number | null,
  tol: Tolerances = DEFAULT_TOLERANCES,
): Violation[] {
  const out: Violation[] = [];
  if (x.length !== m.vars.length)
    return [{ kind: 'length', name: m.name, detail: `${x.length} values for ${m.vars.length} columns` }];
  m.vars.forEach((v, j) => {
    const val = x[j];
    if (!Number.isFinite(val)) {
      out.push({ kind: 'nan', name: v.name, detail: `value ${val}` });
      return;
    }
    if (val < v.lb - slack(v.lb, tol.feasibility) || val > v.ub + slack(v.ub, tol.feasibility))
      out.push({ kind: 'bound', name: v.name, detail: `${val} outside [${v.lb}, ${v.ub}]` });
    if (v.type !== 'continuous' && Math.abs(val - Math.round(val)) > tol.integrality)
      out.push({ kind: 'integrality', name: v.name, detail: `${val} is not integral` });
  });
  if (out.length) return out;
  for (const r of m.rows) {
    const a = rowActivity(r, x);
    if (a < r.lb - slack(r.lb, tol.feasibility))
      out.push({ kind: 'row', name: r.name, detail: `activity ${a} < lower bound ${r.lb}` });
    else if (a > r.ub + slack(r.ub, tol.feasibility))
      out.push({ kind: 'row', name: r.name, detail: `activity ${a} > upper bound ${r.ub}` });
  }
  if (reportedObjective !== undefined && reportedObjective !== null) {
    const obj = objectiveOf(m, x);
    if (Math.abs(obj - reportedObjective) > tol.objective * Math.max(1, Math.abs(obj)))
      out.push({
        kind: 'objective',
        name: m.name,
        detail: `reported ${reportedObjective}, recomputed ${obj}`,
      });
  }
  return out;
}

/** Integer and binary columns rounded to the nearest integer (call after verification). */
export function rounded(m: MipModel, x: ArrayLike<number>): number[] {
  return m.vars.map((v, j) => (v.type === 'continuous' ? x[j] : Math.round(x[j])));
}

export function describeViolations(v: Violation[], max = 5): string {
  const head = v
    .slice(0, max)
    .map((x) => `${x.kind} ${x.name}: ${x.detail}`)
    .join('; ');
  return v.length > max ? `${head}; ... (${v.length} in all)` : head;
}

/** Thrown when a decoded plan fails its domain check: a solver or decoding bug, never bad input. */
export class VerificationError extends Error {
  constructor(readonly problems: string[]) {
    super(
      `the solver's answer failed verification: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; ... (${problems.length} in all)` : ''}`,
    );
    this.name = 'VerificationError';
  }
}
