import { afterAll, describe, expect, it } from 'vitest';
import { MipBuilder, objectiveOf, type MipModel } from '../optimizer/milp/model.js';
import {
  __setWorkerForTests,
  shutdownSolverWorkers,
  solveLexicographic,
  solveMip,
} from '../optimizer/milp/solver.js';
import { verifyMipSolution } from '../optimizer/milp/verify.js';
import { toJsLpModel } from '../optimizer/milp/lpsolver.js';
import { paretoFilter } from '../optimizer/pareto.js';

afterAll(() => shutdownSolverWorkers());

/** Deterministic pseudo-random numbers. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** A small fleet-like assignment model: J jobs pick one of K options each, sharing capacities. */
function assignment(seed: number, J = 4, K = 4, T = 2) {
  const r = rng(seed);
  const opts = Array.from({ length: J }, () =>
    Array.from({ length: K }, () => ({
      type: Math.floor(r() * T),
      gpus: 1 + Math.floor(r() * 4),
      cost: Math.round(10 + r() * 90),
    })),
  );
  const cap = Array.from({ length: T }, () => 2 + Math.floor(r() * 5));
  const b = new MipBuilder(`assign-${seed}`);
  const x = opts.map((os, j) => os.map((o, k) => b.addVar(`x_${j}_${k}`, 'binary', 0, 1, o.cost)));
  opts.forEach((os, j) =>
    b.addRow(
      `one_${j}`,
      os.map((_, k) => [x[j][k], 1] as [number, number]),
      1,
      1,
    ),
  );
  for (let t = 0; t < T; t++)
    b.addRow(
      `cap_${t}`,
      opts.flatMap((os, j) =>
        os.flatMap((o, k) => (o.type === t ? [[x[j][k], o.gpus] as [number, number]] : [])),
      ),
      -Infinity,
      cap[t],
    );
  // Brute force over every combination.
  let best = Infinity;
  const pick = new Array<number>(J).fill(0);
  const walk = (j: number) => {
    if (j === J) {
      const used = new Array<number>(T).fill(0);
      let cost = 0;
      pick.forEach((k, jj) => {
        used[opts[jj][k].type] += opts[jj][k].gpus;
        cost += opts[jj][k].cost;
      });
      if (used.every((u, t) => u <= cap[t])) best = Math.min(best, cost);
      return;
    }
    for (let k = 0; k < K; k++) {
      pick[j] = k;
      walk(j + 1);
    }
  };
  walk(0);
  return { model: b.build(), best };
}

describe('solver interface', () => {
  it('HiGHS and javascript-lp-solver both reach the brute-force optimum of small assignment models, verified', async () => {
    let feasible = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const { model, best } = assignment(seed);
      for (const solver of ['HIGHS', 'JAVASCRIPT_LP_SOLVER'] as const) {
        const r = await solveMip(model, { timeLimitSeconds: 10, solver });
        if (best === Infinity) {
          expect(r.status, `seed ${seed} ${solver}`).toBe('INFEASIBLE');
          continue;
        }
        expect(r.status, `seed ${seed} ${solver}`).toBe('OPTIMAL');
        expect(r.objective).toBeCloseTo(best, 6);
        expect(verifyMipSolution(model, r.values!, r.objective)).toEqual([]);
        expect(r.optimalityProven).toBe(true);
        if (solver === 'HIGHS') expect(r.solver).toMatch(/^highs 1\.15\.3 \(worker thread\)/);
      }
      if (best < Infinity) feasible++;
    }
    expect(feasible).toBeGreaterThan(6);
  });

  it('takes the javascript-lp-solver fast path only when eligible, and says which solver answered', async () => {
    const { model, best } = assignment(1);
    expect(best).toBeLessThan(Infinity);
    const fast = await solveMip(model, { timeLimitSeconds: 10, fastPathEligible: true });
    expect(fast.solver, fast.notes.join('; ')).toMatch(/^javascript-lp-solver 1\.0\.3/);
    const normal = await solveMip(model, { timeLimitSeconds: 10 });
    expect(normal.solver).toMatch(/^highs/);
    expect(normal.objective).toBeCloseTo(fast.objective!, 9);
  });

  it('concurrent solves share the worker pool and each gets its own answer', async () => {
    const models = Array.from({ length: 6 }, (_, k) => assignment(20 + k));
    const rs = await Promise.all(
      models.map(({ model }, k) =>
        solveMip(model, { timeLimitSeconds: 10, solver: k % 2 ? 'HIGHS' : 'JAVASCRIPT_LP_SOLVER' }),
      ),
    );
    rs.forEach((r, k) => {
      if (models[k].best === Infinity) expect(r.status).toBe('INFEASIBLE');
      else expect(r.objective).toBeCloseTo(models[k].best, 6);
    });
  });

  it('does not trust javascript-lp-solver on infeasibility: HiGHS proves it', async () => {
    const b = new MipBuilder('infeasible');
    const x = b.addVar('x', 'binary', 0, 1, 1),
      y = b.addVar('y', 'binary', 0, 1, 1);
    b.addRow(
      'both',
      [
        [x, 1],
        [y, 1],
      ],
      3,
      Infinity,
    );
    const r = await solveMip(b.build(), { timeLimitSeconds: 5, solver: 'JAVASCRIPT_LP_SOLVER' });
    expect(r.status).toBe('INFEASIBLE');
    expect(r.solver).toMatch(/^highs/);
    expect(r.notes.join(' ')).toMatch(
      /javascript-lp-solver reported infeasible \(not trusted without proof\)/,
    );
  });

  it('verification rejects planted wrong solutions: a broken row, a fractional binary, a bound, a wrong objective', () => {
    const { model } = assignment(2);
    const good = new Array<number>(model.vars.length).fill(0);
    // job j takes its option 0 wherever that fits; simply check detection on hand-made vectors.
    const rowBroken = [...good]; // every job unassigned: the assignment rows fail
    expect(verifyMipSolution(model, rowBroken).map((v) => v.kind)).toContain('row');
    const frac = [...good];
    frac[0] = 0.5;
    expect(verifyMipSolution(model, frac).map((v) => v.kind)).toContain('integrality');
    const bound = [...good];
    bound[1] = 2;
    expect(verifyMipSolution(model, bound).map((v) => v.kind)).toContain('bound');
    const b = new MipBuilder('obj');
    const x = b.addVar('x', 'integer', 0, 5, 3);
    b.addRow('r', [[x, 1]], 2, Infinity);
    const m = b.build();
    expect(verifyMipSolution(m, [2], 6)).toEqual([]);
    expect(verifyMipSolution(m, [2], 5).map((v) => v.kind)).toEqual(['objective']);
    expect(verifyMipSolution(m, [1]).map((v) => v.kind)).toEqual(['row']);
    expect(verifyMipSolution(m, [Number.NaN]).map((v) => v.kind)).toEqual(['nan']);
  });

  it('falls back to solving in-thread when no worker can start, and says so', async () => {
    __setWorkerForTests({ entry: new URL('./fixtures-milp/does-not-exist.ts', import.meta.url) });
    const { model, best } = assignment(5);
    const r = await solveMip(model, { timeLimitSeconds: 5, fastPathEligible: true }).finally(() =>
      __setWorkerForTests({}),
    );
    expect(r.solver).toMatch(/^highs 1\.15\.3 \(in-thread: the solver worker (failed to start|exited)/);
    expect(r.notes.join(' ')).toMatch(/javascript-lp-solver skipped: no worker thread/);
    if (best < Infinity) expect(r.objective).toBeCloseTo(best, 6);
  });

  it('a worker that never answers is terminated by the watchdog: the solve returns, it does not hang', async () => {
    __setWorkerForTests({
      entry: new URL('./fixtures-milp/silent-worker.ts', import.meta.url),
      watchdogGraceMs: 300,
    });
    const { model } = assignment(4);
    const t0 = performance.now();
    const r = await solveMip(model, { timeLimitSeconds: 0.5 }).finally(() => __setWorkerForTests({}));
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(r.status).toBe('TIME_LIMIT');
    expect(r.values).toBeNull();
    expect(r.notes.join(' ')).toMatch(/terminated by the watchdog/);
  });

  it('honours the time limit on a hard model and reports what it has (FEASIBLE with a gap, or TIME_LIMIT)', async () => {
    // Market split (Cornuéjols-Dawande): equality knapsacks that defeat LP-based branch and bound.
    const r = rng(42);
    const n = 36,
      m = 4;
    const b = new MipBuilder('market-split', 'min');
    const x = Array.from({ length: n }, (_, j) => b.addVar(`x${j}`, 'binary', 0, 1, 0));
    const slackP: number[] = [],
      slackM: number[] = [];
    for (let i = 0; i < m; i++) {
      const a = Array.from({ length: n }, () => Math.floor(r() * 100));
      const rhs = Math.floor(a.reduce((s, v) => s + v, 0) / 2);
      slackP.push(b.addVar(`sp${i}`, 'continuous', 0, Infinity, 1));
      slackM.push(b.addVar(`sm${i}`, 'continuous', 0, Infinity, 1));
      b.addRow(
        `split${i}`,
        [...x.map((xi, j) => [xi, a[j]] as [number, number]), [slackP[i], 1], [slackM[i], -1]],
        rhs,
        rhs,
      );
    }
    const t0 = performance.now();
    const res = await solveMip(b.build(), { timeLimitSeconds: 0.5, solver: 'HIGHS' });
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(['OPTIMAL', 'FEASIBLE', 'TIME_LIMIT']).toContain(res.status);
    if (res.status === 'FEASIBLE') {
      expect(res.optimalityProven).toBe(false);
      expect(res.gap).not.toBeNull();
      expect(res.notes.join(' ')).toMatch(/time limit/);
    }
  });

  it('lexicographic phases keep the earlier optimum while improving the later objective', async () => {
    // Two jobs, options (hours, cost): minimize the longest job, then the cost at that makespan.
    const b = new MipBuilder('lex');
    const opts = [
      [
        [4, 10],
        [2, 30],
        [3, 12],
      ],
      [
        [5, 5],
        [3, 20],
        [3, 18],
      ],
    ];
    const x = opts.map((os, j) => os.map((_, k) => b.addVar(`x${j}${k}`, 'binary', 0, 1)));
    const T = b.addVar('T', 'continuous', 0, 100);
    opts.forEach((os, j) => {
      b.addRow(
        `one${j}`,
        os.map((_, k) => [x[j][k], 1] as [number, number]),
        1,
        1,
      );
      b.addRow(`mk${j}`, [[T, 1], ...os.map(([h], k) => [x[j][k], -h] as [number, number])], 0, Infinity);
    });
    const model: MipModel = b.build();
    const mk = model.vars.map((_, i) => (i === T ? 1 : 0));
    const cost = model.vars.map((_, i) => {
      for (const [j, os] of opts.entries()) for (const [k, o] of os.entries()) if (x[j][k] === i) return o[1];
      return 0;
    });
    const lex = await solveLexicographic(
      model,
      [
        { name: 'makespan', coefs: mk, sense: 'min' },
        { name: 'cost', coefs: cost, sense: 'min', fastPathEligible: true },
      ],
      { timeLimitSeconds: 10 },
    );
    expect(lex.optimalityProven).toBe(true);
    expect(lex.phases.map((p) => p.value)).toEqual([3, 30]); // makespan 3: job0 option 2 (12), job1 option 2 (18)
    expect(
      objectiveOf({ ...model, vars: model.vars.map((v, i) => ({ ...v, obj: cost[i] })) }, lex.final.values!),
    ).toBe(30);
  });

  it('javascript-lp-solver models carry bounds as rows and are solved with {presolve: false, useMIRCuts: true}', () => {
    const b = new MipBuilder('bounds');
    b.addVar('n', 'integer', 2, 7, 1);
    b.addVar('t', 'continuous', -Infinity, 5, 0);
    const m = toJsLpModel(b.build(), 1000);
    expect(m.options).toMatchObject({ presolve: false, useMIRCuts: true, timeout: 1000 });
    expect(m.constraints.b0).toEqual({ min: 2, max: 7 });
    expect(m.unrestricted).toHaveProperty('x1');
  });
});

describe('pareto pruning', () => {
  it('keeps exactly the non-dominated items (all criteria minimized), first of exact ties', () => {
    const items = [
      [1, 5],
      [2, 4],
      [2, 6],
      [3, 3],
      [1, 5],
      [4, 4],
      [0, 9],
    ];
    const kept = paretoFilter(items, (x) => x);
    expect(kept).toEqual([
      [1, 5],
      [2, 4],
      [3, 3],
      [0, 9],
    ]);
    const r = rng(9);
    const many = Array.from({ length: 300 }, () => [
      Math.floor(r() * 20),
      Math.floor(r() * 20),
      Math.floor(r() * 20),
    ]);
    const front = paretoFilter(many, (x) => x);
    for (const a of many) {
      const dominatedOrKept = front.includes(a) || front.some((p) => p.every((v, d) => v <= a[d]));
      expect(dominatedOrKept).toBe(true);
    }
    for (const p of front)
      expect(front.some((q) => q !== p && q.every((v, d) => v <= p[d]) && q.some((v, d) => v < p[d]))).toBe(
        false,
      );
  });
});
