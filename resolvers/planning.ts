import { Arg, Query, Resolver } from 'type-graphql';
import { recommend, type Plan as PlanResult } from '../optimizer/recommend.js';
import { predict } from '../predictor/predict.js';
import { loadGpus, defaultInterNodeGbps } from '../seeds/catalog.js';
import { PRECISIONS } from '../predictor/types.js';
import { PredictInput, RecommendInput } from '../schema/inputs.js';
import { Plan, Prediction, Recommendation } from '../schema/types.js';
import { asGraphQLError, badInput, finiteNumber, integer, LIMITS, nonEmpty } from './validate.js';
import { gpuView } from './views.js';
import { gpuById, workload } from './lookup.js';

const planView = (p: PlanResult): Plan => ({ ...p, gpu: gpuView(p.gpu), totalGpus: p.nodes * p.gpusPerNode });

@Resolver()
export class PlanningResolver {
  @Query(() => Prediction, { description: 'Step time, throughput, memory, hours and cost of one configuration.' })
  predict(@Arg('input', () => PredictInput) input: PredictInput): Prediction {
    const { model, samples } = workload(input.workload);
    const gpu = gpuById('gpu', input.gpu);
    const nodes = integer('nodes', input.nodes, 1, LIMITS.nodes);
    const gpusPerNode = integer('gpusPerNode', input.gpusPerNode, 1, LIMITS.gpusPerNode);
    const batchSizePerGpu = integer('batchSizePerGpu', input.batchSizePerGpu, 1, LIMITS.batchSize);
    const gradAccumSteps = integer('gradAccumSteps', input.gradAccumSteps, 1, LIMITS.gradAccum);
    const interNodeGbps = input.interNodeGbps == null ? defaultInterNodeGbps(gpu.id) : finiteNumber('interNodeGbps', input.interNodeGbps, 0, LIMITS.gbps, { exclusiveMin: true });
    const price = input.priceUsdPerGpuHour == null ? undefined : finiteNumber('priceUsdPerGpuHour', input.priceUsdPerGpuHour, 0, LIMITS.price);
    try {
      const p = predict({ model, gpu, precision: input.precision, batchSizePerGpu, gpusPerNode, nodes, gradAccumSteps, fp32UsesTf32: input.fp32UsesTf32, interNodeGbps, samples, priceUsdPerGpuHour: price });
      return {
        model: p.modelId, gpu: gpuView(gpu), nodes, gpusPerNode, batchSizePerGpu, gradAccumSteps, precision: input.precision,
        dominantMath: p.dominantMath, stepTimeMs: p.stepTimeMs, throughput: p.throughput, throughputUnit: p.throughputUnit,
        globalBatch: p.globalBatch, totalHours: p.totalHours, costUsd: p.costUsd, priceUsdPerGpuHour: p.priceUsdPerGpuHour,
        memoryGbPerGpu: p.memory.totalGb, memory: p.memory, fitsInMemory: p.fitsInMemory, breakdown: p.breakdown, predictor: 'analytical',
      };
    } catch (e) {
      throw asGraphQLError(e);
    }
  }

  @Query(() => Recommendation, { description: 'Ranked plans over GPU type x nodes x GPUs per node x batch size x precision, with the cost-time Pareto front and why candidates were rejected.' })
  recommend(@Arg('input', () => RecommendInput) input: RecommendInput): Recommendation {
    const { model, samples } = workload(input.workload);
    const gpuIds = nonEmpty('gpus', input.gpus, LIMITS.listLength);
    const gpus = gpuIds ? [...new Set(gpuIds)].map((id, i) => gpuById(`gpus[${i}]`, id)) : loadGpus();
    const precisions = [...new Set(nonEmpty('precisions', input.precisions, PRECISIONS.length) ?? PRECISIONS)];
    const maxNodes = integer('maxNodes', input.maxNodes, 1, LIMITS.nodes);
    const maxGpus = input.maxGpus == null ? undefined : integer('maxGpus', input.maxGpus, 1, LIMITS.nodes * LIMITS.gpusPerNode);
    const gpusPerNode = [...new Set(nonEmpty('gpusPerNode', input.gpusPerNode, LIMITS.gpusPerNode) ?? [1, 2, 4, 8, 16])];
    gpusPerNode.forEach((g, i) => integer(`gpusPerNode[${i}]`, g, 1, LIMITS.gpusPerNode));
    const batchSizes = [...new Set(nonEmpty('batchSizes', input.batchSizes, LIMITS.listLength) ?? model.batchSizes)];
    batchSizes.forEach((b, i) => integer(`batchSizes[${i}]`, b, 1, LIMITS.batchSize));
    const globalBatch = input.globalBatch == null ? undefined : integer('globalBatch', input.globalBatch, 1, LIMITS.batchSize * LIMITS.nodes * LIMITS.gpusPerNode);
    const deadlineHours = input.deadlineHours == null ? undefined : finiteNumber('deadlineHours', input.deadlineHours, 0, LIMITS.hours, { exclusiveMin: true });
    const budgetUsd = input.budgetUsd == null ? undefined : finiteNumber('budgetUsd', input.budgetUsd, 0, LIMITS.usd, { exclusiveMin: true });
    const limit = integer('limit', input.limit, 1, LIMITS.limit);
    const net = input.interNodeGbps == null ? undefined : finiteNumber('interNodeGbps', input.interNodeGbps, 0, LIMITS.gbps, { exclusiveMin: true });
    const prices: Record<string, number> = {};
    for (const [i, p] of (nonEmpty('prices', input.prices, LIMITS.listLength) ?? []).entries()) {
      gpuById(`prices[${i}].gpu`, p.gpu);
      prices[p.gpu] = finiteNumber(`prices[${i}].usdPerGpuHour`, p.usdPerGpuHour, 0, LIMITS.price);
    }
    if (gpusPerNode.every((g) => g > 16)) throw badInput('gpusPerNode', 'no GPU type comes with more than 16 GPUs per node');
    try {
      const r = recommend({
        model, samples, objective: input.objective, deadlineHours, budgetUsd, gpus, precisions, maxNodes, maxGpus,
        gpusPerNodeChoices: gpusPerNode, batchSizes, globalBatch, prices, interNodeGbps: (g) => net ?? defaultInterNodeGbps(g.id),
        fp32UsesTf32: input.fp32UsesTf32, limit, maxCandidates: LIMITS.maxCandidates,
      });
      return { ...r, plans: r.plans.map(planView), paretoFront: r.paretoFront.map(planView) };
    } catch (e) {
      throw asGraphQLError(e);
    }
  }
}
