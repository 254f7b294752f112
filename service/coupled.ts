// planFleet, planProcurement, planFederatedRound as requests arrive (GraphQL resolvers, the CLI
// through the in-process schema): every field checked (an InputError naming the field and the range
// allowed), every default filled in, the calibration constants and the learned model loaded and
// passed down, then the optimizer (optimizer/{fleet,procurement,federated}.ts) solves. Answers are
// domain objects; the API's shapes are made in resolvers/coupled.ts.
import {
  inventoryPrice,
  planFleet,
  unofferedTypes,
  type FleetAssignment,
  type FleetJob,
  type FleetObjective,
  type FleetPlan,
  type FleetRequest,
  type InventoryItem,
} from '../optimizer/fleet.js';
import {
  perGpuOffer,
  priceAgeText,
  STALE_PRICE_DAYS,
  usdPerGpuHourOf,
  type Offer,
} from '../optimizer/offers.js';
import {
  customGpuSpec,
  planFederatedRound,
  type ClientPlan,
  type FederatedClient,
  type FederatedPlan,
  type RoundPlan,
} from '../optimizer/federated.js';
import {
  planProcurement,
  type Allocation,
  type GpuOption,
  type ProcurementJob,
  type ProcurementPlan,
  type RunConfig,
} from '../optimizer/procurement.js';
import type { SolveOptions } from '../optimizer/milp/solver.js';
import { analyticalPredictor, correctedPredictor } from '../optimizer/candidate-predictor.js';
import type { PredictorChoice } from '../optimizer/recommend-corrected.js';
import type { CandidatePredictor, PlanOffer } from '../optimizer/search-types.js';
import {
  recordedCapacityWords,
  withRecordedCapacity,
  type RecordedCapacities,
} from '../predictor/memory-calibration.js';
import type { UserEvidence } from '../predictor/learned/calibration.js';
import { learnedPredictor, type LearnedState } from '../predictor/learned/model.js';
import type { Efficiency } from '../predictor/step.js';
import { DEFAULT_SEARCH_PRECISIONS, defaultSearchPrecisions } from '../predictor/precision.js';
import { costOf } from '../predictor/predict.js';
import { statedChannelsLast, type SoftwareStack } from '../predictor/software.js';
import { PRECISIONS, type GpuSpec, type ModelDef, type Precision } from '../predictor/types.js';
import { planParallelism, type Recompute } from '../predictor/parallel.js';
import { defaultInterNodeGbps, loadEfficiency, loadGpus, serverPriceOverrides } from '../seeds/catalog.js';
import type { AttentionImplementation, NetworkTransport } from '../seeds/types.js';
import { harnessCommands, type HarnessCommands, type NetworkedConfiguration } from './harness-commands.js';
import { fullTrainingOnly, gpuById, modelById } from './lookup.js';
import { measuredWithRuns, userEvidence } from './measurements.js';
import { requestOffers, type PricingQuery } from './offers.js';
import { DEFAULT_GPUS_PER_NODE, fp8NotSearchedNote, nchwNote } from './planning.js';
import { finiteNumber, FLOORS, inRange, InputError, integer, LIMITS, nonEmpty } from './validate.js';

/** A coupled job's workload: a zoo model id (custom models are not planned here) and its samples. */
interface WorkloadInput {
  model: string;
  samples: number;
  fineTuning?: string | null;
}

/** The solve settings and search space every coupled request shares (the GraphQL SolveSettingsInput and its siblings). */
interface SolveSettings {
  /** What times the configurations; absent = LEARNED, as recommend. */
  predictor?: PredictorChoice | null;
  timeLimitSeconds: number;
  solver: string;
  mipRelGap: number;
  fp32UsesTf32: boolean;
  precisions?: Precision[] | null;
  /** Convolution activations channels-last in every job; absent = eager PyTorch's NCHW. */
  channelsLast?: boolean | null;
}

interface SearchSettings extends SolveSettings {
  gpusPerNode?: number[] | null;
  maxNodes: number;
  interNodeGbps?: number | null;
  /** How NCCL crosses that network; absent = RDMA. */
  interNodeTransport?: NetworkTransport | null;
}

/** A fleet request as it arrives (the GraphQL FleetInput has this shape). */
export interface FleetQuery extends SearchSettings, PricingQuery {
  jobs: {
    id: string;
    workload: WorkloadInput;
    releaseHours?: number | null;
    deadlineHours: number;
    priority: number;
    batchSizes?: number[] | null;
    /** The job's software stack; absent = eager PyTorch. */
    softwareStack?: SoftwareStack | null;
    /** How the job's attention cores run; absent = predict's default. */
    attention?: AttentionImplementation | null;
    /** This job's deadline at P90 or not; absent = the request's deadlineConfidence. */
    deadlineConfidence?: boolean | null;
  }[];
  inventory: { gpu: string; count: number; usdPerGpuHour?: number | null }[];
  allowOnDemand: boolean;
  onDemandGpus?: string[] | null;
  objective: FleetObjective;
  allowUnplaced: boolean;
  timeSlots?: number | null;
  deadlineConfidence?: boolean | null;
}

/** A procurement request as it arrives (the GraphQL ProcurementInput has this shape). */
export interface ProcurementQuery extends SearchSettings, PricingQuery {
  jobs: {
    id: string;
    workload: WorkloadInput;
    runsPerMonth: number;
    runsByMonth?: number[] | null;
    deadlineHours?: number | null;
    batchSizes?: number[] | null;
    /** The job's software stack; absent = eager PyTorch. */
    softwareStack?: SoftwareStack | null;
    /** How the job's attention cores run; absent = predict's default. */
    attention?: AttentionImplementation | null;
    /** This job's deadline at P90 or not; absent = the request's deadlineConfidence. */
    deadlineConfidence?: boolean | null;
  }[];
  horizonMonths: number;
  deadlineConfidence?: boolean | null;
  hoursPerMonth: number;
  options: {
    gpu: string;
    rent: boolean;
    rentUsdPerGpuHour?: number | null;
    buy?: {
      usdPerGpu: number;
      lifetimeMonths: number;
      powerW?: number | null;
      electricityUsdPerKwh: number;
      utilization: number;
      maxCount?: number | null;
      leadTimeMonths?: number | null;
    } | null;
  }[];
}

type Peak = 'tf32' | 'fp16' | 'bf16' | 'fp8';

/** A federated-learning request as it arrives (the GraphQL FederatedInput has this shape). */
export interface FederatedQuery extends SolveSettings {
  workload: WorkloadInput;
  clients: {
    id: string;
    gpu?: string | null;
    device?: {
      name?: string | null;
      peakTflops: { fp32: number } & Partial<Record<Peak, number | null>>;
      memoryBwGbps: number;
      memoryGb: number;
      tdpW?: number | null;
    } | null;
    samplesAvailable: number;
    uplinkMbps: number;
    downlinkMbps: number;
    availability?: number | null;
  }[];
  minSamplesPerRound: number;
  minSuccessProbability?: number | null;
  rounds?: number | null;
  minRoundsPerClient?: number | null;
  allowDropout: boolean;
  batchSizes?: number[] | null;
  maxLocalSteps: number;
  bytesPerParameter: number;
  /** The stack every client trains under; absent = eager PyTorch. */
  softwareStack?: SoftwareStack | null;
  /** How the attention cores run on every client; absent = predict's default. */
  attention?: AttentionImplementation | null;
}

/** Bounds of the coupled planners' inputs: beyond any real portfolio, small enough to stay interactive. */
export const COUPLED_LIMITS = {
  jobs: 200,
  clients: 1000,
  options: 60,
  months: 120,
  runsPerMonth: 10_000,
  localSteps: 1_000_000,
  timeLimitSeconds: 60,
  maxNodes: 64,
  timeSlots: 400,
  /** Rounds of a federated cycle planned together, and clients x rounds (the MIP grows with both). */
  rounds: 20,
  clientRounds: 2000,
  /** predictor evaluations one request may ask for (jobs x GPU types x precisions x batch sizes x layouts). */
  evaluations: 20_000_000,
} as const;

const unique = <T>(xs: T[]) => [...new Set(xs)];

/** A required list of entries with unique ids: at least one, at most `max`. */
function requireUniqueIds(
  field: string,
  entries: readonly { id: string }[],
  max: number,
  noun: string,
): void {
  if (
    !ids(
      field,
      entries.map((entry) => entry.id),
      max,
      'id',
    )
  )
    throw new InputError(field, `must list at least one ${noun}`);
}

/** A non-empty list of unique ids; `key` names the id inside each entry (jobs[3].id) or nothing (onDemandGpus[3]). */
function ids(
  field: string,
  list: string[] | undefined | null,
  max: number,
  key?: string,
): string[] | undefined {
  const l = nonEmpty(field, list, max);
  if (!l) return undefined;
  const at = (i: number) => (key ? `${field}[${i}].${key}` : `${field}[${i}]`);
  const seen = new Set<string>();
  l.forEach((id, i) => {
    if (!id.trim() || id.length > 200)
      throw new InputError(at(i), 'must be a non-empty id of at most 200 characters');
    if (seen.has(id)) throw new InputError(at(i), `duplicate id "${id.slice(0, 80)}"; ids must be unique`);
    seen.add(id);
  });
  return l;
}

function searchSpace(input: SearchSettings) {
  const precisions = unique(
    nonEmpty('precisions', input.precisions, PRECISIONS.length) ?? [...DEFAULT_SEARCH_PRECISIONS],
  );
  const gpusPerNode = unique(
    nonEmpty('gpusPerNode', input.gpusPerNode, LIMITS.gpusPerNode) ?? DEFAULT_GPUS_PER_NODE,
  );
  gpusPerNode.forEach((g, i) => integer(`gpusPerNode[${i}]`, g, 1, LIMITS.gpusPerNode));
  const maxNodes = integer('maxNodes', input.maxNodes, 1, COUPLED_LIMITS.maxNodes);
  const net =
    input.interNodeGbps == null
      ? undefined
      : inRange('interNodeGbps', input.interNodeGbps, FLOORS.gbps, LIMITS.gbps, { unit: 'Gbps' });
  const solve: SolveOptions = {
    timeLimitSeconds: inRange(
      'timeLimitSeconds',
      input.timeLimitSeconds,
      FLOORS.seconds,
      COUPLED_LIMITS.timeLimitSeconds,
      { unit: 'seconds' },
    ),
    solver: input.solver as SolveOptions['solver'],
    mipRelGap: finiteNumber('mipRelGap', input.mipRelGap, 0, 0.1),
  };
  return {
    precisions,
    precisionsByDefault: input.precisions == null,
    gpusPerNode,
    maxNodes,
    interNodeGbps: (g: GpuSpec) => net ?? defaultInterNodeGbps(g.id),
    interNodeGbpsStated: net !== undefined,
    ...(input.interNodeTransport ? { interNodeTransport: input.interNodeTransport } : {}),
    fp32UsesTf32: input.fp32UsesTf32,
    solve,
    efficiency: loadEfficiency(),
  };
}

/**
 * The learned correction the coupled planners time with, as `recommend` answers (with the user's
 * recorded runs as evidence, and a current refit on them where there is one), unless ANALYTICAL is
 * asked or no learned model loads (then its reason says why); and the user's runs either way.
 */
async function plannersLearned(
  choice: PredictorChoice | null | undefined,
): Promise<{ learned: LearnedState; user?: UserEvidence }> {
  const shipped = await learnedPredictor();
  // Recorded runs count with ANALYTICAL too (as measurements, and their peaks for memory), as in recommend.
  const user = await userEvidence(shipped);
  if (choice === 'ANALYTICAL')
    return { learned: { predictor: null, reason: 'as asked (predictor: ANALYTICAL)' }, user };
  return { learned: user?.learned ?? shipped, user };
}

/** The note saying which GPUs were fitted in the memory the user's runs had (none where no run says). */
function recordedMemoryNotes(gpus: readonly GpuSpec[], capacities: RecordedCapacities | undefined): string[] {
  const words = recordedCapacityWords(gpus, capacities);
  return words ? [words] : [];
}

/** What times a fleet's or a procurement's candidates (the plan's notes say which, and why). */
async function candidatePredictor(
  choice: PredictorChoice | null | undefined,
  eff: Efficiency,
): Promise<{ predictor: CandidatePredictor; capacities?: RecordedCapacities }> {
  const { learned, user } = await plannersLearned(choice);
  const measured = measuredWithRuns(user);
  return {
    predictor: learned.predictor
      ? correctedPredictor(learned.predictor, eff, user, measured)
      : analyticalPredictor(eff, learned.reason, user?.memory, measured),
    // What the user's runs had of their GPUs' memory: plans there are fitted in it, as recommend's.
    capacities: user?.capacities,
  };
}

/** A configuration of a coupled plan, with how to time it on your own GPUs (the harness's commands). */
export type Timed<T> = T & { harness: HarnessCommands };

/** A fleet plan whose every assignment says how to time it, and which predictor timed them. */
export interface TimedFleetPlan extends FleetPlan {
  assignments: Timed<FleetAssignment>[];
  predictor: string;
}

/** A federated client's part in a round, and how to time it on its device (null when it sits out). */
export type TimedClientPlan = ClientPlan & { harness: HarnessCommands | null };

/** A federated plan whose every participating client says how to time its configuration, and which predictor timed them. */
export interface TimedFederatedPlan extends Omit<FederatedPlan, 'clients' | 'schedule'> {
  clients: TimedClientPlan[];
  schedule: (Omit<RoundPlan, 'clients'> & { clients: TimedClientPlan[] })[];
  predictor: string;
}

/** A procurement plan whose every run configuration says how to time it, and which predictor timed them. */
export interface TimedProcurementPlan extends ProcurementPlan {
  allocations: (Allocation & { config: Timed<RunConfig> })[];
  predictor: string;
}

/**
 * What a plan's rentals say, as recommend says it of its first plan: instances paid for whole beyond
 * the GPUs a run uses, prices that are stale or undated, and the on-demand types no offer rents (left
 * out under objective COST).
 */
export function rentalNotes(
  rented: readonly {
    jobId: string;
    gpu: GpuSpec;
    gpusPerNode: number;
    nodes: number;
    offer: PlanOffer | null;
  }[],
  unoffered: readonly string[],
): string[] {
  const notes: string[] = [];
  const idle = rented.filter(
    (a) => a.offer && a.offer.billing === 'instance' && a.gpusPerNode < a.offer.gpusPerInstance,
  );
  if (idle.length)
    notes.push(
      `rented instances are paid for whole: ${idle
        .map(
          (a) =>
            `job ${a.jobId} uses ${a.gpusPerNode} of the ${a.offer!.gpusPerInstance} GPUs of each of its ${a.nodes} ${a.offer!.provider} ${a.offer!.instance}`,
        )
        .join('; ')}`,
    );
  // Instance offers only: a per-GPU price is the request's (or the server's price file's), given now.
  const stale = rented.filter((a) => a.offer?.billing === 'instance' && a.offer.priceStale);
  if (stale.length)
    notes.push(
      `warning: ${stale
        .map((a) => `job ${a.jobId}'s price ${priceAgeText(a.offer!)}`)
        .join(
          '; ',
        )}; prices older than ${STALE_PRICE_DAYS} days are flagged stale: check them before renting`,
    );
  if (unoffered.length)
    notes.push(
      `${unoffered.length} GPU types no offer rents were not rented (${unoffered.join(', ')}): give offers or prices for them`,
    );
  return notes;
}

/**
 * The inventory types a plan used and charged at gpus.csv's lowest market price, for want of a price
 * of their own: what owning them costs an hour is the user's to say.
 */
function marketPricedInventory(
  inventory: readonly InventoryItem[],
  prices: Record<string, number>,
  used: readonly { gpu: GpuSpec; onDemand: boolean }[],
): string[] {
  // The catalog's price is the server's price file's where it names the GPU: a price someone set.
  const filed = serverPriceOverrides().prices;
  const charged = inventory.filter(
    (it) =>
      inventoryPrice({ prices }, it).from === 'catalog' &&
      filed[it.gpu.id] === undefined &&
      it.gpu.priceUsdPerGpuHour !== null &&
      used.some((a) => !a.onDemand && a.gpu.id === it.gpu.id),
  );
  return charged.length
    ? [
        `the inventory's ${charged.map((it) => `${it.gpu.id} (at $${it.gpu.priceUsdPerGpuHour}/GPU-h)`).join(', ')} ${charged.length > 1 ? 'are' : 'is'} costed at the catalog's lowest market price for want of your own: give usdPerGpuHour, what an hour of your GPUs costs you`,
      ]
    : [];
}

/**
 * A coupled plan's configurations with the harness commands that time them: each as its job's zoo
 * model, on the network it was timed on (a rented run's offer's). (Fleet and procurement plans name
 * jobs by id.)
 */
function jobTimer(
  jobs: readonly {
    id: string;
    model: ModelDef;
    stack?: SoftwareStack;
    attention?: AttentionImplementation;
  }[],
  input: { channelsLast?: boolean | null },
) {
  const jobOf = new Map(jobs.map((j) => [j.id, j]));
  return <T extends NetworkedConfiguration>(jobId: string, c: T): Timed<T> => {
    const { model, stack, attention } = jobOf.get(jobId)!;
    return {
      ...c,
      harness: harnessCommands(c, {
        workload: { model: model.id },
        model,
        channelsLast: input.channelsLast,
        softwareStack: stack,
        attention,
      }),
    };
  };
}

/**
 * What every coupled plan says of its search's assumptions, as recommend says them: FP8 left out of
 * the default precisions, 16-bit convolutions costed on NCHW activations.
 */
function searchNotes(
  input: SolveSettings,
  models: ModelDef[],
  precisions: readonly Precision[],
  gpus: GpuSpec[],
): string[] {
  return [
    fp8NotSearchedNote(input.precisions, models, gpus),
    nchwNote(
      models,
      { channelsLast: input.channelsLast, fp32UsesTf32: input.fp32UsesTf32 },
      precisions,
      gpus,
    ),
  ].filter((n): n is string => n != null);
}

/** A job's workload, errors naming the job (jobs[2].workload.model). */
function workloadAt(prefix: string, w: WorkloadInput) {
  fullTrainingOnly(`${prefix}.fineTuning`, w, 'for fleets and procurement');
  return {
    model: modelById(`${prefix}.model`, w.model),
    samples: inRange(`${prefix}.samples`, w.samples, FLOORS.samples, LIMITS.samples),
  };
}

function batchList(field: string, list: number[] | undefined | null): number[] | undefined {
  const l = nonEmpty(field, list, LIMITS.listLength);
  l?.forEach((b, i) => integer(`${field}[${i}]`, b, 1, LIMITS.batchSize));
  return l && unique(l);
}

function guardSize(field: string, evaluations: number, narrow: string) {
  if (evaluations > COUPLED_LIMITS.evaluations)
    throw new InputError(
      field,
      `the request would evaluate about ${evaluations.toExponential(2)} configurations, more than the limit of ${COUPLED_LIMITS.evaluations.toExponential(0)}: ${narrow}`,
    );
}

/** Checks a fleet request, fills its defaults and solves it. */
export async function fleetPlan(input: FleetQuery): Promise<TimedFleetPlan> {
  const space = searchSpace(input);
  requireUniqueIds('jobs', input.jobs, COUPLED_LIMITS.jobs, 'job');
  const jobs: FleetJob[] = input.jobs.map((j, i) => {
    const w = workloadAt(`jobs[${i}].workload`, j.workload);
    const deadlineHours = inRange(`jobs[${i}].deadlineHours`, j.deadlineHours, FLOORS.hours, LIMITS.hours);
    const releaseHours = inRange(`jobs[${i}].releaseHours`, j.releaseHours ?? 0, FLOORS.hours, LIMITS.hours, {
      orZero: true,
    });
    if (releaseHours >= deadlineHours)
      throw new InputError(
        `jobs[${i}].releaseHours`,
        `must be before the job's deadline (${deadlineHours} h; got ${releaseHours})`,
      );
    return {
      id: j.id,
      model: w.model,
      samples: w.samples,
      releaseHours,
      deadlineHours,
      priority: inRange(`jobs[${i}].priority`, j.priority, FLOORS.priority, LIMITS.priority),
      batchSizes: batchList(`jobs[${i}].batchSizes`, j.batchSizes),
      ...(j.softwareStack ? { stack: j.softwareStack } : {}),
      ...(j.attention ? { attention: j.attention } : {}),
      ...(j.deadlineConfidence != null ? { deadlineConfidence: j.deadlineConfidence } : {}),
    };
  });
  if ((input.inventory ?? []).length > LIMITS.listLength)
    throw new InputError(
      'inventory',
      `lists at most ${LIMITS.listLength} entries (got ${input.inventory.length})`,
    );
  const seen = new Set<string>();
  const inventory: InventoryItem[] = (input.inventory ?? []).map((it, i) => {
    const gpu = gpuById(`inventory[${i}].gpu`, it.gpu);
    if (seen.has(gpu.id))
      throw new InputError(`inventory[${i}].gpu`, `${gpu.id} is listed twice; give one entry per GPU type`);
    seen.add(gpu.id);
    return {
      gpu,
      count: integer(`inventory[${i}].count`, it.count, 0, LIMITS.nodes * LIMITS.gpusPerNode),
      priceUsdPerGpuHour:
        it.usdPerGpuHour == null
          ? undefined
          : inRange(`inventory[${i}].usdPerGpuHour`, it.usdPerGpuHour, FLOORS.price, LIMITS.price, {
              orZero: true,
            }),
    };
  });
  const onDemandIds = ids('onDemandGpus', input.onDemandGpus, LIMITS.listLength);
  const onDemandGpus = onDemandIds
    ? onDemandIds.map((id, i) => gpuById(`onDemandGpus[${i}]`, id))
    : loadGpus();
  if (!input.allowOnDemand && inventory.every((it) => it.count === 0))
    throw new InputError(
      'inventory',
      'holds no GPU and allowOnDemand is off: list GPUs with a count, or allow on-demand rental',
    );
  const types = inventory.length + (input.allowOnDemand ? onDemandGpus.length : 0);
  const batches = jobs.reduce((s, j) => s + (j.batchSizes ?? j.model.batchSizes).length, 0);
  guardSize(
    'input',
    batches * types * space.precisions.length * space.gpusPerNode.length * space.maxNodes,
    'narrow jobs, onDemandGpus, precisions, batch sizes, gpusPerNode or maxNodes',
  );
  // Rented GPUs are whole instances of real offers, as recommend rents them; the inventory's GPUs
  // keep a per-GPU-hour price (their own, then `prices`, then the catalog's).
  const { prices, offers } = requestOffers(input, new Date());
  const { predictor, capacities } = await candidatePredictor(input.predictor, space.efficiency);
  const request: FleetRequest = {
    jobs,
    inventory: inventory.map((it) => ({ ...it, gpu: withRecordedCapacity(it.gpu, capacities) })),
    allowOnDemand: input.allowOnDemand,
    onDemandGpus: onDemandGpus.map((g) => withRecordedCapacity(g, capacities)),
    prices,
    offers,
    objective: input.objective,
    allowUnplaced: input.allowUnplaced,
    timeSlots: integer('timeSlots', input.timeSlots ?? 48, 1, COUPLED_LIMITS.timeSlots),
    deadlineConfidence: input.deadlineConfidence ?? false,
    precisions: space.precisions,
    precisionsByDefault: space.precisionsByDefault,
    gpusPerNodeChoices: space.gpusPerNode,
    maxNodes: space.maxNodes,
    interNodeGbps: space.interNodeGbps,
    interNodeGbpsStated: space.interNodeGbpsStated,
    ...(space.interNodeTransport ? { interNodeTransport: space.interNodeTransport } : {}),
    fp32UsesTf32: space.fp32UsesTf32,
    ...statedChannelsLast(input),
    solve: space.solve,
    efficiency: space.efficiency,
    predictor,
  };
  const plan = await planFleet(request);
  // The GPU types the request could plan on, as named (the notes say what was searched and fitted).
  const plannedGpus = [...inventory.map((it) => it.gpu), ...(input.allowOnDemand ? onDemandGpus : [])];
  plan.notes.push(
    predictor.note,
    // Only the types the request named: by default every catalog type is a candidate, most never offered.
    ...rentalNotes(
      plan.assignments,
      input.objective === 'COST' && onDemandIds ? unofferedTypes(request) : [],
    ),
    ...marketPricedInventory(inventory, prices, plan.assignments),
    ...searchNotes(
      input,
      jobs.map((j) => j.model),
      space.precisions,
      plannedGpus,
    ),
    ...recordedMemoryNotes(plannedGpus, capacities),
  );
  const timed = jobTimer(jobs, input);
  return { ...plan, predictor: predictor.name, assignments: plan.assignments.map((a) => timed(a.jobId, a)) };
}

/** Checks a procurement request, fills its defaults and solves it. */
export async function procurementPlan(input: ProcurementQuery): Promise<TimedProcurementPlan> {
  const space = searchSpace(input);
  const H = integer('horizonMonths', input.horizonMonths, 1, COUPLED_LIMITS.months);
  const hoursPerMonth = inRange('hoursPerMonth', input.hoursPerMonth, 1, 744);
  requireUniqueIds('jobs', input.jobs, COUPLED_LIMITS.jobs, 'job');
  const jobs: ProcurementJob[] = input.jobs.map((j, i) => {
    const w = workloadAt(`jobs[${i}].workload`, j.workload);
    let runsByMonth: number[];
    if (j.runsByMonth != null) {
      if (j.runsByMonth.length !== H)
        throw new InputError(
          `jobs[${i}].runsByMonth`,
          `must list one entry per month of the horizon (${H}; got ${j.runsByMonth.length})`,
        );
      runsByMonth = j.runsByMonth.map((x, m) =>
        integer(`jobs[${i}].runsByMonth[${m}]`, x, 0, COUPLED_LIMITS.runsPerMonth),
      );
    } else
      runsByMonth = new Array<number>(H).fill(
        integer(`jobs[${i}].runsPerMonth`, j.runsPerMonth, 0, COUPLED_LIMITS.runsPerMonth),
      );
    return {
      id: j.id,
      model: w.model,
      samples: w.samples,
      runsByMonth,
      deadlineHours:
        j.deadlineHours == null
          ? hoursPerMonth
          : inRange(`jobs[${i}].deadlineHours`, j.deadlineHours, FLOORS.hours, LIMITS.hours),
      batchSizes: batchList(`jobs[${i}].batchSizes`, j.batchSizes),
      ...(j.softwareStack ? { stack: j.softwareStack } : {}),
      ...(j.attention ? { attention: j.attention } : {}),
      ...(j.deadlineConfidence != null ? { deadlineConfidence: j.deadlineConfidence } : {}),
    };
  });
  const { offers } = requestOffers(input, new Date());
  if (!input.options?.length)
    throw new InputError('options', 'must list at least one GPU type to buy or rent');
  if (input.options.length > COUPLED_LIMITS.options)
    throw new InputError(
      'options',
      `lists at most ${COUPLED_LIMITS.options} entries (got ${input.options.length})`,
    );
  const seen = new Set<string>();
  const options: GpuOption[] = input.options.map((o, i) => {
    const gpu = gpuById(`options[${i}].gpu`, o.gpu);
    if (seen.has(gpu.id))
      throw new InputError(`options[${i}].gpu`, `${gpu.id} is listed twice; give one entry per GPU type`);
    seen.add(gpu.id);
    // Renting takes whole instances of an offer, as recommend rents (prices and the server's price
    // file price per GPU-hour instead); rentUsdPerGpuHour replaces every offer for this type.
    let rentOffers: Offer[] | undefined;
    if (o.rent) {
      rentOffers =
        o.rentUsdPerGpuHour != null
          ? [
              perGpuOffer(
                gpu.id,
                inRange(`options[${i}].rentUsdPerGpuHour`, o.rentUsdPerGpuHour, FLOORS.price, LIMITS.price),
                `the request (options[${i}].rentUsdPerGpuHour)`,
              ),
            ]
          : offers.filter((x) => x.gpuId === gpu.id);
      if (rentOffers.length === 0)
        throw new InputError(
          `options[${i}].rentUsdPerGpuHour`,
          `no offer rents ${gpu.id}${input.providers?.length ? ` from ${input.providers.join(', ').slice(0, 200)}` : ''}: give rentUsdPerGpuHour, an offer for it in offers, or set rent: false`,
        );
    }
    const rent = rentOffers ? Math.min(...rentOffers.map(usdPerGpuHourOf)) : null;
    const b = o.buy;
    const f = `options[${i}].buy`;
    const powerW =
      b == null
        ? null
        : b.powerW != null
          ? inRange(`${f}.powerW`, b.powerW, 1, 1e5, { orZero: true })
          : gpu.tdpW;
    if (b != null && powerW === null)
      throw new InputError(`${f}.powerW`, `the catalog has no TDP for ${gpu.id}; give powerW`);
    if (b == null && !o.rent)
      throw new InputError(
        `options[${i}]`,
        `${gpu.id} can be neither bought (no buy) nor rented (rent: false)`,
      );
    return {
      gpu,
      rentUsdPerGpuHour: rent,
      ...(rentOffers ? { rentOffers } : {}),
      buy:
        b == null
          ? null
          : {
              usdPerGpu: inRange(`${f}.usdPerGpu`, b.usdPerGpu, FLOORS.usd, 1e7, { orZero: true }),
              lifetimeMonths: inRange(`${f}.lifetimeMonths`, b.lifetimeMonths, 1, 600),
              powerW: powerW!,
              electricityUsdPerKwh: inRange(`${f}.electricityUsdPerKwh`, b.electricityUsdPerKwh, 1e-4, 100, {
                orZero: true,
              }),
              utilization: inRange(`${f}.utilization`, b.utilization, 0.01, 1),
              maxCount: b.maxCount == null ? undefined : integer(`${f}.maxCount`, b.maxCount, 0, 1e6),
              leadTimeMonths: integer(`${f}.leadTimeMonths`, b.leadTimeMonths ?? 0, 0, COUPLED_LIMITS.months),
            },
    };
  });
  const batches = jobs.reduce((s, j) => s + (j.batchSizes ?? j.model.batchSizes).length, 0);
  guardSize(
    'input',
    batches * options.length * space.precisions.length * space.gpusPerNode.length * space.maxNodes,
    'narrow jobs, options, precisions, batch sizes, gpusPerNode or maxNodes',
  );
  const { predictor, capacities } = await candidatePredictor(input.predictor, space.efficiency);
  const plan = await planProcurement({
    jobs,
    horizonMonths: H,
    deadlineConfidence: input.deadlineConfidence ?? false,
    hoursPerMonth,
    options: options.map((o) => ({ ...o, gpu: withRecordedCapacity(o.gpu, capacities) })),
    precisions: space.precisions,
    precisionsByDefault: space.precisionsByDefault,
    gpusPerNodeChoices: space.gpusPerNode,
    maxNodes: space.maxNodes,
    interNodeGbps: space.interNodeGbps,
    interNodeGbpsStated: space.interNodeGbpsStated,
    ...(space.interNodeTransport ? { interNodeTransport: space.interNodeTransport } : {}),
    fp32UsesTf32: space.fp32UsesTf32,
    ...statedChannelsLast(input),
    solve: space.solve,
    efficiency: space.efficiency,
    predictor,
  });
  const optionGpus = options.map((o) => o.gpu);
  plan.notes.push(
    predictor.note,
    ...searchNotes(
      input,
      jobs.map((j) => j.model),
      space.precisions,
      optionGpus,
    ),
    ...recordedMemoryNotes(optionGpus, capacities),
    ...rentalNotes(
      plan.allocations.filter((a) => !a.owned).map((a) => ({ jobId: a.jobId, ...a.config })),
      [],
    ),
  );
  const timed = jobTimer(jobs, input);
  return {
    ...plan,
    predictor: predictor.name,
    allocations: plan.allocations.map((a) => ({ ...a, config: timed(a.jobId, a.config) })),
  };
}

/** Checks a federated-learning request, fills its defaults and solves it. */
export async function federatedPlan(input: FederatedQuery): Promise<TimedFederatedPlan> {
  fullTrainingOnly('workload.fineTuning', input.workload, 'for federated rounds');
  const model = modelById('workload.model', input.workload.model);
  const totalSamples = inRange('workload.samples', input.workload.samples, FLOORS.samples, LIMITS.samples);
  const solve = searchSpace({ ...input, maxNodes: 1 }).solve;
  const precisions = unique(
    nonEmpty('precisions', input.precisions, PRECISIONS.length) ?? defaultSearchPrecisions(costOf(model)),
  );
  const batchSizes =
    batchList('batchSizes', input.batchSizes) ??
    unique([8, 16, 32, 64, ...model.batchSizes]).sort((a, b) => a - b);
  requireUniqueIds('clients', input.clients, COUPLED_LIMITS.clients, 'client');
  const clients: FederatedClient[] = input.clients.map((c, i) => {
    const f = `clients[${i}]`;
    if ((c.gpu == null) === (c.device == null))
      throw new InputError(`${f}.gpu`, 'give exactly one of gpu (a catalog id) and device (custom figures)');
    let gpu: GpuSpec;
    if (c.gpu != null) gpu = gpuById(`${f}.gpu`, c.gpu);
    else {
      const d = c.device!;
      const peak = (m: 'tf32' | 'fp16' | 'bf16' | 'fp8') =>
        d.peakTflops[m] == null
          ? null
          : inRange(`${f}.device.peakTflops.${m}`, d.peakTflops[m]!, FLOORS.tflops, 1e5, {
              unit: 'TFLOPS',
            });
      gpu = customGpuSpec({
        name: d.name ?? `custom:${c.id}`,
        peakTflops: {
          fp32: inRange(`${f}.device.peakTflops.fp32`, d.peakTflops.fp32, FLOORS.tflops, 1e5, {
            unit: 'TFLOPS',
          }),
          tf32: peak('tf32'),
          fp16: peak('fp16'),
          bf16: peak('bf16'),
          fp8: peak('fp8'),
        },
        memoryBwGbps: inRange(`${f}.device.memoryBwGbps`, d.memoryBwGbps, FLOORS.memoryBwGbps, 1e6, {
          unit: 'GB/s',
        }),
        memoryGb: inRange(`${f}.device.memoryGb`, d.memoryGb, FLOORS.memoryGb, 1e5, { unit: 'GB' }),
        tdpW: d.tdpW == null ? null : inRange(`${f}.device.tdpW`, d.tdpW, 1, 1e5, { unit: 'W' }),
      });
    }
    return {
      id: c.id,
      gpu,
      samplesAvailable: inRange(`${f}.samplesAvailable`, c.samplesAvailable, FLOORS.samples, LIMITS.samples, {
        orZero: true,
      }),
      uplinkMbps: inRange(`${f}.uplinkMbps`, c.uplinkMbps, FLOORS.mbps, 1e7, { unit: 'Mbps' }),
      downlinkMbps: inRange(`${f}.downlinkMbps`, c.downlinkMbps, FLOORS.mbps, 1e7, { unit: 'Mbps' }),
      availability: inRange(`${f}.availability`, c.availability ?? 1, 0.01, 1),
    };
  });
  const rounds = integer('rounds', input.rounds ?? 1, 1, COUPLED_LIMITS.rounds);
  guardSize(
    'input',
    clients.length * precisions.length * batchSizes.length,
    'narrow clients, precisions or batchSizes',
  );
  if (clients.length * rounds > COUPLED_LIMITS.clientRounds)
    throw new InputError(
      'rounds',
      `clients x rounds must be at most ${COUPLED_LIMITS.clientRounds} (got ${clients.length} x ${rounds}): plan fewer rounds together`,
    );
  const { learned, user } = await plannersLearned(input.predictor);
  const plan = await planFederatedRound({
    model,
    // A catalog GPU fitted in what the user's runs on it had (a device given by its figures has its own).
    clients: clients.map((c) => ({ ...c, gpu: withRecordedCapacity(c.gpu, user?.capacities) })),
    totalSamples,
    precisions,
    batchSizes,
    solve,
    minSamplesPerRound: inRange(
      'minSamplesPerRound',
      input.minSamplesPerRound,
      FLOORS.samples,
      LIMITS.samples,
    ),
    allowDropout: input.allowDropout,
    minSuccessProbability:
      input.minSuccessProbability == null
        ? undefined
        : inRange('minSuccessProbability', input.minSuccessProbability, 0.01, 1),
    rounds,
    minRoundsPerClient: integer('minRoundsPerClient', input.minRoundsPerClient ?? 0, 0, rounds),
    learned,
    ...(user ? { user } : {}),
    maxLocalSteps: integer('maxLocalSteps', input.maxLocalSteps, 1, COUPLED_LIMITS.localSteps),
    bytesPerParameter: inRange('bytesPerParameter', input.bytesPerParameter, 0.125, 16),
    fp32UsesTf32: input.fp32UsesTf32,
    ...statedChannelsLast(input),
    ...(input.softwareStack ? { stack: input.softwareStack } : {}),
    ...(input.attention ? { attention: input.attention } : {}),
    efficiency: loadEfficiency(),
  });
  if (learned.predictor)
    plan.notes.push(
      `steps on catalog GPUs timed by the learned correction of the analytical estimate (seeds/PREDICTOR_CARD.md)${user ? ` with ${user.runs.all.length} of your recorded runs as evidence` : ''}; on devices given by their figures by the analytical estimate, with the correction's P90`,
    );
  const clientGpus = clients.map((c) => c.gpu);
  plan.notes.push(
    ...searchNotes(input, [model], precisions, clientGpus),
    ...recordedMemoryNotes(clientGpus, user?.capacities),
  );
  // A client times its configuration on its own device: one GPU, its local steps' batch, precision
  // and recomputation. A device given by its figures has no catalog id a run could be recorded under.
  const gpuOf = new Map(clients.map((c) => [c.id, c.gpu]));
  const timed = (cp: ClientPlan): TimedClientPlan => {
    if (!cp.participates || cp.precision === null || cp.batchSizePerGpu === null)
      return { ...cp, harness: null };
    const gpu = gpuOf.get(cp.id)!;
    // (customGpuSpec marks a device built from its figures)
    if (gpu.vendor === 'custom')
      return {
        ...cp,
        harness: {
          commands: [],
          note: `${cp.id} is a device given by its figures, not a catalog GPU: a run on it cannot be recorded (recordMeasurements takes catalog GPUs); give the client as gpu where the catalog has it`,
        },
      };
    return {
      ...cp,
      harness: harnessCommands(
        {
          nodes: 1,
          gpusPerNode: 1,
          batchSizePerGpu: cp.batchSizePerGpu,
          gradAccumSteps: 1,
          precision: cp.precision,
          // One device: no data parallelism, the client's recomputation alone.
          parallelism: planParallelism(
            1,
            {
              tensorParallel: 1,
              pipelineParallel: 1,
              zeroStage: 0,
              recompute: (cp.recompute ?? 'none') as Recompute,
            },
            1,
          ),
          interNodeGbps: defaultInterNodeGbps(gpu.id),
          interNodeTransport: 'RDMA',
        },
        {
          workload: { model: model.id },
          model,
          channelsLast: input.channelsLast,
          softwareStack: input.softwareStack,
          attention: input.attention,
        },
      ),
    };
  };
  return {
    ...plan,
    predictor: learned.predictor?.name ?? 'analytical',
    clients: plan.clients.map(timed),
    schedule: plan.schedule.map((round) => ({ ...round, clients: round.clients.map(timed) })),
  };
}
