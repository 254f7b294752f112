// predict and recommend as requests arrive (GraphQL resolvers, the CLI): every field checked and
// named when wrong, every default filled in, the calibration constants and the learned model loaded
// once and passed down, identical recommend requests answered from a cache. Answers are domain
// objects (predictor/, optimizer/); the API's shapes are made in resolvers/.
import { statedChannelsLast, type SoftwareStack } from '../predictor/software.js';
import { convolutionLayout, isConvolution } from '../predictor/step.js';
import type { Framework, Software } from '../predictor/learned/features.js';
import { learnedPredictor } from '../predictor/learned/model.js';
import { LORA_LEFT_OUT, predictCorrected, type CorrectedPrediction } from '../predictor/corrected.js';
import { defaultSearchPrecisions, quantizedGemmShare, unsupportedReason } from '../predictor/precision.js';
import { costOf } from '../predictor/predict.js';
import { planParallelism } from '../predictor/parallel.js';
import type { GpuSpec, ModelDef, Precision } from '../predictor/types.js';
import { recommendCorrected, type PredictorChoice } from '../optimizer/recommend-corrected.js';
import {
  SearchTimeout,
  type Objective,
  type Plan,
  type ParallelismSearch,
  type RankBy,
} from '../optimizer/search-types.js';
import type { EvidenceLevel } from '../predictor/learned/evidence.js';
import { defaultInterNodeGbps, loadEfficiency, loadGpus } from '../seeds/catalog.js';
import {
  PRECISIONS,
  type AttentionImplementation,
  type CatalogGpu,
  type NetworkTransport,
} from '../seeds/types.js';
import { datedOffer, instanceUsdPerHour, type Offer, type PlanOffer } from '../optimizer/offers.js';
import { normalizedKey, recommendCache } from './cache.js';
import { configurationOffers, requestOffers, type OfferQuery } from './offers.js';
import { runtimeConfig, timeBudgetCapMs } from './config.js';
import { gpuById, workload, type WorkloadInput } from './lookup.js';
import {
  harnessCommands,
  type HarnessCommands,
  type HarnessContext,
  type PlanConfiguration,
  type PlannedPlan,
  type PlannedRecommendation,
} from './harness-commands.js';
import {
  activationScalesFor,
  recordedCapacityWords,
  withRecordedCapacity,
} from '../predictor/memory-calibration.js';
import { measuredWithRuns, userEvidence } from './measurements.js';
import { remainingBudgetMs, withinMs, type RequestClock } from './search-budget.js';
import {
  FLOORS,
  inRange,
  InputError,
  integer,
  LIMITS,
  nonEmpty,
  parallelismOf,
  type ParallelismInput,
} from './validate.js';

/** GPUs per node a search considers when the request does not say (16 only where a node holds 16). */
export const DEFAULT_GPUS_PER_NODE = [1, 2, 4, 8, 16];

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
  /** How NCCL crosses that network; absent = RDMA. */
  interNodeTransport?: NetworkTransport | null;
  priceUsdPerGpuHour?: number | null;
  parallelism?: ParallelismInput | null;
  /** Software stack the estimate assumes; absent = PYTORCH_EAGER. */
  softwareStack?: SoftwareStack | null;
  /** Convolution activations channels-last; absent = what the framework and stack do (software.ts statedChannelsLast). */
  channelsLast?: boolean | null;
  /** How the attention cores run: their step time and what they keep for backward (absent: the model's code's). */
  attention?: AttentionImplementation | null;
  /** GB per GPU to keep free in deciding fitsInMemory; default seeds/memory.json's. */
  memoryHeadroomGb?: number | null;
}

/**
 * Says when some searched plan's 16-bit convolutions were costed on NCHW activations: convolutionLayout
 * (step.ts) on each searched model, GPU and precision, as the search costed them (none on AMD, on
 * Pascal or in fp32). recommend and the coupled planners (fleet, procurement, federated) share it.
 */
export function nchwNote(
  models: readonly ModelDef[],
  q: {
    channelsLast?: boolean | null;
    framework?: Framework;
    softwareStack?: SoftwareStack | null;
    fp32UsesTf32: boolean;
  },
  precisions: readonly Precision[],
  gpus: readonly GpuSpec[],
): string | undefined {
  // Most models have no convolution: skip the GPU x precision scan over their layers.
  const costs = [...new Set(models)].map(costOf).filter((c) => c.layers.some(isConvolution));
  if (costs.length === 0) return undefined;
  const layout = { ...statedChannelsLast(q), ...(q.softwareStack ? { stack: q.softwareStack } : {}) };
  const nchw = costs.some((cost) =>
    gpus.some((gpu) =>
      precisions.some(
        (precision) =>
          convolutionLayout(cost, gpu, { precision, fp32UsesTf32: q.fp32UsesTf32, ...layout }) === 'NCHW',
      ),
    ),
  );
  return nchw
    ? `16-bit plans are costed on NCHW activations, PyTorch's default memory format, where cuDNN's convolutions run at ${loadEfficiency().nchwConvEfficiency} of their channels-last rate: set channelsLast if the code converts the model and inputs to torch.channels_last`
    : undefined;
}

/**
 * How a request says its workload runs, as predict and recommend both pass it on: the software
 * stack, the activations' layout, the attention implementation, a frozen base (LoRA) and the memory
 * each GPU keeps free. A field the request leaves out stays out, so the predictor's default holds.
 */
function runOptions(
  q: {
    softwareStack?: SoftwareStack | null;
    channelsLast?: boolean | null;
    framework?: Framework;
    attention?: AttentionImplementation | null;
  },
  frozenBase: boolean | undefined,
  memoryHeadroomGb: number | undefined,
) {
  return {
    ...(q.softwareStack ? { stack: q.softwareStack } : {}),
    ...statedChannelsLast(q),
    ...(q.attention ? { attention: q.attention } : {}),
    ...(frozenBase ? { frozenBase } : {}),
    ...(memoryHeadroomGb !== undefined ? { memoryHeadroomGb } : {}),
  };
}

/** A prediction and the configuration it is of, every default filled in. */
export interface ConfigurationAnswer extends CorrectedPrediction, PlanConfiguration {
  gpu: CatalogGpu;
  /** What the configuration rents (nodes = instances) and so what it costs; null when nothing prices it. */
  offer: PlanOffer | null;
  /** How to time this configuration on your own GPUs with the harness, and record it. */
  harness: HarnessCommands;
}

/** What predict and recommend requests say of the workload and software, as the harness commands need it. */
function harnessContext(
  q: Pick<PredictQuery, 'workload' | 'softwareStack' | 'framework' | 'channelsLast' | 'attention'>,
  model: ModelDef,
): HarnessContext {
  return {
    workload: q.workload,
    model,
    softwareStack: q.softwareStack,
    framework: q.framework,
    channelsLast: q.channelsLast,
    attention: q.attention,
  };
}

export async function predictConfiguration(q: PredictQuery): Promise<ConfigurationAnswer> {
  const { model, samples, frozenBase } = workload(q.workload);
  const listed = gpuById('gpu', q.gpu);
  const nodes = integer('nodes', q.nodes, 1, LIMITS.nodes);
  const gpusPerNode = integer('gpusPerNode', q.gpusPerNode, 1, LIMITS.gpusPerNode);
  const batchSizePerGpu = integer('batchSizePerGpu', q.batchSizePerGpu, 1, LIMITS.batchSize);
  const gradAccumSteps = integer('gradAccumSteps', q.gradAccumSteps, 1, LIMITS.gradAccum);
  const givenGbps =
    q.interNodeGbps == null
      ? undefined
      : inRange('interNodeGbps', q.interNodeGbps, FLOORS.gbps, LIMITS.gbps, { unit: 'Gbps' });
  // Priced as it would be rented: whole instances of an offer that holds gpusPerNode GPUs (or the
  // per-GPU price given), not gpus.csv's lowest market price, which no offer may match.
  const offers = configurationOffers(
    listed,
    { gpusPerNode, nodes, networkGiven: givenGbps !== undefined },
    q.priceUsdPerGpuHour == null
      ? undefined
      : inRange('priceUsdPerGpuHour', q.priceUsdPerGpuHour, FLOORS.price, LIMITS.price, { orZero: true }),
  );
  // Tensor/pipeline parallelism, ZeRO, recomputation: checked against the model and layout by predict (parallel.ts checkParallelism).
  const parallelism = parallelismOf(q.parallelism);
  const memoryHeadroomGb = headroomOf(q.memoryHeadroomGb);
  // A current refit of the learned correction on the recorded runs answers instead of the shipped one.
  const user = await userEvidence(await learnedPredictor());
  const learned = user?.learned ?? (await learnedPredictor());
  // Fitted in the memory the user's runs on this GPU had, where they say (memory-calibration.ts).
  const gpu = withRecordedCapacity(listed, user?.capacities);
  const onOffer = async (offer: Offer | null) => {
    // Across instances, the network that instance states (the request's, if it gives one); else, and
    // on one node where none is crossed, seeds/network.json's for the GPU.
    const across = nodes > 1 && offer?.billing === 'instance' ? offer : null;
    const interNodeGbps = givenGbps ?? across?.interNodeGbps ?? defaultInterNodeGbps(gpu.id);
    const interNodeTransport = q.interNodeTransport ?? across?.interNodeTransport ?? 'RDMA';
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
        ...(interNodeTransport === 'TCP' ? { interNodeTransport: 'TCP' as const } : {}),
        samples,
        // What it pays per GPU it uses: its node's price over the GPUs in it.
        priceUsdPerGpuHour: offer && instanceUsdPerHour(offer, gpusPerNode) / gpusPerNode,
        parallelism,
        ...runOptions(q, frozenBase, memoryHeadroomGb),
      },
      learned,
      loadEfficiency(),
      { framework: q.framework, xla: q.xla },
      user,
    );
    return { offer, interNodeGbps, interNodeTransport, prediction };
  };
  // Offers on different networks run for different times: the cheapest run, then the faster.
  const runs = await Promise.all((offers.length ? offers : [null]).map(onOffer));
  const { offer, interNodeGbps, interNodeTransport, prediction } = runs.reduce((best, x) =>
    (x.prediction.costUsd ?? Infinity) < (best.prediction.costUsd ?? Infinity) ||
    ((x.prediction.costUsd ?? Infinity) === (best.prediction.costUsd ?? Infinity) &&
      (x.prediction.totalHours ?? Infinity) < (best.prediction.totalHours ?? Infinity))
      ? x
      : best,
  );
  const configuration: PlanConfiguration = {
    nodes,
    gpusPerNode,
    batchSizePerGpu,
    gradAccumSteps,
    precision: q.precision,
    parallelism: planParallelism(gpusPerNode * nodes, parallelism, gradAccumSteps),
  };
  return {
    ...prediction,
    evidence: [prediction.evidence, recordedCapacityWords([gpu], user?.capacities)]
      .filter(Boolean)
      .join('; '),
    gpu,
    ...configuration,
    offer: offer && datedOffer(offer, new Date()),
    harness: harnessCommands(
      { ...configuration, interNodeGbps, interNodeTransport },
      harnessContext(q, model),
    ),
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
  offers?: OfferQuery[] | null;
  catalogOffers: boolean;
  providers?: string[] | null;
  rankBy: RankBy;
  minEvidence: EvidenceLevel;
  predictor: PredictorChoice;
  maxGlobalBatch?: number | null;
  interNodeGbps?: number | null;
  /** How NCCL crosses every plan's network; absent = each offer's. */
  interNodeTransport?: NetworkTransport | null;
  fp32UsesTf32: boolean;
  limit: number;
  parallelismSearch: ParallelismSearch;
  timeBudgetMs?: number | null;
  /** Software stack the estimates assume; absent = PYTORCH_EAGER. */
  softwareStack?: SoftwareStack | null;
  /** Convolution activations channels-last; absent = what the framework and stack do (software.ts statedChannelsLast). */
  channelsLast?: boolean | null;
  /** How the attention cores run (absent: the model's code's, as predict's default). */
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
 * Why a search left FP8 out for these models by default (predictor/precision.ts
 * defaultSearchPrecisions), or null: the request named its precisions, none was left out, or no GPU
 * searched runs FP8 anyway.
 */
export function fp8NotSearchedNote(
  requested: readonly Precision[] | null | undefined,
  models: ModelDef[],
  gpus: GpuSpec[],
): string | null {
  if (requested != null || !gpus.some((g) => unsupportedReason(g, 'FP8') === null)) return null;
  const left = [...new Set(models)].filter((m) => !defaultSearchPrecisions(costOf(m)).includes('FP8'));
  const share = (m: ModelDef) => `${(100 * quantizedGemmShare(costOf(m))).toFixed(1)}%`;
  if (left.length === 0) return null;
  if (left.length === 1)
    return `FP8 was not searched: Transformer Engine quantizes linear layers only, ${share(left[0])} of ${left[0].id}'s GEMM FLOPs, so its FP8 run would be its BF16 run plus casts; list FP8 in precisions for its plans`;
  return `FP8 was not searched for ${left.map((m) => `${m.id} (${share(m)} of its GEMM FLOPs in linear layers)`).join(', ')}: Transformer Engine quantizes linear layers only, so their FP8 runs would be their BF16 runs plus casts; list FP8 in precisions for their plans`;
}

/**
 * Ranked plans. `clock` says when the request arrived and when the server's budget for it ends
 * (search-budget.ts); without it the configured time budget applies.
 */
export async function recommendPlans(
  q: RecommendQuery,
  clock?: RequestClock,
): Promise<PlannedRecommendation> {
  const { model, samples, frozenBase } = workload(q.workload);
  const gpuIds = nonEmpty('gpus', q.gpus, LIMITS.listLength);
  const gpus = gpuIds ? [...new Set(gpuIds)].map((id, i) => gpuById(`gpus[${i}]`, id)) : loadGpus();
  const precisions = [
    ...new Set(
      nonEmpty('precisions', q.precisions, PRECISIONS.length) ?? defaultSearchPrecisions(costOf(model)),
    ),
  ];
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
  const today = new Date();
  const { prices, offers } = requestOffers(q, today);
  const maxGlobalBatch =
    q.maxGlobalBatch == null
      ? undefined
      : integer('maxGlobalBatch', q.maxGlobalBatch, 1, LIMITS.batchSize * LIMITS.nodes * LIMITS.gpusPerNode);
  if (gpusPerNode.every((g) => g > 16))
    throw new InputError('gpusPerNode', 'no GPU type comes with more than 16 GPUs per node');
  const memoryHeadroomGb = headroomOf(q.memoryHeadroomGb);
  const requestedBudget =
    q.timeBudgetMs == null ? undefined : integer('timeBudgetMs', q.timeBudgetMs, 1, timeBudgetCapMs());
  // Identical requests (after validation, defaults filled) share one answer; see service/cache.ts.
  // Every input field is part of the key (a field added later is too); the budget is not: an
  // answer is complete or refused, never cut short by it.
  // A user's recorded runs change answers: the store's version is part of the key (and a current
  // refit of the learned correction on them answers instead of the shipped one).
  const user = await userEvidence(await learnedPredictor());
  const learned = user?.learned ?? (await learnedPredictor());
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
    // Offers as resolved (the server's price file included), so a changed price sheet is a new key.
    offers,
  });
  const cached = recommendCache.get(cacheKey);
  if (cached) return cached;
  // The budget counts from the request's arrival: a request that waited it out in a queue is
  // refused before it searches, never answered with part of the candidates.
  const budgetMs = requestedBudget ?? runtimeConfig().timeBudgetMs;
  const left = () => remainingBudgetMs(clock, requestedBudget);
  const refusedBeforeSearch = () => new SearchTimeout(budgetMs, 0, timeBudgetCapMs());
  if (left() <= 0) throw refusedBeforeSearch();
  // An identical search already running answers this request too (searches pause for each other,
  // so both would otherwise run): wait for it within this request's own budget. If it was refused
  // or failed, search here with what is left.
  const running = searching.get(cacheKey);
  if (running) {
    const joined = await withinMs(running, left());
    if (joined === 'late') throw refusedBeforeSearch();
    if (joined !== 'failed') {
      recommendCache.missWasHit();
      return joined;
    }
    if (left() <= 0) throw refusedBeforeSearch();
  }
  const mine = search(left());
  searching.set(cacheKey, mine);
  try {
    return await mine;
  } finally {
    if (searching.get(cacheKey) === mine) searching.delete(cacheKey);
  }

  async function search(timeBudgetMs: number): Promise<PlannedRecommendation> {
    // Each GPU fitted in the memory the user's runs on it had, where they say (memory-calibration.ts).
    const fittedGpus = gpus.map((g) => withRecordedCapacity(g, user?.capacities));
    const corrected = await recommendCorrected(
      {
        model,
        samples,
        objective: q.objective,
        deadlineHours,
        budgetUsd,
        gpus: fittedGpus,
        precisions,
        maxNodes,
        maxGpus,
        gpusPerNodeChoices: gpusPerNode,
        batchSizes,
        globalBatch,
        maxGlobalBatch,
        offers,
        interNodeGbps: net === undefined ? undefined : () => net,
        ...(q.interNodeTransport ? { interNodeTransport: q.interNodeTransport } : {}),
        fp32UsesTf32: q.fp32UsesTf32,
        limit,
        maxCandidates: runtimeConfig().maxCandidates,
        timeBudgetMs,
        deadlineConfidence: q.deadlineConfidence,
        parallelismSearch: q.parallelismSearch,
        rankBy: q.rankBy,
        minEvidence: q.minEvidence,
        // A user's recorded runs count as measurements (evidenceLevel, minEvidence), and their peaks
        // size the model's memory (predictor/memory-calibration.ts).
        measured: measuredWithRuns(user),
        activationScales: activationScalesFor(
          user?.memory,
          model.id,
          precisions,
          q.softwareStack ?? undefined,
        ),
        today,
        ...runOptions(q, frozenBase, memoryHeadroomGb),
      },
      learned,
      loadEfficiency(),
      { framework: q.framework, xla: q.xla },
      user,
      q.predictor,
    ).catch((e: unknown) => {
      // Refused with the budget the request had from its arrival, and how much it could ask for.
      throw e instanceof SearchTimeout ? new SearchTimeout(budgetMs, e.size, timeBudgetCapMs()) : e;
    });
    const context = harnessContext(q, model);
    const planned = (p: Plan): PlannedPlan => ({ ...p, harness: harnessCommands(p, context) });
    const answer: PlannedRecommendation = {
      ...corrected,
      plans: corrected.plans.map(planned),
      paretoFront: corrected.paretoFront.map(planned),
    };
    const capacities = recordedCapacityWords(gpus, user?.capacities);
    if (capacities) answer.notes.push(capacities);
    if (q.precisions == null) {
      const fp4 = gpus.filter((g) => unsupportedReason(g, 'FP4') === null).map((g) => g.id);
      if (fp4.length)
        answer.notes.push(
          `FP4 was not searched: no FP4 training run or kernel is measured here; list FP4 in precisions for FP4 plans on ${fp4.join(', ')}`,
        );
      const fp8 = fp8NotSearchedNote(q.precisions, [model], gpus);
      if (fp8) answer.notes.push(fp8);
      if (gpus.some((g) => unsupportedReason(g, 'FP16_PURE') === null))
        answer.notes.push(
          'FP16_PURE was not searched: fp16 weights and optimizer state without an fp32 master copy (apex O3) may not train stably; list FP16_PURE in precisions for its plans',
        );
    }
    if (frozenBase) answer.notes.push(`LoRA: plans are timed and sized for a frozen base: ${LORA_LEFT_OUT}`);
    const layout = nchwNote([model], q, precisions, gpus);
    if (layout) answer.notes.push(layout);
    if (q.workload.customModel && q.batchSizes == null)
      answer.notes.push(
        `warning: a custom model was searched at default batch sizes per GPU (${batchSizes.join(', ')}), not ones measured or chosen for it: give batchSizes`,
      );
    recommendCache.set(cacheKey, answer, 1 + answer.plans.length + answer.paretoFront.length);
    return answer;
  }
}

/** recommend searches running now, by cache key (see recommendPlans). */
const searching = new Map<string, Promise<PlannedRecommendation>>();
