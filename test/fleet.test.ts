import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { apolloForTests } from './graphql-client.js';
import {
  fleetCandidates,
  layoutOf,
  planFleet,
  timeGrid,
  verifyFleetPlan,
  type FleetCandidate,
  type FleetPlan,
  type FleetRequest,
} from '../optimizer/fleet.js';
import { shutdownSolverWorkers } from '../optimizer/milp/solver.js';
import { getModel } from '../predictor/zoo/index.js';
import { getGpu, loadEfficiency } from '../seeds/catalog.js';
import type { PlanParallelism } from '../predictor/parallel.js';

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
      releaseHours: 0,
      deadlineHours: 12,
      priority: 1,
      batchSizes: [16, 32],
    },
    {
      id: 'rn50',
      model: getModel('resnet50_v1.5')!,
      samples: 2e8,
      releaseHours: 0,
      deadlineHours: 9,
      priority: 1,
      batchSizes: [64, 128],
    },
    {
      id: 'gpt',
      model: getModel('gpt2_124m')!,
      samples: 4e9,
      releaseHours: 0,
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

interface Objectives {
  cost: number;
  makespan: number;
  weighted: number;
  combos: number;
}

/**
 * Brute force over every candidate choice (unpruned) and every job order, each order scheduled by
 * the serial schedule-generation scheme: each job, in turn, at the earliest moment from its release
 * at which its GPUs are free for its whole run. Over all orders this reaches an optimal
 * left-justified schedule for cost, makespan and weighted completion alike. With `slotHours`, the
 * MIP's own discretization: a job starts at its release or on a slot boundary, and holds every slot
 * its run touches; without, continuous time.
 */
function bruteForce(r: FleetRequest, all: FleetCandidate[][], slotHours?: number): Objectives {
  const limit = new Map(r.inventory.map((i) => [i.gpu.id, i.count]));
  const best = { cost: Infinity, makespan: Infinity, weighted: Infinity, combos: 0 };
  const orders = permutations(all.map((_, j) => j));
  const pick: FleetCandidate[] = [];
  const occupancy = (a: number, h: number): [number, number] =>
    slotHours === undefined
      ? [a, a + h]
      : [Math.floor(a / slotHours + 1e-9) * slotHours, Math.ceil((a + h) / slotHours - 1e-9) * slotHours];
  const schedule = (order: number[]) => {
    const held = new Map<string, { from: number; to: number; gpus: number }[]>();
    const ends: number[] = [];
    for (const j of order) {
      const c = pick[j],
        job = r.jobs[j];
      const mine = held.get(c.gpu.id) ?? [];
      const use = (t: number) => mine.reduce((n, x) => (x.from <= t && t < x.to ? n + x.gpus : n), 0);
      const fits = (a: number) => {
        const [from, to] = occupancy(a, c.totalHours);
        return [from, ...mine.filter((x) => x.from > from && x.from < to).map((x) => x.from)].every(
          (t) => use(t) + c.gpus <= limit.get(c.gpu.id)!,
        );
      };
      const start = [job.releaseHours, ...mine.map((x) => x.to).filter((t) => t > job.releaseHours)]
        .sort((x, y) => x - y)
        .find(fits)!;
      if (start + c.totalHours > job.deadlineHours * (1 + 1e-12)) return null;
      const [from, to] = occupancy(start, c.totalHours);
      mine.push({ from, to, gpus: c.gpus });
      held.set(c.gpu.id, mine);
      ends[j] = start + c.totalHours;
    }
    return ends;
  };
  const walk = (j: number) => {
    if (j === all.length) {
      best.combos++;
      const cost = pick.reduce((s, c) => s + c.costUsd!, 0);
      for (const order of orders) {
        const ends = schedule(order);
        if (!ends) continue;
        best.cost = Math.min(best.cost, cost);
        best.makespan = Math.min(best.makespan, Math.max(...ends));
        best.weighted = Math.min(
          best.weighted,
          ends.reduce((s, e, k) => s + r.jobs[k].priority * e, 0),
        );
      }
      return;
    }
    for (const c of all[j]) {
      pick[j] = c;
      walk(j + 1);
    }
  };
  walk(0);
  return best;
}

function permutations(xs: number[]): number[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
}

describe('layoutOf', () => {
  it('re-predicts a plan at its own layout: interleaving, context and expert parallelism and the recomputed modules are kept, plain stays plain', () => {
    const plan = {
      dataParallel: 16,
      tensorParallel: 1,
      pipelineParallel: 1,
      contextParallel: 1,
      virtualPipelineStages: 1,
      expertParallel: 1,
      zeroStage: 0 as const,
      recompute: 'none' as PlanParallelism['recompute'],
      microBatches: 1,
    };
    expect(layoutOf(plan)).toBeUndefined();
    expect(layoutOf({ ...plan, recompute: 'selective', recomputeModules: ['layernorm', 'moe_act'] })).toEqual(
      {
        tensorParallel: 1,
        pipelineParallel: 1,
        zeroStage: 0,
        recompute: 'selective',
        recomputeModules: ['layernorm', 'moe_act'],
      },
    );
    expect(layoutOf({ ...plan, expertParallel: 8, zeroStage: 1 })).toEqual({
      tensorParallel: 1,
      pipelineParallel: 1,
      zeroStage: 1,
      recompute: 'none',
      expertParallel: 8,
    });
    expect(
      layoutOf({ ...plan, pipelineParallel: 4, virtualPipelineStages: 2, contextParallel: 2 }),
    ).toMatchObject({
      virtualPipelineStages: 2,
      contextParallel: 2,
    });
  });
});

const baseCandidates = await fleetCandidates(base);
const oneAtATimeRequest: FleetRequest = {
  ...base,
  inventory: [{ gpu: A100, count: 8 }],
  gpusPerNodeChoices: [8],
  maxNodes: 1,
};
const oneAtATimeCandidates = await fleetCandidates(oneAtATimeRequest);

describe('planFleet (library)', () => {
  const { all, kept } = baseCandidates;
  const slot = timeGrid(base, kept).slotHours;
  const onGrid = bruteForce(base, all, slot);
  const continuous = bruteForce(base, all);

  it('the instance is contended: the per-job cheapest plans together overflow the A100 inventory', () => {
    const cheapest = all.map((cs) => cs.reduce((a, b) => (a.costUsd! < b.costUsd! ? a : b)));
    expect(cheapest.filter((c) => c.gpu.id === A100.id).reduce((s, c) => s + c.gpus, 0)).toBeGreaterThan(8);
    expect(kept.reduce((s, c) => s + c.length, 0)).toBeLessThan(all.reduce((s, c) => s + c.length, 0));
    expect(onGrid.combos).toBeGreaterThan(100);
  });

  it.each(['HIGHS', 'JAVASCRIPT_LP_SOLVER', 'AUTO'] as const)(
    'COST optimum equals brute force over every candidate and job order on the grid, and a continuous schedule saves under 0.1% (%s)',
    async (solver) => {
      const p = await planFleet({ ...base, solve: { timeLimitSeconds: 10, solver } });
      expect(p.status).toBe('OPTIMAL');
      expect(p.optimalityProven).toBe(true);
      expect(p.objectiveValue!).toBeCloseTo(onGrid.cost, 6);
      // Starting only on slot boundaries can cost a little (here under a cent of $108), never save.
      expect(continuous.cost).toBeLessThanOrEqual(onGrid.cost * (1 + 1e-9));
      expect(onGrid.cost - continuous.cost).toBeLessThan(1e-3 * onGrid.cost);
      expect(await verifyFleetPlan(base, p)).toEqual([]);
      expect(p.gpuUsage.find((u) => u.gpu.id === A100.id)!.used).toBeLessThanOrEqual(8);
      if (solver === 'AUTO') expect(p.solver).toMatch(/javascript-lp-solver 1\.0\.3/);
      if (solver === 'HIGHS') expect(p.solver).not.toMatch(/javascript-lp-solver/);
    },
  );

  it.each([
    ['MAKESPAN', 'makespan'],
    ['WEIGHTED_COMPLETION', 'weighted'],
  ] as const)(
    '%s: between the continuous-time optimum and the grid optimum (brute force over orders and candidates)',
    async (objective, key) => {
      const r: FleetRequest = {
        ...base,
        objective,
        jobs: base.jobs.map((j, k) => ({ ...j, priority: k + 1 })),
      };
      const grid = bruteForce(r, all, slot),
        free = bruteForce(r, all);
      const p = await planFleet(r);
      expect(p.status).toBe('OPTIMAL');
      expect(await verifyFleetPlan(r, p)).toEqual([]);
      expect(p.objectiveValue!).toBeGreaterThanOrEqual(free[key] * (1 - 1e-9));
      expect(p.objectiveValue!).toBeLessThanOrEqual(grid[key] * (1 + 1e-9));
      // The grid costs at most one slot per job: the optimum moves less than that.
      expect(grid[key] - free[key]).toBeLessThanOrEqual(
        slot * (key === 'makespan' ? 3 : r.jobs.reduce((s, j) => s + 3 * j.priority, 0)),
      );
    },
  );

  it('a fleet that fits only one job at a time is placed in full, one after another, with start and end times', async () => {
    // Every configuration takes all 8 A100s (one 8-GPU node), so no two jobs can overlap.
    const r: FleetRequest = {
      ...base,
      inventory: [{ gpu: A100, count: 8 }],
      gpusPerNodeChoices: [8],
      maxNodes: 1,
      jobs: base.jobs.map((j) => ({ ...j, deadlineHours: 40 })),
    };
    const p = await planFleet(r);
    expect(p.status).toBe('OPTIMAL');
    expect(p.unplaced).toEqual([]);
    expect(p.assignments).toHaveLength(3);
    expect(await verifyFleetPlan(r, p)).toEqual([]);
    const runs = [...p.assignments].sort((a, b) => a.startHours - b.startHours);
    expect(runs[0].startHours).toBe(0);
    for (let k = 1; k < runs.length; k++)
      expect(runs[k].startHours).toBeGreaterThanOrEqual(runs[k - 1].endHours);
    for (const a of runs) {
      expect(a.gpus).toBe(8);
      expect(a.endHours).toBeCloseTo(a.startHours + a.totalHours, 9);
    }
    expect(p.gpuUsage).toEqual([expect.objectContaining({ used: 8, available: 8 })]);
    // The concurrent model of old could not place it: the three together need 24 A100s at once.
    expect(p.makespanHours).toBeCloseTo(runs[2].endHours, 9);
  });

  it('release times hold and deadlines are absolute: a job released at 20 h ends by its 30 h deadline', async () => {
    const r: FleetRequest = {
      ...base,
      inventory: [{ gpu: A100, count: 8 }],
      gpusPerNodeChoices: [8],
      maxNodes: 1,
      objective: 'MAKESPAN',
      jobs: base.jobs.map((j) =>
        j.id === 'rn50' ? { ...j, releaseHours: 20, deadlineHours: 30 } : { ...j, deadlineHours: 40 },
      ),
    };
    const p = await planFleet(r);
    expect(p.status).toBe('OPTIMAL');
    expect(await verifyFleetPlan(r, p)).toEqual([]);
    const rn = p.assignments.find((a) => a.jobId === 'rn50')!;
    expect(rn.startHours).toBeGreaterThanOrEqual(20);
    expect(rn.endHours).toBeLessThanOrEqual(30);
    expect(rn.releaseHours).toBe(20);
  });

  it('a Llama-2-13B fine-tune is placed on 8 A100-80GB with a sharded layout, as recommend finds it', async () => {
    const r: FleetRequest = {
      ...base,
      jobs: [
        {
          id: 'llama13',
          model: getModel('llama2_13b')!,
          samples: 2e8,
          releaseHours: 0,
          deadlineHours: 1000,
          priority: 1,
        },
      ],
      inventory: [{ gpu: A100, count: 8, priceUsdPerGpuHour: 1.6 }],
      precisions: ['AMP_BF16'],
      gpusPerNodeChoices: [8],
      maxNodes: 1,
    };
    const p = await planFleet(r);
    expect(p.status).toBe('OPTIMAL');
    expect(await verifyFleetPlan(r, p)).toEqual([]);
    const a = p.assignments[0];
    expect(a.gpus).toBe(8);
    expect(
      a.parallelism.zeroStage > 0 || a.parallelism.tensorParallel > 1 || a.parallelism.pipelineParallel > 1,
    ).toBe(true);
    expect(a.memoryGbPerGpu).toBeLessThanOrEqual(80);
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

  it('a model that fits no GPU, not even sharded, is INFEASIBLE with reason MEMORY', async () => {
    // Llama-2-70B's weights alone (140 GB in BF16) exceed one 80 GB GPU, whatever the layout.
    const r: FleetRequest = {
      ...base,
      gpusPerNodeChoices: [1],
      maxNodes: 1,
      jobs: [
        {
          id: 'llama',
          model: getModel('llama2_70b')!,
          samples: 1e9,
          releaseHours: 0,
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

  // Every configuration takes all 8 A100s, and each job's deadline leaves room for it alone: each
  // job fits alone, no two fit in sequence by their deadlines.
  const oneAtATime = oneAtATimeRequest;
  const fastestAlone = oneAtATimeCandidates.all.map((cs) => Math.min(...cs.map((c) => c.totalHours)));
  const tight: FleetRequest = {
    ...oneAtATime,
    jobs: oneAtATime.jobs.map((j, i) => ({ ...j, deadlineHours: fastestAlone[i] * 1.05 })),
  };

  it('jobs that each fit alone but not one after another by their deadlines: INFEASIBLE, the jobs left out of a largest placeable set, reason INVENTORY', async () => {
    // Whichever runs second ends after its deadline.
    for (const [i, a] of fastestAlone.entries())
      for (const [j, b] of fastestAlone.entries())
        if (i !== j) expect(a + b).toBeGreaterThan(tight.jobs[j].deadlineHours);
    const p = await planFleet(tight);
    expect(p.status).toBe('INFEASIBLE');
    expect(p.optimalityProven).toBe(true);
    expect(p.unplaced).toHaveLength(2);
    for (const u of p.unplaced) {
      expect(u.reason).toBe('INVENTORY');
      expect(u.message).toMatch(
        /the inventory cannot hold it between its release \(0 h\) and its deadline \([\d.]+ h\) together with the placed jobs; its smallest configuration needs 8 of the 8 A100-SXM4-80GB for [\d.]+ h/,
      );
    }
  });

  it('allowUnplaced places the highest total priority and lists the rest', async () => {
    const r: FleetRequest = {
      ...tight,
      allowUnplaced: true,
      jobs: tight.jobs.map((j) => ({ ...j, priority: j.id === 'rn50' ? 10 : 1 })),
    };
    const p = await planFleet(r);
    expect(['OPTIMAL', 'FEASIBLE']).toContain(p.status);
    expect(p.assignments.map((a) => a.jobId)).toEqual(['rn50']);
    expect(p.unplaced.map((u) => u.jobId).sort()).toEqual(['bert', 'gpt']);
    expect(await verifyFleetPlan(r, p)).toEqual([]);
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
    expect(await verifyFleetPlan(r, p)).toEqual([]);
  });

  it('verification rejects planted wrong plans: inventory overflow, a missed deadline, a wrong total, a job twice', async () => {
    const good = await planFleet(base);
    expect(await verifyFleetPlan(base, good)).toEqual([]);
    const tweak = async (f: (p: FleetPlan) => void) => {
      const p = structuredClone(good);
      f(p);
      return verifyFleetPlan(base, p);
    };
    // Start every job at time 0 on A100s at their current sizes: more than 8 at once.
    expect(
      (
        await tweak((p) => {
          for (const a of p.assignments) {
            a.gpu = A100;
            a.endHours -= a.startHours;
            a.startHours = 0;
          }
        })
      ).join(' '),
    ).toMatch(/A100-SXM4-80GB: \d+ GPUs in use at 0 h, the inventory holds 8/);
    // A configuration far too small for its deadline.
    expect(
      (
        await tweak((p) => {
          const a = p.assignments.find((x) => x.jobId === 'gpt')!;
          a.nodes = 1;
          a.gpusPerNode = 1;
          a.gpus = 1;
        })
      ).join(' '),
    ).toMatch(/job gpt: ends at [\d.]+ h, deadline 5 h/);
    // Started before its release, or ending later than its start plus its run.
    expect(
      (
        await tweak((p) => {
          p.assignments[0].startHours = -1;
        })
      ).join(' '),
    ).toMatch(/starts at -1 h, before its release at 0 h/);
    expect(
      (
        await tweak((p) => {
          p.assignments[0].endHours += 1;
        })
      ).join(' '),
    ).toMatch(/ends at [\d.]+ h, but starts at/);
    expect(
      (
        await tweak((p) => {
          p.objectiveValue = p.objectiveValue! * 0.9;
        })
      ).join(' '),
    ).toMatch(/objective value reported/);
    expect(
      (
        await tweak((p) => {
          p.assignments.push(p.assignments[0]);
        })
      ).join(' '),
    ).toMatch(/appears 2 times/);
    expect(
      (
        await tweak((p) => {
          p.assignments[0].precision = 'FP8';
        })
      ).join(' '),
    ).toMatch(/precision FP8 is not allowed/);
    // With the precisions left to their defaults, a job is checked against its own: FP8 for the
    // CNN, which its search left out, is not allowed; for GPT-2 it is (and fails only on the GPU).
    const byDefault: FleetRequest = {
      ...base,
      precisions: [...base.precisions, 'FP8'],
      precisionsByDefault: true,
    };
    expect(await verifyFleetPlan(byDefault, good)).toEqual([]);
    const planted = async (jobId: string) => {
      const p = structuredClone(good);
      p.assignments.find((a) => a.jobId === jobId)!.precision = 'FP8';
      return (await verifyFleetPlan(byDefault, p)).join(' ');
    };
    expect(await planted('rn50')).toMatch(/job rn50: precision FP8 is not allowed/);
    expect(await planted('gpt')).not.toMatch(/job gpt: precision FP8 is not allowed/);
  });
});

describe('planFleet over GraphQL and the CLI', () => {
  it('times each job under its own software stack, as recommend and predict do, and its harness note says what differs', async () => {
    const job = (id: string, stack: string) =>
      `{ id: "${id}", workload: { model: "llama2_7b", samples: 1e9 }, deadlineHours: 1000, batchSizes: [1], softwareStack: ${stack} }`;
    const r = await run(`{ planFleet(input: {
      jobs: [${job('eager', 'PYTORCH_EAGER')}, ${job('megatron', 'MEGATRON')}],
      inventory: [{ gpu: "H100-SXM5-80GB", count: 16, usdPerGpuHour: 3 }],
      precisions: [BF16], gpusPerNode: [8], maxNodes: 1
    }) { status assignments { jobId totalGpus totalHours harness { note } } } }`);
    expect(r.errors).toBeUndefined();
    const plan = r.data!.planFleet;
    expect(plan.status).toBe('OPTIMAL');
    const by = Object.fromEntries(plan.assignments.map((a: { jobId: string }) => [a.jobId, a])) as Record<
      string,
      { totalGpus: number; totalHours: number; harness: { note: string } }
    >;
    // Megatron's fitted effects (seeds/software.json) train the same model faster on as many GPUs
    // (each at its own best layout: steps of different batches are not compared).
    expect(by.megatron.totalGpus).toBe(by.eager.totalGpus);
    expect(by.megatron.totalHours).toBeLessThan(by.eager.totalHours);
    expect(by.megatron.harness.note).toMatch(/the harness runs eager PyTorch, not MEGATRON/);
    expect(by.eager.harness.note).not.toMatch(/not MEGATRON/);
  });

  // The zoo's BERT is DeepLearningExamples' script, which writes the attention scores to memory;
  // the same BERT trained with Hugging Face's code runs them fused: a job says so as predict does.
  it("times each job's attention as the job says it runs, and its harness commands run it so", async () => {
    const job = (id: string, attention: string) =>
      `{ id: "${id}", workload: { model: "bert_large_squad", samples: 1e7 }, deadlineHours: 1000, batchSizes: [32]${attention} }`;
    const r = await run(`{ planFleet(input: {
      jobs: [${job('script', '')}, ${job('hf', ', attention: FUSED')}],
      inventory: [{ gpu: "A100-SXM4-80GB", count: 2, usdPerGpuHour: 2 }],
      precisions: [AMP_FP16], gpusPerNode: [1], maxNodes: 1
    }) { status assignments { jobId stepTimeMs harness { commands } } } }`);
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect(r.data!.planFleet.status).toBe('OPTIMAL');
    const by = Object.fromEntries(
      r.data!.planFleet.assignments.map((a: { jobId: string }) => [a.jobId, a]),
    ) as Record<string, { stepTimeMs: number; harness: { commands: string[] } }>;
    expect(by.script.stepTimeMs / by.hf.stepTimeMs).toBeGreaterThan(1.1);
    expect(by.hf.harness.commands[1]).toMatch(/ --attention fused /);
    expect(by.script.harness.commands[1]).not.toMatch(/--attention/);
  });

  // Plans are costed on the memory format the request states (eager PyTorch's NCHW unless
  // channelsLast), and say so as recommend does.
  it('costs 16-bit convolutions on NCHW unless channelsLast says otherwise, and notes it', async () => {
    const plan = async (extra: string) => {
      const r = await run(`{ planFleet(input: { jobs: [
          { id: "rn50", workload: { model: "resnet50_v1.5", samples: 2e8 }, deadlineHours: 100, batchSizes: [128] } ],
        inventory: [{ gpu: "A100-SXM4-80GB", count: 8 }], gpusPerNode: [8], maxNodes: 1, precisions: [AMP_FP16]${extra} }) {
        status notes assignments { totalHours } } }`);
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      expect(r.data!.planFleet.status).toBe('OPTIMAL');
      return r.data!.planFleet as { notes: string[]; assignments: { totalHours: number }[] };
    };
    const nchw = await plan('');
    const nhwc = await plan(', channelsLast: true');
    expect(nchw.notes.filter((n) => /NCHW/.test(n))).toHaveLength(1);
    expect(nhwc.notes.filter((n) => /NCHW/.test(n))).toHaveLength(0);
    expect(nchw.assignments[0].totalHours / nhwc.assignments[0].totalHours).toBeGreaterThan(1.1);
  });

  const JOBS = `jobs: [
    { id: "bert", workload: { model: "bert_large_squad", samples: 1e7 }, deadlineHours: 12, batchSizes: [16, 32] },
    { id: "rn50", workload: { model: "resnet50_v1.5", samples: 2e8 }, deadlineHours: 9, batchSizes: [64, 128] } ]`;

  it('answers with status, objective, solver, assignments and GPU usage', async () => {
    const r =
      await run(`{ planFleet(input: { ${JOBS}, inventory: [{ gpu: "A100-SXM4-80GB", count: 8 }, { gpu: "V100-SXM2-32GB", count: 12 }],
        precisions: [AMP_FP16, FP32], maxNodes: 2 }) {
      status objectiveValue solver optimalityProven gap notes totalCostUsd
      assignments { jobId gpu { id } nodes gpusPerNode totalGpus batchSizePerGpu gradAccumSteps precision totalHours costUsd deadlineHours startHours endHours parallelism { dataParallel zeroStage } harness { commands note } }
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
    for (const a of p.assignments) {
      expect(a.endHours).toBeLessThanOrEqual(a.deadlineHours);
      expect(a.endHours).toBeCloseTo(a.startHours + a.totalHours, 9);
      expect(a.parallelism.dataParallel).toBeGreaterThan(0);
      // How to time the job's configuration on your own GPUs, as recommend's plans say it.
      const model = { bert: 'bert_large_squad', rn50: 'resnet50_v1.5' }[a.jobId as 'bert' | 'rn50'];
      if (a.parallelism.zeroStage > 0) expect(a.harness.commands).toEqual([]);
      else {
        expect(a.harness.commands[0]).toBe(`npx trainplan harness --model ${model} --out measure.py`);
        expect(a.harness.commands[1]).toContain(`--batch-size ${a.batchSizePerGpu} `);
        expect(a.harness.commands[1]).toContain(`--precision ${a.precision} `);
        if (a.nodes > 1) expect(a.harness.commands[1]).toMatch(/^torchrun --nnodes /);
        else if (a.gpusPerNode > 1) expect(a.harness.commands[1]).toContain(`--gpus ${a.gpusPerNode} `);
      }
    }
    expect(p.modelSize.keptCandidates).toBeLessThanOrEqual(p.modelSize.candidates);
  });

  it('queues jobs that fit only one after another, from their releases, under WEIGHTED_COMPLETION', async () => {
    const r = await run(`{ planFleet(input: { jobs: [
        { id: "bert", workload: { model: "bert_large_squad", samples: 1e7 }, deadlineHours: 40, priority: 1, batchSizes: [32] },
        { id: "rn50", workload: { model: "resnet50_v1.5", samples: 2e8 }, releaseHours: 2, deadlineHours: 40, priority: 5, batchSizes: [128] } ],
      inventory: [{ gpu: "A100-SXM4-80GB", count: 8 }], gpusPerNode: [8], maxNodes: 1, precisions: [AMP_BF16],
      objective: WEIGHTED_COMPLETION, timeSlots: 24 }) {
      status objectiveValue weightedCompletionHours makespanHours slotHours
      assignments { jobId startHours endHours releaseHours totalGpus } gpuUsage { used available } } }`);
    expect(r.errors).toBeUndefined();
    const p = r.data!.planFleet;
    expect(p.status).toBe('OPTIMAL');
    const [a, b] = [...p.assignments].sort(
      (x: { startHours: number }, y: { startHours: number }) => x.startHours - y.startHours,
    );
    expect(b.startHours).toBeGreaterThanOrEqual(a.endHours);
    const rn = p.assignments.find((x: { jobId: string }) => x.jobId === 'rn50');
    expect(rn.startHours).toBeGreaterThanOrEqual(2);
    expect(p.weightedCompletionHours).toBeCloseTo(
      p.assignments.reduce(
        (s: number, x: { jobId: string; endHours: number }) => s + (x.jobId === 'rn50' ? 5 : 1) * x.endHours,
        0,
      ),
      9,
    );
    expect(p.objectiveValue).toBeCloseTo(p.weightedCompletionHours, 9);
    expect(p.gpuUsage[0]).toEqual({ used: 8, available: 8 });
  });

  it.each([
    ['jobs: []', /^jobs: must not be an empty list/],
    [`${JOBS.replace('"rn50"', '"bert"')}`, /^jobs\[1\]\.id: duplicate id "bert"/],
    [
      `${JOBS.replace('deadlineHours: 12', 'deadlineHours: -1')}`,
      /^jobs\[0\]\.deadlineHours: must be a finite number from 0.001 to/,
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
      /^timeLimitSeconds: must be a finite number from 0.1 to 60 seconds/,
    ],
    [
      `${JOBS.replace('deadlineHours: 12', 'deadlineHours: 12, releaseHours: 12')}, inventory: [{ gpu: "T4", count: 4 }]`,
      /^jobs\[0\]\.releaseHours: must be before the job's deadline \(12 h; got 12\)/,
    ],
    [
      `${JOBS.replace('deadlineHours: 12', 'deadlineHours: 12, releaseHours: -1')}, inventory: [{ gpu: "T4", count: 4 }]`,
      /^jobs\[0\]\.releaseHours: must be 0 or a finite number from 0.001/,
    ],
    [
      `${JOBS}, inventory: [{ gpu: "T4", count: 4 }], timeSlots: 0`,
      /^timeSlots: must be an integer from 1 to 400/,
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
    // With how to time the assignment on your own GPUs, at its batch and precision.
    const [assignment] = out.data.planFleet.assignments;
    expect(assignment.harness.commands[1]).toContain(`--batch-size 128 --precision AMP_FP16`);
  });
});
