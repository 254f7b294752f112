// HiGHS versus javascript-lp-solver on the three coupled-planning MIPs (fleet, procurement,
// federated round) at three sizes each. Both solvers get the same model (built from the predictor's
// candidates, pruned); each answer is checked with verify.ts; a solver that overruns its limit is
// terminated by the worker watchdog. Prints a markdown table.
//
// Run: npx tsx bench/solvers.ts        (BENCH_TIME_LIMIT=seconds per solve, default 30; about 5 minutes)
import { fleetCandidates, fleetMip, type FleetRequest } from '../optimizer/fleet.js';
import {
  clientOptions,
  customGpuSpec,
  planFederatedRound,
  roundModel,
  transferSeconds,
  type FederatedClient,
  type FederatedRequest,
} from '../optimizer/federated.js';
import { modelSize, objectiveOf, type MipModel, type MipStart } from '../optimizer/milp/model.js';
import { runBackend, shutdownSolverWorkers } from '../optimizer/milp/solver.js';
import { verifyMipSolution } from '../optimizer/milp/verify.js';
import { procurementMip, type ProcurementRequest } from '../optimizer/procurement.js';
import { getModel } from '../predictor/zoo/index.js';
import type { GpuSpec } from '../predictor/types.js';
import { defaultInterNodeGbps, getGpu, loadEfficiency } from '../seeds/catalog.js';

const LIMIT = Number(process.env.BENCH_TIME_LIMIT ?? 30);
/** Which families to run (comma-separated: fleet, fleet-queued, procurement, federated, federated-dropouts); default all. */
const FAMILIES = new Set(
  (process.env.BENCH_FAMILIES ?? 'fleet,fleet-queued,procurement,federated,federated-dropouts').split(','),
);
const gpu = (id: string) => getGpu(id)!;
function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

// ------------------------------------------------------------------ instances

const FLEET_MODELS = [
  'resnet50_v1.5',
  'bert_large_squad',
  'gpt2_124m',
  'gpt2_355m',
  'vit_b16',
  'transformer_big_wmt',
  'efficientnet_b0',
  'bert_base_squad',
];
const FLEET_GPUS = ['A100-SXM4-80GB', 'H100-SXM5-80GB', 'V100-SXM2-32GB', 'L4'];

/**
 * `share`: the inventory holds this share of what the jobs' cheapest plans take at once; `slack`:
 * deadlines are release + fastest plan x a factor drawn from this range.
 */
async function fleet(
  n: number,
  objective: FleetRequest['objective'],
  seed: number,
  share = 0.6,
  slack: [number, number] = [1.5, 6],
): Promise<FleetRequest> {
  const r = rng(seed);
  const base: FleetRequest = {
    jobs: Array.from({ length: n }, (_, j) => {
      const model = getModel(FLEET_MODELS[Math.floor(r() * FLEET_MODELS.length)])!;
      const perHour =
        model.unitsPerBatchElement *
        (model.id.startsWith('gpt2_355') ? 60 : model.id.startsWith('bert_large') ? 120 : 800) *
        3600;
      return {
        id: `job${j}`,
        model,
        samples: Math.round(perHour * (2 + 30 * r())),
        releaseHours: 0,
        deadlineHours: 1e6,
        priority: 1,
      };
    }),
    inventory: FLEET_GPUS.map((id) => ({ gpu: gpu(id), count: 16 })),
    allowOnDemand: false,
    onDemandGpus: [],
    prices: {},
    objective,
    allowUnplaced: false,
    precisions: ['AMP_FP16', 'AMP_BF16', 'FP32'],
    gpusPerNodeChoices: [1, 2, 4, 8],
    maxNodes: 2,
    interNodeGbps: (g) => defaultInterNodeGbps(g.id),
    solve: { timeLimitSeconds: LIMIT },
    efficiency: loadEfficiency(),
  };
  // Releases spread over the first 8 hours, deadlines `slack` x each job's fastest plan after its
  // release; then an inventory of `share` of what the jobs' cheapest plans would take of each type
  // at once, so that the jobs compete for it and some have to queue.
  const fastest = (await fleetCandidates(base)).all.map((cs) => Math.min(...cs.map((c) => c.totalHours)));
  const timed = {
    ...base,
    jobs: base.jobs.map((j, i) => {
      const releaseHours = Math.round(8 * r() * 4) / 4;
      const factor = slack[0] + (slack[1] - slack[0]) * r();
      return { ...j, releaseHours, deadlineHours: releaseHours + fastest[i] * factor };
    }),
  };
  const need = new Map<string, number>(),
    floor = new Map<string, number>();
  for (const cs of (await fleetCandidates(timed)).all) {
    const c = cs.reduce((a, b) => (a.costUsd! <= b.costUsd! ? a : b));
    need.set(c.gpu.id, (need.get(c.gpu.id) ?? 0) + c.gpus);
    // A plan that surely fits: each job on a random type at its fewest GPUs there.
    const types = [...new Set(cs.map((x) => x.gpu.id))];
    const t = types[Math.floor(r() * types.length)];
    floor.set(t, (floor.get(t) ?? 0) + Math.min(...cs.filter((x) => x.gpu.id === t).map((x) => x.gpus)));
  }
  return {
    ...timed,
    inventory: FLEET_GPUS.map((id) => ({
      gpu: gpu(id),
      count: Math.max(floor.get(id) ?? 0, Math.round(share * (need.get(id) ?? 0))),
    })).filter((i) => i.count > 0),
  };
}

function procurement(n: number, seed: number): ProcurementRequest {
  const r = rng(seed);
  const H = 24;
  return {
    jobs: Array.from({ length: n }, (_, j) => {
      const model = getModel(FLEET_MODELS[Math.floor(r() * FLEET_MODELS.length)])!;
      const perHour =
        model.unitsPerBatchElement *
        (model.id.startsWith('gpt2_355') ? 60 : model.id.startsWith('bert_large') ? 120 : 800) *
        3600;
      const runs = 1 + Math.floor(r() * 8);
      const growth = 1 + Math.floor(r() * 3);
      return {
        id: `job${j}`,
        model,
        samples: Math.round(perHour * (2 + 30 * r())),
        runsByMonth: Array.from({ length: H }, (_, m) => (m < 12 ? runs : runs * growth)),
        deadlineHours: 72,
      };
    }),
    horizonMonths: H,
    hoursPerMonth: 730,
    options: [
      {
        gpu: gpu('A100-SXM4-80GB'),
        buy: {
          usdPerGpu: 15000,
          lifetimeMonths: 48,
          powerW: 400,
          electricityUsdPerKwh: 0.12,
          utilization: 0.85,
        },
        rentUsdPerGpuHour: 1.8,
      },
      {
        gpu: gpu('H100-SXM5-80GB'),
        buy: {
          usdPerGpu: 30000,
          lifetimeMonths: 48,
          powerW: 700,
          electricityUsdPerKwh: 0.12,
          utilization: 0.85,
        },
        rentUsdPerGpuHour: 3.0,
      },
      {
        gpu: gpu('L40S'),
        buy: {
          usdPerGpu: 9000,
          lifetimeMonths: 48,
          powerW: 350,
          electricityUsdPerKwh: 0.12,
          utilization: 0.85,
        },
        rentUsdPerGpuHour: 1.1,
      },
      { gpu: gpu('L4'), buy: null, rentUsdPerGpuHour: 0.7 },
    ],
    precisions: ['AMP_FP16', 'AMP_BF16', 'FP32'],
    gpusPerNodeChoices: [1, 2, 4, 8],
    maxNodes: 2,
    interNodeGbps: (g) => defaultInterNodeGbps(g.id),
    solve: { timeLimitSeconds: LIMIT },
    efficiency: loadEfficiency(),
  };
}

function federated(n: number, seed: number): FederatedRequest {
  const r = rng(seed);
  const ids = ['T4', 'L4', 'A10G', 'RTX-3090', 'RTX-4090', 'RTX-3070', 'A100-PCIE-40GB', 'V100-PCIE-16GB'];
  const orin: GpuSpec = customGpuSpec({
    name: 'jetson-orin',
    peakTflops: { fp32: 5.3, fp16: 42 },
    memoryBwGbps: 204,
    memoryGb: 32,
  });
  const clients: FederatedClient[] = Array.from({ length: n }, (_, i) => ({
    id: `c${i}`,
    gpu: i % 5 === 4 ? orin : gpu(ids[Math.floor(r() * ids.length)]),
    samplesAvailable: Math.round(2000 + r() * 20000),
    uplinkMbps: 10 + r() * 200,
    downlinkMbps: 50 + r() * 500,
  }));
  const total = clients.reduce((s, c) => s + c.samplesAvailable, 0);
  return {
    model: getModel('resnet50_v1.5')!,
    clients,
    minSamplesPerRound: Math.round(0.3 * total),
    allowDropout: true,
    precisions: ['FP32', 'AMP_FP16', 'AMP_BF16', 'FP16'],
    batchSizes: [16, 32, 64, 128],
    maxLocalSteps: 1000,
    bytesPerParameter: 4,
    solve: { timeLimitSeconds: LIMIT },
    efficiency: loadEfficiency(),
  };
}

/** The same clients with availabilities 0.6-1, a 0.9 success probability, a cycle with a participation floor. */
function federatedUnderDropouts(n: number, seed: number, rounds: number): FederatedRequest {
  const base = federated(n, seed);
  const r = rng(seed + 1);
  return {
    ...base,
    clients: base.clients.map((c) => ({ ...c, availability: Math.round((0.6 + 0.4 * r()) * 100) / 100 })),
    minSamplesPerRound: Math.round(base.minSamplesPerRound / 2),
    minSuccessProbability: 0.9,
    rounds,
    minRoundsPerClient: rounds > 1 ? 1 : 0,
  };
}

// ------------------------------------------------------------------ running

interface Row {
  family: string;
  size: string;
  model: MipModel;
  candidates: string;
  start?: MipStart;
  relGap?: number;
}

async function measure(row: Row) {
  const sz = modelSize(row.model);
  const runs: [string, 'highs' | 'javascript-lp-solver', MipStart | undefined, number][] = [
    ['HiGHS', 'highs', undefined, 0],
  ];
  if (row.start) runs.push(['HiGHS + warm start', 'highs', row.start, 0]);
  if (row.relGap)
    runs.push([`HiGHS + warm start, mip_rel_gap ${row.relGap}`, 'highs', row.start, row.relGap]);
  runs.push(['javascript-lp-solver', 'javascript-lp-solver', undefined, 0]);
  for (const [label, backend, start, gap] of runs) {
    const t0 = performance.now();
    const { result: r, note } = await runBackend(backend, row.model, LIMIT, gap, start);
    const ms = performance.now() - t0;
    let status: string,
      objective = '',
      verified = '';
    if (!r) {
      status = 'killed';
      verified = note ?? '';
    } else {
      const gapText =
        r.bestBound !== null && r.objective !== null
          ? ` (gap ${(Math.abs(r.objective - r.bestBound) / Math.max(1e-9, Math.abs(r.objective))).toExponential(1)})`
          : '';
      status =
        r.status === 'optimal'
          ? `optimal${gap ? gapText : ''}`
          : r.status === 'feasible'
            ? `feasible${gapText}`
            : r.status === 'no-solution'
              ? `no solution (${r.message})`
              : r.status;
      if (r.values) {
        const v = verifyMipSolution(row.model, r.values, r.objective);
        verified = v.length ? `REJECTED: ${v.length} violations (${v[0].kind} ${v[0].name})` : 'yes';
        objective = objectiveOf(row.model, r.values).toPrecision(7);
      }
    }
    console.log(
      `| ${row.family} | ${row.size} | ${sz.variables} / ${sz.integers} / ${sz.constraints} | ${row.candidates} | ${label} | ${status} | ${ms.toFixed(0)} | ${objective} | ${verified} |`,
    );
  }
}

// Start the worker and load HiGHS before timing anything.
{
  const { MipBuilder } = await import('../optimizer/milp/model.js');
  const b = new MipBuilder('warm-up');
  b.addVar('x', 'binary', 0, 1, 1);
  await runBackend('highs', b.build(), 5, 0, undefined);
  await runBackend('javascript-lp-solver', b.build(), 5, 0, undefined);
}
console.log(
  `Coupled-planning MIPs: HiGHS 1.15.3 vs javascript-lp-solver 1.0.3 {presolve: false, useMIRCuts: true}; ${LIMIT} s limit per solve; node ${process.version}; times include the worker round trip.`,
);
console.log('');
console.log(
  '| family | size | vars / ints / rows | candidates (kept) | solver | status | time (ms) | objective | verified |',
);
console.log('| --- | --- | --- | --- | --- | --- | ---: | ---: | --- |');
for (const n of FAMILIES.has('fleet') ? [5, 30, 100] : [])
  for (const objective of ['COST', 'MAKESPAN', 'WEIGHTED_COMPLETION'] as const) {
    const m = await fleetMip(await fleet(n, objective, 100 + n));
    await measure({
      family: `fleet ${objective.toLowerCase().replace('_', ' ')}`,
      size: `${n} jobs, ${m.grid.slotHours.toPrecision(3)} h slots`,
      model: m.model,
      candidates: `${m.candidates} (${m.kept})`,
    });
  }
// Queued fleets: a quarter of the GPUs the jobs would take at once, looser deadlines.
for (const n of FAMILIES.has('fleet-queued') ? [20, 50] : [])
  for (const objective of ['COST', 'MAKESPAN', 'WEIGHTED_COMPLETION'] as const) {
    const m = await fleetMip(await fleet(n, objective, 400 + n, 0.25, [3, 12]));
    await measure({
      family: `fleet queued ${objective.toLowerCase().replace('_', ' ')}`,
      size: `${n} jobs, ${m.grid.slotHours.toPrecision(3)} h slots`,
      model: m.model,
      candidates: `${m.candidates} (${m.kept})`,
    });
  }
for (const n of FAMILIES.has('procurement') ? [5, 20, 50] : []) {
  const m = await procurementMip(procurement(n, 200 + n));
  await measure({
    family: 'procurement',
    size: `${n} jobs, 24 months`,
    model: m.model,
    candidates: `${m.candidates} (${m.kept})`,
    start: m.start,
    relGap: 1e-6,
  });
}
for (const n of FAMILIES.has('federated') ? [10, 50, 200] : []) {
  const r = federated(n, 300 + n);
  const { all, kept } = await clientOptions(r);
  const { model, warm } = roundModel(
    r,
    kept,
    r.clients.map((c) => transferSeconds(r.model, c, r.bytesPerParameter)),
  );
  await measure({
    family: 'federated',
    size: `${n} clients`,
    model,
    candidates: `${all.reduce((s, o) => s + o.length, 0)} (${kept.reduce((s, o) => s + o.length, 0)})`,
    start: warm,
  });
}
// The federated planner end to end under dropouts (HiGHS, the tightening loop, exact probabilities,
// verification): one row per instance, the figures of the model it kept.
if (FAMILIES.has('federated-dropouts')) {
  console.log('');
  console.log(
    '| planner | size | vars / ints / rows (last model) | status | gap | time (ms) | dropouts tolerated | success probability | mean round (s) |',
  );
  console.log('| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |');
  for (const [n, rounds] of [
    [10, 1],
    [50, 1],
    [50, 4],
    [200, 1],
    [200, 4],
  ]) {
    const r = federatedUnderDropouts(n, 500 + n, rounds);
    const t0 = performance.now();
    const p = await planFederatedRound(r);
    const ms = performance.now() - t0;
    console.log(
      `| federated under dropouts | ${n} clients, ${rounds} round${rounds > 1 ? 's, floor 1' : ''} | ${p.stats.variables} / ${p.stats.integers} / ${p.stats.constraints} | ${p.status} | ${p.gap === null ? '' : p.gap.toExponential(1)} | ${ms.toFixed(0)} | ${p.dropoutsTolerated ?? ''} | ${p.successProbability?.toFixed(4) ?? ''} | ${p.roundTimeSeconds?.toPrecision(5) ?? ''} |`,
    );
  }
}
shutdownSolverWorkers();
