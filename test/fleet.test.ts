import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { apolloForTests } from './graphql-client.js';
import {
  fleetCandidates,
  planFleet,
  verifyFleetPlan,
  type FleetCandidate,
  type FleetPlan,
  type FleetRequest,
} from '../optimizer/fleet.js';
import { shutdownSolverWorkers } from '../optimizer/milp/solver.js';
import { getModel } from '../predictor/zoo/index.js';
import { getGpu, loadEfficiency } from '../seeds/catalog.js';

const run = apolloForTests(() => shutdownSolverWorkers());

const A100 = getGpu('A100-SXM4-80GB')!,
  V100 = getGpu('V100-SXM2-32GB')!;
// Three jobs whose cheapest plans alone would need 12 A100s; the inventory has 8 (and 12 V100s).
const base: FleetRequest = {
  jobs: [
    {
      id: 'bert',
      model: getModel('bert_large_squad')!,
      samples: 1e7,
      deadlineHours: 12,
      priority: 1,
      batchSizes: [16, 32],
    },
    {
      id: 'rn50',
      model: getModel('resnet50_v1.5')!,
      samples: 2e8,
      deadlineHours: 9,
      priority: 1,
      batchSizes: [64, 128],
    },
    {
      id: 'gpt',
      model: getModel('gpt2_124m')!,
      samples: 4e9,
      deadlineHours: 5,
      priority: 1,
      batchSizes: [8, 16],
    },
  ],
  inventory: [
    { gpu: A100, count: 8 },
    { gpu: V100, count: 12 },
  ],
  allowOnDemand: false,
  onDemandGpus: [],
  prices: {},
  objective: 'COST',
  allowUnplaced: false,
  precisions: ['AMP_FP16', 'FP32', 'AMP_BF16'],
  gpusPerNodeChoices: [1, 2, 4, 8],
  maxNodes: 2,
  interNodeGbps: () => 200,
  solve: { timeLimitSeconds: 10 },
  efficiency: loadEfficiency(),
};

/** Every combination of (unpruned) candidates that fits the inventory: the brute-force optima. */
function bruteForce(r: FleetRequest, all: FleetCandidate[][]) {
  const limit = new Map(r.inventory.map((i) => [i.gpu.id, i.count]));
  let cost = Infinity,
    makespan = Infinity,
    costAtMakespan = Infinity,
    combos = 0;
  const pick: FleetCandidate[] = [];
  const walk = (j: number) => {
    if (j === all.length) {
      combos++;
      const used = new Map<string, number>();
      for (const c of pick) if (!c.onDemand) used.set(c.gpu.id, (used.get(c.gpu.id) ?? 0) + c.gpus);
      for (const [id, n] of used) if (n > (limit.get(id) ?? 0)) return;
      const total = pick.reduce((s, c) => s + c.costUsd!, 0);
      const mk = Math.max(...pick.map((c) => c.totalHours));
      cost = Math.min(cost, total);
      if (mk < makespan - 1e-12) {
        makespan = mk;
        costAtMakespan = total;
      } else if (Math.abs(mk - makespan) <= 1e-12) costAtMakespan = Math.min(costAtMakespan, total);
      return;
    }
    for (const c of all[j]) {
      pick[j] = c;
      walk(j + 1);
    }
  };
  walk(0);
  return { cost, makespan, costAtMakespan, combos };
}

describe('planFleet (library)', () => {
  const { all, kept } = fleetCandidates(base);

  it('the instance is contended: the per-job cheapest plans together overflow the A100 inventory', () => {
    const cheapest = all.map((cs) => cs.reduce((a, b) => (a.costUsd! < b.costUsd! ? a : b)));
    expect(cheapest.filter((c) => c.gpu.id === A100.id).reduce((s, c) => s + c.gpus, 0)).toBeGreaterThan(8);
    expect(kept.reduce((s, c) => s + c.length, 0)).toBeLessThan(all.reduce((s, c) => s + c.length, 0));
  });

  it.each(['HIGHS', 'JAVASCRIPT_LP_SOLVER', 'AUTO'] as const)(
    'COST optimum equals brute-force enumeration over every unpruned candidate (%s)',
    async (solver) => {
      const bf = bruteForce(base, all);
      expect(bf.combos).toBeGreaterThan(100);
      const p = await planFleet({ ...base, solve: { timeLimitSeconds: 10, solver } });
      expect(p.status).toBe('OPTIMAL');
      expect(p.optimalityProven).toBe(true);
      expect(p.objectiveValue!).toBeCloseTo(bf.cost, 6);
      expect(verifyFleetPlan(base, p)).toEqual([]);
      const a100 = p.gpuUsage.find((u) => u.gpu.id === A100.id)!;
      expect(a100.used).toBeLessThanOrEqual(8);
      if (solver === 'AUTO') expect(p.solver).toMatch(/^javascript-lp-solver 1\.0\.3/);
      if (solver === 'HIGHS') expect(p.solver).toMatch(/^highs 1\.15\.3/);
    },
  );

  it('MAKESPAN optimum (and the cost tie-break at that makespan) equals brute force', async () => {
    const bf = bruteForce({ ...base, objective: 'MAKESPAN' }, all);
    const p = await planFleet({ ...base, objective: 'MAKESPAN' });
    expect(p.status).toBe('OPTIMAL');
    expect(p.objectiveValue!).toBeCloseTo(bf.makespan, 9);
    expect(p.totalCostUsd!).toBeCloseTo(bf.costAtMakespan, 4);
    expect(p.solver).toMatch(/makespan: highs/);
    expect(verifyFleetPlan({ ...base, objective: 'MAKESPAN' }, p)).toEqual([]);
  });

  it('an impossible deadline is INFEASIBLE with reason DEADLINE and the fastest time in the message', async () => {
    const r = { ...base, jobs: base.jobs.map((j) => (j.id === 'gpt' ? { ...j, deadlineHours: 0.01 } : j)) };
    const p = await planFleet(r);
    expect(p.status).toBe('INFEASIBLE');
    expect(p.unplaced).toEqual([expect.objectContaining({ jobId: 'gpt', reason: 'DEADLINE' })]);
    expect(p.unplaced[0].message).toMatch(
      /fastest configuration available takes [\d.]+ h .* beyond the 0\.01 h deadline/,
    );
    expect(p.assignments).toEqual([]);
  });

  it('a model that fits no GPU is INFEASIBLE with reason MEMORY', async () => {
    const r: FleetRequest = {
      ...base,
      jobs: [
        {
          id: 'llama',
          model: getModel('llama2_70b')!,
          samples: 1e9,
          deadlineHours: 1000,
          priority: 1,
          batchSizes: [1],
        },
      ],
    };
    const p = await planFleet(r);
    expect(p.status).toBe('INFEASIBLE');
    expect(p.unplaced[0]).toMatchObject({ jobId: 'llama', reason: 'MEMORY' });
  });

  it('a job that meets its deadline only with more GPUs than the inventory holds: INVENTORY, saying how many', async () => {
    const r: FleetRequest = { ...base, inventory: [{ gpu: A100, count: 2 }], jobs: [base.jobs[1]] };
    const p = await planFleet(r);
    expect(p.status).toBe('INFEASIBLE');
    expect(p.unplaced[0].reason).toBe('INVENTORY');
    expect(p.unplaced[0].message).toMatch(
      /only with at least \d+ A100-SXM4-80GB GPUs; the inventory holds 2/,
    );
  });

  it('jobs that each fit alone but not together: INFEASIBLE, the jobs left out of a largest placeable set, reason INVENTORY', async () => {
    const r: FleetRequest = { ...base, inventory: [{ gpu: A100, count: 8 }] };
    const p = await planFleet(r);
    expect(p.status).toBe('INFEASIBLE');
    expect(p.optimalityProven).toBe(true);
    expect(p.unplaced.length).toBeGreaterThan(0);
    for (const u of p.unplaced) {
      expect(u.reason).toBe('INVENTORY');
      expect(u.message).toMatch(
        /cannot hold it together with the placed jobs; meeting its deadline needs at least \d+ A100-SXM4-80GB \(\d+ of 8 left\)/,
      );
    }
  });

  it('allowUnplaced places the highest total priority and lists the rest', async () => {
    const r: FleetRequest = {
      ...base,
      inventory: [{ gpu: A100, count: 8 }],
      allowUnplaced: true,
      jobs: base.jobs.map((j) => ({ ...j, priority: j.id === 'rn50' ? 10 : 1 })),
    };
    const p = await planFleet(r);
    expect(['OPTIMAL', 'FEASIBLE']).toContain(p.status);
    expect(p.assignments.map((a) => a.jobId)).toContain('rn50');
    expect(p.unplaced.length).toBeGreaterThan(0);
    expect(p.assignments.length + p.unplaced.length).toBe(3);
    expect(verifyFleetPlan(r, p)).toEqual([]);
  });

  it('on-demand GPUs take what the inventory cannot hold, at their price', async () => {
    const r: FleetRequest = {
      ...base,
      inventory: [{ gpu: A100, count: 4 }],
      allowOnDemand: true,
      onDemandGpus: [getGpu('H100-SXM5-80GB')!, A100],
      prices: { 'H100-SXM5-80GB': 2.5 },
    };
    const p = await planFleet(r);
    expect(p.status).toBe('OPTIMAL');
    const od = p.assignments.filter((a) => a.onDemand);
    expect(od.length).toBeGreaterThan(0);
    for (const a of od) {
      expect(a.gpu.id).toBe('H100-SXM5-80GB');
      expect(a.priceUsdPerGpuHour).toBe(2.5);
    }
    expect(p.gpuUsage.find((u) => u.gpu.id === 'H100-SXM5-80GB')).toMatchObject({
      onDemand: true,
      available: null,
    });
    expect(verifyFleetPlan(r, p)).toEqual([]);
  });

  it('verification rejects planted wrong plans: inventory overflow, a missed deadline, a wrong total, a job twice', async () => {
    const good = await planFleet(base);
    expect(verifyFleetPlan(base, good)).toEqual([]);
    const tweak = (f: (p: FleetPlan) => void) => {
      const p = structuredClone(good);
      f(p);
      return verifyFleetPlan(base, p);
    };
    // Move every job onto A100s at their current sizes: more than 8 at once.
    expect(
      tweak((p) => {
        for (const a of p.assignments) {
          a.gpu = A100;
        }
        p.gpuUsage = [];
      }).join(' '),
    ).toMatch(/in use at once, the inventory holds 8|reported/);
    // A configuration far too small for its deadline.
    expect(
      tweak((p) => {
        const a = p.assignments.find((x) => x.jobId === 'gpt')!;
        a.nodes = 1;
        a.gpusPerNode = 1;
        a.gpus = 1;
      }).join(' '),
    ).toMatch(/job gpt: takes [\d.]+ h, deadline 5 h/);
    expect(
      tweak((p) => {
        p.objectiveValue = p.objectiveValue! * 0.9;
      }).join(' '),
    ).toMatch(/objective value reported/);
    expect(
      tweak((p) => {
        p.assignments.push(p.assignments[0]);
      }).join(' '),
    ).toMatch(/appears 2 times/);
    expect(
      tweak((p) => {
        p.assignments[0].precision = 'FP8';
      }).join(' '),
    ).toMatch(/precision FP8 is not allowed/);
  });
});

describe('planFleet over GraphQL and the CLI', () => {
  const JOBS = `jobs: [
    { id: "bert", workload: { model: "bert_large_squad", samples: 1e7 }, deadlineHours: 12, batchSizes: [16, 32] },
    { id: "rn50", workload: { model: "resnet50_v1.5", samples: 2e8 }, deadlineHours: 9, batchSizes: [64, 128] } ]`;

  it('answers with status, objective, solver, assignments and GPU usage', async () => {
    const r =
      await run(`{ planFleet(input: { ${JOBS}, inventory: [{ gpu: "A100-SXM4-80GB", count: 8 }, { gpu: "V100-SXM2-32GB", count: 12 }],
        precisions: [AMP_FP16, FP32], maxNodes: 2 }) {
      status objectiveValue solver optimalityProven gap notes totalCostUsd
      assignments { jobId gpu { id } nodes gpusPerNode totalGpus batchSizePerGpu precision totalHours costUsd deadlineHours }
      gpuUsage { gpu { id } used available onDemand } unplaced { jobId } modelSize { candidates keptCandidates variables constraints } } }`);
    expect(r.errors).toBeUndefined();
    const p = r.data!.planFleet;
    expect(p.status).toBe('OPTIMAL');
    expect(p.optimalityProven).toBe(true);
    expect(p.gap).toBe(0);
    expect(p.solver).toMatch(/javascript-lp-solver|highs/);
    expect(p.assignments).toHaveLength(2);
    expect(p.objectiveValue).toBeCloseTo(
      p.assignments.reduce((s: number, a: { costUsd: number }) => s + a.costUsd, 0),
      6,
    );
    for (const a of p.assignments) expect(a.totalHours).toBeLessThanOrEqual(a.deadlineHours);
    expect(p.modelSize.keptCandidates).toBeLessThanOrEqual(p.modelSize.candidates);
  });

  it.each([
    ['jobs: []', /^jobs: must not be an empty list/],
    [`${JOBS.replace('"rn50"', '"bert"')}`, /^jobs\[1\]\.id: duplicate id "bert"/],
    [
      `${JOBS.replace('deadlineHours: 12', 'deadlineHours: -1')}`,
      /^jobs\[0\]\.deadlineHours: must be a finite number > 0/,
    ],
    [`${JOBS}, inventory: [{ gpu: "B9000", count: 4 }]`, /^inventory\[0\]\.gpu: unknown GPU "B9000"/],
    [`${JOBS}, inventory: [{ gpu: "T4", count: -4 }]`, /^inventory\[0\]\.count: must be an integer from 0/],
    [
      `${JOBS}, inventory: [{ gpu: "T4", count: 4 }, { gpu: "T4", count: 2 }]`,
      /^inventory\[1\]\.gpu: T4 is listed twice/,
    ],
    [`${JOBS}, inventory: []`, /^inventory: holds no GPU and allowOnDemand is off/],
    [
      `${JOBS}, inventory: [{ gpu: "RTX-3090", count: 4 }]`,
      /^inventory\[0\]\.usdPerGpuHour: the catalog has no price for RTX-3090/,
    ],
    [
      `${JOBS}, inventory: [{ gpu: "T4", count: 4 }], timeLimitSeconds: 0`,
      /^timeLimitSeconds: must be a finite number > 0 and <= 60/,
    ],
    [
      `${JOBS}, inventory: [{ gpu: "T4", count: 4 }], maxNodes: 1000`,
      /^maxNodes: must be an integer from 1 to 64/,
    ],
    [
      `${JOBS.replace('model: "bert_large_squad"', 'model: "nope"')}, inventory: [{ gpu: "T4", count: 4 }]`,
      /^jobs\[0\]\.workload\.model: unknown model "nope"/,
    ],
  ])('bad input %# is BAD_USER_INPUT naming the field', async (args, message) => {
    const r = await run(`{ planFleet(input: { ${args} }) { status } }`);
    expect(r.errors?.[0].extensions?.code, JSON.stringify(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0].message).toMatch(message);
  });

  it('trainplan plan-fleet --in FILE.json (bin/trainplan.js) answers from a worker thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trainplan-fleet-'));
    const file = join(dir, 'fleet.json');
    writeFileSync(
      file,
      JSON.stringify({
        jobs: [
          {
            id: 'rn50',
            workload: { model: 'resnet50_v1.5', samples: 2e8 },
            deadlineHours: 9,
            batchSizes: [128],
          },
        ],
        inventory: [{ gpu: 'A100-SXM4-80GB', count: 8 }],
        precisions: ['AMP_FP16'],
        maxNodes: 1,
        solver: 'HIGHS',
      }),
    );
    const root = new URL('..', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['bin/trainplan.js', 'plan-fleet', '--in', file],
      { cwd: root, timeout: 60_000 },
    );
    const out = JSON.parse(stdout);
    expect(out.errors).toBeUndefined();
    expect(out.data.planFleet.status).toBe('OPTIMAL');
    expect(out.data.planFleet.solver).toBe('highs 1.15.3 (worker thread)');
  });
});
