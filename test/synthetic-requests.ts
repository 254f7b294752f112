// Synthetic coupled-planner requests of a chosen size: priced catalog GPUs and zoo models, taken in
// catalog order and cycled, each job's work and runs growing with its index, every option bought at
// one price. What a size test or bench of planFederatedRound and planProcurement varies is the size
// alone (test/solver-limits.test.ts, bench/planner-limits.ts, bench/coupled-predictor.ts).
import { loadGpus } from '../seeds/catalog.js';
import { loadZoo } from '../predictor/zoo/index.js';

/** The first `n` catalog GPUs with a price (no TPUs: they train in other frameworks' units). */
export const pricedGpuIds = (n: number): string[] =>
  loadGpus()
    .filter((g) => g.priceUsdPerGpuHour != null && !g.id.startsWith('TPU'))
    .slice(0, n)
    .map((g) => g.id);

/** A ProcurementInput: `jobs` recurring jobs over the zoo's first 20 models, `options` GPU types to buy. */
export function syntheticProcurement(o: {
  jobs: number;
  options: number;
  months: number;
  timeLimitSeconds: number;
}) {
  const models = loadZoo()
    .map((m) => m.id)
    .slice(0, 20);
  return {
    horizonMonths: o.months,
    timeLimitSeconds: o.timeLimitSeconds,
    jobs: Array.from({ length: o.jobs }, (_, i) => ({
      id: `j${i}`,
      workload: { model: models[i % models.length], samples: 1e7 * (1 + i) },
      runsPerMonth: 1 + (i % 7),
      deadlineHours: 48,
    })),
    options: pricedGpuIds(o.options).map((gpu) => ({
      gpu,
      buy: { usdPerGpu: 10000, powerW: 500, lifetimeMonths: 48, electricityUsdPerKwh: 0.1, utilization: 0.8 },
    })),
  };
}

/** A FederatedInput: `clients` ResNet-50 clients on the first 20 priced GPUs, links and data varying by index. */
export function syntheticFederated(o: { clients: number; timeLimitSeconds: number }) {
  const gpus = pricedGpuIds(20);
  return {
    workload: { model: 'resnet50_v1.5', samples: 1e8 },
    timeLimitSeconds: o.timeLimitSeconds,
    minSamplesPerRound: 20_000,
    clients: Array.from({ length: o.clients }, (_, i) => ({
      id: `c${i}`,
      gpu: gpus[i % gpus.length],
      samplesAvailable: 1000 + i,
      uplinkMbps: 10 + (i % 50),
      downlinkMbps: 50 + (i % 100),
    })),
  };
}
