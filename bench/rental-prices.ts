// What pricing rentals from real offers changes in the coupled planners and predict: per catalog GPU, gpus.csv's
// lowest per-GPU-hour price (what fleets and procurements rented at before) against the cheapest
// offer in seeds/instances.csv per GPU-hour with a whole instance used (what they rent at now); and
// docs/examples/fleet-rent.json and an all-rented procurement of the same jobs, planned both ways in
// one run: "before" = catalogOffers false with gpus.csv's lowest price in `prices` for every rented
// type, "now" = the catalog's offers. In-process through GraphQL.
// Run: npx tsx bench/rental-prices.ts
import { readFileSync } from 'node:fs';
import { catalogOffers, usdPerGpuHourOf } from '../optimizer/offers.js';
import { loadGpus } from '../seeds/catalog.js';
import { createApollo } from '../server/apollo.js';

const offers = catalogOffers();
console.log('GPU                   gpus.csv min  cheapest offer /GPU-h  ratio  offers');
for (const g of loadGpus()) {
  const mine = offers.filter((o) => o.gpuId === g.id);
  if (!mine.length || g.priceUsdPerGpuHour === null) continue;
  const best = Math.min(...mine.map(usdPerGpuHourOf));
  console.log(
    `${g.id.padEnd(22)}${g.priceUsdPerGpuHour.toFixed(3).padStart(12)}${best.toFixed(3).padStart(23)}${(best / g.priceUsdPerGpuHour).toFixed(2).padStart(7)}${String(mine.length).padStart(8)}`,
  );
}

const apollo = await createApollo();
const ask = (query: string, input: unknown) => askWith(query, { input });
const askWith = async (query: string, variables: Record<string, unknown>) => {
  const res = await apollo.executeOperation(
    { query, variables },
    { contextValue: { deadlineAt: performance.now() + 120_000 } },
  );
  if (res.body.kind !== 'single') throw new Error('expected a single result');
  const r = res.body.singleResult;
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a bench reads the fields it asked for
  return r.data as Record<string, any>;
};
const before = (ids: string[]) => ({
  catalogOffers: false,
  prices: ids.map((gpu) => ({
    gpu,
    usdPerGpuHour: loadGpus().find((g) => g.id === gpu)!.priceUsdPerGpuHour,
  })),
});

const fleet = JSON.parse(readFileSync(new URL('../docs/examples/fleet-rent.json', import.meta.url), 'utf8'));
const FLEET = `query($input: FleetInput!) { planFleet(input: $input) { totalCostUsd
  assignments { jobId gpu { id } onDemand totalGpus costUsd priceUsdPerGpuHour offer { instance } } } }`;
for (const [name, input] of [
  ['before', { ...fleet, ...before(fleet.onDemandGpus) }],
  ['now', fleet],
] as const) {
  const p = (await ask(FLEET, input)).planFleet;
  console.log(`\nfleet-rent.json ${name}: total $${p.totalCostUsd.toFixed(2)}`);
  for (const a of p.assignments)
    console.log(
      `  ${a.jobId.padEnd(14)} ${a.gpu.id.padEnd(16)} ${a.onDemand ? 'rented' : 'owned '} ${String(a.totalGpus).padStart(3)} GPUs  $${a.costUsd.toFixed(2).padStart(8)}  $${a.priceUsdPerGpuHour.toFixed(3)}/GPU-h  ${a.offer?.instance ?? ''}`,
    );
}

// The same jobs as a monthly portfolio that can only rent, on the same GPU types.
const rented = ['H100-SXM5-80GB', 'H200-SXM-141GB', 'L4', 'A100-SXM4-80GB'];
const procurement = {
  jobs: fleet.jobs.map((j: { id: string; workload: unknown; deadlineHours: number }) => ({
    id: j.id,
    workload: j.workload,
    runsPerMonth: 4,
    deadlineHours: j.deadlineHours,
  })),
  horizonMonths: 12,
  precisions: fleet.precisions,
  options: rented.map((gpu) => ({ gpu, rent: true })),
};
const PROCUREMENT = `query($input: ProcurementInput!) { planProcurement(input: $input) { cost { rentalUsd totalUsd }
  allocations { jobId config { gpu { id } totalGpus usdPerRun priceUsdPerGpuHour offer { instance } } } } }`;
for (const [name, input] of [
  ['before', { ...procurement, ...before(rented) }],
  ['now', procurement],
] as const) {
  const p = (await ask(PROCUREMENT, input)).planProcurement;
  console.log(
    `\nall-rented procurement (12 months, 4 runs/month each) ${name}: rental $${p.cost.rentalUsd.toFixed(2)}`,
  );
  for (const a of p.allocations)
    console.log(
      `  ${a.jobId.padEnd(14)} ${a.config.gpu.id.padEnd(16)} ${String(a.config.totalGpus).padStart(3)} GPUs  $${a.config.usdPerRun.toFixed(2).padStart(8)}/run  $${a.config.priceUsdPerGpuHour.toFixed(3)}/GPU-h  ${a.config.offer?.instance ?? ''}`,
    );
}
// One configuration (`predict`): the README's BERT-large on 8 A100-80GB, and 2 nodes of 4 H200s.
const PREDICT = `query($gpu: String!, $gpn: Int!, $nodes: Int!, $price: Float) { predict(input: {
  workload: { model: "bert_large_squad", samples: 176000 }, gpu: $gpu, nodes: $nodes, gpusPerNode: $gpn,
  batchSizePerGpu: 32, precision: AMP_FP16, priceUsdPerGpuHour: $price }) { costUsd priceUsdPerGpuHour offer { instance } } }`;
console.log('\npredict, BERT-large SQuAD 2 epochs:');
for (const [gpu, gpn, nodes] of [
  ['A100-SXM4-80GB', 8, 1],
  ['H200-SXM-141GB', 4, 2],
] as const) {
  const min = loadGpus().find((g) => g.id === gpu)!.priceUsdPerGpuHour;
  const was = (await askWith(PREDICT, { gpu, gpn, nodes, price: min })).predict;
  const now = (await askWith(PREDICT, { gpu, gpn, nodes })).predict;
  console.log(
    `  ${nodes}x${gpn} ${gpu.padEnd(16)} before $${was.costUsd.toFixed(4)} ($${min}/GPU-h)  now $${now.costUsd.toFixed(4)} ($${now.priceUsdPerGpuHour.toFixed(3)}/GPU-h used, ${now.offer.instance})  x${(now.costUsd / was.costUsd).toFixed(2)}`,
  );
}
await apollo.stop();
