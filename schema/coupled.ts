// GraphQL types of the coupled planners (planFleet, planProcurement, planFederatedRound). The
// resolvers (resolvers/coupled.ts) return the optimizer's plain objects; these classes only declare
// how they look over the wire. Every @Field has an explicit type function (tsx does not emit
// decorator metadata).
import { Field, Float, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { Precision } from '../predictor/types.js';
import type { AttentionImplementation, NetworkTransport } from '../seeds/types.js';
import type { SoftwareStack } from '../predictor/software.js';
import {
  EvidenceLevelEnum,
  Gpu,
  HarnessCommands,
  NetworkTransportEnum,
  PrecisionEnum,
  PredictorChoiceEnum,
  SoftwareStackEnum,
  TrainingConfiguration,
} from './types.js';
import { ATTENTION, OfferInput, PRECISIONS_ALLOWED, PriceInput, WorkloadInput } from './inputs.js';
import { AttentionEnum } from './memory.js';
import { DOMINANT_MATH, MFU, MODEL_TFLOPS, PlanOffer } from './types.js';

import { Parallelism, RecomputeEnum } from './parallelism.js';

export enum FleetObjectiveEnum {
  COST = 'COST',
  MAKESPAN = 'MAKESPAN',
  WEIGHTED_COMPLETION = 'WEIGHTED_COMPLETION',
}
registerEnumType(FleetObjectiveEnum, {
  name: 'FleetObjective',
  description: 'What the fleet plan minimises.',
  valuesConfig: {
    COST: { description: 'Least total cost, USD (ties broken by the earliest completions).' },
    MAKESPAN: {
      description: 'The last job ends as early as possible, hours from time 0 (ties broken by cost).',
    },
    WEIGHTED_COMPLETION: {
      description: 'Least sum over jobs of priority x end time, hours (ties broken by cost).',
    },
  },
});

export enum SolveStatusEnum {
  OPTIMAL = 'OPTIMAL',
  FEASIBLE = 'FEASIBLE',
  INFEASIBLE = 'INFEASIBLE',
  TIME_LIMIT = 'TIME_LIMIT',
}
registerEnumType(SolveStatusEnum, {
  name: 'SolveStatus',
  description: 'How a mixed-integer solve ended.',
  valuesConfig: {
    OPTIMAL: { description: 'Proven optimal.' },
    FEASIBLE: {
      description:
        'A verified plan, but the time limit stopped the solver before it proved optimality (see gap).',
    },
    INFEASIBLE: { description: 'No plan meets every constraint (see the reasons).' },
    TIME_LIMIT: { description: 'No plan found within the time limit; infeasibility not proven.' },
  },
});

export enum SolverChoiceEnum {
  AUTO = 'AUTO',
  HIGHS = 'HIGHS',
  JAVASCRIPT_LP_SOLVER = 'JAVASCRIPT_LP_SOLVER',
}
registerEnumType(SolverChoiceEnum, {
  name: 'SolverChoice',
  description:
    'Which mixed-integer solver to try first. Whatever is chosen, an answer is used only after it is verified, and HiGHS answers when javascript-lp-solver cannot.',
  valuesConfig: {
    AUTO: { description: 'javascript-lp-solver first on small fleet models, HiGHS otherwise.' },
    HIGHS: { description: 'HiGHS only.' },
    JAVASCRIPT_LP_SOLVER: { description: 'javascript-lp-solver first on any model.' },
  },
});

export enum BlockerEnum {
  DEADLINE = 'DEADLINE',
  MEMORY = 'MEMORY',
  INVENTORY = 'INVENTORY',
  SAMPLES = 'SAMPLES',
}
registerEnumType(BlockerEnum, {
  name: 'Blocker',
  description: 'Why something cannot be planned.',
  valuesConfig: {
    DEADLINE: { description: 'Even the fastest configuration within reach is too slow.' },
    MEMORY: { description: 'Nothing fits in GPU memory.' },
    INVENTORY: {
      description: 'Too few GPUs (or no usable GPU type) available, alone or together with the other jobs.',
    },
    SAMPLES: { description: 'Not enough data for the samples required.' },
  },
});

// ------------------------------------------------------------------ shared

/** planFleet's and planProcurement's predictor input and output: one meaning, one text. */
const PREDICTOR_CHOICE =
  "What times the configurations: LEARNED (default), the analytical estimate with the learned correction and your recorded runs as evidence, as recommend answers (a federated client given by its device's figures keeps the analytical step, with the correction's P90); ANALYTICAL: the roofline alone.";
const PREDICTOR_USED =
  "Which predictor timed the configurations: the learned model's name, or analytical (the notes say why).";
const EVIDENCE =
  "What stands behind this configuration's time, as recommend's plan says it: measured, calibrated from measurements of the same model, or unmeasured; and how many of your recorded runs calibrated it.";

@ObjectType({ description: 'Size of the mixed-integer program that was solved.' })
export class MipModelSize {
  @Field(() => Int, { description: 'Candidate configurations (or options) the predictor produced.' })
  candidates!: number;
  @Field(() => Int, { description: 'Candidates left after pruning dominated ones.' }) keptCandidates!: number;
  @Field(() => Int, { description: 'Variables of the program.' }) variables!: number;
  @Field(() => Int, { description: 'Integer and binary variables.' }) integers!: number;
  @Field(() => Int, { description: 'Constraints (rows) of the program.' }) constraints!: number;
  @Field(() => Int, { description: 'Nonzero coefficients of the constraint matrix.' }) nonzeros!: number;
}

/** What every mixed-integer answer reports about its solve; the three plans extend it. */
@ObjectType({
  description: 'What a mixed-integer solve reports (the plans extend it; not a query result on its own).',
})
export abstract class MipOutcome {
  @Field(() => SolveStatusEnum, { description: 'How the solve ended.' }) status!: SolveStatusEnum;
  @Field(() => Float, { nullable: true, description: 'Best proven bound on the objective.' }) bestBound!:
    number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'Relative gap between the objective and bestBound; 0 when optimal.',
  })
  gap!: number | null;
  @Field(() => String, { description: 'Which solver answered, and how (worker thread, in-thread fallback).' })
  solver!: string;
  @Field(() => Boolean, { description: 'The solver proved the plan optimal.' }) optimalityProven!: boolean;
  @Field(() => Float, { description: 'Candidate generation, solving and verification, ms.' })
  solveTimeMs!: number;
  @Field(() => [String], { description: 'Solver fallbacks and anything else worth knowing.' })
  notes!: string[];
  @Field(() => MipModelSize, { description: 'Size of the mixed-integer program.' }) modelSize!: MipModelSize;
}

/** A fleet's or a procurement's configuration, with what stands behind its time (as a recommend plan says it). */
@ObjectType({
  description:
    "A coupled plan's configuration with the evidence behind its time (FleetAssignment, RunConfig extend it; not a query result on its own).",
})
export abstract class EvidencedConfiguration extends TrainingConfiguration {
  @Field(() => EvidenceLevelEnum, { description: 'How much measurement stands behind this time.' })
  evidenceLevel!: keyof typeof EvidenceLevelEnum;
  @Field(() => String, { description: EVIDENCE }) evidence!: string;
  @Field(() => Int, { description: 'How many of your recorded runs (recordMeasurements) moved this time.' })
  calibrationRuns!: number;
  @Field(() => String, { description: DOMINANT_MATH }) dominantMath!: string;
  @Field(() => Float, { description: MODEL_TFLOPS }) modelTflopsPerGpu!: number;
  @Field(() => Float, { nullable: true, description: MFU }) mfu!: number | null;
}

// ------------------------------------------------------------------ fleet

/**
 * A fleet's and a procurement's job fields that mean the same in both, said once. (The fields stay
 * declared in each input: a shared base class would list them before the job's id in the schema.)
 */
const JOB_STACK =
  'Software stack the job runs under (PYTORCH_EAGER unless said), as RecommendInput.softwareStack: its configurations are timed and sized under it, e.g. MEGATRON for an LLM trained with Megatron-LM.';
const JOB_ATTENTION = `${ATTENTION} As PredictInput.attention: e.g. FUSED for BERT trained with Hugging Face's code.`;
const JOB_DEADLINE_CONFIDENCE =
  "This job's deadline at the P90 step time (true) or at the estimate (false), whatever the request's deadlineConfidence says (default: the request's): a job that must not be late held at P90 while the others are not.";

/** How the three MIP queries solve: every input extends it. */
@InputType({
  description:
    'Solver settings shared by planFleet, planProcurement and planFederatedRound (not an input on its own).',
})
export abstract class SolveSettingsInput {
  @Field(() => Boolean, {
    defaultValue: true,
    description: 'FP32 runs matmuls/convolutions in TF32 on Ampere and newer (the framework default).',
  })
  fp32UsesTf32!: boolean;
  @Field(() => Boolean, {
    nullable: true,
    description:
      "Every job's convolution activations stored channels-last (NHWC, torch.channels_last), as RecommendInput.channelsLast; default NCHW, eager PyTorch's memory format, where a 16-bit convolution runs slower. The plans' notes say when that default costed one.",
  })
  channelsLast?: boolean;
  @Field(() => Float, {
    defaultValue: 10,
    description: 'Wall-clock limit for the solver, seconds (at most 60).',
  })
  timeLimitSeconds!: number;
  @Field(() => SolverChoiceEnum, {
    defaultValue: SolverChoiceEnum.AUTO,
    description: 'Which mixed-integer solver to try first (default AUTO).',
  })
  solver!: SolverChoiceEnum;
  @Field(() => Float, {
    defaultValue: 0,
    description:
      'Relative gap at which HiGHS may stop and call a plan optimal: 0 (default) proves exact optima; e.g. 1e-6 ends large models sooner (status OPTIMAL, gap <= mipRelGap).',
  })
  mipRelGap!: number;
  @Field(() => PredictorChoiceEnum, { defaultValue: 'LEARNED', description: PREDICTOR_CHOICE })
  predictor!: keyof typeof PredictorChoiceEnum;
}

/** What rented GPUs take, in the planners that rent (fleet, procurement), as RecommendInput has it (service/offers.ts). */
@InputType({
  description:
    'Solver settings and rental offers shared by planFleet and planProcurement (not an input on its own).',
})
export abstract class RentalSettingsInput extends SolveSettingsInput {
  @Field(() => [OfferInput], {
    nullable: true,
    description:
      'Your own price sheet for rented GPUs: replaces catalog offers with the same provider and instance, adds the rest. A rented run takes whole instances of one offer.',
  })
  offers?: OfferInput[];
  @Field(() => Boolean, {
    defaultValue: true,
    description:
      "Rent from the catalog's offers (seeds/instances.csv) as well as your own; false: only offers and prices.",
  })
  catalogOffers!: boolean;
  @Field(() => [String], {
    nullable: true,
    description:
      'Rent only from offers of these providers (case-insensitive); a type left without an offer is not rented.',
  })
  providers?: string[];
}

@InputType({ description: 'A training job of the fleet.' })
export class FleetJobInput {
  @Field(() => String, { description: 'A name for the job, unique in the fleet.' }) id!: string;
  @Field(() => WorkloadInput, { description: 'What the job trains and how much of it.' })
  workload!: WorkloadInput;
  @Field(() => Float, {
    defaultValue: 0,
    description: 'Earliest start, hours from time 0 (default 0: available at once).',
  })
  releaseHours!: number;
  @Field(() => Float, {
    description: 'The job must end by this time, hours from time 0 (absolute, not from its release).',
  })
  deadlineHours!: number;
  @Field(() => Float, {
    defaultValue: 1,
    description:
      'Weight of placing this job when not every job fits (allowUnplaced, and the infeasibility diagnosis), and of its end time under WEIGHTED_COMPLETION.',
  })
  priority!: number;
  @Field(() => [Int], {
    nullable: true,
    description: "Per-GPU batch sizes to consider (default: the model's typical ones).",
  })
  batchSizes?: number[];
  @Field(() => SoftwareStackEnum, {
    defaultValue: 'PYTORCH_EAGER',
    description: JOB_STACK,
  })
  softwareStack!: SoftwareStack;
  @Field(() => AttentionEnum, {
    nullable: true,
    description: JOB_ATTENTION,
  })
  attention?: AttentionImplementation;
  @Field(() => Boolean, {
    nullable: true,
    description: JOB_DEADLINE_CONFIDENCE,
  })
  deadlineConfidence?: boolean;
}

@InputType({ description: 'GPUs of one type the fleet may use at the same time.' })
export class InventoryInput {
  @Field(() => String, { description: 'A catalog GPU id.' }) gpu!: string;
  @Field(() => Int, { description: 'GPUs of this type available at once.' }) count!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Price of these GPUs per GPU-hour (default: prices, then the catalog).',
  })
  usdPerGpuHour?: number;
}

@InputType({
  description: 'Jobs to run at the same time on a GPU inventory (plus on-demand rentals if allowed).',
})
export class FleetInput extends RentalSettingsInput {
  @Field(() => [FleetJobInput], { description: 'The jobs, each with its workload and deadline.' })
  jobs!: FleetJobInput[];
  @Field(() => [InventoryInput], {
    defaultValue: [],
    description: 'GPUs available per type, with optional prices.',
  })
  inventory!: InventoryInput[];
  @Field(() => Boolean, {
    defaultValue: false,
    description:
      "GPU types not in the inventory may be rented on demand, without limit, as `recommend` rents them: whole instances of an offer (the catalog's, offers, or a per-GPU price from prices), on the network the offer states. Types in the inventory stay capped at their count.",
  })
  allowOnDemand!: boolean;
  @Field(() => [String], {
    nullable: true,
    description:
      'GPU types that may be rented when allowOnDemand (default: every catalog GPU; with objective COST only those an offer rents).',
  })
  onDemandGpus?: string[];
  @Field(() => [PriceInput], {
    nullable: true,
    description:
      "Per-GPU-hour prices (USD): an inventory type's price when its entry gives none, and for a rented type a price that replaces every offer for it (billed per GPU used).",
  })
  prices?: PriceInput[];
  @Field(() => FleetObjectiveEnum, {
    defaultValue: FleetObjectiveEnum.COST,
    description: 'What to minimise (default COST).',
  })
  objective!: FleetObjectiveEnum;
  @Field(() => Boolean, {
    defaultValue: false,
    description:
      'Leave out jobs that do not fit (highest total priority placed) instead of answering INFEASIBLE.',
  })
  allowUnplaced!: boolean;
  @Field(() => [PrecisionEnum], {
    nullable: true,
    description: PRECISIONS_ALLOWED,
  })
  precisions?: Precision[];
  @Field(() => [Int], {
    nullable: true,
    description: 'GPUs per node to consider (default 1, 2, 4, 8; 16 on DGX-2).',
  })
  gpusPerNode?: number[];
  @Field(() => Int, { defaultValue: 4, description: 'Most nodes one job may use.' }) maxNodes!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Inter-node network per node, Gbps (default: seeds/network.json per GPU).',
  })
  interNodeGbps?: number;
  @Field(() => NetworkTransportEnum, {
    nullable: true,
    description: 'How NCCL crosses that network: TCP for nodes joined by Ethernet only (default RDMA).',
  })
  interNodeTransport?: NetworkTransport;
  @Field(() => Int, {
    defaultValue: 48,
    description:
      'Slots the time-indexed model cuts the horizon into (1 to 400): jobs start at their release or on a slot boundary, then move as early as their GPUs are free. More slots: finer starts, a larger model.',
  })
  timeSlots!: number;
  @Field(() => Boolean, {
    defaultValue: false,
    description:
      'Hold every deadline at the P90 step time: each job is scheduled for its totalHoursP90 (endHours = startHours + totalHoursP90) and holds its GPUs that long, so a slow run neither misses its deadline nor delays the jobs queued behind it; costs stay at the estimate. Default false: scheduled for totalHours.',
  })
  deadlineConfidence!: boolean;
}

@ObjectType({ description: "One job's configuration and time in the fleet plan." })
export class FleetAssignment extends EvidencedConfiguration {
  @Field(() => String, { description: 'The job (FleetJobInput.id).' }) jobId!: string;
  @Field(() => Boolean, { description: 'Rented on demand rather than taken from the inventory.' })
  onDemand!: boolean;
  @Field(() => Parallelism, {
    description:
      'How the job splits the model over its GPUs (ZeRO/FSDP, tensor and pipeline parallelism, recomputation).',
  })
  parallelism!: Parallelism;
  @Field(() => Float, { description: 'Time of one optimizer step, ms.' }) stepTimeMs!: number;
  @Field(() => Float, { description: 'Wall-clock hours the job runs.' }) totalHours!: number;
  @Field(() => Float, {
    description:
      "Hours at the predictor's P90 step time (the learned correction's interval; equal to totalHours for the analytical estimate). The plan holds the GPUs for totalHours (the notes name jobs whose P90 run would pass their deadline), or for these hours with deadlineConfidence.",
  })
  totalHoursP90!: number;
  @Field(() => Float, { description: 'When the job starts, hours from time 0.' }) startHours!: number;
  @Field(() => Float, {
    description:
      'When the job ends and frees its GPUs, hours from time 0: startHours + totalHours, or + totalHoursP90 with deadlineConfidence.',
  })
  endHours!: number;
  @Field(() => Float, { description: "The job's release, hours from time 0." }) releaseHours!: number;
  @Field(() => Float, { description: "The job's deadline, hours from time 0." }) deadlineHours!: number;
  @Field(() => Float, { nullable: true, description: 'null when no price is known (objective MAKESPAN).' })
  costUsd!: number | null;
  @Field(() => Float, {
    nullable: true,
    description:
      "What the job pays per GPU it uses an hour (a rented instance's price / the GPUs it uses); null when none is known.",
  })
  priceUsdPerGpuHour!: number | null;
  @Field(() => PlanOffer, {
    nullable: true,
    description:
      'The offer a rented job takes whole instances of (nodes = instances); null on the inventory.',
  })
  offer!: PlanOffer | null;
  @Field(() => Float, {
    description:
      "Inter-node network the job was timed on, Gbps: a rented job's offer's (unless the request gives interNodeGbps), else the request's.",
  })
  interNodeGbps!: number;
  @Field(() => Float, { description: 'GPU memory one GPU needs, GB (GiB).' }) memoryGbPerGpu!: number;
}

@ObjectType({ description: 'GPUs of one type in use at once.' })
export class GpuUsage {
  @Field(() => Gpu, { description: 'The GPU type.' }) gpu!: Gpu;
  @Field(() => Int, { description: 'Most GPUs of this type in use at one moment of the schedule.' })
  used!: number;
  @Field(() => Int, { nullable: true, description: 'Inventory count; null for on-demand types.' })
  available!: number | null;
  @Field(() => Boolean, { description: 'Rented on demand rather than from the inventory.' })
  onDemand!: boolean;
}

@ObjectType({ description: 'A job (or client) that cannot be planned, and what binds.' })
export class UnplacedJob {
  @Field(() => String, { description: 'The job (or client) id.' }) jobId!: string;
  @Field(() => BlockerEnum, { description: 'What binds.' }) reason!: BlockerEnum;
  @Field(() => String, { description: 'The reason in words, with figures.' }) message!: string;
}

@ObjectType({
  description:
    'A configuration and a start time per job so that the running jobs never use more GPUs than the inventory holds and every job runs between its release and its deadline.',
})
export class FleetPlan extends MipOutcome {
  @Field(() => String, { description: PREDICTOR_USED }) predictor!: string;
  @Field(() => FleetObjectiveEnum, { description: 'What was minimised.' }) objective!: FleetObjectiveEnum;
  @Field(() => Float, {
    nullable: true,
    description:
      'Total cost, USD (COST); the last end, hours from time 0 (MAKESPAN); or sum of priority x end, hours (WEIGHTED_COMPLETION); null without a plan.',
  })
  objectiveValue!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'Cost of every placed job together, USD; null without a plan or without prices.',
  })
  totalCostUsd!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'When the last job ends, hours from time 0; null without a plan.',
  })
  makespanHours!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'Sum over jobs of priority x end time, hours; null without a plan.',
  })
  weightedCompletionHours!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'Length of a slot of the time-indexed model, hours; null when no model was built.',
  })
  slotHours!: number | null;
  @Field(() => [FleetAssignment], { description: 'One configuration and start time per placed job.' })
  assignments!: FleetAssignment[];
  @Field(() => [GpuUsage], { description: 'Per GPU type in the inventory or used on demand.' })
  gpuUsage!: GpuUsage[];
  @Field(() => [UnplacedJob], {
    description: 'Jobs not placed: why, for an INFEASIBLE fleet or with allowUnplaced.',
  })
  unplaced!: UnplacedJob[];
}

// ------------------------------------------------------------------ procurement

@InputType({ description: 'A recurring training job.' })
export class ProcurementJobInput {
  @Field(() => String, { description: 'A name for the job, unique in the portfolio.' }) id!: string;
  @Field(() => WorkloadInput, { description: 'The work of ONE run.' }) workload!: WorkloadInput;
  @Field(() => Int, { description: 'Runs every month.' }) runsPerMonth!: number;
  @Field(() => [Int], {
    nullable: true,
    description: 'Runs per month, one entry per month of the horizon (overrides runsPerMonth).',
  })
  runsByMonth?: number[];
  @Field(() => Float, {
    nullable: true,
    description: 'Each run must finish within this many hours (default: hoursPerMonth).',
  })
  deadlineHours?: number;
  @Field(() => [Int], {
    nullable: true,
    description: "Per-GPU batch sizes to consider (default: the model's typical ones).",
  })
  batchSizes?: number[];
  @Field(() => SoftwareStackEnum, {
    defaultValue: 'PYTORCH_EAGER',
    description: JOB_STACK,
  })
  softwareStack!: SoftwareStack;
  @Field(() => AttentionEnum, {
    nullable: true,
    description: JOB_ATTENTION,
  })
  attention?: AttentionImplementation;
  @Field(() => Boolean, {
    nullable: true,
    description: JOB_DEADLINE_CONFIDENCE,
  })
  deadlineConfidence?: boolean;
}

@InputType({ description: 'Buying GPUs of a type.' })
export class BuyOptionInput {
  @Field(() => Float, { description: 'Purchase price per GPU, including its share of the server.' })
  usdPerGpu!: number;
  @Field(() => Float, {
    defaultValue: 48,
    description: 'Months over which the purchase is written off (straight line).',
  })
  lifetimeMonths!: number;
  @Field(() => Float, {
    nullable: true,
    description:
      "Average draw per GPU while training, W (default: the catalog TDP). Add the host's share and cooling to count them.",
  })
  powerW?: number;
  @Field(() => Float, { defaultValue: 0.12, description: 'Electricity price, USD per kWh.' })
  electricityUsdPerKwh!: number;
  @Field(() => Float, {
    defaultValue: 0.9,
    description: "Share of an owned GPU's hours training can use (scheduling, maintenance, idle).",
  })
  utilization!: number;
  @Field(() => Int, { nullable: true, description: 'Buy at most this many over the horizon.' })
  maxCount?: number;
  @Field(() => Int, {
    defaultValue: 0,
    description:
      'Months from order to service: GPUs ordered in month m train from month m + leadTimeMonths (0: the same month).',
  })
  leadTimeMonths!: number;
}

@InputType({ description: 'What can be done with one GPU type: buy it, rent it, or both.' })
export class GpuOptionInput {
  @Field(() => String, { description: 'A catalog GPU id.' }) gpu!: string;
  @Field(() => BuyOptionInput, { nullable: true, description: 'Omit when this type cannot be bought.' })
  buy?: BuyOptionInput;
  @Field(() => Boolean, {
    defaultValue: true,
    description:
      "This type can be rented on demand: whole instances of an offer for it (the catalog's or offers), or per GPU-hour at rentUsdPerGpuHour or prices.",
  })
  rent!: boolean;
  @Field(() => Float, {
    nullable: true,
    description:
      'On-demand price per GPU-hour, billed per GPU used: replaces every offer for this type (default: prices, then the offers).',
  })
  rentUsdPerGpuHour?: number;
}

@InputType({
  description:
    'A recurring portfolio of training jobs over a horizon, and which GPU types may be bought or rented.',
})
export class ProcurementInput extends RentalSettingsInput {
  @Field(() => [ProcurementJobInput], { description: 'The recurring jobs.' }) jobs!: ProcurementJobInput[];
  @Field(() => Int, { description: 'Months planned for.' }) horizonMonths!: number;
  @Field(() => Float, { defaultValue: 730, description: 'Hours in a month (730 = 8760 / 12).' })
  hoursPerMonth!: number;
  @Field(() => [GpuOptionInput], { description: 'Per GPU type: buy it, rent it, or both.' })
  options!: GpuOptionInput[];
  @Field(() => [PriceInput], {
    nullable: true,
    description:
      'Per-GPU-hour rental prices (USD) that replace every offer for their GPU (options[].rentUsdPerGpuHour wins for its type).',
  })
  prices?: PriceInput[];
  @Field(() => Boolean, {
    defaultValue: false,
    description:
      'Every run must meet its deadlineHours at the P90 step time (hoursPerRunP90), not only at the estimate; capacity and costs stay at the estimate.',
  })
  deadlineConfidence!: boolean;
  @Field(() => [PrecisionEnum], {
    nullable: true,
    description: PRECISIONS_ALLOWED,
  })
  precisions?: Precision[];
  @Field(() => [Int], { nullable: true, description: 'GPUs per node to consider (default 1, 2, 4, 8).' })
  gpusPerNode?: number[];
  @Field(() => Int, { defaultValue: 4, description: 'Most nodes one run may use.' }) maxNodes!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Inter-node network per node, Gbps (default: seeds/network.json per GPU).',
  })
  interNodeGbps?: number;
  @Field(() => NetworkTransportEnum, {
    nullable: true,
    description: 'How NCCL crosses that network: TCP for nodes joined by Ethernet only (default RDMA).',
  })
  interNodeTransport?: NetworkTransport;
}

@ObjectType({ description: 'How one run of a job is executed.' })
export class RunConfig extends EvidencedConfiguration {
  @Field(() => Parallelism, {
    description:
      'How a run splits the model over its GPUs (ZeRO/FSDP, tensor and pipeline parallelism, recomputation).',
  })
  parallelism!: Parallelism;
  @Field(() => Float, { description: 'Wall-clock hours of one run.' }) hoursPerRun!: number;
  @Field(() => Float, {
    description:
      "Hours of one run at the predictor's P90 step time (the learned correction's interval; equal to hoursPerRun for the analytical estimate).",
  })
  hoursPerRunP90!: number;
  @Field(() => Float, { description: 'GPU-hours of one run (hours x GPUs).' }) gpuHoursPerRun!: number;
  @Field(() => Float, { description: 'Electricity (owned) or rental (rented) cost of one run.' })
  usdPerRun!: number;
  @Field(() => Float, {
    description:
      "What a run pays per GPU it uses an hour: electricity (owned), or the rental (a rented instance's price / the GPUs it uses).",
  })
  priceUsdPerGpuHour!: number;
  @Field(() => PlanOffer, {
    nullable: true,
    description: 'The offer a rented run takes whole instances of (nodes = instances); null when owned.',
  })
  offer!: PlanOffer | null;
  @Field(() => Float, {
    description:
      "Inter-node network the run was timed on, Gbps: a rented run's offer's (unless the request gives interNodeGbps), else the request's.",
  })
  interNodeGbps!: number;
}

@ObjectType({ description: 'Runs of a job per month on owned or rented GPUs, in the months listed.' })
export class Allocation {
  @Field(() => String, { description: 'The job (ProcurementJobInput.id).' }) jobId!: string;
  @Field(() => Boolean, { description: 'Runs on owned GPUs (true) or rented ones (false).' }) owned!: boolean;
  @Field(() => RunConfig, { description: 'How one run is executed.' }) config!: RunConfig;
  @Field(() => Int, { description: 'Runs per month this allocation carries.' }) runsPerMonth!: number;
  @Field(() => [Int], { description: 'Months (1-based) this applies to.' }) months!: number[];
}

@ObjectType({ description: 'GPUs of one type ordered in one month.' })
export class GpuOrder {
  @Field(() => Gpu, { description: 'The GPU type.' }) gpu!: Gpu;
  @Field(() => Int, { description: 'GPUs ordered.' }) count!: number;
  @Field(() => Int, { description: 'Month of the order, 1-based.' }) orderMonth!: number;
  @Field(() => Int, {
    description:
      'First month they train (orderMonth + leadTimeMonths); they serve to the end of the horizon.',
  })
  arrivalMonth!: number;
  @Field(() => Float, {
    description: 'Capital charged to the horizon: count x price x months in service / lifetime, USD.',
  })
  capitalUsd!: number;
}

@ObjectType({ description: 'GPUs of one type bought over the horizon.' })
export class Purchase {
  @Field(() => Gpu, { description: 'The GPU type.' }) gpu!: Gpu;
  @Field(() => Int, { description: 'GPUs bought over the horizon (the sum of the orders).' }) count!: number;
  @Field(() => Float, {
    description:
      'Capital charged to the horizon: per order, count x price x months in service / lifetime, USD.',
  })
  capitalUsd!: number;
  @Field(() => Float, { description: 'Electricity of these GPUs over the horizon, USD.' }) powerUsd!: number;
  @Field(() => Float, {
    nullable: true,
    description: "Share of these GPUs' hours in service spent training.",
  })
  utilization!: number | null;
}

@ObjectType({ description: 'GPUs of one type in service in a month.' })
export class GpuCount {
  @Field(() => Gpu, { description: 'The GPU type.' }) gpu!: Gpu;
  @Field(() => Int, { description: 'GPUs in service.' }) count!: number;
}

@ObjectType({ description: 'Buying versus renting one GPU type.' })
export class BreakEven {
  @Field(() => Gpu, { description: 'The GPU type.' }) gpu!: Gpu;
  @Field(() => Float, {
    nullable: true,
    description:
      'Share of a month an owned GPU must train for buying to cost no more than renting; null when buying never pays.',
  })
  breakEvenUtilization!: number | null;
  @Field(() => Float, {
    description:
      "Rental price, USD per GPU-hour: the cheapest offer's, a whole instance used (a run that uses part of an instance pays more per GPU).",
  })
  rentUsdPerGpuHour!: number;
  @Field(() => Float, { description: 'Purchase written off per GPU per month, USD.' })
  capitalUsdPerGpuMonth!: number;
  @Field(() => Float, { description: 'Electricity per GPU-hour of training, USD.' })
  powerUsdPerGpuHour!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'What the plan gets out of the GPUs it buys of this type.',
  })
  plannedUtilization!: number | null;
  @Field(() => String, { description: 'The comparison in words.' }) note!: string;
}

@ObjectType({ description: 'One month of the horizon.' })
export class MonthSummary {
  @Field(() => Int, { description: 'Month number, 1-based.' }) month!: number;
  @Field(() => Float, { description: 'GPU-hours run on owned GPUs.' }) ownedGpuHours!: number;
  @Field(() => Float, { description: 'GPU-hours the owned GPUs can give (count x hours x utilization).' })
  ownedCapacityGpuHours!: number;
  @Field(() => Float, { description: 'GPU-hours rented.' }) rentedGpuHours!: number;
  @Field(() => Float, { description: 'Electricity of owned GPUs, USD.' }) powerUsd!: number;
  @Field(() => Float, { description: 'Rentals, USD.' }) rentalUsd!: number;
  @Field(() => [GpuCount], { description: 'Owned GPUs in service this month, per type.' })
  ownedGpus!: GpuCount[];
}

@ObjectType({ description: 'Total cost of ownership over the horizon.' })
export class CostSplit {
  @Field(() => Float, { description: 'Purchases written off over the horizon, USD.' }) capitalUsd!: number;
  @Field(() => Float, { description: 'Electricity of owned GPUs, USD.' }) powerUsd!: number;
  @Field(() => Float, { description: 'Rentals, USD.' }) rentalUsd!: number;
  @Field(() => Float, { description: 'capitalUsd + powerUsd + rentalUsd, USD.' }) totalUsd!: number;
  @Field(() => Float, {
    nullable: true,
    description:
      "Everything rented at each job's cheapest rental, for comparison; null when some job cannot be rented.",
  })
  allRentUsd!: number | null;
}

@ObjectType({
  description:
    'GPUs to buy, and where each job runs month by month, for the least total cost of ownership over the horizon.',
})
export class ProcurementPlan extends MipOutcome {
  @Field(() => String, { description: PREDICTOR_USED }) predictor!: string;
  @Field(() => Float, { nullable: true, description: 'Total cost over the horizon.' }) objectiveValue!:
    number | null;
  @Field(() => [GpuOrder], { description: 'When to order how many GPUs of each type, and when they arrive.' })
  orders!: GpuOrder[];
  @Field(() => [Purchase], { description: 'GPUs to buy, per type, over the horizon.' })
  purchases!: Purchase[];
  @Field(() => [Allocation], { description: 'Where the runs of each job go, month by month.' })
  allocations!: Allocation[];
  @Field(() => [MonthSummary], { description: 'Owned and rented GPU-hours and costs per month.' })
  months!: MonthSummary[];
  @Field(() => CostSplit, {
    nullable: true,
    description: 'Total cost of ownership split into capital, power and rental, USD; null without a plan.',
  })
  cost!: CostSplit | null;
  @Field(() => [BreakEven], { description: 'Per GPU type that can be both bought and rented.' })
  breakEven!: BreakEven[];
  @Field(() => [UnplacedJob], {
    description: 'INFEASIBLE: the jobs whose runs cannot all be carried, and why.',
  })
  unplaced!: UnplacedJob[];
}

// ------------------------------------------------------------------ federated

@InputType({ description: 'Dense peak TFLOPS per math mode of a custom device; leave out a mode it lacks.' })
export class DevicePeakInput {
  @Field(() => Float, { description: 'FP32 dense peak, TFLOPS.' }) fp32!: number;
  @Field(() => Float, { nullable: true, description: 'TF32 dense peak, TFLOPS.' }) tf32?: number;
  @Field(() => Float, { nullable: true, description: 'FP16 (tensor) dense peak, TFLOPS.' }) fp16?: number;
  @Field(() => Float, { nullable: true, description: 'BF16 dense peak, TFLOPS.' }) bf16?: number;
  @Field(() => Float, { nullable: true, description: 'FP8 dense peak, TFLOPS.' }) fp8?: number;
}

@InputType({ description: 'A device that is not in the catalog.' })
export class CustomDeviceInput {
  @Field(() => String, { nullable: true, description: 'Label (default: "custom:" + the client id).' })
  name?: string;
  @Field(() => DevicePeakInput, { description: 'Dense peak per math mode, TFLOPS.' })
  peakTflops!: DevicePeakInput;
  @Field(() => Float, { description: 'Memory bandwidth, GB/s.' }) memoryBwGbps!: number;
  @Field(() => Float, {
    description:
      "Device memory a training process can have, GiB (on a GPU, CUDA's total as torch.cuda.get_device_properties reports it, a little under the label): plans fit in it.",
  })
  memoryGb!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Board power, W: the plan reports compute energy (Wh) at it; leave out when unknown.',
  })
  tdpW?: number;
}

@InputType({
  description:
    'A federated-learning client: a catalog GPU (gpu) or its own figures (device), exactly one of the two.',
})
export class FederatedClientInput {
  @Field(() => String, { description: 'A name for the client, unique in the round.' }) id!: string;
  @Field(() => String, { nullable: true, description: 'A catalog GPU id; or give device.' }) gpu?: string;
  @Field(() => CustomDeviceInput, {
    nullable: true,
    description: "The client's own device figures; or give gpu.",
  })
  device?: CustomDeviceInput;
  @Field(() => Float, {
    description:
      "Data the client holds, in the model's throughput unit; one round trains at most this much on it.",
  })
  samplesAvailable!: number;
  @Field(() => Float, { description: 'Upload bandwidth, Mbit/s.' }) uplinkMbps!: number;
  @Field(() => Float, { description: 'Download bandwidth, Mbit/s.' }) downlinkMbps!: number;
  @Field(() => Float, {
    defaultValue: 1,
    description:
      'Probability (0 to 1) that the client completes a round it takes part in; dropouts are independent between clients and rounds.',
  })
  availability!: number;
}

@InputType({
  description:
    'A federated-learning round: the model, the clients with their devices and links, and the samples a round must train.',
})
export class FederatedInput extends SolveSettingsInput {
  @Field(() => WorkloadInput, {
    description: 'The model, and the total work of the training (to count rounds).',
  })
  workload!: WorkloadInput;
  @Field(() => [FederatedClientInput], { description: 'The clients.' }) clients!: FederatedClientInput[];
  @Field(() => Float, {
    description: "Samples (model's throughput unit) the round must train, over all clients.",
  })
  minSamplesPerRound!: number;
  @Field(() => Float, {
    nullable: true,
    description:
      "Each round must reach minSamplesPerRound with at least this probability (0 to 1) given the clients' availability: the plan over-provisions. Default: every participant is assumed to complete.",
  })
  minSuccessProbability?: number;
  @Field(() => Int, {
    defaultValue: 1,
    description: 'Rounds planned together as a cycle that repeats (1 to 20); each has its own participants.',
  })
  rounds!: number;
  @Field(() => Int, {
    defaultValue: 0,
    description:
      'Every client that can train at all takes part in at least this many of the `rounds` (a participation floor: nobody is starved of every round).',
  })
  minRoundsPerClient!: number;
  @Field(() => Boolean, { defaultValue: false, description: 'Clients may sit the round out.' })
  allowDropout!: boolean;
  @Field(() => [PrecisionEnum], {
    nullable: true,
    description:
      'Precision modes allowed (default: all the device supports but FP4, which no measurement supports, FP16_PURE, whose training may not converge, and FP8 for a model whose GEMM FLOPs are mostly not in linear layers, which FP8 would leave in bf16).',
  })
  precisions?: Precision[];
  @Field(() => [Int], {
    nullable: true,
    description: "Per-device batch sizes (default: 8, 16, 32, 64 and the model's typical ones).",
  })
  batchSizes?: number[];
  @Field(() => Int, { defaultValue: 10000, description: 'Most local steps per client per round.' })
  maxLocalSteps!: number;
  @Field(() => Float, {
    defaultValue: 4,
    description: 'Bytes per parameter sent down (model) and up (update): 4 for fp32.',
  })
  bytesPerParameter!: number;
  @Field(() => SoftwareStackEnum, {
    defaultValue: 'PYTORCH_EAGER',
    description:
      "Software stack every client trains under (PYTORCH_EAGER unless said), as RecommendInput.softwareStack: each client's steps are timed and sized under it.",
  })
  softwareStack!: SoftwareStack;
  @Field(() => AttentionEnum, {
    nullable: true,
    description: `${ATTENTION} On every client, as PredictInput.attention.`,
  })
  attention?: AttentionImplementation;
}

@ObjectType({ description: "One client's part in the round." })
export class FederatedClientPlan {
  @Field(() => String, { description: 'The client (FederatedClientInput.id).' }) id!: string;
  @Field(() => Boolean, { description: 'Takes part in this round.' }) participates!: boolean;
  @Field(() => PrecisionEnum, {
    nullable: true,
    description: 'The precision mode; null when the client sits out.',
  })
  precision!: Precision | null;
  @Field(() => Int, {
    nullable: true,
    description: 'Batch elements per local step; null when the client sits out.',
  })
  batchSizePerGpu!: number | null;
  @Field(() => Int, { description: 'Local optimizer steps this round.' }) localSteps!: number;
  @Field(() => RecomputeEnum, {
    nullable: true,
    description:
      'Activation recomputation the client runs (NONE when the plain step fits); null when it sits out.',
  })
  recompute!: string | null;
  @Field(() => Float, { description: "Samples (model's throughput unit) trained this round." })
  samples!: number;
  @Field(() => Float, { description: 'Local training time, seconds.' }) computeSeconds!: number;
  @Field(() => Float, { description: "Local training time at the predictor's P90 step time, seconds." })
  computeSecondsP90!: number;
  @Field(() => Float, { description: 'Model download plus update upload.' }) transferSeconds!: number;
  @Field(() => Float, { description: 'computeSeconds + transferSeconds, seconds.' }) totalSeconds!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Device memory needed, GB (GiB); null when the client sits out.',
  })
  memoryGbPerGpu!: number | null;
  @Field(() => Float, { description: 'Probability that the client completes the round (from the input).' })
  availability!: number;
  @Field(() => Float, {
    nullable: true,
    description:
      "Compute energy at the device's TDP, Wh (an upper bound on the draw); null when the TDP is unknown.",
  })
  energyWh!: number | null;
  @Field(() => String, {
    nullable: true,
    description: 'Why the client sits out, or anything else worth knowing; null when nothing.',
  })
  note!: string | null;
  @Field(() => String, {
    nullable: true,
    description:
      "What stands behind the client's step time, as a prediction says it (measured, calibrated from measurements of the same model, or unmeasured; how many of your recorded runs calibrated it); null when it sits out or the analytical estimate alone timed it (a device given by its figures, or predictor ANALYTICAL).",
  })
  evidence!: string | null;
  @Field(() => Int, {
    description: 'How many of your recorded runs (recordMeasurements) moved its step time.',
  })
  calibrationRuns!: number;
  @Field(() => HarnessCommands, {
    nullable: true,
    description:
      "How to time the client's configuration on its device (the measurement harness's commands, one GPU) and record it: the run then calibrates this model's predictions on that GPU; null when the client sits out.",
  })
  harness!: HarnessCommands | null;
}

@ObjectType({ description: 'One round of the planned cycle.' })
export class FederatedRound {
  @Field(() => Int, { description: 'Which round of the cycle, 1-based.' }) round!: number;
  @Field(() => Float, { description: 'The slowest participant: download + compute + upload, seconds.' })
  roundTimeSeconds!: number;
  @Field(() => Float, { description: 'The slowest participant at P90 step times, seconds.' })
  roundTimeSecondsP90!: number;
  @Field(() => Float, {
    description: "Samples (model's throughput unit) trained if every participant completes.",
  })
  samplesPerRound!: number;
  @Field(() => Float, { description: 'Samples expected after dropouts (sum of availability x samples).' })
  expectedSamples!: number;
  @Field(() => Float, {
    description:
      'Probability that the completing participants reach minSamplesPerRound (exact on whole samples; never overstated).',
  })
  successProbability!: number;
  @Field(() => Float, { description: 'Compute energy of the participants whose TDP is known, Wh.' })
  energyWh!: number;
  @Field(() => String, { nullable: true, description: 'The client that sets the round time.' })
  slowestClient!: string | null;
  @Field(() => [FederatedClientPlan], { description: 'Per client: whether it participates, and how.' })
  clients!: FederatedClientPlan[];
}

@ObjectType({ description: 'How many rounds of the cycle a client takes part in.' })
export class FederatedParticipation {
  @Field(() => String, { description: 'The client (FederatedClientInput.id).' }) clientId!: string;
  @Field(() => Int, { description: 'Rounds of the cycle it takes part in.' }) rounds!: number;
}

@ObjectType({ description: 'Why a federated round cannot be planned.' })
export class FederatedInfeasibility {
  @Field(() => String, {
    nullable: true,
    description: 'The client at fault; null when it is the round as a whole.',
  })
  clientId!: string | null;
  @Field(() => BlockerEnum, { description: 'What binds.' }) reason!: BlockerEnum;
  @Field(() => String, { description: 'The reason in words, with figures.' }) message!: string;
}

@ObjectType({
  description: 'One federated-learning round: per client its configuration, and the round time.',
})
export class FederatedPlan extends MipOutcome {
  @Field(() => String, { description: PREDICTOR_USED }) predictor!: string;
  @Field(() => Float, {
    nullable: true,
    description:
      'Wall time of a round, the slowest participating client (download + compute + upload), seconds; the mean over the cycle when rounds > 1.',
  })
  roundTimeSeconds!: number | null;
  @Field(() => Float, {
    nullable: true,
    description:
      "Round time with every participant at the predictor's P90 step time (the learned correction's interval), seconds; mean over the cycle.",
  })
  roundTimeSecondsP90!: number | null;
  @Field(() => Float, {
    nullable: true,
    description:
      "Samples (model's throughput unit) a round trains over all clients if every participant completes (mean over the cycle); null without a plan.",
  })
  samplesPerRound!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'Samples expected per round after dropouts (mean over the cycle).',
  })
  expectedSamplesPerRound!: number | null;
  @Field(() => Float, {
    nullable: true,
    description:
      'The least probability over the cycle that a round reaches minSamplesPerRound given the dropouts.',
  })
  successProbability!: number | null;
  @Field(() => Int, {
    nullable: true,
    description:
      'How many of the largest unreliable contributions each round is planned to survive losing (with minSuccessProbability).',
  })
  dropoutsTolerated!: number | null;
  @Field(() => Float, { nullable: true, description: 'Compute energy per round, Wh (mean over the cycle).' })
  energyWhPerRound!: number | null;
  @Field(() => [FederatedRound], { description: 'Every round of the cycle (one unless rounds > 1).' })
  schedule!: FederatedRound[];
  @Field(() => [FederatedParticipation], { description: 'Per client: rounds of the cycle it takes part in.' })
  participation!: FederatedParticipation[];
  @Field(() => String, {
    nullable: true,
    description: "The client that sets the first round's time; null without a plan.",
  })
  slowestClient!: string | null;
  @Field(() => Int, {
    nullable: true,
    description: 'Rounds to train workload.samples at the expected samples per round (after dropouts).',
  })
  rounds!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'Hours for all rounds (rounds x round time); null without a plan.',
  })
  totalHours!: number | null;
  @Field(() => [FederatedClientPlan], {
    description:
      'Per client: whether it participates in the first round (the only one when rounds = 1), and how.',
  })
  clients!: FederatedClientPlan[];
  @Field(() => [FederatedInfeasibility], {
    description: 'Why no round can be planned (INFEASIBLE), per client or for the round.',
  })
  infeasible!: FederatedInfeasibility[];
}
