import { Arg, Ctx, Query, Resolver } from 'type-graphql';
import { SearchTimeout, type Plan as PlanResult } from '../optimizer/recommend.js';
import { selectOffers, type Offer } from '../optimizer/offers.js';
import { GraphQLError } from 'graphql';
import { predictCorrected, recommendCorrected } from '../optimizer/corrected.js';
import { learnedPredictor } from '../predictor/learned/model.js';
import { loadGpus, defaultInterNodeGbps, priceOverrides } from '../seeds/catalog.js';
import { PRECISIONS } from '../predictor/types.js';
import { PredictInput, RecommendInput } from '../schema/inputs.js';
import { Plan, Prediction, Recommendation } from '../schema/types.js';
import { asGraphQLError, badInput, finiteNumber, integer, LIMITS, nonEmpty } from './validate.js';
import { gpuView } from './views.js';
import { planParallelism, type Parallelism as ParallelismSpec } from '../predictor/parallel.js';
import { gpuById, workload } from './lookup.js';
import { normalizedKey, recommendCache } from './cache.js';
import { remainingBudgetMs, type RequestContext } from './context.js';
import { runtimeConfig } from '../server/config.js';

const planView = (p: PlanResult): Plan => ({ ...p, gpu: gpuView(p.gpu), totalGpus: p.nodes * p.gpusPerNode });

@Resolver()
export class PlanningResolver {
  @Query(() => Prediction, {
    description: 'Step time, throughput, memory, hours and cost of one configuration.',
  })
  async predict(
    @Arg('input', () => PredictInput, { description: 'The configuration to predict.' }) input: PredictInput,
  ): Promise<Prediction> {
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
    @Arg('input', () => RecommendInput, { description: 'The workload, objective, limits and search space.' })
    input: RecommendInput,
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
    const today = new Date();
    const ownOffers: Offer[] = (nonEmpty('offers', input.offers, LIMITS.listLength) ?? []).map((o, i) => {
      const gpuSpec = gpuById(`offers[${i}].gpu`, o.gpu);
      const gpusPerInstance = integer(
        `offers[${i}].gpusPerInstance`,
        o.gpusPerInstance,
        1,
        LIMITS.gpusPerNode,
      );
      if (!o.provider.trim()) throw badInput(`offers[${i}].provider`, 'must not be empty');
      if (!o.instance.trim()) throw badInput(`offers[${i}].instance`, 'must not be empty');
      if (o.priceDate != null && !/^\d{4}-\d{2}-\d{2}$/.test(o.priceDate))
        throw badInput(
          `offers[${i}].priceDate`,
          `must be a date YYYY-MM-DD (got "${o.priceDate.slice(0, 40)}")`,
        );
      return {
        provider: o.provider,
        instance: o.instance,
        gpuId: gpuSpec.id,
        gpusPerInstance,
        usdPerHour: finiteNumber(
          `offers[${i}].usdPerHour`,
          o.usdPerHour,
          0,
          LIMITS.price * LIMITS.gpusPerNode,
        ),
        region: o.region ?? '-',
        priceDate: o.priceDate ?? today.toISOString().slice(0, 10),
        source: 'the request (offers)',
        interNodeGbps:
          o.interNodeGbps == null
            ? null
            : finiteNumber(`offers[${i}].interNodeGbps`, o.interNodeGbps, 0, LIMITS.gbps, {
                exclusiveMin: true,
              }),
        interNodeNetwork: '',
        billing: 'instance' as const,
      };
    });
    const providers = nonEmpty('providers', input.providers, LIMITS.listLength);
    providers?.forEach((p, i) => {
      if (!p.trim()) throw badInput(`providers[${i}]`, 'must not be empty');
    });
    const server = priceOverrides();
    const offers = selectOffers({
      catalog: input.catalogOffers,
      own: ownOffers,
      perGpuPrices: [
        ...Object.entries(server.prices)
          .filter(([gpuId]) => prices[gpuId] === undefined)
          .map(([gpuId, usdPerGpuHour]) => ({ gpuId, usdPerGpuHour, source: server.source })),
        ...Object.entries(prices).map(([gpuId, usdPerGpuHour]) => ({
          gpuId,
          usdPerGpuHour,
          source: 'the request (prices)',
        })),
      ],
      providers,
    });
    const maxGlobalBatch =
      input.maxGlobalBatch == null
        ? undefined
        : integer(
            'maxGlobalBatch',
            input.maxGlobalBatch,
            1,
            LIMITS.batchSize * LIMITS.nodes * LIMITS.gpusPerNode,
          );
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
      // Offers as resolved (the server's price file included), so a changed price sheet is a new key.
      offers,
    });
    const cached = recommendCache.get(cacheKey);
    if (cached) return cached;
    const learned = await learnedPredictor();
    // The budget counts from the request's arrival: a request that waited it out in a queue is
    // refused before it searches, never answered with part of the candidates.
    const timeBudgetMs = remainingBudgetMs(ctx, requestedBudget);
    try {
      if (timeBudgetMs <= 0) throw new SearchTimeout(requestedBudget ?? runtimeConfig().timeBudgetMs, 0);
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
          maxGlobalBatch,
          offers,
          interNodeGbps: net === undefined ? undefined : () => net,
          fp32UsesTf32: input.fp32UsesTf32,
          limit,
          maxCandidates: runtimeConfig().maxCandidates,
          timeBudgetMs,
          deadlineConfidence: input.deadlineConfidence,
          parallelismSearch: input.parallelismSearch,
          rankBy: input.rankBy,
          minEvidence: input.minEvidence,
          today,
        },
        learned,
        { framework: input.framework, xla: input.xla },
        undefined,
        input.predictor,
      );
      const notes = [...r.notes];
      if (input.workload.customModel && input.batchSizes == null)
        notes.push(
          `warning: a custom model was searched at default batch sizes per GPU (${batchSizes.join(', ')}), not ones measured or chosen for it: give batchSizes`,
        );
      const answer: Recommendation = {
        ...r,
        notes,
        plans: r.plans.map(planView),
        paretoFront: r.paretoFront.map(planView),
      };
      recommendCache.set(cacheKey, answer, 1 + answer.plans.length + answer.paretoFront.length);
      return answer;
    } catch (e) {
      if (e instanceof SearchTimeout)
        throw new GraphQLError(e.message, {
          extensions: { code: 'SEARCH_TIMEOUT', budgetMs: Math.round(e.budgetMs), candidates: e.size },
        });
      throw asGraphQLError(e);
    }
  }
}
