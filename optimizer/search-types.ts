// What a plan search is asked and what it answers: the request, the candidates it keeps, the plans
// it returns and why it rejected the rest. Shared by the search (recommend.ts), the search beyond
// plain data parallelism (parallel-search.ts) and the planners built on them (fleet, procurement).
import type { SoftwareStack } from '../predictor/software.js';
import type { Parallelism, PlanParallelism } from '../predictor/parallel.js';
import type { Breakdown, ComputeTime } from '../predictor/step.js';
import type { ModelDef } from '../predictor/types.js';
import type { AttentionImplementation, CatalogGpu, Efficiency, GpuSpec, Precision } from '../seeds/types.js';
import type { SolveOptions } from './milp/solver.js';

export type Objective = 'COST' | 'TIME';

export const REJECT_REASONS = {
  UNSUPPORTED_PRECISION: 'the GPU cannot run this precision mode',
  OUT_OF_MEMORY:
    'does not fit in GPU memory (with parallelismSearch, not with any ZeRO stage, tensor/pipeline parallelism or recomputation searched either)',
  MISSES_DEADLINE: 'finishes after the deadline',
  OVER_BUDGET: 'costs more than the budget',
  NO_PRICE: 'the catalog has no price for this GPU (give one in prices)',
  TOO_MANY_GPUS: 'uses more GPUs than maxGpus',
  GLOBAL_BATCH_MISMATCH: 'cannot reach the fixed global batch with whole accumulation steps',
  NOT_FINITE:
    'its step time, hours or cost is not a finite positive number (inputs at the edges of their ranges); dropped rather than ranked',
} as const;
export type RejectReason = keyof typeof REJECT_REASONS;

export type ParallelismSearch = 'off' | 'auto' | 'all';

export interface RecommendRequest {
  model: ModelDef;
  /** Total work in the model's throughput unit. */
  samples: number;
  objective: Objective;
  deadlineHours?: number;
  /** Require the deadline to hold at the upper end of the prediction interval (P90). */
  deadlineConfidence?: boolean;
  budgetUsd?: number;
  gpus: CatalogGpu[];
  precisions: Precision[];
  maxNodes: number;
  maxGpus?: number;
  gpusPerNodeChoices: number[];
  batchSizes: number[];
  /** When set, every plan trains with this global batch, accumulating gradients as needed. */
  globalBatch?: number;
  prices?: Record<string, number>;
  interNodeGbps: (gpu: GpuSpec) => number;
  fp32UsesTf32?: boolean;
  /** Software stack (predictor/software.ts); absent = PYTORCH_EAGER. */
  stack?: SoftwareStack;
  limit: number;
  /** Refuse searches larger than this many candidates. */
  maxCandidates?: number;
  /**
   * Tensor/pipeline parallelism, ZeRO sharding and recomputation (optimizer/parallel-search.ts):
   * 'off' (the default here): plain data parallelism only; 'auto' (the API's default): searched on
   * the layouts where plain data parallelism does not fit; 'all': on every layout, each keeping
   * whichever plan is faster. A plan found this way carries `parallelism`; pass it to `predict`.
   */
  parallelismSearch?: ParallelismSearch;
  /** How the attention core runs (what it keeps for backward); default seeds/memory.json's, fused. */
  attention?: AttentionImplementation;
  /** GB per GPU every plan keeps free beyond its predicted peak; default seeds/memory.json's defaultMemoryHeadroomGb. */
  memoryHeadroomGb?: number;
  /** Stop enumerating after this many milliseconds and rank the candidates found so far (status TIMEOUT). */
  timeBudgetMs?: number;
  /**
   * Milliseconds the work after the search (ranking, a learned correction) takes per candidate
   * found: the search stops early enough to leave that time inside timeBudgetMs. Default 0.
   */
  reserveMsPerCandidate?: number;
}

/** COMPLETE: every candidate was evaluated; TIMEOUT: the time budget ran out first, plans are the best of those evaluated. */
export type SearchStatus = 'COMPLETE' | 'TIMEOUT';

export interface Plan {
  rank: number;
  gpu: CatalogGpu;
  nodes: number;
  gpusPerNode: number;
  batchSizePerGpu: number;
  gradAccumSteps: number;
  precision: Precision;
  stepTimeMs: number;
  /** Interval of the step time (10th and 90th percentile of held-out errors); equal to stepTimeMs for the analytical estimate. */
  stepTimeMsP10: number;
  stepTimeMsP90: number;
  analyticalStepTimeMs: number;
  throughput: number;
  throughputUnit: string;
  totalHours: number;
  totalHoursP90: number;
  /** Which predictor answered: 'analytical' or the learned model's name. */
  predictor: string;
  /** Which case the prediction is: measured / calibrated from the same model / unmeasured. */
  evidence: string;
  /** null when neither the catalog nor the request gives a price for the GPU. */
  costUsd: number | null;
  priceUsdPerGpuHour: number | null;
  memoryGbPerGpu: number;
  breakdown: Breakdown;
  /** How the plan splits the model: plain data parallelism is dataParallel = GPUs, the rest 1 or 0. */
  parallelism: PlanParallelism;
}

export interface Recommendation {
  status: SearchStatus;
  evaluated: number;
  feasible: number;
  plans: Plan[];
  /** Plans no other plan beats on both cost and time, fastest first. */
  paretoFront: Plan[];
  rejected: { reason: RejectReason; description: string; count: number }[];
}

/** A feasible candidate, kept small: plans are materialized only for what is returned. */
export interface Candidate {
  gpuIndex: number;
  precision: Precision;
  batch: number;
  accum: number;
  gpusPerNode: number;
  nodes: number;
  stepTimeMs: number;
  hours: number;
  cost: number;
  memoryGb: number;
  price: number | null;
  analyticalStepMs: number;
  stepLoMs: number;
  stepHiMs: number;
  hoursHi: number;
  evidence?: string;
  compute: ComputeTime;
  commTotalMs: number;
  commExposedMs: number;
  /** Set when the plan is not plain data parallelism (optimizer/parallel-search.ts), with its communication by kind. */
  parallelism?: Parallelism;
  commDataParallelMs?: number;
  commPipelineMs?: number;
}

export function searchSize(
  r: Pick<RecommendRequest, 'gpus' | 'precisions' | 'batchSizes' | 'gpusPerNodeChoices' | 'maxNodes'>,
): number {
  return r.gpus.length * r.precisions.length * r.batchSizes.length * r.gpusPerNodeChoices.length * r.maxNodes;
}

/** Candidates that pass every constraint not involving time (precision, price, GPUs, memory, global batch). */
export interface Search {
  /** true when the time budget stopped the enumeration early. */
  timedOut?: boolean;
  evaluated: number;
  rejected: Map<RejectReason, number>;
  candidates: Candidate[];
}

/**
 * Multipliers on each candidate's analytical step time (same order as Search.candidates): the
 * learned correction's estimate and its interval. Absent: the analytical estimate stands.
 */
export interface TimeScale {
  mid: ArrayLike<number>;
  lo?: ArrayLike<number>;
  hi?: ArrayLike<number>;
  /** Per candidate: which case its prediction is (measured / calibrated / unmeasured). */
  cases?: string[];
  predictor: string;
}

/** How fleet and procurement generate each job's candidate configurations, and how they solve. */
export interface CandidateSearch {
  precisions: Precision[];
  gpusPerNodeChoices: number[];
  maxNodes: number;
  interNodeGbps: (gpu: GpuSpec) => number;
  fp32UsesTf32?: boolean;
  solve: SolveOptions;
  /** The analytical predictor's fitted constants (seeds/efficiency.json). */
  efficiency: Efficiency;
}
