import { describe, expect, it } from 'vitest';
import { getGpu, loadEfficiency, loadGpus } from '../seeds/catalog.js';
import { recommend, type RecommendRequest } from '../optimizer/recommend.js';
import { predict } from '../predictor/predict.js';
import { InputError } from '../predictor/predict.js';
import { PRECISIONS } from '../predictor/types.js';
import { toy } from './fixtures.js';

const eff = loadEfficiency();

const gpus = ['V100-SXM2-16GB', 'A100-SXM4-80GB', 'H100-SXM5-80GB', 'T4', 'L4'].map((id) => getGpu(id)!);
const base: RecommendRequest = {
  model: toy,
  samples: 5e10,
  objective: 'COST',
  gpus,
  precisions: [...PRECISIONS],
  maxNodes: 4,
  gpusPerNodeChoices: [1, 2, 4, 8],
  batchSizes: [4, 8, 16, 32],
  interNodeGbps: () => 400,
  limit: 10,
};

describe('recommend', () => {
  it('ranks plans by cost, each cheaper-or-equal than the next, and counts every candidate', () => {
    const r = recommend(base, eff);
    expect(r.evaluated).toBe(5 * PRECISIONS.length * 4 * 4 * 4);
    const rejectedTotal = r.rejected.reduce((n, x) => n + x.count, 0);
    expect(r.feasible + rejectedTotal).toBe(r.evaluated);
    expect(r.plans.map((p) => p.rank)).toEqual(r.plans.map((_, i) => i + 1));
    for (let i = 1; i < r.plans.length; i++)
      expect(r.plans[i].costUsd!).toBeGreaterThanOrEqual(r.plans[i - 1].costUsd!);
  });

  it('a plan equals what predict says for the same configuration', () => {
    const p = recommend(base, eff).plans[0];
    const direct = predict(
      {
        model: toy,
        gpu: p.gpu,
        precision: p.precision,
        batchSizePerGpu: p.batchSizePerGpu,
        gpusPerNode: p.gpusPerNode,
        nodes: p.nodes,
        interNodeGbps: 400,
        samples: base.samples,
        priceUsdPerGpuHour: p.gpu.priceUsdPerGpuHour,
      },
      eff,
    );
    expect(p.stepTimeMs).toBeCloseTo(direct.stepTimeMs, 9);
    expect(p.totalHours).toBeCloseTo(direct.totalHours!, 9);
    expect(p.costUsd!).toBeCloseTo(direct.costUsd!, 9);
    expect(p.memoryGbPerGpu).toBeCloseTo(direct.memory.totalGb, 9);
  });

  it('never returns a plan that breaks memory, deadline, budget or GPU limits', () => {
    const r = recommend({ ...base, deadlineHours: 30, budgetUsd: 2000, maxGpus: 16, limit: 200 }, eff);
    expect(r.plans.length).toBeGreaterThan(0);
    for (const p of r.plans) {
      expect(p.totalHours).toBeLessThanOrEqual(30);
      expect(p.costUsd!).toBeLessThanOrEqual(2000);
      expect(p.nodes * p.gpusPerNode).toBeLessThanOrEqual(16);
      expect(p.memoryGbPerGpu).toBeLessThanOrEqual(p.gpu.memoryGb);
    }
    const reasons = r.rejected.map((x) => x.reason);
    expect(reasons).toContain('UNSUPPORTED_PRECISION');
    expect(reasons).toContain('MISSES_DEADLINE');
  });

  it('TIME ranks fastest first; the Pareto front trades time for cost monotonically', () => {
    const r = recommend({ ...base, objective: 'TIME' }, eff);
    for (let i = 1; i < r.plans.length; i++)
      expect(r.plans[i].totalHours).toBeGreaterThanOrEqual(r.plans[i - 1].totalHours);
    const f = r.paretoFront;
    expect(f.length).toBeGreaterThan(1);
    for (let i = 1; i < f.length; i++) {
      expect(f[i].totalHours).toBeGreaterThanOrEqual(f[i - 1].totalHours);
      expect(f[i].costUsd!).toBeLessThan(f[i - 1].costUsd!);
    }
    // The cheapest plan overall sits at the slow end of the front.
    const cheapest = recommend(base, eff).plans[0];
    expect(f[f.length - 1].costUsd!).toBeCloseTo(cheapest.costUsd!, 9);
  });

  it('explains an impossible request by its reasons', () => {
    const r = recommend({ ...base, deadlineHours: 0.001 }, eff);
    expect(r.plans).toEqual([]);
    expect(r.rejected[0].reason).toBe('MISSES_DEADLINE');
    const oom = recommend({ ...base, gpus: [getGpu('T4')!], batchSizes: [4096] }, eff);
    expect(oom.plans).toEqual([]);
    expect(oom.rejected.map((x) => x.reason)).toContain('OUT_OF_MEMORY');
  });

  it('a fixed global batch is reached with whole accumulation steps', () => {
    const r = recommend({ ...base, globalBatch: 256, limit: 50 }, eff);
    for (const p of r.plans) expect(p.batchSizePerGpu * p.gradAccumSteps * p.nodes * p.gpusPerNode).toBe(256);
    expect(r.plans.some((p) => p.gradAccumSteps > 1)).toBe(true);
  });

  it('GPUs without a catalog price are rejected for COST unless the request prices them', () => {
    const rtx = getGpu('RTX-3090')!;
    expect(recommend({ ...base, gpus: [rtx] }, eff).rejected.map((x) => x.reason)).toContain('NO_PRICE');
    const priced = recommend({ ...base, gpus: [rtx], prices: { 'RTX-3090': 0.3 }, batchSizes: [1, 2] }, eff);
    expect(priced.plans[0]?.priceUsdPerGpuHour).toBe(0.3);
  });

  it('allowing more GPU types never makes the best plan worse', () => {
    const narrow = recommend({ ...base, gpus: [getGpu('V100-SXM2-16GB')!] }, eff).plans[0];
    const wide = recommend({ ...base, gpus: loadGpus() }, eff).plans[0];
    expect(wide.costUsd!).toBeLessThanOrEqual(narrow.costUsd!);
  });

  it('refuses searches beyond the candidate cap, saying how many and what to narrow', () => {
    expect(() => recommend({ ...base, maxNodes: 1000, maxCandidates: 10_000 }, eff)).toThrow(
      /would enumerate 720000 candidates.*narrow/, // 5 GPUs x 9 precisions x 1000 nodes x 4 x 4
    );
    expect(() => recommend({ ...base, maxNodes: 1000, maxCandidates: 10_000 }, eff)).toThrow(InputError);
  });
});
