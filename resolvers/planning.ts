import { Arg, Ctx, Query, Resolver } from 'type-graphql';
import type { Plan as PlanResult } from '../optimizer/recommend.js';
import { predictCorrected, recommendCorrected } from '../optimizer/corrected.js';
import { learnedPredictor } from '../predictor/learned/model.js';
import { loadGpus, defaultInterNodeGbps } from '../seeds/catalog.js';
import { PRECISIONS } from '../predictor/types.js';
import { PredictInput, RecommendInput } from '../schema/inputs.js';
import { Plan, Prediction, Recommendation } from '../schema/types.js';
import { asGraphQLError, badInput, finiteNumber, integer, LIMITS, nonEmpty } from './validate.js';
import { gpuView } from './views.js';
import { planParallelism, type Parallelism as ParallelismSpec } from '../predictor/parallel.js';
import { gpuById, workload } from './lookup.js';
import { normalizedKey, recommendCache } from './cache.js';
import {
  observeSearch,
  postSearchMsPerCandidate,
  remainingBudgetMs,
  type RequestContext,
} from './context.js';
import { runtimeConfig } from '../server/config.js';

const planView = (p: PlanResult): Plan => ({ ...p, gpu: gpuView(p.gpu), totalGpus: p.nodes * p.gpusPerNode });

@Resolver()
export class PlanningResolver {
  @Query(() => Prediction, {
    description: 'Step time, throughput, memory, hours and cost of one configuration.',
  })
  async predict(@Arg('input', () => PredictInput) input: PredictInput): Promise<Prediction> {
    const { model, samples } = workload(input.workload);
    const gpu = gpuById('gpu', input.gpu);
    const nodes = integer('nodes', input.nodes, 1, LIMITS.nodes);
    const gpusPerNode = integer('gpusPerNode', input.gpusPerNode, 1, LIMITS.gpusPerNode);
    const batchSizePerGpu = integer('batchSizePerGpu', input.batchSizePerGpu, 1, LIMITS.batchSize);
    const gradAccumSteps = integer('gradAccumSteps', input.gradAccumSteps, 1, LIMITS.gradAccum);
    const interNodeGbps =
      input.interNodeGbps == null
        ? defaultInterNodeGbps(gpu.id)
        : finiteNumber('interNodeGbps', input.interNodeGbps, 0, LIMITS.gbps, { exclusiveMin: true });
    const price =
      input.priceUsdPerGpuHour == null
        ? undefined
        : finiteNumber('priceUsdPerGpuHour', input.priceUsdPerGpuHour, 0, LIMITS.price);
    // Tensor/pipeline parallelism, ZeRO, recomputation: checked against the model and layout by predict (parallel.ts checkParallelism).
    const parallelism: ParallelismSpec | undefined =
      input.parallelism == null
        ? undefined
        : {
            ...input.parallelism,
            zeroStage: input.parallelism.zeroStage as ParallelismSpec['zeroStage'],
            optimizerState: input.parallelism.optimizerState ?? undefined,
          };
    try {
      const p = await predictCorrected(
        {
          model,
          gpu,
          precision: input.precision,
          batchSizePerGpu,
          gpusPerNode,
          nodes,
          gradAccumSteps,
          fp32UsesTf32: input.fp32UsesTf32,
          interNodeGbps,
          samples,
          priceUsdPerGpuHour: price,
          parallelism,
          stack: input.softwareStack,
        },
        await learnedPredictor(),
        { framework: input.framework, xla: input.xla },
      );
      return {
        model: p.modelId,
        gpu: gpuView(gpu),
        nodes,
        gpusPerNode,
        batchSizePerGpu,
        gradAccumSteps,
        precision: input.precision,
        dominantMath: p.dominantMath,
        stepTimeMs: p.stepTimeMs,
        throughput: p.throughput,
        throughputUnit: p.throughputUnit,
        globalBatch: p.globalBatch,
        totalHours: p.totalHours,
        costUsd: p.costUsd,
        priceUsdPerGpuHour: p.priceUsdPerGpuHour,
        memoryGbPerGpu: p.memory.totalGb,
        memory: p.memory,
        fitsInMemory: p.fitsInMemory,
        breakdown: p.breakdown,
        predictor: p.predictor,
        parallelism: planParallelism(gpusPerNode * nodes, parallelism, gradAccumSteps),
        analyticalStepTimeMs: p.analyticalStepTimeMs,
        stepTimeMsP10: p.stepTimeMsP10,
        stepTimeMsP90: p.stepTimeMsP90,
        totalHoursP90: p.totalHoursP90,
        evidence: p.evidence,
      };
    } catch (e) {
      throw asGraphQLError(e);
    }
  }

  @Query(() => Recommendation, {
    description:
      'Ranked plans over GPU type x nodes x GPUs per node x batch size x precision, with the cost-time Pareto front and why candidates were rejected.',
  })
  async recommend(
    @Arg('input', () => RecommendInput) input: RecommendInput,
    @Ctx() ctx?: RequestContext,
  ): Promise<Recommendation> {
    const { model, samples } = workload(input.workload);
    const gpuIds = nonEmpty('gpus', input.gpus, LIMITS.listLength);
    const gpus = gpuIds ? [...new Set(gpuIds)].map((id, i) => gpuById(`gpus[${i}]`, id)) : loadGpus();
    const precisions = [
      ...new Set(nonEmpty('precisions', input.precisions, PRECISIONS.length) ?? PRECISIONS),
    ];
    const maxNodes = integer('maxNodes', input.maxNodes, 1, LIMITS.nodes);
    const maxGpus =
      input.maxGpus == null
        ? undefined
        : integer('maxGpus', input.maxGpus, 1, LIMITS.nodes * LIMITS.gpusPerNode);
    const gpusPerNode = [
      ...new Set(nonEmpty('gpusPerNode', input.gpusPerNode, LIMITS.gpusPerNode) ?? [1, 2, 4, 8, 16]),
    ];
    gpusPerNode.forEach((g, i) => integer(`gpusPerNode[${i}]`, g, 1, LIMITS.gpusPerNode));
    const batchSizes = [
      ...new Set(nonEmpty('batchSizes', input.batchSizes, LIMITS.listLength) ?? model.batchSizes),
    ];
    batchSizes.forEach((b, i) => integer(`batchSizes[${i}]`, b, 1, LIMITS.batchSize));
    const globalBatch =
      input.globalBatch == null
        ? undefined
        : integer('globalBatch', input.globalBatch, 1, LIMITS.batchSize * LIMITS.nodes * LIMITS.gpusPerNode);
    const deadlineHours =
      input.deadlineHours == null
        ? undefined
        : finiteNumber('deadlineHours', input.deadlineHours, 0, LIMITS.hours, { exclusiveMin: true });
    const budgetUsd =
      input.budgetUsd == null
        ? undefined
        : finiteNumber('budgetUsd', input.budgetUsd, 0, LIMITS.usd, { exclusiveMin: true });
    const limit = integer('limit', input.limit, 1, LIMITS.limit);
    const net =
      input.interNodeGbps == null
        ? undefined
        : finiteNumber('interNodeGbps', input.interNodeGbps, 0, LIMITS.gbps, { exclusiveMin: true });
    const prices: Record<string, number> = {};
    for (const [i, p] of (nonEmpty('prices', input.prices, LIMITS.listLength) ?? []).entries()) {
      gpuById(`prices[${i}].gpu`, p.gpu);
      prices[p.gpu] = finiteNumber(`prices[${i}].usdPerGpuHour`, p.usdPerGpuHour, 0, LIMITS.price);
    }
    if (gpusPerNode.every((g) => g > 16))
      throw badInput('gpusPerNode', 'no GPU type comes with more than 16 GPUs per node');
    const requestedBudget =
      input.timeBudgetMs == null
        ? undefined
        : integer('timeBudgetMs', input.timeBudgetMs, 1, runtimeConfig().timeBudgetMs);
    // Identical requests (after validation, defaults filled) share one answer; see resolvers/cache.ts.
    // Every input field is part of the key (a field added later is too); the budget is not: only COMPLETE answers are kept.
    const cacheKey = normalizedKey({
      ...input,
      timeBudgetMs: undefined,
      workload: { ...input.workload, model: model.id, samples },
      gpus: gpus.map((g) => g.id),
      precisions,
      gpusPerNode,
      batchSizes,
      prices,
    });
    const cached = recommendCache.get(cacheKey);
    if (cached) return cached;
    const learned = await learnedPredictor();
    try {
      const started = performance.now();
      const r = await recommendCorrected(
        {
          model,
          samples,
          objective: input.objective,
          deadlineHours,
          budgetUsd,
          gpus,
          precisions,
          maxNodes,
          maxGpus,
          gpusPerNodeChoices: gpusPerNode,
          batchSizes,
          globalBatch,
          prices,
          interNodeGbps: (g) => net ?? defaultInterNodeGbps(g.id),
          fp32UsesTf32: input.fp32UsesTf32,
          limit,
          maxCandidates: runtimeConfig().maxCandidates,
          timeBudgetMs: remainingBudgetMs(ctx, requestedBudget),
          reserveMsPerCandidate: postSearchMsPerCandidate(!!learned.predictor),
          deadlineConfidence: input.deadlineConfidence,
          parallelismSearch: input.parallelismSearch,
          stack: input.softwareStack,
        },
        learned,
        { framework: input.framework, xla: input.xla },
      );
      observeSearch(!!learned.predictor, performance.now() - started, r);
      const answer: Recommendation = {
        ...r,
        plans: r.plans.map(planView),
        paretoFront: r.paretoFront.map(planView),
      };
      if (r.status === 'COMPLETE')
        recommendCache.set(cacheKey, answer, 1 + answer.plans.length + answer.paretoFront.length);
      return answer;
    } catch (e) {
      throw asGraphQLError(e);
    }
  }
}
