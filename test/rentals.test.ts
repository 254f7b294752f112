// Fleets, procurements and `predict` rent as `recommend` rents (service/offers.ts): whole instances
// of a real offer (seeds/instances.csv, the request's own, or a per-GPU price), on the network the
// offer states. Before, they priced a GPU per GPU-hour at gpus.csv's lowest price: H200 at $2.59,
// while no offer in instances.csv rents one for less than $7.912 per GPU-hour (8-GPU instances).
import { describe, expect, it } from 'vitest';
import { apolloForTests } from './graphql-client.js';
import { shutdownSolverWorkers } from '../optimizer/milp/solver.js';
import { catalogOffers } from '../optimizer/offers.js';
import { planFleet, verifyFleetPlan, type FleetRequest } from '../optimizer/fleet.js';
import { getModel } from '../predictor/zoo/index.js';
import { getGpu, loadEfficiency } from '../seeds/catalog.js';

const run = apolloForTests(() => void shutdownSolverWorkers());

const H200 = 'H200-SXM-141GB';
const h200Offers = catalogOffers().filter((o) => o.gpuId === H200);
const cheapestH200 = Math.min(...h200Offers.map((o) => o.usdPerHour / o.gpusPerInstance));

const ASSIGNMENT = `jobId onDemand gpu { id } nodes gpusPerNode totalGpus costUsd totalHours priceUsdPerGpuHour
  interNodeGbps offer { provider instance gpusPerInstance usdPerHour source interNodeGbps }`;
const FLEET = `query($input: FleetInput!) { planFleet(input: $input) { status notes assignments { ${ASSIGNMENT} } } }`;

/** One ResNet-50 job rented on demand, on `gpus` only. */
const fleetInput = (extra: Record<string, unknown> = {}, gpus = [H200]) => ({
  jobs: [{ id: 'rn50', workload: { model: 'resnet50_v1.5', samples: 3e7 }, deadlineHours: 48 }],
  allowOnDemand: true,
  onDemandGpus: gpus,
  precisions: ['AMP_BF16'],
  ...extra,
});

describe('a fleet rents whole instances of real offers', () => {
  it("an H200 job rents one of the catalog H200 offers, paying whole 8-GPU instances, never gpus.csv's $2.59", async () => {
    expect(h200Offers.length).toBeGreaterThan(0);
    expect(getGpu(H200)!.priceUsdPerGpuHour).toBeLessThan(cheapestH200); // the figure it was priced at before
    const r = await run(FLEET, { input: fleetInput() });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const p = r.data!.planFleet;
    expect(p.status).toBe('OPTIMAL');
    const [a] = p.assignments;
    expect(a.onDemand).toBe(true);
    // (instances.csv lists p5en.48xlarge twice, at two dates and prices: each is an offer.)
    const offer = h200Offers.find(
      (o) =>
        o.provider === a.offer.provider &&
        o.instance === a.offer.instance &&
        o.usdPerHour === a.offer.usdPerHour,
    )!;
    expect(offer).toBeDefined();
    // Whole instances: nodes x the instance's price x hours, whatever share of its GPUs the job uses.
    expect(a.costUsd).toBeCloseTo(a.nodes * offer.usdPerHour * a.totalHours, 6);
    expect(a.priceUsdPerGpuHour).toBeCloseTo(offer.usdPerHour / a.gpusPerNode, 9);
    expect(a.priceUsdPerGpuHour).toBeGreaterThanOrEqual(cheapestH200 - 1e-9);
    // On the network the offer states (no interNodeGbps in the request).
    if (offer.interNodeGbps !== null) expect(a.interNodeGbps).toBe(offer.interNodeGbps);
    if (a.gpusPerNode < offer.gpusPerInstance)
      expect(p.notes.join(' ')).toMatch(
        new RegExp(`job rn50 uses ${a.gpusPerNode} of the ${offer.gpusPerInstance} GPUs of each of its`),
      );
  }, 60_000);

  it('a job on one GPU of an 8-GPU instance pays the whole instance, and the notes say so', async () => {
    const r = await run(FLEET, { input: fleetInput({ gpusPerNode: [1] }) });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const p = r.data!.planFleet;
    const [a] = p.assignments;
    expect(a.gpusPerNode).toBe(1);
    expect(a.offer.gpusPerInstance).toBe(8);
    expect(a.priceUsdPerGpuHour).toBeCloseTo(a.offer.usdPerHour, 9);
    expect(a.costUsd).toBeCloseTo(a.nodes * a.offer.usdPerHour * a.totalHours, 6);
    expect(p.notes.join(' ')).toMatch(
      `rented instances are paid for whole: job rn50 uses 1 of the 8 GPUs of each of its ${a.nodes} ${a.offer.provider} ${a.offer.instance}`,
    );
  }, 60_000);

  it('a per-GPU price in prices replaces the offers for its GPU, billed per GPU used', async () => {
    const r = await run(FLEET, { input: fleetInput({ prices: [{ gpu: H200, usdPerGpuHour: 2.59 }] }) });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const [a] = r.data!.planFleet.assignments;
    expect(a.offer.source).toBe('the request (prices)');
    expect(a.priceUsdPerGpuHour).toBeCloseTo(2.59, 9);
    expect(a.costUsd).toBeCloseTo(a.totalGpus * 2.59 * a.totalHours, 6);
  }, 60_000);

  it("providers keeps one provider's offers; an unknown provider is BAD_USER_INPUT naming providers[0]", async () => {
    const gcp = await run(FLEET, { input: fleetInput({ providers: ['GCP'] }) });
    expect(gcp.errors, JSON.stringify(gcp.errors)).toBeUndefined();
    expect(gcp.data!.planFleet.assignments[0].offer.provider).toBe('GCP');
    const bad = await run(FLEET, { input: fleetInput({ providers: ['NoSuchCloud'] }) });
    expect(bad.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(bad.errors?.[0].message).toMatch(/^providers\[0\]: no offer is from "NoSuchCloud"/);
  }, 60_000);

  it("an inventory charged at the catalog's market price for want of its own is named in the notes", async () => {
    const Q = `query($input: FleetInput!) { planFleet(input: $input) { notes assignments { onDemand priceUsdPerGpuHour } } }`;
    const inventory = (price?: number) => ({
      jobs: [{ id: 'rn50', workload: { model: 'resnet50_v1.5', samples: 3e7 }, deadlineHours: 48 }],
      inventory: [{ gpu: 'A100-SXM4-80GB', count: 8, ...(price ? { usdPerGpuHour: price } : {}) }],
      precisions: ['AMP_BF16'],
    });
    const market = (await run(Q, { input: inventory() })).data!.planFleet;
    expect(market.assignments[0].priceUsdPerGpuHour).toBe(getGpu('A100-SXM4-80GB')!.priceUsdPerGpuHour);
    expect(market.notes.join(' ')).toMatch(
      /the inventory's A100-SXM4-80GB \(at \$1\.39\/GPU-h\) is costed at the catalog's lowest market price for want of your own/,
    );
    const own = (await run(Q, { input: inventory(0.9) })).data!.planFleet;
    expect(own.notes.join(' ')).not.toMatch(/lowest market price/);
  }, 60_000);

  it("a request's own offers rent as the catalog's do; a bad one is BAD_USER_INPUT naming its field", async () => {
    const own = {
      provider: 'MyCloud',
      instance: 'h200x4',
      gpu: H200,
      gpusPerInstance: 4,
      usdPerHour: 12,
      interNodeGbps: 800,
    };
    const r = await run(FLEET, { input: fleetInput({ offers: [own], catalogOffers: false }) });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const [a] = r.data!.planFleet.assignments;
    expect(a.offer.instance).toBe('h200x4');
    expect(a.costUsd).toBeCloseTo(a.nodes * 12 * a.totalHours, 6);
    for (const [bad, field] of [
      [{ ...own, gpusPerInstance: 0 }, 'offers[0].gpusPerInstance'],
      [{ ...own, usdPerHour: -1 }, 'offers[0].usdPerHour'],
      [{ ...own, gpu: 'NoSuchGpu' }, 'offers[0].gpu'],
    ] as const) {
      const e = await run(FLEET, { input: fleetInput({ offers: [bad] }) });
      expect(e.errors?.[0].extensions?.code, JSON.stringify(e)).toBe('BAD_USER_INPUT');
      expect(e.errors?.[0].extensions?.field).toBe(field);
    }
  }, 60_000);

  it("a stated interNodeGbps replaces the offer's network, as in recommend", async () => {
    const r = await run(FLEET, { input: fleetInput({ interNodeGbps: 100 }) });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect(r.data!.planFleet.assignments[0].interNodeGbps).toBe(100);
  }, 60_000);

  it('a GPU no offer rents is not rented under COST, and the notes say so', async () => {
    // RTX-3090 has neither an offer nor a catalog price; L4 has offers.
    const r = await run(FLEET, { input: fleetInput({}, ['RTX-3090', 'L4']) });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect(r.data!.planFleet.assignments.map((a: { gpu: { id: string } }) => a.gpu.id)).toEqual(['L4']);
    expect(r.data!.planFleet.notes.join(' ')).toMatch(
      /1 GPU types no offer rents were not rented \(RTX-3090\): give offers or prices for them/,
    );
  }, 60_000);

  it('under MAKESPAN a GPU no offer rents is still planned, unpriced', async () => {
    const r = await run(FLEET, { input: fleetInput({ objective: 'MAKESPAN' }, ['RTX-3090']) });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const [a] = r.data!.planFleet.assignments;
    expect(a.gpu.id).toBe('RTX-3090');
    expect(a.offer).toBeNull();
    expect(a.costUsd).toBeNull();
  }, 60_000);

  it('the verifier refuses a rented run on an offer that does not exist, or paying less per GPU than its offer asks', async () => {
    const req: FleetRequest = {
      jobs: [
        {
          id: 'rn50',
          model: getModel('resnet50_v1.5')!,
          samples: 3e7,
          releaseHours: 0,
          deadlineHours: 48,
          priority: 1,
        },
      ],
      inventory: [],
      allowOnDemand: true,
      onDemandGpus: [getGpu(H200)!],
      prices: {},
      offers: h200Offers,
      objective: 'COST',
      allowUnplaced: false,
      precisions: ['AMP_BF16'],
      gpusPerNodeChoices: [1, 2, 4, 8],
      maxNodes: 2,
      interNodeGbps: () => 400,
      solve: { timeLimitSeconds: 20 },
      efficiency: loadEfficiency(),
    };
    const plan = await planFleet(req);
    expect(await verifyFleetPlan(req, plan)).toEqual([]);
    const [a] = plan.assignments;
    const cheaper = { ...plan, assignments: [{ ...a, offer: { ...a.offer!, usdPerHour: 20 } }] };
    expect((await verifyFleetPlan(req, cheaper)).join(' ')).toMatch(
      /which is not an offer for H200-SXM-141GB/,
    );
    const price = { ...plan, assignments: [{ ...a, priceUsdPerGpuHour: 2.59 }] };
    expect((await verifyFleetPlan(req, price)).join(' ')).toMatch(/pays 2\.59 per GPU-hour, the offer/);
  }, 60_000);
});

const PROCUREMENT = `query($input: ProcurementInput!) { planProcurement(input: $input) {
  status breakEven { gpu { id } rentUsdPerGpuHour }
  allocations { jobId owned config { gpu { id } nodes gpusPerNode usdPerRun hoursPerRun priceUsdPerGpuHour interNodeGbps
    offer { provider instance usdPerHour gpusPerInstance } } } } }`;

describe('a procurement rents whole instances of real offers', () => {
  it('renting H200 takes a catalog offer; the break-even compares buying with the cheapest offer per GPU-hour', async () => {
    const input = {
      jobs: [{ id: 'rn50', workload: { model: 'resnet50_v1.5', samples: 3e7 }, runsPerMonth: 2 }],
      horizonMonths: 3,
      precisions: ['AMP_BF16'],
      options: [
        {
          gpu: H200,
          rent: true,
          buy: { usdPerGpu: 35000, lifetimeMonths: 48, electricityUsdPerKwh: 0.12, utilization: 0.7 },
        },
      ],
    };
    const r = await run(PROCUREMENT, { input });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const p = r.data!.planProcurement;
    expect(p.breakEven[0].rentUsdPerGpuHour).toBeCloseTo(cheapestH200, 9);
    const rented = p.allocations.filter((a: { owned: boolean }) => !a.owned);
    for (const a of rented) {
      const offer = h200Offers.find(
        (o) =>
          o.instance === a.config.offer.instance &&
          o.provider === a.config.offer.provider &&
          o.usdPerHour === a.config.offer.usdPerHour,
      )!;
      expect(offer).toBeDefined();
      expect(a.config.usdPerRun).toBeCloseTo(a.config.nodes * offer.usdPerHour * a.config.hoursPerRun, 6);
    }
    // Rented or bought, every run is priced: a rented one from its offer, an owned one by its power.
    for (const a of p.allocations.filter((a: { owned: boolean }) => a.owned))
      expect(a.config.offer).toBeNull();
    expect(p.allocations.length).toBeGreaterThan(0);
  }, 60_000);
});

describe('runs across instances of an offer that states no network are not planned on a guess, and the answers say so', () => {
  // Lambda's offers state no inter-node network; GPT-2 355M on 1e10 tokens needs two 8-GPU nodes for
  // 5 h (one takes 6.6 h).
  const job = { workload: { model: 'gpt2_355m', samples: 1e10 }, deadlineHours: 5 };
  it('a fleet names it in the DEADLINE diagnosis; with interNodeGbps it plans two instances', async () => {
    const Q = `query($input: FleetInput!) { planFleet(input: $input) { status unplaced { reason message }
      assignments { nodes interNodeGbps offer { provider } } } }`;
    const input = {
      jobs: [{ id: 'gpt2', ...job }],
      allowOnDemand: true,
      onDemandGpus: ['H100-SXM5-80GB'],
      providers: ['Lambda'],
      precisions: ['AMP_BF16'],
    };
    const refused = (await run(Q, { input })).data!.planFleet;
    expect(refused.status).toBe('INFEASIBLE');
    expect(refused.unplaced[0].reason).toBe('DEADLINE');
    expect(refused.unplaced[0].message).toMatch(
      /runs joining several instances of an offer that states no network between them were not planned: give interNodeGbps/,
    );
    const planned = (await run(Q, { input: { ...input, interNodeGbps: 400 } })).data!.planFleet;
    expect(planned.status).toBe('OPTIMAL');
    expect(planned.assignments[0].nodes).toBeGreaterThan(1);
    expect(planned.assignments[0].interNodeGbps).toBe(400);
    expect(planned.assignments[0].offer.provider).toBe('Lambda');
  }, 60_000);

  it('a procurement that buys because no such rental was planned says why', async () => {
    const Q = `query($input: ProcurementInput!) { planProcurement(input: $input) { status notes allocations { owned } } }`;
    const input = {
      jobs: [{ id: 'gpt2', ...job, runsPerMonth: 1 }],
      horizonMonths: 3,
      precisions: ['AMP_BF16'],
      providers: ['Lambda'],
      options: [
        {
          gpu: 'H100-SXM5-80GB',
          rent: true,
          buy: { usdPerGpu: 30000, lifetimeMonths: 48, electricityUsdPerKwh: 0.12, utilization: 0.8 },
        },
      ],
    };
    const p = (await run(Q, { input })).data!.planProcurement;
    expect(p.status).toBe('OPTIMAL');
    expect(p.allocations.every((a: { owned: boolean }) => a.owned)).toBe(true);
    expect(p.notes.join(' ')).toMatch(
      /no rental within the deadline was found for gpt2: runs joining several instances of an offer that states no network between them were not planned/,
    );
  }, 60_000);
});

const PREDICT = `query($gpu: String!, $gpn: Int!, $price: Float) { predict(input: {
  workload: { model: "resnet50_v1.5", samples: 3e7 }, gpu: $gpu, nodes: 2, gpusPerNode: $gpn,
  batchSizePerGpu: 128, precision: AMP_BF16, priceUsdPerGpuHour: $price }) {
  totalHours costUsd priceUsdPerGpuHour offer { provider instance gpusPerInstance usdPerHour source } } }`;

describe('predict prices one configuration as it would be rented', () => {
  it('8 H200s per node rent the cheapest 8-GPU H200 instance, 2 nodes = 2 instances', async () => {
    const r = await run(PREDICT, { gpu: H200, gpn: 8 });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const p = r.data!.predict;
    const cheapest = h200Offers.reduce((a, b) => (b.usdPerHour < a.usdPerHour ? b : a));
    expect(p.offer.instance).toBe(cheapest.instance);
    expect(p.offer.usdPerHour).toBe(cheapest.usdPerHour);
    expect(p.costUsd).toBeCloseTo(2 * cheapest.usdPerHour * p.totalHours, 6);
    expect(p.priceUsdPerGpuHour).toBeCloseTo(cheapestH200, 9);
  });

  it('across nodes it takes an offer that states its network and is timed on it, unless the request gives one', async () => {
    const Q = `query($gbps: Float) { predict(input: {
      workload: { model: "gpt2_355m", samples: 1e9 }, gpu: "H100-SXM5-80GB", nodes: 2, gpusPerNode: 8,
      batchSizePerGpu: 8, precision: AMP_BF16, interNodeGbps: $gbps }) {
      costUsd totalHours harness { commands } offer { provider instance usdPerHour interNodeGbps } } }`;
    const h100 = catalogOffers().filter((o) => o.gpuId === 'H100-SXM5-80GB' && o.gpusPerInstance >= 8);
    const cheapest = (os: typeof h100) => os.reduce((a, b) => (b.usdPerHour < a.usdPerHour ? b : a));
    const stated = cheapest(h100.filter((o) => o.interNodeGbps !== null));
    expect(cheapest(h100).interNodeGbps).toBeNull(); // the cheapest 8-GPU H100 offer names no network
    const p = (await run(Q, {})).data!.predict;
    expect([p.offer.provider, p.offer.instance, p.offer.usdPerHour]).toEqual([
      stated.provider,
      stated.instance,
      stated.usdPerHour,
    ]);
    expect(p.harness.commands.join(' ')).toMatch(new RegExp(`--inter-node-gbps ${stated.interNodeGbps}\\b`));
    const given = (await run(Q, { gbps: 100 })).data!.predict;
    expect(given.offer.usdPerHour).toBe(cheapest(h100).usdPerHour);
    expect(given.costUsd).toBeCloseTo(2 * cheapest(h100).usdPerHour * given.totalHours, 6);
  });

  it('across nodes it keeps the offer whose run costs least: a dearer instance on a faster network can', async () => {
    // BERT-large at batch 1 on 4 x 8 A100-40GB syncs its gradients every small step: AWS p4d (400 Gbps,
    // $21.96/h) is the cheaper instance, Azure ND96asr (1,600 Gbps, $27.20/h) the cheaper run.
    const Q = `query($gbps: Float) { predict(input: {
      workload: { model: "bert_large_squad", samples: 1e7 }, gpu: "A100-SXM4-40GB", nodes: 4, gpusPerNode: 8,
      batchSizePerGpu: 1, precision: AMP_FP16, interNodeGbps: $gbps }) {
      totalHours costUsd offer { provider instance usdPerHour interNodeGbps } } }`;
    const a100 = catalogOffers().filter(
      (o) => o.gpuId === 'A100-SXM4-40GB' && o.gpusPerInstance >= 8 && o.interNodeGbps !== null,
    );
    const aws = a100.reduce((a, b) => (b.usdPerHour < a.usdPerHour ? b : a));
    const p = (await run(Q, {})).data!.predict;
    expect(p.offer.interNodeGbps).toBeGreaterThan(aws.interNodeGbps!);
    expect(p.offer.usdPerHour).toBeGreaterThan(aws.usdPerHour);
    const onAws = (await run(Q, { gbps: aws.interNodeGbps })).data!.predict;
    expect(p.costUsd).toBeLessThan(4 * aws.usdPerHour * onAws.totalHours);
    expect(p.costUsd).toBeCloseTo(4 * p.offer.usdPerHour * p.totalHours, 6);
  });

  it('4 H200s per node still pay whole 8-GPU instances: twice the price per GPU used', async () => {
    const p = (await run(PREDICT, { gpu: H200, gpn: 4 })).data!.predict;
    expect(p.offer.gpusPerInstance).toBe(8);
    expect(p.priceUsdPerGpuHour).toBeCloseTo(p.offer.usdPerHour / 4, 9);
    expect(p.costUsd).toBeCloseTo(2 * p.offer.usdPerHour * p.totalHours, 6);
  });

  it('priceUsdPerGpuHour replaces the offers, billed per GPU used; a GPU nothing prices has no cost', async () => {
    const given = (await run(PREDICT, { gpu: H200, gpn: 4, price: 2.59 })).data!.predict;
    expect(given.offer.source).toBe('the request (priceUsdPerGpuHour)');
    expect(given.costUsd).toBeCloseTo(8 * 2.59 * given.totalHours, 6);
    const none = await run(PREDICT, { gpu: 'RTX-3090', gpn: 1 });
    expect(none.errors, JSON.stringify(none.errors)).toBeUndefined();
    expect(none.data!.predict.offer).toBeNull();
    expect(none.data!.predict.costUsd).toBeNull();
  });
});
