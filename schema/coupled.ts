// GraphQL types of the coupled planners (planFleet, planProcurement, planFederatedRound). The
// resolvers (resolvers/coupled.ts) return the optimizer's plain objects; these classes only declare
// how they look over the wire. Every @Field has an explicit type function (tsx does not emit
// decorator metadata).
import { Field, Float, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { Precision } from '../predictor/types.js';
import { Gpu, PrecisionEnum } from './types.js';
import { PriceInput, WorkloadInput } from './inputs.js';
import { Parallelism, RecomputeEnum } from './parallelism.js';

export enum FleetObjectiveEnum {
  COST = 'COST',
  MAKESPAN = 'MAKESPAN',
  WEIGHTED_COMPLETION = 'WEIGHTED_COMPLETION',
}
registerEnumType(FleetObjectiveEnum, {
  name: 'FleetObjective',
  description:
    'COST: least total cost, USD (ties broken by the earliest completions); MAKESPAN: the last job ends as early as possible, hours from time 0 (ties broken by cost); WEIGHTED_COMPLETION: least sum of priority x end time, hours (ties broken by cost).',
});

export enum SolveStatusEnum {
  OPTIMAL = 'OPTIMAL',
  FEASIBLE = 'FEASIBLE',
  INFEASIBLE = 'INFEASIBLE',
  TIME_LIMIT = 'TIME_LIMIT',
}
registerEnumType(SolveStatusEnum, {
  name: 'SolveStatus',
  description:
    'OPTIMAL: proven optimal; FEASIBLE: a verified plan, but the time limit stopped the solver before it proved optimality (see gap); INFEASIBLE: no plan meets every constraint (see the reasons); TIME_LIMIT: no plan found within the time limit, infeasibility not proven.',
});

export enum SolverChoiceEnum {
  AUTO = 'AUTO',
  HIGHS = 'HIGHS',
  JAVASCRIPT_LP_SOLVER = 'JAVASCRIPT_LP_SOLVER',
}
registerEnumType(SolverChoiceEnum, {
  name: 'SolverChoice',
  description:
    'AUTO: javascript-lp-solver first on small fleet models, HiGHS otherwise; HIGHS: HiGHS only; JAVASCRIPT_LP_SOLVER: javascript-lp-solver first on any model. Whatever is chosen, an answer is used only after it is verified, and HiGHS answers when javascript-lp-solver cannot.',
});

export enum BlockerEnum {
  DEADLINE = 'DEADLINE',
  MEMORY = 'MEMORY',
  INVENTORY = 'INVENTORY',
  SAMPLES = 'SAMPLES',
}
registerEnumType(BlockerEnum, {
  name: 'Blocker',
  description:
    'Why something cannot be planned. DEADLINE: even the fastest configuration within reach is too slow; MEMORY: nothing fits in GPU memory; INVENTORY: too few GPUs (or no usable GPU type) available, alone or together with the other jobs; SAMPLES: not enough data for the samples required.',
});

// ------------------------------------------------------------------ shared

@ObjectType({ description: 'Size of the mixed-integer program that was solved.' })
export class MipModelSize {
  @Field(() => Int, { description: 'Candidate configurations (or options) the predictor produced.' })
  candidates!: number;
  @Field(() => Int, { description: 'Candidates left after pruning dominated ones.' }) keptCandidates!: number;
  @Field(() => Int) variables!: number;
  @Field(() => Int, { description: 'Integer and binary variables.' }) integers!: number;
  @Field(() => Int) constraints!: number;
  @Field(() => Int) nonzeros!: number;
}

/** What every mixed-integer answer reports about its solve; the three plans extend it. */
@ObjectType({
  description: 'What a mixed-integer solve reports (the plans extend it; not a query result on its own).',
})
export abstract class MipOutcome {
  @Field(() => SolveStatusEnum) status!: SolveStatusEnum;
  @Field(() => Float, { nullable: true, description: 'Best proven bound on the objective.' }) bestBound!:
    number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'Relative gap between the objective and bestBound; 0 when optimal.',
  })
  gap!: number | null;
  @Field(() => String, { description: 'Which solver answered, and how (worker thread, in-thread fallback).' })
  solver!: string;
  @Field(() => Boolean) optimalityProven!: boolean;
  @Field(() => Float, { description: 'Candidate generation, solving and verification, ms.' })
  solveTimeMs!: number;
  @Field(() => [String], { description: 'Solver fallbacks and anything else worth knowing.' })
  notes!: string[];
  @Field(() => MipModelSize) modelSize!: MipModelSize;
}

// ------------------------------------------------------------------ fleet

/** How the three MIP queries solve: every input extends it. */
@InputType({
  description:
    'Solver settings shared by planFleet, planProcurement and planFederatedRound (not an input on its own).',
})
export abstract class SolveSettingsInput {
  @Field(() => Boolean, { defaultValue: true }) fp32UsesTf32!: boolean;
  @Field(() => Float, {
    defaultValue: 10,
    description: 'Wall-clock limit for the solver, seconds (at most 60).',
  })
  timeLimitSeconds!: number;
  @Field(() => SolverChoiceEnum, { defaultValue: SolverChoiceEnum.AUTO }) solver!: SolverChoiceEnum;
  @Field(() => Float, {
    defaultValue: 0,
    description:
      'Relative gap at which HiGHS may stop and call a plan optimal: 0 (default) proves exact optima; e.g. 1e-6 ends large models sooner (status OPTIMAL, gap <= mipRelGap).',
  })
  mipRelGap!: number;
}

@InputType({ description: 'A training job of the fleet.' })
export class FleetJobInput {
  @Field(() => String) id!: string;
  @Field(() => WorkloadInput) workload!: WorkloadInput;
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
}

@InputType({ description: 'GPUs of one type the fleet may use at the same time.' })
export class InventoryInput {
  @Field(() => String) gpu!: string;
  @Field(() => Int) count!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Price of these GPUs per GPU-hour (default: prices, then the catalog).',
  })
  usdPerGpuHour?: number;
}

@InputType()
export class FleetInput extends SolveSettingsInput {
  @Field(() => [FleetJobInput]) jobs!: FleetJobInput[];
  @Field(() => [InventoryInput], { defaultValue: [] }) inventory!: InventoryInput[];
  @Field(() => Boolean, {
    defaultValue: false,
    description:
      'GPU types not in the inventory may be rented on demand, without limit, at their catalog or overridden price. Types in the inventory stay capped at their count.',
  })
  allowOnDemand!: boolean;
  @Field(() => [String], {
    nullable: true,
    description: 'GPU types that may be rented when allowOnDemand (default: every catalog GPU with a price).',
  })
  onDemandGpus?: string[];
  @Field(() => [PriceInput], {
    nullable: true,
    description: 'Prices that override the catalog (inventory usdPerGpuHour wins for its type).',
  })
  prices?: PriceInput[];
  @Field(() => FleetObjectiveEnum, { defaultValue: FleetObjectiveEnum.COST }) objective!: FleetObjectiveEnum;
  @Field(() => Boolean, {
    defaultValue: false,
    description:
      'Leave out jobs that do not fit (highest total priority placed) instead of answering INFEASIBLE.',
  })
  allowUnplaced!: boolean;
  @Field(() => [PrecisionEnum], { nullable: true, description: 'Precision modes allowed (default: all).' })
  precisions?: Precision[];
  @Field(() => [Int], { nullable: true, description: 'GPUs per node to consider (default 1, 2, 4, 8).' })
  gpusPerNode?: number[];
  @Field(() => Int, { defaultValue: 4, description: 'Most nodes one job may use.' }) maxNodes!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Inter-node network per node, Gbps (default: seeds/network.json per GPU).',
  })
  interNodeGbps?: number;
  @Field(() => Int, {
    defaultValue: 48,
    description:
      'Slots the time-indexed model cuts the horizon into (1 to 400): jobs start at their release or on a slot boundary, then move as early as their GPUs are free. More slots: finer starts, a larger model.',
  })
  timeSlots!: number;
}

@ObjectType({ description: "One job's configuration and time in the fleet plan." })
export class FleetAssignment {
  @Field(() => String) jobId!: string;
  @Field(() => Gpu) gpu!: Gpu;
  @Field(() => Boolean, { description: 'Rented on demand rather than taken from the inventory.' })
  onDemand!: boolean;
  @Field(() => Int) nodes!: number;
  @Field(() => Int) gpusPerNode!: number;
  @Field(() => Int) totalGpus!: number;
  @Field(() => Int) batchSizePerGpu!: number;
  @Field(() => Int) gradAccumSteps!: number;
  @Field(() => PrecisionEnum) precision!: Precision;
  @Field(() => Parallelism, {
    description:
      'How the job splits the model over its GPUs (ZeRO/FSDP, tensor and pipeline parallelism, recomputation).',
  })
  parallelism!: Parallelism;
  @Field(() => Float) stepTimeMs!: number;
  @Field(() => Float, { description: 'Run time, hours.' }) totalHours!: number;
  @Field(() => Float, { description: 'When the job starts, hours from time 0.' }) startHours!: number;
  @Field(() => Float, { description: 'When the job ends (startHours + totalHours), hours from time 0.' })
  endHours!: number;
  @Field(() => Float, { description: "The job's release, hours from time 0." }) releaseHours!: number;
  @Field(() => Float, { description: "The job's deadline, hours from time 0." }) deadlineHours!: number;
  @Field(() => Float, { nullable: true, description: 'null when no price is known (objective MAKESPAN).' })
  costUsd!: number | null;
  @Field(() => Float, { nullable: true }) priceUsdPerGpuHour!: number | null;
  @Field(() => Float) memoryGbPerGpu!: number;
}

@ObjectType({ description: 'GPUs of one type in use at once.' })
export class GpuUsage {
  @Field(() => Gpu) gpu!: Gpu;
  @Field(() => Int, { description: 'Most GPUs of this type in use at one moment of the schedule.' })
  used!: number;
  @Field(() => Int, { nullable: true, description: 'Inventory count; null for on-demand types.' })
  available!: number | null;
  @Field(() => Boolean) onDemand!: boolean;
}

@ObjectType({ description: 'A job (or client) that cannot be planned, and what binds.' })
export class UnplacedJob {
  @Field(() => String) jobId!: string;
  @Field(() => BlockerEnum) reason!: BlockerEnum;
  @Field(() => String) message!: string;
}

@ObjectType({
  description:
    'A configuration and a start time per job so that the running jobs never use more GPUs than the inventory holds and every job runs between its release and its deadline.',
})
export class FleetPlan extends MipOutcome {
  @Field(() => FleetObjectiveEnum) objective!: FleetObjectiveEnum;
  @Field(() => Float, {
    nullable: true,
    description:
      'Total cost, USD (COST); the last end, hours from time 0 (MAKESPAN); or sum of priority x end, hours (WEIGHTED_COMPLETION); null without a plan.',
  })
  objectiveValue!: number | null;
  @Field(() => Float, { nullable: true }) totalCostUsd!: number | null;
  @Field(() => Float, { nullable: true, description: 'When the last job ends, hours from time 0.' })
  makespanHours!: number | null;
  @Field(() => Float, { nullable: true, description: 'Sum over jobs of priority x end time, hours.' })
  weightedCompletionHours!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'Length of a slot of the time-indexed model, hours; null when no model was built.',
  })
  slotHours!: number | null;
  @Field(() => [FleetAssignment]) assignments!: FleetAssignment[];
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
  @Field(() => String) id!: string;
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
  @Field(() => [Int], { nullable: true }) batchSizes?: number[];
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
  @Field(() => Float, { defaultValue: 0.12 }) electricityUsdPerKwh!: number;
  @Field(() => Float, {
    defaultValue: 0.9,
    description: "Share of an owned GPU's hours training can use (scheduling, maintenance, idle).",
  })
  utilization!: number;
  @Field(() => Int, { nullable: true, description: 'Buy at most this many.' }) maxCount?: number;
}

@InputType({ description: 'What can be done with one GPU type: buy it, rent it, or both.' })
export class GpuOptionInput {
  @Field(() => String) gpu!: string;
  @Field(() => BuyOptionInput, { nullable: true, description: 'Omit when this type cannot be bought.' })
  buy?: BuyOptionInput;
  @Field(() => Boolean, { defaultValue: true, description: 'This type can be rented on demand.' })
  rent!: boolean;
  @Field(() => Float, {
    nullable: true,
    description: 'On-demand price per GPU-hour (default: prices, then the catalog).',
  })
  rentUsdPerGpuHour?: number;
}

@InputType()
export class ProcurementInput extends SolveSettingsInput {
  @Field(() => [ProcurementJobInput]) jobs!: ProcurementJobInput[];
  @Field(() => Int) horizonMonths!: number;
  @Field(() => Float, { defaultValue: 730, description: 'Hours in a month (730 = 8760 / 12).' })
  hoursPerMonth!: number;
  @Field(() => [GpuOptionInput]) options!: GpuOptionInput[];
  @Field(() => [PriceInput], { nullable: true, description: 'On-demand prices that override the catalog.' })
  prices?: PriceInput[];
  @Field(() => [PrecisionEnum], { nullable: true }) precisions?: Precision[];
  @Field(() => [Int], { nullable: true }) gpusPerNode?: number[];
  @Field(() => Int, { defaultValue: 4 }) maxNodes!: number;
  @Field(() => Float, { nullable: true }) interNodeGbps?: number;
}

@ObjectType({ description: 'How one run of a job is executed.' })
export class RunConfig {
  @Field(() => Gpu) gpu!: Gpu;
  @Field(() => Int) nodes!: number;
  @Field(() => Int) gpusPerNode!: number;
  @Field(() => Int) totalGpus!: number;
  @Field(() => Int) batchSizePerGpu!: number;
  @Field(() => Int) gradAccumSteps!: number;
  @Field(() => PrecisionEnum) precision!: Precision;
  @Field(() => Parallelism, {
    description:
      'How a run splits the model over its GPUs (ZeRO/FSDP, tensor and pipeline parallelism, recomputation).',
  })
  parallelism!: Parallelism;
  @Field(() => Float) hoursPerRun!: number;
  @Field(() => Float) gpuHoursPerRun!: number;
  @Field(() => Float, { description: 'Electricity (owned) or rental (rented) cost of one run.' })
  usdPerRun!: number;
}

@ObjectType({ description: 'Runs of a job per month on owned or rented GPUs, in the months listed.' })
export class Allocation {
  @Field(() => String) jobId!: string;
  @Field(() => Boolean) owned!: boolean;
  @Field(() => RunConfig) config!: RunConfig;
  @Field(() => Int) runsPerMonth!: number;
  @Field(() => [Int], { description: 'Months (1-based) this applies to.' }) months!: number[];
}

@ObjectType()
export class Purchase {
  @Field(() => Gpu) gpu!: Gpu;
  @Field(() => Int) count!: number;
  @Field(() => Float, { description: 'Capital charged to the horizon: count x price x horizon / lifetime.' })
  capitalUsd!: number;
  @Field(() => Float) powerUsd!: number;
  @Field(() => Float, {
    nullable: true,
    description: "Share of these GPUs' hours over the horizon spent training.",
  })
  utilization!: number | null;
}

@ObjectType({ description: 'Buying versus renting one GPU type.' })
export class BreakEven {
  @Field(() => Gpu) gpu!: Gpu;
  @Field(() => Float, {
    nullable: true,
    description:
      'Share of a month an owned GPU must train for buying to cost no more than renting; null when buying never pays.',
  })
  breakEvenUtilization!: number | null;
  @Field(() => Float) rentUsdPerGpuHour!: number;
  @Field(() => Float) capitalUsdPerGpuMonth!: number;
  @Field(() => Float) powerUsdPerGpuHour!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'What the plan gets out of the GPUs it buys of this type.',
  })
  plannedUtilization!: number | null;
  @Field(() => String) note!: string;
}

@ObjectType()
export class MonthSummary {
  @Field(() => Int) month!: number;
  @Field(() => Float) ownedGpuHours!: number;
  @Field(() => Float) ownedCapacityGpuHours!: number;
  @Field(() => Float) rentedGpuHours!: number;
  @Field(() => Float) powerUsd!: number;
  @Field(() => Float) rentalUsd!: number;
}

@ObjectType({ description: 'Total cost of ownership over the horizon.' })
export class CostSplit {
  @Field(() => Float) capitalUsd!: number;
  @Field(() => Float) powerUsd!: number;
  @Field(() => Float) rentalUsd!: number;
  @Field(() => Float) totalUsd!: number;
  @Field(() => Float, {
    nullable: true,
    description:
      "Everything rented at each job's cheapest rental, for comparison; null when some job cannot be rented.",
  })
  allRentUsd!: number | null;
}

@ObjectType()
export class ProcurementPlan extends MipOutcome {
  @Field(() => Float, { nullable: true, description: 'Total cost over the horizon.' }) objectiveValue!:
    number | null;
  @Field(() => [Purchase]) purchases!: Purchase[];
  @Field(() => [Allocation]) allocations!: Allocation[];
  @Field(() => [MonthSummary]) months!: MonthSummary[];
  @Field(() => CostSplit, { nullable: true }) cost!: CostSplit | null;
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
  @Field(() => Float) fp32!: number;
  @Field(() => Float, { nullable: true }) tf32?: number;
  @Field(() => Float, { nullable: true }) fp16?: number;
  @Field(() => Float, { nullable: true }) bf16?: number;
  @Field(() => Float, { nullable: true }) fp8?: number;
}

@InputType({ description: 'A device that is not in the catalog.' })
export class CustomDeviceInput {
  @Field(() => String, { nullable: true, description: 'Label (default: "custom:" + the client id).' })
  name?: string;
  @Field(() => DevicePeakInput) peakTflops!: DevicePeakInput;
  @Field(() => Float) memoryBwGbps!: number;
  @Field(() => Float) memoryGb!: number;
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
  @Field(() => String) id!: string;
  @Field(() => String, { nullable: true }) gpu?: string;
  @Field(() => CustomDeviceInput, { nullable: true }) device?: CustomDeviceInput;
  @Field(() => Float, {
    description:
      "Data the client holds, in the model's throughput unit; one round trains at most this much on it.",
  })
  samplesAvailable!: number;
  @Field(() => Float) uplinkMbps!: number;
  @Field(() => Float) downlinkMbps!: number;
  @Field(() => Float, {
    defaultValue: 1,
    description:
      'Probability (0 to 1) that the client completes a round it takes part in; dropouts are independent between clients and rounds.',
  })
  availability!: number;
}

@InputType()
export class FederatedInput extends SolveSettingsInput {
  @Field(() => WorkloadInput, {
    description: 'The model, and the total work of the training (to count rounds).',
  })
  workload!: WorkloadInput;
  @Field(() => [FederatedClientInput]) clients!: FederatedClientInput[];
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
  @Field(() => [PrecisionEnum], { nullable: true }) precisions?: Precision[];
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
}

@ObjectType()
export class FederatedClientPlan {
  @Field(() => String) id!: string;
  @Field(() => Boolean) participates!: boolean;
  @Field(() => PrecisionEnum, { nullable: true }) precision!: Precision | null;
  @Field(() => Int, { nullable: true }) batchSizePerGpu!: number | null;
  @Field(() => Int) localSteps!: number;
  @Field(() => RecomputeEnum, {
    nullable: true,
    description:
      'Activation recomputation the client runs (NONE when the plain step fits); null when it sits out.',
  })
  recompute!: string | null;
  @Field(() => Float) samples!: number;
  @Field(() => Float) computeSeconds!: number;
  @Field(() => Float, { description: "Compute at the predictor's P90 step time, seconds." })
  computeSecondsP90!: number;
  @Field(() => Float, { description: 'Model download plus update upload.' }) transferSeconds!: number;
  @Field(() => Float) totalSeconds!: number;
  @Field(() => Float, { nullable: true }) memoryGbPerGpu!: number | null;
  @Field(() => Float, { description: 'Probability that the client completes the round (from the input).' })
  availability!: number;
  @Field(() => Float, {
    nullable: true,
    description:
      "Compute energy at the device's TDP, Wh (an upper bound on the draw); null when the TDP is unknown.",
  })
  energyWh!: number | null;
  @Field(() => String, { nullable: true }) note!: string | null;
}

@ObjectType({ description: 'One round of the planned cycle.' })
export class FederatedRound {
  @Field(() => Int, { description: '1-based.' }) round!: number;
  @Field(() => Float, { description: 'The slowest participant: download + compute + upload, seconds.' })
  roundTimeSeconds!: number;
  @Field(() => Float, { description: 'The slowest participant at P90 step times, seconds.' })
  roundTimeSecondsP90!: number;
  @Field(() => Float, { description: 'Samples trained if every participant completes.' })
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
  @Field(() => String, { nullable: true }) slowestClient!: string | null;
  @Field(() => [FederatedClientPlan]) clients!: FederatedClientPlan[];
}

@ObjectType({ description: 'How many rounds of the cycle a client takes part in.' })
export class FederatedParticipation {
  @Field(() => String) clientId!: string;
  @Field(() => Int) rounds!: number;
}

@ObjectType()
export class FederatedInfeasibility {
  @Field(() => String, {
    nullable: true,
    description: 'The client at fault; null when it is the round as a whole.',
  })
  clientId!: string | null;
  @Field(() => BlockerEnum) reason!: BlockerEnum;
  @Field(() => String) message!: string;
}

@ObjectType()
export class FederatedPlan extends MipOutcome {
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
  @Field(() => Float, { nullable: true }) samplesPerRound!: number | null;
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
  @Field(() => [FederatedParticipation]) participation!: FederatedParticipation[];
  @Field(() => String, { nullable: true }) slowestClient!: string | null;
  @Field(() => Int, {
    nullable: true,
    description: 'Rounds to train workload.samples at the expected samples per round (after dropouts).',
  })
  rounds!: number | null;
  @Field(() => Float, { nullable: true }) totalHours!: number | null;
  @Field(() => [FederatedClientPlan]) clients!: FederatedClientPlan[];
  @Field(() => [FederatedInfeasibility]) infeasible!: FederatedInfeasibility[];
}
