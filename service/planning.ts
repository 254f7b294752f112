// predict and recommend as requests arrive (GraphQL resolvers, the CLI): every field checked and
// named when wrong, every default filled in, the calibration constants and the learned model loaded
// once and passed down, identical recommend requests answered from a cache. Answers are domain
// objects (predictor/, optimizer/); the API's shapes are made in resolvers/.
import type { SoftwareStack } from '../predictor/software.js';
import type { Software } from '../predictor/learned/features.js';
import { learnedPredictor } from '../predictor/learned/model.js';
import { predictCorrected, type CorrectedPrediction } from '../predictor/corrected.js';
import { planParallelism, type Parallelism, type PlanParallelism } from '../predictor/parallel.js';
import type { Precision } from '../predictor/types.js';
import { recommendCorrected, type CorrectedRecommendation } from '../optimizer/recommend-corrected.js';
import type { Objective, ParallelismSearch } from '../optimizer/search-types.js';
import { defaultInterNodeGbps, loadEfficiency, loadGpus } from '../seeds/catalog.js';
import { PRECISIONS, type AttentionImplementation, type CatalogGpu } from '../seeds/types.js';
import { normalizedKey, recommendCache } from './cache.js';
import { runtimeConfig } from './config.js';
import { gpuById, workload, type WorkloadInput } from './lookup.js';
import { userEvidence } from './measurements.js';
import { observeSearch, postSearchMsPerCandidate, remainingBudgetMs } from './search-budget.js';
import { FLOORS, inRange, InputError, integer, LIMITS, nonEmpty, priceList } from './validate.js';

/** GPUs per node a search considers when the request does not say (16 only where a node holds 16). */
export const DEFAULT_GPUS_PER_NODE = [1, 2, 4, 8, 16];

/** Tensor/pipeline parallelism, ZeRO and recomputation as a request gives them. */
export interface ParallelismInput {
  tensorParallel: number;
  pipelineParallel: number;
  zeroStage: number;
  recompute: Parallelism['recompute'];
  optimizerState?: 'fp32' | 'bf16' | null;
  virtualPipelineStages?: number;
  contextParallel?: number;
}

/** One configuration to predict, as a request gives it (the GraphQL PredictInput has this shape). */
export interface PredictQuery extends Software {
  workload: WorkloadInput;
  gpu: string;
  nodes: number;
  gpusPerNode: number;
  batchSizePerGpu: number;
  gradAccumSteps: number;
  precision: Precision;
  fp32UsesTf32: boolean;
  interNodeGbps?: number | null;
  priceUsdPerGpuHour?: number | null;
  parallelism?: ParallelismInput | null;
  /** Software stack the estimate assumes; absent = PYTORCH_EAGER. */
  softwareStack?: SoftwareStack | null;
  /** Fused (default) or eager attention: what the attention core keeps for backward. */
  attention?: AttentionImplementation | null;
  /** GB per GPU to keep free in deciding fitsInMemory; default seeds/memory.json's. */
  memoryHeadroomGb?: number | null;
}

/** A prediction and the configuration it is of, every default filled in. */
export interface ConfigurationAnswer extends CorrectedPrediction {
  gpu: CatalogGpu;
  nodes: number;
  gpusPerNode: number;
  batchSizePerGpu: number;
  gradAccumSteps: number;
  precision: Precision;
  parallelism: PlanParallelism;
}

export async function predictConfiguration(q: PredictQuery): Promise<ConfigurationAnswer> {
  const { model, samples } = workload(q.workload);
  const gpu = gpuById('gpu', q.gpu);
  const nodes = integer('nodes', q.nodes, 1, LIMITS.nodes);
  const gpusPerNode = integer('gpusPerNode', q.gpusPerNode, 1, LIMITS.gpusPerNode);
  const batchSizePerGpu = integer('batchSizePerGpu', q.batchSizePerGpu, 1, LIMITS.batchSize);
  const gradAccumSteps = integer('gradAccumSteps', q.gradAccumSteps, 1, LIMITS.gradAccum);
  const interNodeGbps =
    q.interNodeGbps == null
      ? defaultInterNodeGbps(gpu.id)
      : inRange('interNodeGbps', q.interNodeGbps, FLOORS.gbps, LIMITS.gbps, { unit: 'Gbps' });
  const price =
    q.priceUsdPerGpuHour == null
      ? gpu.priceUsdPerGpuHour
      : inRange('priceUsdPerGpuHour', q.priceUsdPerGpuHour, FLOORS.price, LIMITS.price, { orZero: true });
  // Tensor/pipeline parallelism, ZeRO, recomputation: checked against the model and layout by predict (parallel.ts checkParallelism).
  const parallelism: Parallelism | undefined =
    q.parallelism == null
      ? undefined
      : {
          ...q.parallelism,
          zeroStage: q.parallelism.zeroStage as Parallelism['zeroStage'],
          optimizerState: q.parallelism.optimizerState ?? undefined,
        };
  const memoryHeadroomGb = headroomOf(q.memoryHeadroomGb);
  const learned = await learnedPredictor();
  const prediction = await predictCorrected(
    {
      model,
      gpu,
      precision: q.precision,
      batchSizePerGpu,
      gpusPerNode,
      nodes,
      gradAccumSteps,
      fp32UsesTf32: q.fp32UsesTf32,
      interNodeGbps,
      samples,
      priceUsdPerGpuHour: price,
      parallelism,
      ...(q.softwareStack ? { stack: q.softwareStack } : {}),
      ...(q.attention ? { attention: q.attention } : {}),
      ...(memoryHeadroomGb !== undefined ? { memoryHeadroomGb } : {}),
    },
    learned,
    loadEfficiency(),
    { framework: q.framework, xla: q.xla },
    await userEvidence(learned),
  );
  return {
    ...prediction,
    gpu,
    nodes,
    gpusPerNode,
    batchSizePerGpu,
    gradAccumSteps,
    precision: q.precision,
    parallelism: planParallelism(gpusPerNode * nodes, parallelism, gradAccumSteps),
  };
}

/** A plan search as a request gives it (the GraphQL RecommendInput has this shape). */
export interface RecommendQuery extends Software {
  workload: WorkloadInput;
  objective: Objective;
  deadlineHours?: number | null;
  deadlineConfidence: boolean;
  budgetUsd?: number | null;
  gpus?: string[] | null;
  precisions?: Precision[] | null;
  maxNodes: number;
  maxGpus?: number | null;
  gpusPerNode?: number[] | null;
  batchSizes?: number[] | null;
  globalBatch?: number | null;
  prices?: { gpu: string; usdPerGpuHour: number }[] | null;
  interNodeGbps?: number | null;
  fp32UsesTf32: boolean;
  limit: number;
  parallelismSearch: ParallelismSearch;
  timeBudgetMs?: number | null;
  /** Software stack the estimates assume; absent = PYTORCH_EAGER. */
  softwareStack?: SoftwareStack | null;
  /** How the attention core runs; default fused. */
  attention?: AttentionImplementation | null;
  /** GB per GPU every plan keeps free; default seeds/memory.json's. */
  memoryHeadroomGb?: number | null;
}

/** A headroom as a request gives it: absent, or GB from 0 to LIMITS.memoryHeadroomGb. */
const headroomOf = (v: number | null | undefined) =>
  v == null
    ? undefined
    : inRange('memoryHeadroomGb', v, 0.01, LIMITS.memoryHeadroomGb, { orZero: true, unit: 'GB' });

/**
 * Ranked plans. `deadlineAt` (performance.now() time) is when the caller needs the answer; without
 * it the configured time budget applies.
 */
export async function recommendPlans(
  q: RecommendQuery,
  deadlineAt?: number,
): Promise<CorrectedRecommendation> {
  const { model, samples } = workload(q.workload);
  const gpuIds = nonEmpty('gpus', q.gpus, LIMITS.listLength);
  const gpus = gpuIds ? [...new Set(gpuIds)].map((id, i) => gpuById(`gpus[${i}]`, id)) : loadGpus();
  const precisions = [...new Set(nonEmpty('precisions', q.precisions, PRECISIONS.length) ?? PRECISIONS)];
  const maxNodes = integer('maxNodes', q.maxNodes, 1, LIMITS.nodes);
  const maxGpus =
    q.maxGpus == null ? undefined : integer('maxGpus', q.maxGpus, 1, LIMITS.nodes * LIMITS.gpusPerNode);
  const gpusPerNode = [
    ...new Set(nonEmpty('gpusPerNode', q.gpusPerNode, LIMITS.gpusPerNode) ?? DEFAULT_GPUS_PER_NODE),
  ];
  gpusPerNode.forEach((g, i) => integer(`gpusPerNode[${i}]`, g, 1, LIMITS.gpusPerNode));
  const batchSizes = [
    ...new Set(nonEmpty('batchSizes', q.batchSizes, LIMITS.listLength) ?? model.batchSizes),
  ];
  batchSizes.forEach((b, i) => integer(`batchSizes[${i}]`, b, 1, LIMITS.batchSize));
  const globalBatch =
    q.globalBatch == null
      ? undefined
      : integer('globalBatch', q.globalBatch, 1, LIMITS.batchSize * LIMITS.nodes * LIMITS.gpusPerNode);
  const deadlineHours =
    q.deadlineHours == null
      ? undefined
      : inRange('deadlineHours', q.deadlineHours, FLOORS.hours, LIMITS.hours);
  const budgetUsd =
    q.budgetUsd == null ? undefined : inRange('budgetUsd', q.budgetUsd, FLOORS.usd, LIMITS.usd);
  const limit = integer('limit', q.limit, 1, LIMITS.limit);
  const net =
    q.interNodeGbps == null
      ? undefined
      : inRange('interNodeGbps', q.interNodeGbps, FLOORS.gbps, LIMITS.gbps, { unit: 'Gbps' });
  const prices = priceList('prices', q.prices, (field, id) => gpuById(field, id));
  if (gpusPerNode.every((g) => g > 16))
    throw new InputError('gpusPerNode', 'no GPU type comes with more than 16 GPUs per node');
  const memoryHeadroomGb = headroomOf(q.memoryHeadroomGb);
  const requestedBudget =
    q.timeBudgetMs == null
      ? undefined
      : integer('timeBudgetMs', q.timeBudgetMs, 1, runtimeConfig().timeBudgetMs);
  // Identical requests (after validation, defaults filled) share one answer; see service/cache.ts.
  // Every input field is part of the key (a field added later is too); the budget is not: only COMPLETE answers are kept.
  const learned = await learnedPredictor();
  // A user's recorded runs change answers: the store's version is part of the key.
  const user = await userEvidence(learned);
  const cacheKey = normalizedKey({
    calibration: user?.version ?? 'none',
    ...q,
    timeBudgetMs: undefined,
    workload: { ...q.workload, model: model.id, samples },
    gpus: gpus.map((g) => g.id),
    precisions,
    gpusPerNode,
    batchSizes,
    prices,
  });
  const cached = recommendCache.get(cacheKey);
  if (cached) return cached;
  const started = performance.now();
  const answer = await recommendCorrected(
    {
      model,
      samples,
      objective: q.objective,
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
      fp32UsesTf32: q.fp32UsesTf32,
      limit,
      maxCandidates: runtimeConfig().maxCandidates,
      timeBudgetMs: remainingBudgetMs(deadlineAt, requestedBudget),
      reserveMsPerCandidate: postSearchMsPerCandidate(!!learned.predictor),
      deadlineConfidence: q.deadlineConfidence,
      parallelismSearch: q.parallelismSearch,
      ...(q.softwareStack ? { stack: q.softwareStack } : {}),
      ...(q.attention ? { attention: q.attention } : {}),
      ...(memoryHeadroomGb !== undefined ? { memoryHeadroomGb } : {}),
    },
    learned,
    loadEfficiency(),
    { framework: q.framework, xla: q.xla },
    user,
  );
  observeSearch(!!learned.predictor, performance.now() - started, answer);
  if (answer.status === 'COMPLETE')
    recommendCache.set(cacheKey, answer, 1 + answer.plans.length + answer.paretoFront.length);
  return answer;
}
