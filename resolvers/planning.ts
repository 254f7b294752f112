// predict and recommend: the service does the work (service/planning.ts); this file only maps its
// answers to the API's shapes.
import { Arg, Ctx, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { PlannedPlan as PlanResult } from '../service/harness-commands.js';
import { PredictInput, RecommendInput } from '../schema/inputs.js';
import { Plan, Prediction, Recommendation } from '../schema/types.js';
import { predictConfiguration, recommendPlans } from '../service/planning.js';
import type { RequestContext } from './context.js';
import { BadUserInput, FiniteAnswer } from './errors.js';
import { gpuView } from './views.js';

const planView = (p: PlanResult): Plan => ({ ...p, gpu: gpuView(p.gpu), totalGpus: p.nodes * p.gpusPerNode });

@Resolver()
@UseMiddleware(BadUserInput, FiniteAnswer)
export class PlanningResolver {
  @Query(() => Prediction, {
    description: 'Step time, throughput, memory, hours and cost of one configuration.',
  })
  async predict(
    @Arg('input', () => PredictInput, { description: 'The configuration to predict.' }) input: PredictInput,
  ): Promise<Prediction> {
    const p = await predictConfiguration(input);
    return {
      model: p.modelId,
      gpu: gpuView(p.gpu),
      nodes: p.nodes,
      gpusPerNode: p.gpusPerNode,
      batchSizePerGpu: p.batchSizePerGpu,
      gradAccumSteps: p.gradAccumSteps,
      precision: p.precision,
      dominantMath: p.dominantMath,
      stepTimeMs: p.stepTimeMs,
      throughput: p.throughput,
      throughputUnit: p.throughputUnit,
      modelTflopsPerGpu: p.modelTflopsPerGpu,
      mfu: p.mfu,
      globalBatch: p.globalBatch,
      totalHours: p.totalHours,
      costUsd: p.costUsd,
      priceUsdPerGpuHour: p.priceUsdPerGpuHour,
      offer: p.offer,
      memoryGbPerGpu: p.memory.totalGb,
      memory: p.memory,
      fitsInMemory: p.fitsInMemory,
      memoryHeadroomGb: p.memoryHeadroomGb,
      breakdown: p.breakdown,
      predictor: p.predictor,
      parallelism: p.parallelism,
      analyticalStepTimeMs: p.analyticalStepTimeMs,
      stepTimeMsP10: p.stepTimeMsP10,
      stepTimeMsP90: p.stepTimeMsP90,
      totalHoursP90: p.totalHoursP90,
      evidence: p.evidence,
      evidenceLevel: p.evidenceLevel,
      calibrationRuns: p.calibrationRuns,
      boundBy: p.boundBy,
      precisionUnmeasured: p.precisionUnmeasured,
      harness: p.harness,
    };
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
    const r = await recommendPlans(input, ctx);
    return { ...r, plans: r.plans.map(planView), paretoFront: r.paretoFront.map(planView) };
  }
}
