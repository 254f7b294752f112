// planFleet, planProcurement, planFederatedRound: validate the input (every bad value is a
// BAD_USER_INPUT naming the field and the range allowed), hand it to optimizer/{fleet,procurement,
// federated}.ts, and shape the answer. No optimization happens here. (Its request building has not
// moved to service/ yet, as predict's and recommend's have: see docs/architecture.md.)
import { Arg, Query, Resolver, UseMiddleware } from 'type-graphql';
import { planFleet, type FleetJob, type InventoryItem } from '../optimizer/fleet.js';
import { customGpuSpec, planFederatedRound, type FederatedClient } from '../optimizer/federated.js';
import { planProcurement, type GpuOption, type ProcurementJob } from '../optimizer/procurement.js';
import type { SolveOptions } from '../optimizer/milp/solver.js';
import { PRECISIONS, type GpuSpec, type Precision } from '../predictor/types.js';
import { defaultInterNodeGbps, loadEfficiency, loadGpus } from '../seeds/catalog.js';
import { learnedPredictor } from '../predictor/learned/model.js';
import {
  FederatedInput,
  FederatedPlan,
  FleetInput,
  FleetPlan,
  ProcurementInput,
  ProcurementPlan,
  type BlockerEnum,
  type FleetObjectiveEnum,
  type SolveStatusEnum,
} from '../schema/coupled.js';
import type { PriceInput, WorkloadInput } from '../schema/inputs.js';
import { gpuById, modelById } from '../service/lookup.js';
import { DEFAULT_GPUS_PER_NODE } from '../service/planning.js';
import { finiteNumber, FLOORS, inRange, integer, LIMITS, nonEmpty, priceList } from '../service/validate.js';
import { BadUserInput, badInput, FiniteAnswer } from './errors.js';
import { gpuView } from './views.js';
import { OffEventLoop } from './off-thread.js';

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
      throw badInput(at(i), 'must be a non-empty id of at most 200 characters');
    if (seen.has(id)) throw badInput(at(i), `duplicate id "${id.slice(0, 80)}"; ids must be unique`);
    seen.add(id);
  });
  return l;
}

function searchSpace(input: {
  precisions?: Precision[];
  gpusPerNode?: number[];
  maxNodes: number;
  interNodeGbps?: number;
  fp32UsesTf32: boolean;
  timeLimitSeconds: number;
  solver: string;
  mipRelGap: number;
}) {
  const precisions = unique(nonEmpty('precisions', input.precisions, PRECISIONS.length) ?? [...PRECISIONS]);
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
    gpusPerNode,
    maxNodes,
    interNodeGbps: (g: GpuSpec) => net ?? defaultInterNodeGbps(g.id),
    fp32UsesTf32: input.fp32UsesTf32,
    solve,
    efficiency: loadEfficiency(),
  };
}

/** A job's workload, errors naming the job (jobs[2].workload.model). */
function workloadAt(prefix: string, w: WorkloadInput) {
  return {
    model: modelById(`${prefix}.model`, w.model),
    samples: inRange(`${prefix}.samples`, w.samples, FLOORS.samples, LIMITS.samples),
  };
}

function priceMap(field: string, prices: PriceInput[] | undefined | null): Record<string, number> {
  return priceList(field, prices, (f, id) => gpuById(f, id));
}

function batchList(field: string, list: number[] | undefined | null): number[] | undefined {
  const l = nonEmpty(field, list, LIMITS.listLength);
  l?.forEach((b, i) => integer(`${field}[${i}]`, b, 1, LIMITS.batchSize));
  return l && unique(l);
}

function guardSize(field: string, evaluations: number, narrow: string) {
  if (evaluations > COUPLED_LIMITS.evaluations)
    throw badInput(
      field,
      `the request would evaluate about ${evaluations.toExponential(2)} configurations, more than the limit of ${COUPLED_LIMITS.evaluations.toExponential(0)}: ${narrow}`,
    );
}

const sizeView = (s: {
  candidates?: number;
  keptCandidates?: number;
  options?: number;
  keptOptions?: number;
  variables: number;
  integers: number;
  constraints: number;
  nonzeros: number;
}) => ({
  candidates: s.candidates ?? s.options ?? 0,
  keptCandidates: s.keptCandidates ?? s.keptOptions ?? 0,
  variables: s.variables,
  integers: s.integers,
  constraints: s.constraints,
  nonzeros: s.nonzeros,
});

@Resolver()
@UseMiddleware(BadUserInput, FiniteAnswer, OffEventLoop)
export class CoupledResolver {
  @Query(() => FleetPlan, {
    description:
      'One configuration per job so that the jobs, running at the same time, never use more GPUs of a type than the inventory holds, every deadline is met, and total cost or the longest job is minimal. A mixed-integer program, solved and verified.',
  })
  async planFleet(
    @Arg('input', () => FleetInput, { description: 'The jobs, the inventory and the objective.' })
    input: FleetInput,
  ): Promise<FleetPlan> {
    const space = searchSpace(input);
    if (
      !ids(
        'jobs',
        input.jobs.map((j) => j.id),
        COUPLED_LIMITS.jobs,
        'id',
      )
    )
      throw badInput('jobs', 'must list at least one job');
    const jobs: FleetJob[] = input.jobs.map((j, i) => {
      const w = workloadAt(`jobs[${i}].workload`, j.workload);
      const deadlineHours = inRange(`jobs[${i}].deadlineHours`, j.deadlineHours, FLOORS.hours, LIMITS.hours);
      const releaseHours = inRange(
        `jobs[${i}].releaseHours`,
        j.releaseHours ?? 0,
        FLOORS.hours,
        LIMITS.hours,
        {
          orZero: true,
        },
      );
      if (releaseHours >= deadlineHours)
        throw badInput(
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
      };
    });
    if ((input.inventory ?? []).length > LIMITS.listLength)
      throw badInput(
        'inventory',
        `lists at most ${LIMITS.listLength} entries (got ${input.inventory.length})`,
      );
    const seen = new Set<string>();
    const inventory: InventoryItem[] = (input.inventory ?? []).map((it, i) => {
      const gpu = gpuById(`inventory[${i}].gpu`, it.gpu);
      if (seen.has(gpu.id))
        throw badInput(`inventory[${i}].gpu`, `${gpu.id} is listed twice; give one entry per GPU type`);
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
      throw badInput(
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
    const p = await planFleet({
      jobs,
      inventory,
      allowOnDemand: input.allowOnDemand,
      onDemandGpus,
      prices: priceMap('prices', input.prices),
      objective: input.objective,
      allowUnplaced: input.allowUnplaced,
      timeSlots: integer('timeSlots', input.timeSlots ?? 48, 1, COUPLED_LIMITS.timeSlots),
      precisions: space.precisions,
      gpusPerNodeChoices: space.gpusPerNode,
      maxNodes: space.maxNodes,
      interNodeGbps: space.interNodeGbps,
      fp32UsesTf32: space.fp32UsesTf32,
      solve: space.solve,
      efficiency: space.efficiency,
    });
    return {
      ...p,
      status: p.status as SolveStatusEnum,
      objective: p.objective as FleetObjectiveEnum,
      modelSize: sizeView(p.stats),
      assignments: p.assignments.map((a) => ({ ...a, gpu: gpuView(a.gpu), totalGpus: a.gpus })),
      gpuUsage: p.gpuUsage.map((u) => ({ ...u, gpu: gpuView(u.gpu) })),
      unplaced: p.unplaced.map((u) => ({ ...u, reason: u.reason as BlockerEnum })),
    };
  }

  @Query(() => ProcurementPlan, {
    description:
      'How many GPUs of each type to buy, and which runs of a recurring portfolio go to owned and which to rented GPUs, for the least total cost of ownership over a horizon; with the cost split and the buy-versus-rent break-even per GPU type.',
  })
  async planProcurement(
    @Arg('input', () => ProcurementInput, {
      description: 'The recurring jobs, the horizon and the buy/rent options.',
    })
    input: ProcurementInput,
  ): Promise<ProcurementPlan> {
    const space = searchSpace(input);
    const H = integer('horizonMonths', input.horizonMonths, 1, COUPLED_LIMITS.months);
    const hoursPerMonth = inRange('hoursPerMonth', input.hoursPerMonth, 1, 744);
    if (
      !ids(
        'jobs',
        input.jobs.map((j) => j.id),
        COUPLED_LIMITS.jobs,
        'id',
      )
    )
      throw badInput('jobs', 'must list at least one job');
    const jobs: ProcurementJob[] = input.jobs.map((j, i) => {
      const w = workloadAt(`jobs[${i}].workload`, j.workload);
      let runsByMonth: number[];
      if (j.runsByMonth != null) {
        if (j.runsByMonth.length !== H)
          throw badInput(
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
      };
    });
    const prices = priceMap('prices', input.prices);
    if (!input.options?.length) throw badInput('options', 'must list at least one GPU type to buy or rent');
    if (input.options.length > COUPLED_LIMITS.options)
      throw badInput(
        'options',
        `lists at most ${COUPLED_LIMITS.options} entries (got ${input.options.length})`,
      );
    const seen = new Set<string>();
    const options: GpuOption[] = input.options.map((o, i) => {
      const gpu = gpuById(`options[${i}].gpu`, o.gpu);
      if (seen.has(gpu.id))
        throw badInput(`options[${i}].gpu`, `${gpu.id} is listed twice; give one entry per GPU type`);
      seen.add(gpu.id);
      let rent: number | null = null;
      if (o.rent) {
        rent =
          o.rentUsdPerGpuHour != null
            ? inRange(`options[${i}].rentUsdPerGpuHour`, o.rentUsdPerGpuHour, FLOORS.price, LIMITS.price)
            : (prices[gpu.id] ?? gpu.priceUsdPerGpuHour);
        if (rent === null)
          throw badInput(
            `options[${i}].rentUsdPerGpuHour`,
            `the catalog has no price for ${gpu.id}; give rentUsdPerGpuHour, or set rent: false`,
          );
      }
      const b = o.buy;
      const f = `options[${i}].buy`;
      const powerW =
        b == null
          ? null
          : b.powerW != null
            ? inRange(`${f}.powerW`, b.powerW, 1, 1e5, { orZero: true })
            : gpu.tdpW;
      if (b != null && powerW === null)
        throw badInput(`${f}.powerW`, `the catalog has no TDP for ${gpu.id}; give powerW`);
      if (b == null && !o.rent)
        throw badInput(`options[${i}]`, `${gpu.id} can be neither bought (no buy) nor rented (rent: false)`);
      return {
        gpu,
        rentUsdPerGpuHour: rent,
        buy:
          b == null
            ? null
            : {
                usdPerGpu: inRange(`${f}.usdPerGpu`, b.usdPerGpu, FLOORS.usd, 1e7, { orZero: true }),
                lifetimeMonths: inRange(`${f}.lifetimeMonths`, b.lifetimeMonths, 1, 600),
                powerW: powerW!,
                electricityUsdPerKwh: inRange(
                  `${f}.electricityUsdPerKwh`,
                  b.electricityUsdPerKwh,
                  1e-4,
                  100,
                  {
                    orZero: true,
                  },
                ),
                utilization: inRange(`${f}.utilization`, b.utilization, 0.01, 1),
                maxCount: b.maxCount == null ? undefined : integer(`${f}.maxCount`, b.maxCount, 0, 1e6),
                leadTimeMonths: integer(
                  `${f}.leadTimeMonths`,
                  b.leadTimeMonths ?? 0,
                  0,
                  COUPLED_LIMITS.months,
                ),
              },
      };
    });
    const batches = jobs.reduce((s, j) => s + (j.batchSizes ?? j.model.batchSizes).length, 0);
    guardSize(
      'input',
      batches * options.length * space.precisions.length * space.gpusPerNode.length * space.maxNodes,
      'narrow jobs, options, precisions, batch sizes, gpusPerNode or maxNodes',
    );
    const p = await planProcurement({
      jobs,
      horizonMonths: H,
      hoursPerMonth,
      options,
      precisions: space.precisions,
      gpusPerNodeChoices: space.gpusPerNode,
      maxNodes: space.maxNodes,
      interNodeGbps: space.interNodeGbps,
      fp32UsesTf32: space.fp32UsesTf32,
      solve: space.solve,
      efficiency: space.efficiency,
    });
    return {
      ...p,
      status: p.status as SolveStatusEnum,
      modelSize: sizeView(p.stats),
      cost:
        p.totalUsd === null
          ? null
          : {
              capitalUsd: p.capitalUsd!,
              powerUsd: p.powerUsd!,
              rentalUsd: p.rentalUsd!,
              totalUsd: p.totalUsd,
              allRentUsd: p.allRentUsd,
            },
      orders: p.orders.map((x) => ({ ...x, gpu: gpuView(x.gpu) })),
      purchases: p.purchases.map((x) => ({ ...x, gpu: gpuView(x.gpu) })),
      months: p.months.map((x) => ({
        ...x,
        ownedGpus: x.ownedGpus.map((g) => ({ ...g, gpu: gpuView(g.gpu) })),
      })),
      allocations: p.allocations.map((a) => ({
        ...a,
        config: { ...a.config, gpu: gpuView(a.config.gpu), totalGpus: a.config.gpus },
      })),
      breakEven: p.breakEven.map((b) => ({ ...b, gpu: gpuView(b.gpu) })),
      unplaced: p.unplaced.map((u) => ({ ...u, reason: u.reason as BlockerEnum })),
    };
  }

  @Query(() => FederatedPlan, {
    description:
      "One federated-learning round: per client a batch size, precision and number of local steps so that the round's wall time (slowest client's download + compute + upload) is minimal, with at least minSamplesPerRound samples and every client within its memory and data.",
  })
  async planFederatedRound(
    @Arg('input', () => FederatedInput, {
      description: 'The model, the clients and the samples a round must train.',
    })
    input: FederatedInput,
  ): Promise<FederatedPlan> {
    const model = modelById('workload.model', input.workload.model);
    const totalSamples = inRange('workload.samples', input.workload.samples, FLOORS.samples, LIMITS.samples);
    const solve = searchSpace({ ...input, maxNodes: 1 }).solve;
    const precisions = unique(nonEmpty('precisions', input.precisions, PRECISIONS.length) ?? [...PRECISIONS]);
    const batchSizes =
      batchList('batchSizes', input.batchSizes) ??
      unique([8, 16, 32, 64, ...model.batchSizes]).sort((a, b) => a - b);
    if (
      !ids(
        'clients',
        input.clients.map((c) => c.id),
        COUPLED_LIMITS.clients,
        'id',
      )
    )
      throw badInput('clients', 'must list at least one client');
    const clients: FederatedClient[] = input.clients.map((c, i) => {
      const f = `clients[${i}]`;
      if ((c.gpu == null) === (c.device == null))
        throw badInput(`${f}.gpu`, 'give exactly one of gpu (a catalog id) and device (custom figures)');
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
        samplesAvailable: inRange(
          `${f}.samplesAvailable`,
          c.samplesAvailable,
          FLOORS.samples,
          LIMITS.samples,
          {
            orZero: true,
          },
        ),
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
      throw badInput(
        'rounds',
        `clients x rounds must be at most ${COUPLED_LIMITS.clientRounds} (got ${clients.length} x ${rounds}): plan fewer rounds together`,
      );
    const p = await planFederatedRound({
      model,
      clients,
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
      learned: await learnedPredictor(),
      maxLocalSteps: integer('maxLocalSteps', input.maxLocalSteps, 1, COUPLED_LIMITS.localSteps),
      bytesPerParameter: inRange('bytesPerParameter', input.bytesPerParameter, 0.125, 16),
      fp32UsesTf32: input.fp32UsesTf32,
      efficiency: loadEfficiency(),
    });
    return {
      ...p,
      status: p.status as SolveStatusEnum,
      modelSize: sizeView(p.stats),
      clients: p.clients.map((c) => ({ ...c, memoryGbPerGpu: c.memoryGb })),
      schedule: p.schedule.map((x) => ({
        ...x,
        clients: x.clients.map((c) => ({ ...c, memoryGbPerGpu: c.memoryGb })),
      })),
      infeasible: p.infeasible.map((x) => ({ ...x, reason: x.reason as BlockerEnum })),
    };
  }
}
