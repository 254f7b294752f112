// HiGHS (highs 1.15.3, WebAssembly) on a MipModel, through its persistent-model API, which (unlike
// the one-shot `solve(lpText)`) reports the MIP dual bound, so a solve stopped by its time limit can
// say how far from optimal its incumbent may be. `solve` blocks the thread it runs on: solver.ts
// runs this in a worker thread (highs-worker.ts), in-thread only when no worker can start.
import highsDefault from 'highs';
import type { Highs, InitOptions, ModelData, VariableType } from 'highs';
import type { MipModel, MipStart } from './model.js';

// highs ships CJS-style typings that NodeNext reads as "not callable" from ESM; the runtime default
// export is the loader.
const loadHighs = highsDefault as unknown as (o?: InitOptions) => Promise<Highs>;

export const HIGHS_VERSION = '1.15.3';

let instance: Promise<Highs> | undefined;
export function highs(): Promise<Highs> {
  instance ??= loadHighs();
  return instance;
}

/** What a backend says, before anyone checks it. */
export interface BackendResult {
  backend: 'highs' | 'javascript-lp-solver';
  /** optimal: proven; feasible: an incumbent but stopped early; no-solution: stopped early without one. */
  status: 'optimal' | 'feasible' | 'infeasible' | 'unbounded' | 'no-solution' | 'error';
  values: number[] | null;
  objective: number | null;
  /** Best proven bound on the objective (MIP dual bound), when the solver gives one. */
  bestBound: number | null;
  timeMs: number;
  /** The solver's own words for how it ended. */
  message: string;
}

export interface HighsSolveOptions {
  timeLimitSeconds: number;
  /** 0 for exact optima (HiGHS's default is 1e-4). */
  mipRelGap: number;
  start?: MipStart;
}

const STATUS_TEXT: Record<number, string> = {
  0: 'not set',
  1: 'load error',
  2: 'model error',
  3: 'presolve error',
  4: 'solve error',
  5: 'postsolve error',
  6: 'empty model',
  7: 'optimal',
  8: 'infeasible',
  9: 'unbounded or infeasible',
  10: 'unbounded',
  11: 'objective bound reached',
  12: 'objective target reached',
  13: 'time limit reached',
  14: 'iteration limit reached',
  15: 'unknown',
  16: 'solution limit reached',
  17: 'interrupted',
};

export function solveWithHighs(h: Highs, m: MipModel, o: HighsSolveOptions): BackendResult {
  const t0 = performance.now();
  const inf = h.infinity;
  const clamp = (x: number) => (x === Infinity ? inf : x === -Infinity ? -inf : x);
  const starts = [0],
    indices: number[] = [],
    values: number[] = [];
  for (const r of m.rows) {
    indices.push(...r.indices);
    values.push(...r.values);
    starts.push(indices.length);
  }
  const isMip = m.vars.some((v) => v.type !== 'continuous');
  const data: ModelData = {
    numCols: m.vars.length,
    numRows: m.rows.length,
    sense: m.sense === 'min' ? h.constants.objectiveSense.minimize : h.constants.objectiveSense.maximize,
    colCost: m.vars.map((v) => v.obj),
    colLower: m.vars.map((v) => clamp(v.lb)),
    colUpper: m.vars.map((v) => clamp(v.ub)),
    rowLower: m.rows.map((r) => clamp(r.lb)),
    rowUpper: m.rows.map((r) => clamp(r.ub)),
    matrix: { format: 'csr', numRows: m.rows.length, numCols: m.vars.length, starts, indices, values },
    integrality: isMip ? m.vars.map((v): VariableType => (v.type === 'continuous' ? 0 : 1)) : undefined,
  };
  const model = h.createModel(data);
  try {
    model.options.set({
      output_flag: false,
      time_limit: o.timeLimitSeconds,
      mip_rel_gap: o.mipRelGap,
      random_seed: 0,
    });
    if (o.start && o.start.length === m.vars.length) model.setSolution({ colValue: o.start });
    model.run();
    const code = model.getModelStatus();
    const primal = Number(model.info.get('primal_solution_status'));
    const hasSolution = primal === h.constants.solutionStatus.feasible;
    const x = hasSolution ? Array.from(model.getSolution().colValue) : null;
    const objective = hasSolution ? model.getObjectiveValue() : null;
    let bestBound: number | null = null;
    if (isMip) {
      const b = Number(model.info.get('mip_dual_bound'));
      bestBound = Number.isFinite(b) && Math.abs(b) < inf ? b : null;
    } else if (code === 7) bestBound = objective;
    const status: BackendResult['status'] =
      code === 7
        ? hasSolution
          ? 'optimal'
          : 'error'
        : code === 8
          ? 'infeasible'
          : code === 9 || code === 10
            ? 'unbounded'
            : [11, 12, 13, 14, 16, 17].includes(code)
              ? hasSolution
                ? 'feasible'
                : 'no-solution'
              : 'error';
    return {
      backend: 'highs',
      status,
      values: x,
      objective,
      bestBound,
      timeMs: performance.now() - t0,
      message: STATUS_TEXT[code] ?? `status ${code}`,
    };
  } finally {
    model.dispose();
  }
}
