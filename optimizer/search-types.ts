// What a plan search is asked and what it answers: the request, the candidates it keeps, the plans
// it returns and why it rejected the rest. Shared by the search (recommend.ts), the search beyond
// plain data parallelism (parallel-search.ts) and the planners built on them (fleet, procurement).
import type { SoftwareStack } from '../predictor/software.js';
import type { Parallelism, PlanParallelism } from '../predictor/parallel.js';
import type { Breakdown, ComputeTime, Execution } from '../predictor/step.js';
import type { MathMode, ModelDef } from '../predictor/types.js';
import type {
  AttentionImplementation,
  CatalogGpu,
  Efficiency,
  GpuSpec,
  NetworkTransport,
  Precision,
} from '../seeds/types.js';
import type { EvidenceLevel, MeasuredSet } from '../predictor/learned/evidence.js';
import type { Regime } from '../predictor/learned/model.js';
import type { Prediction, PredictRequest } from '../predictor/predict.js';
import type { Offer, PlanOffer, PricingOption } from './offers.js';
import type { SolveOptions } from './milp/solver.js';

export type Objective = 'COST' | 'TIME';

export const REJECT_REASONS = {
  UNSUPPORTED_PRECISION: 'the GPU cannot run this precision mode',
  OUT_OF_MEMORY:
    'does not fit in GPU memory (with parallelismSearch, not with any ZeRO stage, tensor/pipeline parallelism or recomputation searched either)',
  MISSES_DEADLINE: 'finishes after the deadline',
  OVER_BUDGET: 'costs more than the budget',
  NO_PRICE: 'no offer prices this GPU (give one in offers)',
  TOO_MANY_GPUS: 'uses more GPUs than maxGpus',
  GLOBAL_BATCH_MISMATCH: 'cannot reach the fixed global batch with whole accumulation steps',
  GLOBAL_BATCH_TOO_LARGE:
    'global batch above maxGlobalBatch on every layout that fits (default: the largest the model was measured with)',
  DOMINATED_OFFER:
    'another offer for the same GPU costs no more per node and has at least as fast a network: this one can never rank above it',
  NETWORK_UNSTATED:
    'joins several instances of an offer that states no network between them: not ranked on a guessed network (state the network you will get, for the offer in offers or for every offer in interNodeGbps, to rank it)',
  BELOW_MIN_EVIDENCE: 'less measurement behind the prediction than minEvidence asks for',
  NOT_FINITE:
    'its step time, hours or cost is not a finite positive number (inputs at the edges of their ranges); dropped rather than ranked',
} as const;
export type RejectReason = keyof typeof REJECT_REASONS;

export type ParallelismSearch = 'off' | 'auto' | 'all';
/** EXPECTED: rank by the estimate; P90: by the 90th-percentile time and cost. */
export type RankBy = 'EXPECTED' | 'P90';

/**
 * The search ran past its time budget: nothing partial is returned (the answer must not depend on
 * load). `maxBudgetMs`, where the caller knows it, is the most a request may ask for: the message
 * advises a larger budget only where one can be had.
 */
export class SearchTimeout extends Error {
  constructor(
    readonly budgetMs: number,
    readonly size: number,
    readonly maxBudgetMs?: number,
  ) {
    const budget = Math.round(budgetMs);
    const narrow = 'narrow gpus, providers, precisions, batchSizes or maxNodes';
    const larger =
      maxBudgetMs !== undefined && maxBudgetMs > budget
        ? `ask for a larger time budget (timeBudgetMs, --time-budget-ms; up to ${maxBudgetMs} ms here)`
        : undefined;
    super(
      size === 0
        ? `the request used up its time budget of ${budget} ms before its search could start (waiting for a busy server, or reading and checking the request): retry later${larger ? `, or ${larger}` : ''}`
        : `the search of ${size} candidates did not finish within its time budget of ${budget} ms; no partial answer is given: ` +
            (maxBudgetMs === undefined
              ? `retry, raise the time budget, or ${narrow}`
              : larger
                ? `${larger}, retry, or ${narrow}`
                : `${narrow}, or retry (${maxBudgetMs} ms is the most a request may ask for here)`),
    );
  }
}

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
  /**
   * Without a fixed global batch, plans whose global batch (batch x data-parallel GPUs) exceeds
   * this are rejected. Default: usualGlobalBatch(model) (optimizer/global-batch.ts).
   */
  maxGlobalBatch?: number;
  /**
   * What plans rent (optimizer/offers.ts): every plan is whole instances of one offer. Absent
   * (library callers), each GPU is priced per GPU-hour at `prices[gpu]` or the catalog's price.
   */
  offers?: Offer[];
  prices?: Record<string, number>;
  /** Overrides every plan's inter-node network (Gbps); absent: each offer's own. */
  interNodeGbps?: (gpu: GpuSpec) => number;
  /** Overrides how NCCL crosses every plan's network; absent: each offer's own (RDMA without an offer). */
  interNodeTransport?: NetworkTransport;
  /** EXPECTED (default) or P90. */
  rankBy?: RankBy;
  /** Plans with less measurement behind them are rejected (default UNMEASURED: anything). */
  minEvidence?: EvidenceLevel;
  /** What counts as measured (default: the seeds' measurements). */
  measured?: MeasuredSet;
  /** The day prices are aged against (default: now). */
  today?: Date;
  fp32UsesTf32?: boolean;
  /** Software stack (predictor/software.ts); absent = PYTORCH_EAGER. */
  stack?: SoftwareStack;
  limit: number;
  /** Refuse searches larger than this many candidates. */
  maxCandidates?: number;
  /**
   * Tensor/pipeline parallelism, ZeRO sharding and recomputation (optimizer/parallel-search.ts):
   * 'off' (the default here): plain data parallelism only; 'auto' (the API's default): searched on
   * the layouts where plain data parallelism does not fit or trains above the global batch cap; 'all':
   * on every layout, each keeping whichever plan is faster. A plan found this way carries
   * `parallelism`; pass it to `predict`.
   */
  parallelismSearch?: ParallelismSearch;
  /** How the attention cores run (their time and what they keep for backward); default predictor/step.ts fusedAttention's. */
  attention?: AttentionImplementation;
  /** LoRA fine-tuning on a frozen base (predictor/step.ts Execution.frozenBase); absent = every weight trained. */
  frozenBase?: boolean;
  /**
   * Per precision, the model's activations as a user's runs measured them over what memory.ts
   * counts (predictor/memory-calibration.ts; MemoryLayout.activationScale); absent = 1.
   */
  activationScales?: Partial<Record<Precision, number>>;
  /** Convolution activations stored channels-last (predictor/step.ts Execution.channelsLast); absent = the stack's layout. */
  channelsLast?: boolean;
  /** GB per GPU every plan keeps free beyond its predicted peak; default seeds/memory.json's defaultMemoryHeadroomGb. */
  memoryHeadroomGb?: number;
  /** Refuse (SearchTimeout) a search still enumerating after this many milliseconds. */
  timeBudgetMs?: number;
}

/** COMPLETE: every candidate was evaluated (a search that cannot finish is refused, never cut short). */
export type SearchStatus = 'COMPLETE';

/** The offer a plan rents, with the age of its price (optimizer/offers.ts datedOffer). */
export type { PlanOffer };

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
  /** The math most of the step's GEMM FLOPs run in: what mfu is measured against. */
  dominantMath: MathMode;
  /** Model FLOPs per GPU per second and MFU at stepTimeMs (predictor/utilization.ts). */
  modelTflopsPerGpu: number;
  mfu: number | null;
  totalHours: number;
  totalHoursP90: number;
  /** Which predictor answered: 'analytical' or the learned model's name. */
  predictor: string;
  /** Which case the prediction is: measured / calibrated from the same model / unmeasured. */
  evidence: string;
  /** What besides the GPU holds the step: the host, the gradient synchronisation (learned/model.ts regimesOf). */
  boundBy: Regime[];
  /** The model is measured, but never in this precision: the estimate rests on other models' rows in it. */
  precisionUnmeasured: boolean;
  /** Hours x instances x the instance's price; null when no offer prices the GPU. */
  costUsd: number | null;
  /** Cost at the 90th-percentile time. */
  costUsdP90: number | null;
  /** What the plan pays per GPU it uses an hour (instance price / GPUs used). */
  priceUsdPerGpuHour: number | null;
  /** The offer rented (nodes = instances); null when no offer prices the GPU. */
  offer: PlanOffer | null;
  /** Inter-node network the plan was predicted on, Gbps, and where that figure comes from. */
  interNodeGbps: number;
  /** How NCCL crosses it: the request's interNodeTransport, else the offer's. */
  interNodeTransport: NetworkTransport;
  interNodeNetworkSource: string;
  /** True when the offer states no network and interNodeGbps is the assumed default. */
  interNodeNetworkAssumed: boolean;
  evidenceLevel: EvidenceLevel;
  /** How many of the user's recorded runs moved this plan's prediction (0 without runs or a learned model). */
  calibrationRuns: number;
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
  /** What bound the answer (maxNodes, budget, deadline, memory, ...) and warnings, in plain words. */
  notes: string[];
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
  /** USD per node (instance) hour; null when unpriced. */
  price: number | null;
  /** Index into the search's pricing options (Search.options). */
  optionIndex: number;
  costHi: number;
  analyticalStepMs: number;
  stepLoMs: number;
  stepHiMs: number;
  hoursHi: number;
  boundBy?: Regime[];
  precisionUnmeasured?: boolean;
  compute: ComputeTime;
  commTotalMs: number;
  commExposedMs: number;
  /** Of commExposedMs: the wait for the slowest GPU. */
  commWaitMs: number;
  /** Set when the plan is not plain data parallelism (optimizer/parallel-search.ts), with its communication by kind. */
  parallelism?: Parallelism;
  commDataParallelMs?: number;
  commPipelineMs?: number;
}

/** Candidates that pass every constraint not involving time (precision, price, GPUs, memory, global batch). */
export interface Search {
  /** Candidates the request's dimensions span (what the candidate cap is checked against). */
  size: number;
  evaluated: number;
  rejected: Map<RejectReason, number>;
  candidates: Candidate[];
  /** Every GPU's pricing options, concatenated (Candidate.optionIndex points here). */
  options: PricingOption[];
  /** Per GPU (r.gpus order): how much measurement stands behind its predictions. */
  levels: EvidenceLevel[];
  /** GPUs no offer prices. */
  unpricedGpus: string[];
  /** Per `gpuIndex|precision`: the smallest batch per GPU that did not fit in memory. */
  smallestOomBatch: Map<string, number>;
  /** The global batch cap applied (Infinity with a fixed global batch). */
  maxGlobalBatch: number;
  /** Whether any candidate came from the search beyond plain data parallelism (before any pruning). */
  sharded: boolean;
  /** Feasible candidates left out of `candidates` because they cannot change the answer (optimizer/pruned.ts). */
  prunedFeasible?: number;
  /** No candidate fitted in memory: where one would, per GPU, fewest GPUs first (recommend.ts fewestNodesThatFit). */
  fitBeyond?: FitBeyond[];
  /**
   * No candidate fitted in memory: GPUs whose memory the search never checked (not listed, or turned
   * away for price or evidence first) on which a layout fits within the request's limits (most memory first).
   */
  fitOtherGpus?: OtherGpuFit[];
}

/** A GPU the search did not check that would hold the model within the request's limits, and why it was not checked. */
export interface OtherGpuFit {
  gpu: string;
  /** Not in the request (and, for a ranking that needs prices, priced by no offer), or turned away first for price or evidence. */
  why: 'UNLISTED' | 'UNLISTED_NO_PRICE' | 'NO_PRICE' | 'BELOW_MIN_EVIDENCE';
}

/** The fewest nodes past a request's limits on which a GPU holds the model, and the layout that does. */
export interface FitBeyond {
  gpu: string;
  gpusPerNode: number;
  nodes: number;
  precision: Precision;
  batch: number;
  parallelism: Parallelism;
  memoryGb: number;
}

/**
 * Multipliers on each candidate's analytical step time (same order as Search.candidates): the
 * learned correction's estimate and its interval. Absent: the analytical estimate stands.
 */
export interface TimeScale {
  mid: ArrayLike<number>;
  lo?: ArrayLike<number>;
  hi?: ArrayLike<number>;
  /** Candidate i's case in words (measured / calibrated / unmeasured), built for the plans shown. */
  caseOf?: (i: number) => string;
  /** Per candidate: what besides the GPU holds its step. */
  boundBy?: Regime[][];
  /** Per candidate: its model is measured, but never in its precision. */
  precisionUnmeasured?: boolean[];
  /** Per candidate: how many of the user's recorded runs moved its correction. */
  calibrationRuns?: ArrayLike<number>;
  predictor: string;
}

/** How fleet and procurement generate each job's candidate configurations, and how they solve. */
/**
 * What the coupled planners time their candidates with, and re-predict a plan's configurations with
 * to verify it (optimizer/candidate-predictor.ts builds the analytical and the corrected one).
 */
export interface CandidatePredictor {
  /** 'analytical' or the learned model's name. */
  name: string;
  /** What timed the candidates, in words (and why not the learned correction, when it did not). */
  note: string;
  /** A job's configurations as `recommend` finds them (deadline and budget applied to these times). */
  search(r: RecommendRequest): Promise<Recommendation>;
  /** One configuration, as `predict` answers it with this predictor (the analytical estimate has no P90 of its own). */
  predict(req: PredictRequest): Promise<Prediction & { totalHoursP90?: number | null }>;
}

export interface CandidateSearch {
  precisions: Precision[];
  /**
   * The request named no precisions: each job searches those of `precisions` its model's defaults
   * allow (predictor/precision.ts defaultSearchPrecisions: no FP8 for a model it would barely quantize).
   */
  precisionsByDefault?: boolean;
  gpusPerNodeChoices: number[];
  maxNodes: number;
  /** The network between a job's nodes on GPUs it does not rent (and on rented ones when interNodeGbpsStated). */
  interNodeGbps: (gpu: GpuSpec) => number;
  /** The request stated interNodeGbps: it replaces a rented offer's own network too (else each offer's applies, as in `recommend`). */
  interNodeGbpsStated?: boolean;
  /** How NCCL crosses that network (RDMA when absent; a rented offer's own when absent). */
  interNodeTransport?: NetworkTransport;
  fp32UsesTf32?: boolean;
  /** Convolution activations stored channels-last (predictor/step.ts Execution.channelsLast); absent = the stack's layout (eager PyTorch: NCHW). */
  channelsLast?: boolean;
  solve: SolveOptions;
  /** The analytical predictor's fitted constants (seeds/efficiency.json). */
  efficiency: Efficiency;
  /** What times the candidates (default: the analytical estimate with `efficiency`). */
  predictor?: CandidatePredictor;
  /** Deadlines hold at the P90 step time, not only at the estimate (fleet: runs are scheduled for their P90 hours). */
  deadlineConfidence?: boolean;
}

/** What a coupled plan's configuration says of its GPUs' use, as its recommend plan says it. */
export type PlanUtilization = Pick<Plan, 'dominantMath' | 'modelTflopsPerGpu' | 'mfu'>;

/** A plan's PlanUtilization fields, for the configurations built from it. */
export const utilizationOf = (p: PlanUtilization): PlanUtilization => ({
  dominantMath: p.dominantMath,
  modelTflopsPerGpu: p.modelTflopsPerGpu,
  mfu: p.mfu,
});

/** What a request says of how its workload runs, which every step the search times carries. */
export type RunOptions = Pick<Execution, 'stack' | 'frozenBase' | 'channelsLast' | 'attention'>;

/** A request's RunOptions, only those it states (absent ones keep the predictor's defaults). */
export const runOptionsOf = (r: RunOptions): RunOptions => ({
  ...(r.stack ? { stack: r.stack } : {}),
  ...(r.frozenBase ? { frozenBase: true } : {}),
  ...(r.channelsLast !== undefined ? { channelsLast: r.channelsLast } : {}),
  ...(r.attention ? { attention: r.attention } : {}),
});
