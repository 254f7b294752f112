// planFleet, planProcurement, planFederatedRound: the service checks, fills defaults and solves
// (service/coupled.ts); this file only maps its answers to the API's shapes.
import { Arg, Query, Resolver, UseMiddleware } from 'type-graphql';
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
import { federatedPlan, fleetPlan, procurementPlan } from '../service/coupled.js';
import { BadUserInput, FiniteAnswer } from './errors.js';
import { gpuView } from './views.js';
import { OffEventLoop } from './off-thread.js';

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
    const p = await fleetPlan(input);
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
    const p = await procurementPlan(input);
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
    const p = await federatedPlan(input);
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
