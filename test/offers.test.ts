// Plans priced from real offers (seeds/instances.csv), a user's own price sheet, risk-aware
// ranking (rankBy, minEvidence, costUsdP90), the predictor choice and the notes that say what bound
// the answer: through the GraphQL API, on the seeds' data.
import { TIE_RESOLUTION } from '../optimizer/recommend.js';
import { describe, expect, it } from 'vitest';
import { apolloForTests } from './graphql-client.js';
import { readFileSync } from 'node:fs';
import { loadEfficiency, loadInstances, parseCsv } from '../seeds/catalog.js';
import type { NetworkTransport } from '../seeds/types.js';
import {
  dominated,
  isStale,
  priceAgeDays,
  STALE_PRICE_DAYS,
  type PricingOption,
} from '../optimizer/offers.js';
import { usualGlobalBatch } from '../optimizer/global-batch.js';
import { getModel } from '../predictor/zoo/index.js';

const run = apolloForTests();

const PLAN = `rank gpu { id } nodes gpusPerNode batchSizePerGpu gradAccumSteps precision totalHours totalHoursP90
  costUsd costUsdP90 priceUsdPerGpuHour interNodeGbps interNodeTransport interNodeNetworkSource interNodeNetworkAssumed evidenceLevel stepTimeMs analyticalStepTimeMs
  parallelism { dataParallel }
  offer { provider instance gpusPerInstance usdPerHour usdPerGpuHour region priceDate priceAgeDays priceStale source interNodeGbps interNodeTransport }`;

interface PlanView {
  rank: number;
  gpu: { id: string };
  nodes: number;
  gpusPerNode: number;
  batchSizePerGpu: number;
  gradAccumSteps: number;
  precision: string;
  totalHours: number;
  totalHoursP90: number;
  costUsd: number | null;
  costUsdP90: number | null;
  priceUsdPerGpuHour: number | null;
  interNodeGbps: number;
  interNodeTransport: NetworkTransport;
  interNodeNetworkSource: string;
  interNodeNetworkAssumed: boolean;
  evidenceLevel: string;
  stepTimeMs: number;
  analyticalStepTimeMs: number;
  parallelism: { dataParallel: number };
  offer: null | {
    provider: string;
    instance: string;
    gpusPerInstance: number;
    usdPerHour: number;
    usdPerGpuHour: number;
    priceDate: string;
    priceAgeDays: number | null;
    priceStale: boolean;
    source: string;
    interNodeGbps: number | null;
    interNodeTransport: NetworkTransport;
  };
}
interface RecommendView {
  status: string;
  predictor: string;
  notes: string[];
  plans: PlanView[];
  paretoFront: PlanView[];
  rejected: { reason: string; count: number }[];
}

async function recommend(input: string): Promise<RecommendView> {
  const r = await run(
    `{ recommend(input: { ${input} }) { status predictor notes plans { ${PLAN} } paretoFront { ${PLAN} } rejected { reason count } } }`,
  );
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data!.recommend as RecommendView;
}

async function error(input: string) {
  const r = await run(`{ recommend(input: { ${input} }) { status } }`);
  expect(r.errors).toBeDefined();
  return r.errors![0];
}

const RESNET = 'workload: { model: "resnet50_v1.5", samples: 115300000 }';
const BERT = 'workload: { model: "bert_large_squad", samples: 176000 }';
const LLAMA = 'workload: { model: "llama2_7b", samples: 2e9 }';

/** Every priced plan is whole instances of a real catalog row, costed as hours x instances x its price. */
function expectPricedFromCatalog(p: PlanView) {
  expect(p.offer).not.toBeNull();
  const o = p.offer!;
  const row = loadInstances().find(
    (i) => i.provider === o.provider && i.instance === o.instance && i.onDemandUsdPerHour === o.usdPerHour,
  );
  expect(row, `${o.provider} ${o.instance}`).toBeDefined();
  expect(row!.gpuId).toBe(p.gpu.id);
  expect(p.gpusPerNode).toBeLessThanOrEqual(o.gpusPerInstance);
  expect(p.costUsd!).toBeCloseTo(p.totalHours * p.nodes * o.usdPerHour, 6);
  expect(p.costUsdP90!).toBeCloseTo(p.totalHoursP90 * p.nodes * o.usdPerHour, 6);
  expect(p.costUsdP90!).toBeGreaterThanOrEqual(p.costUsd!);
  if (p.nodes > 1 && row!.internodeNetworkGbps !== null)
    expect(p.interNodeGbps).toBe(row!.internodeNetworkGbps);
  expect(o.priceStale).toBe(isStale(o.priceDate, new Date()));
}

describe('plans priced from real offers', () => {
  it.each([
    ['ResNet-50', `${RESNET}, deadlineHours: 24, maxNodes: 4`],
    ['BERT-large', `${BERT}, maxNodes: 2`],
    ['Llama-2-7B', `${LLAMA}, gpus: ["A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"], maxNodes: 4`],
  ])('%s: every plan is whole instances of one catalog offer, costed per instance-hour', async (_, q) => {
    const r = await recommend(`${q}, limit: 5`);
    expect(r.plans.length).toBeGreaterThan(0);
    for (const p of [...r.plans, ...r.paretoFront]) expectPricedFromCatalog(p);
    // Costs equal to the ranking's resolution (float32) tie and rank by time.
    for (let i = 1; i < r.plans.length; i++) {
      expect(r.plans[i].costUsd!).toBeGreaterThanOrEqual(r.plans[i - 1].costUsd! * (1 - TIE_RESOLUTION));
      if (Math.abs(r.plans[i].costUsd! / r.plans[i - 1].costUsd! - 1) < 1e-12)
        expect(r.plans[i].totalHours).toBeGreaterThanOrEqual(r.plans[i - 1].totalHours);
    }
  });

  it('a plan using fewer GPUs than its instance holds still pays for the whole instance', async () => {
    const r = await recommend(
      `${RESNET}, gpus: ["A100-SXM4-40GB"], providers: ["AWS"], gpusPerNode: [1], maxNodes: 1, limit: 1`,
    );
    const p = r.plans[0];
    expect(p.offer!.instance).toBe('p4d.24xlarge');
    expect(p.offer!.gpusPerInstance).toBe(8);
    expect(p.costUsd!).toBeCloseTo(p.totalHours * p.offer!.usdPerHour, 6);
    expect(p.priceUsdPerGpuHour).toBeCloseTo(p.offer!.usdPerHour, 6);
  });

  it('multi-node plans run on the network their offer states; instances whose network no one states are not joined', async () => {
    const r = await recommend(`${BERT}, gpus: ["H100-SXM5-80GB"], objective: TIME, maxNodes: 4, limit: 40`);
    const all = [...r.plans, ...r.paretoFront];
    const multi = all.filter((p) => p.nodes > 1);
    expect(multi.length).toBeGreaterThan(0);
    for (const p of multi) {
      expect(p.interNodeGbps).toBe(p.offer!.interNodeGbps);
      expect(p.interNodeNetworkSource).toMatch(/^the offer/);
      expect(p.interNodeNetworkAssumed).toBe(false);
    }
    // Offers that state no network (Lambda's, RunPod's) still rank as single instances.
    const single = all.filter((p) => p.offer!.interNodeGbps === null);
    expect(single.length).toBeGreaterThan(0);
    for (const p of single) {
      expect(p.nodes).toBe(1);
      expect(p.interNodeNetworkAssumed).toBe(true);
    }
    expect(r.rejected.find((x) => x.reason === 'NETWORK_UNSTATED')!.count).toBeGreaterThan(0);
  });

  it("an instance type whose row states no network takes seeds/instance-networks.csv's figure and source, never over a stated one", async () => {
    const overlay = parseCsv(
      readFileSync(new URL('../seeds/instance-networks.csv', import.meta.url), 'utf8'),
    );
    const raw = parseCsv(readFileSync(new URL('../seeds/instances.csv', import.meta.url), 'utf8'));
    expect(overlay.length).toBeGreaterThan(0);
    for (const o of overlay) {
      const rows = raw.filter((r) => r.provider === o.provider && r.instance === o.instance);
      // A figure for an instance the catalog does not list, or one that states its own, would be dead data.
      expect(rows.length, `${o.provider} ${o.instance}`).toBeGreaterThan(0);
      for (const r of rows) expect(r.internode_network_gbps, `${o.provider} ${o.instance}`).toBe('');
      expect(Number(o.internode_network_gbps)).toBeGreaterThan(0);
      expect(o.network_source).not.toBe('');
    }
    const g5 = loadInstances().find((i) => i.instance === 'g5.12xlarge')!;
    expect(g5.internodeNetworkGbps).toBe(40);
    expect(g5.internodeNetworkDetail).toMatch(
      /40 Gbps EC2 baseline network bandwidth \(ENA Ethernet; [^)]*\); aws\/karpenter-provider-aws/,
    );
    expect(g5.internodeTransport).toBe('TCP');
    // A row that states its own network keeps it.
    expect(loadInstances().find((i) => i.instance === 'p4d.24xlarge')!.internodeNetworkGbps).toBe(400);
    // AWS's A10G instances are joined on their networks (before, none was: NETWORK_UNSTATED), and
    // each plan says where its network comes from.
    const r = await recommend(
      `${RESNET}, gpus: ["A10G"], providers: ["AWS"], objective: TIME, maxNodes: 4, limit: 5`,
    );
    expect(r.plans[0].nodes).toBe(4);
    for (const p of r.plans) {
      const stated = overlay.find((o) => o.instance === p.offer!.instance)!;
      expect(p.interNodeGbps).toBe(Number(stated.internode_network_gbps));
      expect(p.interNodeNetworkAssumed).toBe(false);
      expect(p.interNodeNetworkSource).toMatch(
        /^the offer \(\d+(\.\d+)? Gbps EC2 baseline network bandwidth \(ENA Ethernet; .*; NCCL over TCP, costed at 0\.\d+ of the line rate/,
      );
      expect(p.interNodeTransport).toBe('TCP');
      expect(p.offer!.interNodeTransport).toBe('TCP');
    }
    expect(r.rejected.map((x) => x.reason)).not.toContain('NETWORK_UNSTATED');
  });

  it('a plan across Ethernet-only instances is what predict says over TCP: slower than the same line rate over RDMA, by its exposed communication', async () => {
    // ResNet-50 on four AWS A10G instances (Ethernet only: ENA at EC2's baseline bandwidth).
    const r = await recommend(
      `${RESNET}, gpus: ["A10G"], providers: ["AWS"], gpusPerNode: [4], objective: TIME, maxNodes: 4, limit: 1`,
    );
    const p = r.plans[0];
    expect([p.nodes, p.gpusPerNode, p.interNodeTransport]).toEqual([4, 4, 'TCP']);
    const step = async (transport: NetworkTransport) => {
      const res = await run(
        `{ predict(input: { ${RESNET}, gpu: "A10G", nodes: 4, gpusPerNode: 4, batchSizePerGpu: ${p.batchSizePerGpu}, gradAccumSteps: ${p.gradAccumSteps}, precision: ${p.precision}, interNodeGbps: ${p.interNodeGbps}, interNodeTransport: ${transport} }) { analyticalStepTimeMs breakdown { communicationTotalMs } } }`,
      );
      expect(res.errors).toBeUndefined();
      return (
        res.data as { predict: { analyticalStepTimeMs: number; breakdown: { communicationTotalMs: number } } }
      ).predict;
    };
    const tcp = await step('TCP'),
      rdma = await step('RDMA');
    expect(p.analyticalStepTimeMs).toBeCloseTo(tcp.analyticalStepTimeMs, 6);
    // The all-reduce across nodes takes longer by the ratio of the rates the two transports reach.
    const { networkEfficiency, tcpNetworkEfficiency } = loadEfficiency();
    // (Less than the ratio of the rates: the all-reduce inside each node is the same.)
    expect(tcp.breakdown.communicationTotalMs).toBeGreaterThan(rdma.breakdown.communicationTotalMs);
    expect(tcp.breakdown.communicationTotalMs).toBeLessThan(
      (rdma.breakdown.communicationTotalMs * networkEfficiency) / tcpNetworkEfficiency,
    );
    expect(tcp.analyticalStepTimeMs).toBeGreaterThan(rdma.analyticalStepTimeMs);
    // With EFA set up, the user gives the offer over RDMA: it replaces the catalog's, and the plan is
    // what predict says over RDMA.
    const instance = p.offer!.instance;
    const catalog = loadInstances().find((i) => i.instance === instance)!;
    const efa = await recommend(
      `${RESNET}, gpus: ["A10G"], providers: ["AWS"], gpusPerNode: [4], objective: TIME, maxNodes: 4, limit: 1, offers: [{ provider: "AWS", instance: "${instance}", gpu: "A10G", gpusPerInstance: ${catalog.gpusPerInstance}, usdPerHour: ${catalog.onDemandUsdPerHour}, interNodeGbps: ${p.interNodeGbps}, interNodeTransport: RDMA }]`,
    );
    const q = efa.plans[0];
    expect([q.offer!.instance, q.interNodeTransport, q.offer!.interNodeTransport]).toEqual([
      instance,
      'RDMA',
      'RDMA',
    ]);
    expect([q.nodes, q.batchSizePerGpu, q.precision]).toEqual([p.nodes, p.batchSizePerGpu, p.precision]);
    expect(q.analyticalStepTimeMs).toBeCloseTo(rdma.analyticalStepTimeMs, 6);
  });

  it('interNodeTransport: TCP costs every offer over TCP: EFA instances as if joined by their Ethernet', async () => {
    const q = `${RESNET}, gpus: ["H100-SXM5-80GB"], providers: ["AWS"], gpusPerNode: [8], objective: TIME, maxNodes: 4, batchSizes: [256], precisions: [AMP_BF16], limit: 1`;
    const efa = (await recommend(q)).plans[0];
    const tcp = (await recommend(`${q}, interNodeTransport: TCP`)).plans[0];
    expect(efa.interNodeTransport).toBe('RDMA');
    expect(tcp.interNodeTransport).toBe('TCP');
    expect(tcp.interNodeNetworkSource).toMatch(/; NCCL over TCP, costed at 0\.\d+ of the line rate/);
    expect([tcp.offer!.instance, tcp.nodes]).toEqual([efa.offer!.instance, efa.nodes]);
    expect(tcp.analyticalStepTimeMs).toBeGreaterThan(efa.analyticalStepTimeMs);
  });

  it('joining single-GPU rentals that state no network is not ranked: the notes say what it would give, a given network ranks it', async () => {
    // One GH200 takes about 7.5 hours: a 5-hour deadline needs several single-GPU instances.
    const q = `${RESNET}, deadlineHours: 5, gpus: ["GH200"], maxNodes: 4, limit: 3`;
    const unstated = await recommend(q);
    expect(unstated.plans).toEqual([]);
    expect(unstated.rejected.map((x) => x.reason)).toContain('NETWORK_UNSTATED');
    expect(unstated.notes.join('\n')).toMatch(
      /network bound the answer: a better plan \([2-4] x 1 GH200 at [A-Z0-9_]+, batch \d+: [\d.]+ h, \$[\d.]+\) joins [2-4] Lambda gpu_1x_gh200 instances, whose network the offer does not state; it was not ranked on the assumed 200 Gbps: to rank such plans,/,
    );
    expect(unstated.notes.join('\n')).toMatch(
      /the offer in offers with its interNodeGbps\) or for every offer \(interNodeGbps\)/,
    );
    // The offer restated with its network (replacing the catalog's): its instances join on it, alone.
    const lambda = `offers: [{ provider: "Lambda", instance: "gpu_1x_gh200", gpu: "GH200", gpusPerInstance: 1, usdPerHour: 1.49, interNodeGbps: 100, priceDate: "2026-11-01" }]`;
    const restated = await recommend(`${q}, ${lambda}`);
    expect(restated.plans[0].nodes).toBeGreaterThan(1);
    expect(restated.plans[0].interNodeGbps).toBe(100);
    expect(restated.plans[0].interNodeNetworkSource).toMatch(/^the offer/);
    const given = await recommend(`${q}, interNodeGbps: 100`);
    expect(given.plans[0].nodes).toBeGreaterThan(1);
    expect(given.plans[0].totalHours).toBeLessThanOrEqual(5);
    expect(given.plans[0].interNodeGbps).toBe(100);
    expect(given.plans[0].interNodeNetworkAssumed).toBe(false);
    expect(given.rejected.map((x) => x.reason)).not.toContain('NETWORK_UNSTATED');
    expect(given.notes.join('\n')).not.toMatch(/whose network the offer does not state/);
  });

  it("a user's own offers replace the catalog's with the same provider and instance, and add the rest", async () => {
    const mine = `offers: [{ provider: "Acme", instance: "8xH100", gpu: "H100-SXM5-80GB", gpusPerInstance: 8, usdPerHour: 8, interNodeGbps: 3200, priceDate: "2026-11-01" }]`;
    const r = await recommend(`${BERT}, gpus: ["H100-SXM5-80GB"], maxNodes: 2, limit: 3, ${mine}`);
    expect(r.plans[0].offer).toMatchObject({
      provider: 'Acme',
      usdPerHour: 8,
      source: 'the request (offers)',
    });
    // The same instance name as AWS's p5 replaces it: at $1 an instance-hour it must win.
    const replaced = await recommend(
      `${BERT}, gpus: ["H100-SXM5-80GB"], maxNodes: 2, limit: 3, providers: ["aws"], offers: [{ provider: "AWS", instance: "p5.48xlarge", gpu: "H100-SXM5-80GB", gpusPerInstance: 8, usdPerHour: 1 }]`,
    );
    expect(replaced.plans[0].offer).toMatchObject({
      provider: 'AWS',
      instance: 'p5.48xlarge',
      usdPerHour: 1,
    });
    expect(replaced.plans.every((p) => p.offer!.provider === 'AWS')).toBe(true);
    // Only the user's sheet: GPUs without an offer are named in the notes.
    const only = await recommend(`${BERT}, maxNodes: 1, limit: 3, catalogOffers: false, ${mine}`);
    expect(only.plans.every((p) => p.offer!.provider === 'Acme')).toBe(true);
    expect(only.notes.join('\n')).toMatch(/GPU types have no offer and are not ranked \(.*A100-SXM4-80GB/);
  });

  it('GPUs left without an offer are still predicted, not priced, when ranking by time', async () => {
    const r = await recommend(
      `${RESNET}, gpus: ["A100-SXM4-80GB", "RTX-4090"], objective: TIME, maxNodes: 1, limit: 60`,
    );
    const unpriced = r.plans.filter((p) => p.gpu.id === 'RTX-4090');
    expect(unpriced.length).toBeGreaterThan(0);
    for (const p of unpriced) {
      expect(p.offer).toBeNull();
      expect(p.costUsd).toBeNull();
      expect(p.totalHours).toBeGreaterThan(0);
    }
    expect(r.notes.join('\n')).toMatch(
      /1 GPU types have no offer and are predicted but not priced \(RTX-4090\)/,
    );
  });

  it('flags prices older than the documented age, and undated ones', async () => {
    expect(priceAgeDays('2026-11-09', new Date('2026-12-01'))).toBe(22);
    expect(isStale('2026-11-09', new Date('2026-12-01'))).toBe(false);
    expect(isStale('2025-03-14', new Date('2026-12-01'))).toBe(true);
    expect(isStale('undated', new Date('2026-12-01'))).toBe(true);
    expect(STALE_PRICE_DAYS).toBe(180);
    const old = await recommend(
      `${BERT}, gpus: ["H100-SXM5-80GB"], maxNodes: 1, limit: 1, catalogOffers: false, offers: [{ provider: "Acme", instance: "1xH100", gpu: "H100-SXM5-80GB", gpusPerInstance: 1, usdPerHour: 2, priceDate: "2024-01-01" }]`,
    );
    expect(old.plans[0].offer!.priceStale).toBe(true);
    expect(old.plans[0].offer!.priceAgeDays).toBeGreaterThan(STALE_PRICE_DAYS);
    expect(old.notes.join('\n')).toMatch(
      /warning: plan 1's price \(Acme 1xH100, 2024-01-01\) is \d+ days old/,
    );
  });

  it('the old per-GPU prices input still prices plans, per GPU used', async () => {
    const r = await recommend(
      `${RESNET}, gpus: ["A100-SXM4-80GB"], maxNodes: 1, limit: 1, prices: [{ gpu: "A100-SXM4-80GB", usdPerGpuHour: 1 }]`,
    );
    const p = r.plans[0];
    expect(p.priceUsdPerGpuHour).toBe(1);
    expect(p.costUsd!).toBeCloseTo(p.totalHours * p.gpusPerNode * p.nodes, 6);
    expect(p.offer).toMatchObject({ provider: 'the request (prices)', usdPerHour: 1 });
  });

  it('rejects bad offers naming the field and the allowed range', async () => {
    const base = `${RESNET}, offers: [{ provider: "A", instance: "x", gpu: "H100-SXM5-80GB", gpusPerInstance: 8, usdPerHour: 10`;
    let e = await error(`${base.replace('gpusPerInstance: 8', 'gpusPerInstance: 0')} }]`);
    expect(e.extensions?.code).toBe('BAD_USER_INPUT');
    expect(e.message).toMatch(/^offers\[0\]\.gpusPerInstance: must be an integer from 1 to 16/);
    e = await error(`${base.replace('usdPerHour: 10', 'usdPerHour: -1')} }]`);
    expect(e.message).toMatch(/^offers\[0\]\.usdPerHour: must be 0 or a finite number from/);
    e = await error(`${base.replace('"H100-SXM5-80GB"', '"nope"')} }]`);
    expect(e.message).toMatch(/^offers\[0\]\.gpu: unknown GPU "nope"/);
    e = await error(`${base}, priceDate: "last week" }]`);
    expect(e.message).toMatch(/^offers\[0\]\.priceDate: must be a date YYYY-MM-DD/);
    e = await error(`${RESNET}, providers: []`);
    expect(e.message).toMatch(/^providers: must not be an empty list/);
    // A provider no offer comes from would leave no priced plan and never say why.
    e = await error(`${RESNET}, providers: ["AWS", "Lambada"]`);
    expect(e.extensions?.code).toBe('BAD_USER_INPUT');
    expect(e.message).toBe(
      'providers[1]: no offer is from "Lambada": the offers here come from AWS, Azure, GCP, Lambda, Paperspace, RunPod (give your own in offers)',
    );
    // A request's own offer makes its provider known.
    const own = await recommend(
      `${RESNET}, gpus: ["H100-SXM5-80GB"], providers: [" acme "], limit: 1, offers: [{ provider: "Acme", instance: "1xH100", gpu: "H100-SXM5-80GB", gpusPerInstance: 1, usdPerHour: 2 }]`,
    );
    expect(own.plans[0].offer!.provider).toBe('Acme');
  });
});

describe('risk-aware ranking', () => {
  it('rankBy P90 orders plans by costUsdP90 (and draws the front at P90); EXPECTED by costUsd', async () => {
    const q = `${RESNET}, deadlineHours: 24, maxNodes: 4, limit: 20`;
    const expected = await recommend(q);
    const p90 = await recommend(`${q}, rankBy: P90`);
    for (let i = 1; i < p90.plans.length; i++)
      expect(p90.plans[i].costUsdP90!).toBeGreaterThanOrEqual(
        p90.plans[i - 1].costUsdP90! * (1 - TIE_RESOLUTION),
      );
    for (let i = 1; i < p90.paretoFront.length; i++)
      expect(p90.paretoFront[i].costUsdP90!).toBeLessThan(p90.paretoFront[i - 1].costUsdP90!);
    // Ranking by the bad case never gives a plan with a worse bad case first.
    expect(p90.plans[0].costUsdP90!).toBeLessThanOrEqual(expected.plans[0].costUsdP90!);
    expect(expected.plans[0].costUsd!).toBeLessThanOrEqual(p90.plans[0].costUsd!);
  });

  it('minEvidence keeps only plans with that much measurement behind them', async () => {
    const any = await recommend(`${RESNET}, maxNodes: 2, limit: 50`);
    expect(any.plans.some((p) => p.evidenceLevel === 'UNMEASURED')).toBe(true);
    const measured = await recommend(`${RESNET}, maxNodes: 2, limit: 50, minEvidence: GPU_MEASURED`);
    expect(measured.plans.length).toBeGreaterThan(0);
    expect(measured.plans.every((p) => p.evidenceLevel !== 'UNMEASURED')).toBe(true);
    expect(measured.rejected.find((x) => x.reason === 'BELOW_MIN_EVIDENCE')!.count).toBeGreaterThan(0);
    const onGpu = await recommend(`${RESNET}, maxNodes: 2, limit: 50, minEvidence: MODEL_MEASURED_ON_GPU`);
    expect(onGpu.plans.every((p) => p.evidenceLevel === 'MODEL_MEASURED_ON_GPU')).toBe(true);
    // AMD has no measurement at all.
    expect(
      any.plans.filter((p) => p.gpu.id.startsWith('MI')).every((p) => p.evidenceLevel === 'UNMEASURED'),
    ).toBe(true);
  });

  it('predictor: ANALYTICAL ranks by the roofline alone', async () => {
    const r = await recommend(`${RESNET}, maxNodes: 2, limit: 5, predictor: ANALYTICAL`);
    expect(r.predictor).toBe('analytical');
    for (const p of r.plans) {
      expect(p.stepTimeMs).toBe(p.analyticalStepTimeMs);
      expect(p.totalHoursP90).toBe(p.totalHours);
    }
  });
});

describe('notes say what bound the answer', () => {
  it('maxNodes, when plan 1 uses all of them', async () => {
    const r = await recommend(`${RESNET}, objective: TIME, maxNodes: 2, limit: 1`);
    expect(r.plans[0].nodes).toBe(2);
    expect(r.notes).toContain(
      'maxNodes bound the answer: plan 1 uses all 2 nodes; allowing more may do better',
    );
  });

  it('deadline and budget, when a better plan was turned away by them', async () => {
    const free = await recommend(`${RESNET}, maxNodes: 2, limit: 1`);
    const best = free.plans[0];
    const deadline = await recommend(
      `${RESNET}, maxNodes: 2, limit: 1, deadlineHours: ${best.totalHours / 2}`,
    );
    expect(deadline.notes.join('\n')).toMatch(/^deadline bound the answer: a better plan \(/m);
    const budget = await recommend(
      `${RESNET}, objective: TIME, maxNodes: 2, limit: 1, budgetUsd: ${best.costUsd! * 1.01}`,
    );
    expect(budget.notes.join('\n')).toMatch(/^budget bound the answer: a better plan \(/m);
    expect(free.notes.join('\n')).not.toMatch(/deadline bound|budget bound/);
  });

  it('an empty answer: why nothing was ranked, and what to change', async () => {
    // Llama 3.1 405B fits on no layout of 2 nodes of any priced GPU.
    const LLAMA405 = 'workload: { model: "llama3_1_405b", samples: 1e10 }';
    const r = await recommend(`${LLAMA405}, gpus: ["H100-SXM5-80GB", "B200"], maxNodes: 2, limit: 1`);
    expect(r.plans).toEqual([]);
    const oom = r.rejected.find((x) => x.reason === 'OUT_OF_MEMORY')!.count;
    expect(r.notes[0]).toMatch(
      new RegExp(
        `^no plan: every candidate was turned away; out of GPU memory on up to 2 nodes, with every ZeRO stage, tensor and pipeline parallelism and recomputation searched \\(${oom.toLocaleString('en-US')} candidates\\): allow more nodes \\(maxNodes\\): the fewest on which a layout fits are .*, or choose GPUs with more memory \\(none of the GPU types it did not search holds it on 2 nodes either\\)$`,
      ),
    );
    // Other GPUs it names do hold the model within the request's nodes: Llama 3 70B on one node of
    // A100-40GB does not fit, on one node of each GPU named it does (asked for alone, a plan there).
    const LLAMA70 = 'workload: { model: "llama3_70b", samples: 1e10 }';
    const a100 = await recommend(`${LLAMA70}, gpus: ["A100-SXM4-40GB"], maxNodes: 1, limit: 1`);
    const others =
      /\(a layout fits on 1 node of ([\w-]+(?:, [\w-]+)*), not in gpus: list them; ([\w-]+(?:, [\w-]+)*), not in gpus and which no offer prices: list them with offers or prices, or set objective TIME\)$/.exec(
        a100.notes[0],
      );
    expect(others, a100.notes[0]).not.toBeNull();
    // Those with offers hold it at the cheapest; those without, at the fastest.
    for (const [names, objective] of [
      [others![1], 'COST'],
      [others![2], 'TIME'],
    ])
      for (const gpu of names.split(', ')) {
        const there = await recommend(
          `${LLAMA70}, gpus: ["${gpu}"], objective: ${objective}, maxNodes: 1, limit: 1`,
        );
        expect(there.plans.length, gpu).toBe(1);
      }
    // Every GPU asked for, cheapest first: those turned away for want of a price are named as such.
    const all = await recommend(`${LLAMA405}, maxNodes: 3, limit: 1`);
    expect(all.notes[0]).toMatch(
      /or choose GPUs with more memory \(a layout fits on 3 nodes of B300, GB300, which no offer prices: give offers or prices for them, or set objective TIME\)$/,
    );
    // It names, per GPU, the fewest nodes on which the model fits, fewest GPUs first: asked again
    // with that many nodes the search finds a plan there, and with one fewer it finds none. (The
    // network is given: an offer that states none turns a multi-node plan away for that instead.)
    const named = [
      ...r.notes[0].matchAll(
        /(\d+) nodes of (\d+) ([\w-]+) \((\w+), batch (\d+) per GPU: ([^;]+); ([\d.]+) GB per GPU\)/g,
      ),
    ];
    expect(named.map((m) => m[3])).toEqual(['B200', 'H100-SXM5-80GB']);
    // A mixture of experts fits per EP: searched node by node.
    const MIXTRAL = 'workload: { model: "mixtral_8x7b", samples: 1e10 }';
    const moe = await recommend(`${MIXTRAL}, gpus: ["V100-SXM2-16GB"], maxNodes: 1, limit: 1`);
    const moeNamed = [
      ...moe.notes[0].matchAll(
        /(\d+) nodes of (\d+) ([\w-]+) \((\w+), batch (\d+) per GPU: ([^;]+); ([\d.]+) GB per GPU\)/g,
      ),
    ];
    expect(moeNamed.map((m) => m[3])).toEqual(['V100-SXM2-16GB']);
    expect(moeNamed[0][6]).toMatch(/EP \d+/);
    const cases = [
      [LLAMA405, named],
      [MIXTRAL, moeNamed],
    ] as const;
    for (const [workload, [, nodes, perNode, gpu, precision, batch, layout]] of cases.flatMap(([w, ns]) =>
      ns.map((n) => [w, n] as const),
    )) {
      expect(Number(perNode)).toBe(8);
      expect(Number(nodes)).toBeGreaterThan(2);
      expect(layout).toMatch(/^TP \d+, PP \d+(, EP \d+)?, ZeRO-\d/);
      const at = (n: number) =>
        recommend(
          `${workload}, gpus: ["${gpu}"], objective: TIME, maxNodes: ${n}, interNodeGbps: 400, limit: 1, batchSizes: [${batch}], precisions: [${precision}]`,
        );
      const fits = await at(Number(nodes));
      expect(fits.plans.length, gpu).toBe(1);
      expect(fits.plans[0].nodes).toBe(Number(nodes));
      expect((await at(Number(nodes) - 1)).plans, gpu).toEqual([]);
    }
    // Where nothing fits on any number of nodes (activations do not shard across replicas), it says so.
    const never = await recommend(`${LLAMA405}, gpus: ["T4"], maxNodes: 1, batchSizes: [512], limit: 1`);
    expect(never.notes[0]).toMatch(
      /: no layout fits even on 4,096 nodes of these GPUs at batch 512; choose GPUs with more memory \(none of the GPU types it did not search holds it on 1 node either\)$/,
    );
    // Plain data parallelism says to search the rest.
    const plain = await recommend(
      `${LLAMA405}, gpus: ["B200"], maxNodes: 2, limit: 1, parallelismSearch: OFF`,
    );
    expect(plain.notes[0]).toMatch(
      /^no plan: every candidate was turned away; out of GPU memory on up to 2 nodes with plain data parallelism \([\d,]+ candidates\): search ZeRO, tensor and pipeline parallelism \(parallelismSearch AUTO\), allow more nodes/,
    );
    // Only unpriced GPUs: their price is the reason.
    const unpriced = await recommend(`${RESNET}, gpus: ["RTX-3090"], maxNodes: 1, limit: 1`);
    expect(unpriced.plans).toEqual([]);
    expect(unpriced.notes[0]).toMatch(
      /^no plan: every candidate was turned away; on GPUs no offer prices \([\d,]+ candidates\): give offers or prices for them, or set objective TIME$/,
    );
    // A deadline nothing meets: the deadline, not the unpriced GPUs every search turns away.
    const late = await recommend(`${RESNET}, maxNodes: 1, limit: 1, deadlineHours: 0.001`);
    expect(late.plans).toEqual([]);
    expect(late.notes[0]).toMatch(
      /^no plan: every candidate was turned away; finishing after the deadline \([\d,]+ candidates\): allow more hours \(deadlineHours: the fastest of them is 1 x \d+ [\w-]+ at \w+, batch \d+: [\d.]+ h, \$[\d.,]+\) or more nodes(; out of GPU memory .*)?$/,
    );
    // It is the fastest: with 1% more hours allowed the plan found is the one it named, as the
    // notes print hours and dollars (three significant digits below 10 h and $100).
    const hoursAsPrinted = (x: number) => (x < 10 ? x.toPrecision(3) : String(Math.round(x)));
    const usdAsPrinted = (x: number) => (x < 100 ? x.toPrecision(3) : Math.round(x).toLocaleString('en-US'));
    const shownHours = /the fastest of them is .*?: ([\d.]+) h/.exec(late.notes[0])![1];
    const fastest = Number(shownHours);
    const met = await recommend(`${RESNET}, maxNodes: 1, limit: 1, deadlineHours: ${fastest * 1.01}`);
    expect(hoursAsPrinted(met.plans[0].totalHours)).toBe(shownHours);
    expect(met.plans[0].totalHours).toBeLessThanOrEqual(fastest * 1.01);
    // A budget nothing meets: the cheapest of what it turned away, which a budget of its cost admits.
    const dear = await recommend(`${RESNET}, maxNodes: 1, limit: 1, budgetUsd: 0.01`);
    expect(dear.plans).toEqual([]);
    expect(dear.notes[0]).toMatch(
      /^no plan: every candidate was turned away; costing more than the budget \([\d,]+ candidates\): raise budgetUsd \(the cheapest of them is 1 x \d+ [\w-]+ at \w+, batch \d+: [\d.]+ h, \$[\d.,]+\)/,
    );
    const shownUsd = /the cheapest of them is .*?, \$([\d.,]+)\)/.exec(dear.notes[0])![1];
    const cheapest = Number(shownUsd.replace(/,/g, ''));
    const afforded = await recommend(`${RESNET}, maxNodes: 1, limit: 1, budgetUsd: ${cheapest * 1.01}`);
    expect(usdAsPrinted(afforded.plans[0].costUsd!)).toBe(shownUsd);
    expect(afforded.plans[0].costUsd!).toBeLessThanOrEqual(cheapest * 1.01);
    expect(late.notes.join('\n')).toMatch(/^deadline bound the answer: a better plan \(/m);
    // An answer with plans says none of it.
    expect((await recommend(`${RESNET}, maxNodes: 1, limit: 1`)).notes.join('\n')).not.toMatch(/no plan/);
  });

  it('the global batch cap: scaling out no longer inflates the global batch without bound', async () => {
    // GPT-2 XL has no measured or published run: 64 GPUs at its largest default batch (4).
    const GPT2 = 'workload: { model: "gpt2_1558m", samples: 2e9 }';
    const r = await recommend(`${GPT2}, gpus: ["H100-SXM5-80GB"], objective: TIME, maxNodes: 16, limit: 5`);
    for (const p of r.plans)
      expect(p.batchSizePerGpu * p.gradAccumSteps * p.parallelism.dataParallel).toBeLessThanOrEqual(256);
    expect(r.rejected.find((x) => x.reason === 'GLOBAL_BATCH_TOO_LARGE')!.count).toBeGreaterThan(0);
    expect(r.notes.join('\n')).toMatch(
      /global batch cap bound the search: \d+ candidates would train with a global batch above 256 \(this model's usual: 64 GPUs at its largest listed batch, 4, as no run or recipe of it states one\)/,
    );
    const raised = await recommend(
      `${GPT2}, gpus: ["H100-SXM5-80GB"], objective: TIME, maxNodes: 16, limit: 1, maxGlobalBatch: 1000000`,
    );
    expect(raised.rejected.find((x) => x.reason === 'GLOBAL_BATCH_TOO_LARGE')).toBeUndefined();
    const fixed = await recommend(
      `${GPT2}, gpus: ["H100-SXM5-80GB"], maxNodes: 16, limit: 1, globalBatch: 1024`,
    );
    expect(fixed.notes.join('\n')).toMatch(
      /warning: plan 1 trains with a global batch of 1024 sequences, above this model's usual range \(up to 256: 64 GPUs at its largest listed batch, 4, as no run or recipe of it states one\)/,
    );
  });

  it("Llama 2's usual global batch is its published recipe's: 4M tokens, 1,024 sequences, is not warned of", async () => {
    // llm_campaign_gpu_hours.csv: "4M" tokens, at most 4.5M rounded, 1,098 sequences of 4,096.
    expect(usualGlobalBatch(getModel('llama2_7b')!)).toBe(Math.floor(4.5e6 / 4096));
    // Llama-2-70B's published scaling runs went to 4,096 sequences of 4,096 (llm_train.csv).
    expect(usualGlobalBatch(getModel('llama2_70b')!)).toBe(4096);
    const recipe = await recommend(
      `${LLAMA}, gpus: ["H100-SXM5-80GB"], maxNodes: 16, limit: 1, globalBatch: 1024`,
    );
    expect(recipe.plans.length).toBe(1);
    expect(recipe.notes.join('\n')).not.toMatch(/usual range/);
    const twice = await recommend(
      `${LLAMA}, gpus: ["H100-SXM5-80GB"], maxNodes: 16, limit: 1, globalBatch: 2048`,
    );
    expect(twice.notes.join('\n')).toMatch(
      /warning: plan 1 trains with a global batch of 2048 sequences, above this model's usual range \(up to 1098: the largest its published runs or pre-training recipe used\)/,
    );
  });

  it('default batch sizes used for a custom model', async () => {
    const config = JSON.stringify({
      architectures: ['LlamaForCausalLM'],
      model_type: 'llama',
      hidden_size: 2048,
      intermediate_size: 5632,
      num_attention_heads: 32,
      num_key_value_heads: 4,
      num_hidden_layers: 22,
      vocab_size: 32000,
      max_position_embeddings: 2048,
    });
    const r = await run(
      `query($c: String!) { recommend(input: { workload: { customModel: { huggingFaceConfig: $c }, samples: 1e9 }, gpus: ["H100-SXM5-80GB"], maxNodes: 1 }) { notes } }`,
      { c: config },
    );
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect(r.data!.recommend.notes.join('\n')).toMatch(
      /warning: a custom model was searched at default batch sizes per GPU \(1, 2, 4, 8, 16, 32\)/,
    );
  });
});

describe('offers another makes pointless (dominated)', () => {
  const option = (
    usdPerNode: number,
    interNodeGbps: number,
    networkAssumed: boolean,
    interNodeTransport: NetworkTransport = 'RDMA',
  ): PricingOption => ({
    offerIndex: 0,
    offer: null,
    maxPerNode: 8,
    interNodeGbps,
    interNodeTransport,
    networkSource: networkAssumed ? 'assumed' : 'the offer',
    networkAssumed,
    nodeUsdPerHour: () => usdPerNode,
  });
  // A stated 3,200 Gbps offer, two on the assumed 200 Gbps (a cheaper and a dearer one), and a
  // stated 100 Gbps one cheaper than all.
  const options = [
    option(50, 3200, false),
    option(20, 200, true),
    option(30, 200, true),
    option(10, 100, false),
  ];

  it('on one node only the cheapest offer is kept: the network plays no part', () => {
    expect(dominated(options, 8, false)).toEqual([true, true, true, false]);
  });

  it('across nodes an offer on an assumed network hides only dearer ones assumed alike, never one whose network is stated', () => {
    // The stated 3,200 Gbps offer stands (no one is as fast); the dearer assumed offer is hidden by the
    // cheaper one on the same assumed network, which itself stands (the notes name its plans); the
    // stated 100 Gbps offer stands: the assumed offers are dearer, and it is the cheapest.
    expect(dominated(options, 8, true)).toEqual([false, false, true, false]);
  });

  it('across nodes a network is as fast as NCCL runs on it: Ethernet at its TCP fraction of the line rate', () => {
    const { networkEfficiency, tcpNetworkEfficiency } = loadEfficiency();
    expect(tcpNetworkEfficiency).toBeLessThan(networkEfficiency);
    // 100 Gbps of EFA against a cheaper 100 Gbps of Ethernet: the Ethernet is slower, so both stand.
    const same = [option(30, 100, false), option(20, 100, false, 'TCP')];
    expect(dominated(same, 8, true)).toEqual([false, false]);
    // Ethernet fast enough at its TCP fraction to outrun the dearer RDMA network makes it pointless.
    const faster = (100 * networkEfficiency) / tcpNetworkEfficiency + 1;
    expect(dominated([option(30, 100, false), option(20, faster, false, 'TCP')], 8, true)).toEqual([
      true,
      false,
    ]);
  });
});
