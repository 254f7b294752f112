// Property-based tests (fast-check, fixed seeds) of the predictor's and the optimizer's invariants:
// cost = hours x GPUs x price; a plan never exceeds memory, deadline, budget or maxGpus; plans are
// ranked by the objective; adding a GPU type never makes the best plan worse; results are
// deterministic; a search stopped by its time budget still only returns valid plans; the
// recommend cache answers exactly what a fresh search would.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApolloServer } from '@apollo/server';
import {
  recommend,
  SearchTimeout,
  TIE_RESOLUTION,
  type Objective,
  type RecommendRequest,
} from '../optimizer/recommend.js';
import { InputError, predict } from '../predictor/predict.js';
import {
  MASTER_WEIGHTS,
  OPTIMIZER_STATES,
  RECOMPUTE,
  RECOMPUTE_MODULES,
  type Parallelism,
} from '../predictor/parallel.js';
import { unsupportedReason } from '../predictor/precision.js';
import { PRECISIONS, type Precision } from '../predictor/types.js';
import type { CatalogGpu } from '../seeds/types.js';
import { loadZoo } from '../predictor/zoo/index.js';
import { defaultInterNodeGbps, loadEfficiency, loadGpus } from '../seeds/catalog.js';
import { createApollo } from '../server/apollo.js';
import { recommendCache } from '../service/cache.js';

const eff = loadEfficiency();

const SEED = 6_2026;
const priced = loadGpus().filter(
  (g) => g.priceUsdPerGpuHour !== null && unsupportedReason(g, 'FP32') === null,
);
const models = loadZoo();
/** A precision mode the GPU runs, chosen by a drawn number. */
const precisionOf = (gpu: (typeof priced)[number], pick: number) => {
  const ok = PRECISIONS.filter((p) => unsupportedReason(gpu, p) === null);
  return ok[pick % ok.length];
};
const close = (a: number, b: number, rel = 1e-9) =>
  Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b), 1e-300);

describe('predictor invariants', () => {
  const config = fc.record({
    model: fc.constantFrom(...models),
    gpu: fc.constantFrom(...priced),
    precisionPick: fc.nat(),
    batch: fc.integer({ min: 1, max: 512 }),
    gpusPerNode: fc.constantFrom(1, 2, 4, 8),
    nodes: fc.integer({ min: 1, max: 64 }),
    accum: fc.integer({ min: 1, max: 8 }),
    samples: fc.double({ min: 1e3, max: 1e13, noNaN: true }),
    price: fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: undefined }),
  });

  it('cost = hours x GPUs x price, and the step time and memory are finite and positive', () => {
    fc.assert(
      fc.property(config, (c) => {
        const precision = precisionOf(c.gpu, c.precisionPick);
        const p = predict(
          {
            model: c.model,
            gpu: c.gpu,
            precision,
            batchSizePerGpu: c.batch,
            gpusPerNode: c.gpusPerNode,
            nodes: c.nodes,
            gradAccumSteps: c.accum,
            interNodeGbps: defaultInterNodeGbps(c.gpu.id),
            samples: c.samples,
            // The caller resolves the price (the request's, else the catalog's): the predictor only multiplies.
            priceUsdPerGpuHour: c.price ?? c.gpu.priceUsdPerGpuHour,
          },
          eff,
        );
        const price = c.price ?? c.gpu.priceUsdPerGpuHour!;
        expect(p.priceUsdPerGpuHour).toBe(price);
        expect(p.stepTimeMs).toBeGreaterThan(0);
        expect(Number.isFinite(p.stepTimeMs)).toBe(true);
        expect(p.memory.totalGb).toBeGreaterThan(0);
        expect(p.fitsInMemory).toBe(p.memory.totalGb <= c.gpu.usableMemoryGb);
        expect(close(p.costUsd!, p.totalHours! * c.nodes * c.gpusPerNode * price)).toBe(true);
        expect(close(p.totalHours!, c.samples / p.throughput / 3600)).toBe(true);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('any parallel layout is predicted with finite, positive figures or refused naming the parallelism field at fault', () => {
    // Every field of ParallelismInput at once, valid and invalid combinations alike: recomputation
    // modes and modules, the optimizer's moments and master weights, interleaving and context
    // parallelism, on models with and without transformer blocks and in every precision mode.
    // Most draws leave an optional field out and keep the degrees small, so that valid layouts are
    // common enough for the answered half of the property to be exercised too.
    const rarely = <T>(a: fc.Arbitrary<T>) =>
      fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: a, weight: 1 });
    const layered = models.filter((m) =>
      ['llama2_7b', 'gpt2_124m', 'bert_large_squad', 'resnet50_v1.5'].includes(m.id),
    );
    const layout = fc.record({
      model: fc.constantFrom(...layered),
      gpu: fc.constantFrom(...priced),
      precisionPick: fc.nat(),
      batch: fc.integer({ min: 1, max: 8 }),
      gpusPerNode: fc.constantFrom(1, 2, 4, 8),
      nodes: fc.integer({ min: 1, max: 16 }),
      accum: fc.integer({ min: 1, max: 8 }),
      tensorParallel: fc.constantFrom(1, 1, 1, 2, 4, 8, 3, 16),
      pipelineParallel: fc.constantFrom(1, 1, 1, 2, 4, 3, 8),
      zeroStage: fc.constantFrom(0, 1, 2, 3),
      recompute: fc.constantFrom(...RECOMPUTE),
      recomputeModules: rarely(fc.subarray([...RECOMPUTE_MODULES])),
      optimizerState: rarely(fc.constantFrom(...OPTIMIZER_STATES)),
      masterWeights: rarely(fc.constantFrom(...MASTER_WEIGHTS)),
      virtualPipelineStages: fc.constantFrom(1, 1, 1, 2),
      contextParallel: fc.constantFrom(1, 1, 1, 2),
    });
    let answered = 0;
    fc.assert(
      fc.property(layout, (c) => {
        const precision = precisionOf(c.gpu, c.precisionPick);
        const parallelism: Parallelism = {
          tensorParallel: c.tensorParallel,
          pipelineParallel: c.pipelineParallel,
          zeroStage: c.zeroStage as Parallelism['zeroStage'],
          recompute: c.recompute,
          virtualPipelineStages: c.virtualPipelineStages,
          contextParallel: c.contextParallel,
          ...(c.recomputeModules ? { recomputeModules: c.recomputeModules } : {}),
          ...(c.optimizerState ? { optimizerState: c.optimizerState } : {}),
          ...(c.masterWeights ? { masterWeights: c.masterWeights } : {}),
        };
        let p;
        try {
          p = predict(
            {
              model: c.model,
              gpu: c.gpu,
              precision,
              batchSizePerGpu: c.batch,
              gpusPerNode: c.gpusPerNode,
              nodes: c.nodes,
              gradAccumSteps: c.accum,
              interNodeGbps: defaultInterNodeGbps(c.gpu.id),
              parallelism,
            },
            eff,
          );
        } catch (e) {
          expect(e).toBeInstanceOf(InputError);
          expect((e as InputError).field).toMatch(/^parallelism\.\w+$/);
          expect((e as Error).message.length).toBeGreaterThan(10);
          return;
        }
        answered++;
        for (const v of [p.stepTimeMs, p.throughput, p.memory.totalGb])
          expect(Number.isFinite(v) && v > 0).toBe(true);
        for (const v of Object.values(p.breakdown))
          if (typeof v === 'number') expect(Number.isFinite(v) && v >= 0).toBe(true);
        if (c.masterWeights === 'none') expect(p.memory.masterWeightsGb).toBe(0);
      }),
      { seed: SEED, numRuns: 800 },
    );
    // Not every draw is refused: the property says something about answered layouts too.
    expect(answered).toBeGreaterThan(80);
  });

  it('is deterministic', () => {
    fc.assert(
      fc.property(config, (c) => {
        const req = {
          model: c.model,
          gpu: c.gpu,
          precision: precisionOf(c.gpu, c.precisionPick),
          batchSizePerGpu: c.batch,
          gpusPerNode: c.gpusPerNode,
          nodes: c.nodes,
          interNodeGbps: 100,
          samples: c.samples,
        };
        expect(predict(req, eff)).toEqual(predict(req, eff));
      }),
      { seed: SEED, numRuns: 50 },
    );
  });
});

interface Search {
  modelIndex: number;
  gpus: CatalogGpu[];
  extra: CatalogGpu;
  precisions: Precision[];
  objective: Objective;
  maxNodes: number;
  maxGpus?: number;
  deadlineHours?: number;
  budgetUsd?: number;
  samples: number;
  limit: number;
  timeBudgetMs?: number;
}

/** `arb` in `percent`% of the runs, undefined otherwise. */
const sometimes = <T>(percent: number, arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 100 - percent, arbitrary: fc.constant(undefined) }, { weight: percent, arbitrary: arb });
/** 10^u for u uniform in [lo, hi]: spreads values over orders of magnitude. */
const logUniform = (lo: number, hi: number) =>
  fc.double({ min: lo, max: hi, noNaN: true }).map((u) => 10 ** u);

const search: fc.Arbitrary<Search> = fc.record({
  modelIndex: fc.nat({ max: models.length - 1 }),
  gpus: fc.subarray(priced, { minLength: 1, maxLength: 4 }),
  extra: fc.constantFrom(...priced),
  precisions: fc.subarray([...PRECISIONS], { minLength: 1 }),
  objective: fc.constantFrom<Objective>('COST', 'TIME'),
  maxNodes: fc.integer({ min: 1, max: 6 }),
  maxGpus: sometimes(30, fc.integer({ min: 1, max: 32 })),
  deadlineHours: sometimes(50, logUniform(-1, 3.5)),
  budgetUsd: sometimes(50, logUniform(0, 5)),
  samples: logUniform(5, 10),
  limit: fc.integer({ min: 1, max: 25 }),
  timeBudgetMs: sometimes(20, fc.constantFrom(0, 1, 2)),
});

function request(s: Search, gpus = s.gpus): RecommendRequest {
  const model = models[s.modelIndex];
  return {
    model,
    samples: s.samples * model.unitsPerBatchElement,
    objective: s.objective,
    deadlineHours: s.deadlineHours,
    budgetUsd: s.budgetUsd,
    gpus,
    precisions: s.precisions,
    maxNodes: s.maxNodes,
    maxGpus: s.maxGpus,
    gpusPerNodeChoices: [1, 2, 4, 8, 16],
    batchSizes: model.batchSizes,
    interNodeGbps: (g) => defaultInterNodeGbps(g.id),
    limit: s.limit,
    timeBudgetMs: s.timeBudgetMs,
  };
}

const objectiveOf = (o: Objective) => (p: { costUsd: number | null; totalHours: number }) =>
  o === 'COST' ? p.costUsd! : p.totalHours;

describe('optimizer invariants', () => {
  it('every plan: cost = hours x GPUs x price; fits in memory; meets deadline, budget and maxGpus; ranked by the objective', () => {
    fc.assert(
      fc.property(search, (s) => {
        const req = request(s);
        // A search either completes or is refused: never a partial answer that depends on load.
        let r: ReturnType<typeof recommend>;
        try {
          r = recommend(req, eff);
        } catch (e) {
          expect(e).toBeInstanceOf(SearchTimeout);
          expect(s.timeBudgetMs).toBeDefined();
          return;
        }
        expect(s.timeBudgetMs).not.toBe(0);
        expect(r.status).toBe('COMPLETE');
        expect(r.plans.length).toBe(Math.min(s.limit, r.feasible));
        const allowed = new Set(s.gpus.map((g) => g.id));
        r.plans.forEach((p, i) => {
          expect(p.rank).toBe(i + 1);
          expect(allowed.has(p.gpu.id)).toBe(true);
          expect(s.precisions).toContain(p.precision);
          const gpus = p.nodes * p.gpusPerNode;
          expect(close(p.costUsd!, p.totalHours * gpus * p.priceUsdPerGpuHour!)).toBe(true);
          expect(p.priceUsdPerGpuHour).toBe(p.gpu.priceUsdPerGpuHour);
          expect(p.memoryGbPerGpu).toBeLessThanOrEqual(p.gpu.memoryGb);
          if (s.deadlineHours !== undefined) expect(p.totalHours).toBeLessThanOrEqual(s.deadlineHours);
          if (s.budgetUsd !== undefined) expect(p.costUsd!).toBeLessThanOrEqual(s.budgetUsd);
          if (s.maxGpus !== undefined) expect(gpus).toBeLessThanOrEqual(s.maxGpus);
          expect(p.nodes).toBeLessThanOrEqual(s.maxNodes);
          // Ranked by the objective, to the ranking's resolution (ties within float32 go by the other metric).
          if (i > 0)
            expect(objectiveOf(s.objective)(p)).toBeGreaterThanOrEqual(
              objectiveOf(s.objective)(r.plans[i - 1]) * (1 - TIE_RESOLUTION),
            );
        });
        // The Pareto front: faster plans cost strictly more.
        for (let i = 1; i < r.paretoFront.length; i++) {
          expect(r.paretoFront[i].totalHours).toBeGreaterThanOrEqual(r.paretoFront[i - 1].totalHours);
          expect(r.paretoFront[i].costUsd!).toBeLessThan(r.paretoFront[i - 1].costUsd!);
        }
      }),
      { seed: SEED, numRuns: 150 },
    );
  });

  it('adding a GPU type to the allowed set never makes the best plan worse', () => {
    fc.assert(
      fc.property(search, (s) => {
        const base = recommend({ ...request(s), timeBudgetMs: undefined }, eff);
        const more = recommend(
          {
            ...request(s, s.gpus.some((g) => g.id === s.extra.id) ? s.gpus : [...s.gpus, s.extra]),
            timeBudgetMs: undefined,
          },
          eff,
        );
        expect(more.feasible).toBeGreaterThanOrEqual(base.feasible);
        if (base.plans.length === 0) return;
        expect(more.plans.length).toBeGreaterThan(0);
        const f = objectiveOf(s.objective);
        expect(f(more.plans[0])).toBeLessThanOrEqual(f(base.plans[0]));
      }),
      { seed: SEED, numRuns: 100 },
    );
  });

  it('is deterministic: the same request gives the same answer', () => {
    fc.assert(
      fc.property(search, (s) => {
        const req = { ...request(s), timeBudgetMs: undefined };
        expect(JSON.stringify(recommend(req, eff))).toBe(JSON.stringify(recommend(req, eff)));
      }),
      { seed: SEED, numRuns: 30 },
    );
  });
});

describe('the recommend cache', () => {
  let server: ApolloServer<object>;
  beforeAll(async () => {
    server = (await createApollo()) as unknown as ApolloServer<object>;
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers exactly what a fresh search answers', async () => {
    const query = `query($input: RecommendInput!) { recommend(input: $input) { status evaluated feasible plans { rank gpu { id } nodes gpusPerNode batchSizePerGpu precision totalHours costUsd } paretoFront { costUsd totalHours } rejected { reason count } } }`;
    const run = async (input: Record<string, unknown>) => {
      const res = await server.executeOperation({ query, variables: { input } });
      if (res.body.kind !== 'single') throw new Error('expected a single result');
      expect(res.body.singleResult.errors).toBeUndefined();
      return res.body.singleResult.data;
    };
    await fc.assert(
      fc.asyncProperty(search, async (s) => {
        const input = {
          workload: {
            model: models[s.modelIndex].id,
            samples: s.samples * models[s.modelIndex].unitsPerBatchElement,
          },
          objective: s.objective,
          gpus: s.gpus.map((g) => g.id),
          precisions: s.precisions,
          maxNodes: s.maxNodes,
          maxGpus: s.maxGpus,
          deadlineHours: s.deadlineHours,
          budgetUsd: s.budgetUsd,
          limit: s.limit,
        };
        recommendCache.clear();
        const fresh = await run(input);
        const hits = recommendCache.hits;
        const again = await run(input);
        expect(recommendCache.hits).toBe(hits + 1);
        expect(again).toEqual(fresh);
      }),
      { seed: SEED, numRuns: 25 },
    );
  });
});
