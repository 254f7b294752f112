import { describe, expect, it } from 'vitest';
import { apolloForTests } from './graphql-client.js';
import { usable } from '../optimizer/fleet.js';
import { shutdownSolverWorkers } from '../optimizer/milp/solver.js';
import {
  breakEvens,
  planProcurement,
  verifyProcurementPlan,
  type ProcurementPlan,
  type ProcurementRequest,
} from '../optimizer/procurement.js';
import { recommend } from '../optimizer/recommend.js';
import { getModel } from '../predictor/zoo/index.js';
import { getGpu, loadEfficiency } from '../seeds/catalog.js';

const eff = loadEfficiency();

const run = apolloForTests(() => shutdownSolverWorkers());

const A100 = getGpu('A100-SXM4-80GB')!,
  L4 = getGpu('L4')!;
const H = 12;
const request = (rentA100: number, runs: [number, number]): ProcurementRequest => ({
  jobs: [
    {
      id: 'bert',
      model: getModel('bert_large_squad')!,
      samples: 1e8,
      runsByMonth: new Array(H).fill(runs[0]),
      deadlineHours: 240,
      batchSizes: [32],
    },
    {
      id: 'rn50',
      model: getModel('resnet50_v1.5')!,
      samples: 6.4e8,
      runsByMonth: new Array(H).fill(runs[1]),
      deadlineHours: 150,
      batchSizes: [128],
    },
  ],
  horizonMonths: H,
  hoursPerMonth: 730,
  options: [
    {
      gpu: A100,
      buy: {
        usdPerGpu: 12000,
        lifetimeMonths: 36,
        powerW: 400,
        electricityUsdPerKwh: 0.15,
        utilization: 0.85,
      },
      rentUsdPerGpuHour: rentA100,
    },
    { gpu: L4, buy: null, rentUsdPerGpuHour: 0.9 },
  ],
  precisions: ['AMP_FP16', 'FP32'],
  gpusPerNodeChoices: [1, 2, 4],
  maxNodes: 1,
  interNodeGbps: () => 200,
  solve: { timeLimitSeconds: 10 },
  efficiency: loadEfficiency(),
});

/**
 * Brute force over every schedule of GPUs in service, month by month (nondecreasing, none before the
 * lead time lets an order arrive), and every split of each month's runs of each job over all its
 * owned configurations and renting: dynamic programming over the months with the count in service
 * as the state. Each GPU in service costs price / lifetime a month (its capital spread over the
 * months it serves), so the total is the sum over months.
 */
function bruteForce(r: ProcurementRequest): number {
  const buy = r.options[0].buy!;
  const plans = (gpu: typeof A100, j: number) =>
    recommend(
      {
        model: r.jobs[j].model,
        samples: r.jobs[j].samples,
        objective: 'TIME',
        deadlineHours: r.jobs[j].deadlineHours,
        gpus: [gpu],
        precisions: r.precisions,
        maxNodes: r.maxNodes,
        gpusPerNodeChoices: r.gpusPerNodeChoices,
        batchSizes: r.jobs[j].batchSizes!,
        interNodeGbps: r.interNodeGbps,
        limit: 1e9,
        parallelismSearch: 'auto',
      },
      eff,
    )
      .plans.filter(usable)
      .map((p) => ({ gpus: p.nodes * p.gpusPerNode, gpuh: p.totalHours * p.nodes * p.gpusPerNode }));
  const owned = r.jobs.map((_, j) => plans(A100, j));
  const rentPerRun = r.jobs.map((_, j) =>
    Math.min(
      ...r.options
        .filter((o) => o.rentUsdPerGpuHour !== null)
        .flatMap((o) => plans(o.gpu, j).map((p) => p.gpuh * o.rentUsdPerGpuHour!)),
    ),
  );
  const peak = r.jobs.map((j) => Math.max(...j.runsByMonth));
  const power = (buy.powerW / 1000) * buy.electricityUsdPerKwh;
  const cap = r.hoursPerMonth * buy.utilization;
  const maxN =
    Math.ceil(peak.reduce((s, R, j) => s + R * Math.max(0, ...owned[j].map((p) => p.gpuh)), 0) / cap) + 4;
  // All splits of R runs into k parts.
  const splits = (R: number, k: number): number[][] =>
    k === 1
      ? [[R]]
      : Array.from({ length: R + 1 }, (_, a) => splits(R - a, k - 1).map((rest) => [a, ...rest])).flat();
  /** Least power and rental cost of one month's runs with n GPUs in service. */
  const operating = (runs: number[], n: number) => {
    let best = Infinity;
    const perJob = r.jobs.map((_, j) => splits(runs[j], owned[j].length + 1));
    for (const s0 of perJob[0])
      for (const s1 of perJob[1]) {
        let gpuh = 0,
          monthly = 0,
          ok = true;
        for (const [j, s] of [s0, s1].entries()) {
          owned[j].forEach((p, k) => {
            if (s[k] > 0) {
              if (p.gpus > n) ok = false;
              gpuh += s[k] * p.gpuh;
              monthly += s[k] * p.gpuh * power;
            }
          });
          monthly += s[owned[j].length] * rentPerRun[j];
        }
        if (ok && gpuh <= n * cap + 1e-9) best = Math.min(best, monthly);
      }
    return best;
  };
  const perGpuMonth = buy.usdPerGpu / buy.lifetimeMonths;
  const lead = buy.leadTimeMonths ?? 0;
  let cost = Array.from({ length: maxN + 1 }, (_, n) => (n === 0 ? 0 : Infinity));
  for (let m = 1; m <= H; m++) {
    const runs = r.jobs.map((job) => job.runsByMonth[m - 1]);
    const next = cost.map((_, n) => {
      if (n > 0 && m <= lead) return Infinity;
      const before = Math.min(...cost.slice(0, n + 1));
      return before + n * perGpuMonth + operating(runs, n);
    });
    cost = next;
  }
  const best = Math.min(...cost);
  return best;
}

describe('planProcurement (library)', () => {
  it('the optimum equals brute-force enumeration over purchases and run splits, on instances that buy, rent, and mix', async () => {
    const kinds = new Set<string>();
    for (const [rent, runs] of [
      [1.2, [1, 1]],
      [2.0, [4, 2]],
      [2.0, [3, 5]],
      [2.6, [2, 7]],
      [1.2, [5, 1]],
      [2.6, [5, 1]],
    ] as [number, [number, number]][]) {
      const r = request(rent, runs);
      const bf = bruteForce(r);
      const p = await planProcurement(r);
      expect(p.status, `rent ${rent}`).toBe('OPTIMAL');
      expect(p.totalUsd!, `rent ${rent} runs ${runs}`).toBeCloseTo(bf, 4);
      expect(await verifyProcurementPlan(r, p)).toEqual([]);
      const owned = p.allocations.some((a) => a.owned),
        rented = p.allocations.some((a) => !a.owned);
      kinds.add(owned && rented ? 'mix' : owned ? 'buy' : 'rent');
    }
    expect([...kinds].sort()).toEqual(['buy', 'mix', 'rent']);
  });

  it('reports the cost split and a break-even utilization that matches the formula', async () => {
    const r = request(2.6, [3, 5]);
    const p = await planProcurement(r);
    expect(p.capitalUsd! + p.powerUsd! + p.rentalUsd!).toBeCloseTo(p.totalUsd!, 6);
    const b = p.breakEven.find((x) => x.gpu.id === A100.id)!;
    const capM = 12000 / 36,
      pwr = 0.4 * 0.15;
    expect(b.breakEvenUtilization!).toBeCloseTo(capM / (730 * (2.6 - pwr)), 9);
    if (p.purchases.length) expect(b.plannedUtilization).toBeGreaterThan(0);
    expect(p.breakEven.map((x) => x.gpu.id)).toEqual([A100.id]); // L4 can only be rented
    // Renting cheaper than the electricity: buying never pays.
    expect(
      breakEvens({
        hoursPerMonth: 730,
        options: [
          {
            gpu: A100,
            buy: { usdPerGpu: 1, lifetimeMonths: 1, powerW: 1000, electricityUsdPerKwh: 1, utilization: 1 },
            rentUsdPerGpuHour: 0.5,
          },
        ],
      })[0],
    ).toMatchObject({ breakEvenUtilization: null });
  });

  it('months with different runs are planned month by month (identical months share variables)', async () => {
    const r = request(2.6, [3, 5]);
    r.jobs[1].runsByMonth = [5, 5, 5, 5, 12, 12, 12, 12, 5, 5, 5, 5];
    const p = await planProcurement(r);
    expect(p.status).toBe('OPTIMAL');
    expect(await verifyProcurementPlan(r, p)).toEqual([]);
    for (const m of p.months) expect(m.ownedGpuHours).toBeLessThanOrEqual(m.ownedCapacityGpuHours + 1e-6);
    const carried = (month: number) =>
      p.allocations
        .filter((a) => a.jobId === 'rn50' && a.months.includes(month))
        .reduce((s, a) => s + a.runsPerMonth, 0);
    expect(carried(5)).toBe(12);
    expect(carried(1)).toBe(5);
    expect(p.stats.variables).toBeLessThan(80); // three segments of consecutive months, not twelve
  });

  it('purchases are scheduled: growing demand buys more later, a lead time rents until the order arrives; both equal brute force over every monthly schedule', async () => {
    // Half a year of light work, then the full portfolio: buying for it in month 1 pays six idle months.
    const growth = request(2.6, [3, 5]);
    growth.jobs[0].runsByMonth = [0, 0, 0, 0, 0, 0, 3, 3, 3, 3, 3, 3];
    growth.jobs[1].runsByMonth = [1, 1, 1, 1, 1, 1, 5, 5, 5, 5, 5, 5];
    const p = await planProcurement(growth);
    expect(p.status).toBe('OPTIMAL');
    expect(await verifyProcurementPlan(growth, p)).toEqual([]);
    expect(p.totalUsd!).toBeCloseTo(bruteForce(growth), 4);
    expect(p.orders.map((o) => o.arrivalMonth)).toContain(7);
    // Capital is charged from arrival: a GPU arriving in month 7 serves 6 of the 12 months.
    for (const o of p.orders)
      expect(o.capitalUsd).toBeCloseTo((o.count * 12000 * (12 - o.arrivalMonth + 1)) / 36, 6);

    const lead = request(2.6, [3, 5]);
    lead.options[0] = { ...lead.options[0], buy: { ...lead.options[0].buy!, leadTimeMonths: 3 } };
    const q = await planProcurement(lead);
    expect(q.status).toBe('OPTIMAL');
    expect(await verifyProcurementPlan(lead, q)).toEqual([]);
    expect(q.totalUsd!).toBeCloseTo(bruteForce(lead), 4);
    for (const o of q.orders) expect(o.arrivalMonth).toBe(o.orderMonth + 3);
    for (const m of q.months.slice(0, 3)) {
      expect(m.ownedGpus).toEqual([]);
      expect(m.ownedGpuHours).toBe(0);
    }
    expect(q.months[3].ownedGpus.length).toBeGreaterThan(0);
  });

  it('infeasible portfolios say which job and why: memory, deadline, purchase cap without renting', async () => {
    const mem = request(2, [1, 1]);
    mem.jobs[0] = { ...mem.jobs[0], model: getModel('llama2_70b')!, batchSizes: [1] };
    const a = await planProcurement(mem);
    expect(a.status).toBe('INFEASIBLE');
    expect(a.unplaced[0]).toMatchObject({ jobId: 'bert', reason: 'MEMORY' });

    const slow = request(2, [1, 1]);
    slow.jobs[1].deadlineHours = 0.01;
    expect((await planProcurement(slow)).unplaced[0]).toMatchObject({ jobId: 'rn50', reason: 'DEADLINE' });

    const capped = request(2, [5, 7]);
    capped.options = [
      { ...capped.options[0], buy: { ...capped.options[0].buy!, maxCount: 1 }, rentUsdPerGpuHour: null },
    ];
    const c = await planProcurement(capped);
    expect(c.status).toBe('INFEASIBLE');
    expect(c.unplaced.length).toBeGreaterThan(0);
    expect(c.unplaced[0].reason).toBe('INVENTORY');
    expect(c.unplaced[0].message).toMatch(
      /cannot be rented, and the GPUs that may be bought \(maxCount\) cannot carry all its runs; short in month 1: \d+ of \d+ runs/,
    );
  });

  it('a monthly Llama-2-13B fine-tune is planned on A100-80GB nodes with a sharded layout (plain data parallelism does not fit)', async () => {
    const r = request(2, [1, 1]);
    r.jobs = [
      {
        id: 'llama13',
        model: getModel('llama2_13b')!,
        samples: 2e8,
        runsByMonth: new Array(H).fill(2),
        deadlineHours: 300,
      },
    ];
    r.options = [r.options[0]];
    r.precisions = ['AMP_BF16'];
    r.gpusPerNodeChoices = [8];
    const p = await planProcurement(r);
    expect(p.status).toBe('OPTIMAL');
    expect(await verifyProcurementPlan(r, p)).toEqual([]);
    for (const a of p.allocations) {
      const l = a.config.parallelism;
      expect(l.zeroStage > 0 || l.tensorParallel > 1 || l.pipelineParallel > 1).toBe(true);
    }
  });

  it('verification rejects planted wrong plans: a dropped run, over-capacity, a wrong total, a config bigger than the GPUs bought', async () => {
    const r = request(2.6, [3, 5]);
    const good = await planProcurement(r);
    expect(good.purchases.length).toBeGreaterThan(0);
    const tweak = async (f: (p: ProcurementPlan) => void) => {
      const p = structuredClone(good);
      f(p);
      return (await verifyProcurementPlan(r, p)).join(' ');
    };
    expect(
      await tweak((p) => {
        p.allocations[0].runsPerMonth -= 1;
      }),
    ).toMatch(/runs planned, \d+ needed/);
    expect(
      await tweak((p) => {
        p.orders = [];
      }),
    ).toMatch(/owned A100-SXM4-80GB needed at once, 0 in service/);
    expect(
      await tweak((p) => {
        p.orders[0].arrivalMonth += 1;
      }),
    ).toMatch(/arrives in \d+; the lead time is 0 months/);
    expect(
      await tweak((p) => {
        p.totalUsd! *= 0.95;
      }),
    ).toMatch(/total reported/);
    expect(
      await tweak((p) => {
        const o = p.allocations.find((a) => a.owned)!;
        o.runsPerMonth += 500;
      }),
    ).toMatch(/owned GPU-hours planned, capacity|runs planned/);
  });
});

describe('planProcurement over GraphQL', () => {
  const Q = (
    args: string,
  ) => `{ planProcurement(input: { horizonMonths: 12, jobs: [{ id: "rn50", workload: { model: "resnet50_v1.5", samples: 1.28e8 }, runsPerMonth: 9, deadlineHours: 30, batchSizes: [128] }],
    precisions: [AMP_FP16], maxNodes: 1, ${args} }) { status solver optimalityProven objectiveValue cost { capitalUsd powerUsd rentalUsd totalUsd allRentUsd }
    purchases { gpu { id } count utilization } allocations { jobId owned runsPerMonth months config { gpu { id } totalGpus gpusPerNode batchSizePerGpu precision hoursPerRun usdPerRun harness { commands } } }
    breakEven { gpu { id } breakEvenUtilization plannedUtilization note } unplaced { jobId reason message } } }`;

  // Runs are costed on the memory format the request states (eager PyTorch's NCHW unless
  // channelsLast), and the plan says so as recommend does.
  it('costs 16-bit convolutions on NCHW unless channelsLast says otherwise, and notes it', async () => {
    const plan = async (extra: string) => {
      const r = await run(
        `{ planProcurement(input: { horizonMonths: 3, jobs: [{ id: "rn50", workload: { model: "resnet50_v1.5", samples: 1.28e8 }, runsPerMonth: 2, batchSizes: [128] }],
          precisions: [AMP_FP16], gpusPerNode: [8], maxNodes: 1, options: [{ gpu: "A100-SXM4-80GB", rentUsdPerGpuHour: 2.6 }]${extra} }) {
          status notes allocations { config { hoursPerRun } } } }`,
      );
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      expect(r.data!.planProcurement.status).toBe('OPTIMAL');
      return r.data!.planProcurement as {
        notes: string[];
        allocations: { config: { hoursPerRun: number } }[];
      };
    };
    const nchw = await plan('');
    const nhwc = await plan(', channelsLast: true');
    expect(nchw.notes.filter((n) => /NCHW/.test(n))).toHaveLength(1);
    expect(nhwc.notes.filter((n) => /NCHW/.test(n))).toHaveLength(0);
    expect(nchw.allocations[0].config.hoursPerRun / nhwc.allocations[0].config.hoursPerRun).toBeGreaterThan(
      1.1,
    );
  });

  // Runs across nodes are costed on the network the request states, over the transport it states.
  it('costs runs across Ethernet-only nodes over TCP when interNodeTransport says so', async () => {
    const plan = async (transport: string) => {
      const r = await run(
        `{ planProcurement(input: { horizonMonths: 3, jobs: [{ id: "rn50", workload: { model: "resnet50_v1.5", samples: 1.28e8 }, runsPerMonth: 2, deadlineHours: 4, batchSizes: [128] }],
          precisions: [AMP_FP16], gpusPerNode: [4], maxNodes: 4, interNodeGbps: 25, interNodeTransport: ${transport}, options: [{ gpu: "A100-SXM4-80GB", rentUsdPerGpuHour: 2.6 }] }) {
          status allocations { config { nodes hoursPerRun } } } }`,
      );
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      expect(r.data!.planProcurement.status).toBe('OPTIMAL');
      return (
        r.data!.planProcurement as { allocations: { config: { nodes: number; hoursPerRun: number } }[] }
      ).allocations[0].config;
    };
    const tcp = await plan('TCP'),
      rdma = await plan('RDMA');
    // One node of four takes about 6 h: both run across nodes, the TCP one slower.
    expect(tcp.nodes).toBeGreaterThan(1);
    expect(rdma.nodes).toBeGreaterThan(1);
    if (tcp.nodes === rdma.nodes) expect(tcp.hoursPerRun).toBeGreaterThan(rdma.hoursPerRun);
    else expect(tcp.nodes).toBeGreaterThan(rdma.nodes);
  });

  it('answers with purchases, allocations, the cost split and break-even per GPU type', async () => {
    const r = await run(
      Q(
        'options: [{ gpu: "A100-SXM4-80GB", buy: { usdPerGpu: 12000, lifetimeMonths: 36 }, rentUsdPerGpuHour: 2.6 }, { gpu: "L4", rent: true }]',
      ),
    );
    expect(r.errors).toBeUndefined();
    const p = r.data!.planProcurement;
    expect(p.status).toBe('OPTIMAL');
    expect(p.cost.capitalUsd + p.cost.powerUsd + p.cost.rentalUsd).toBeCloseTo(p.cost.totalUsd, 6);
    expect(p.objectiveValue).toBeCloseTo(p.cost.totalUsd, 6);
    expect(p.breakEven[0].gpu.id).toBe('A100-SXM4-80GB');
    expect(p.breakEven[0].note).toMatch(/buying pays/);
    // Each run configuration says how to time it on your own GPUs, at its batch and precision.
    for (const { config } of p.allocations) {
      expect(config.harness.commands[0]).toBe('npx trainplan harness --model resnet50_v1.5 --out measure.py');
      expect(config.harness.commands[1]).toMatch(
        new RegExp(
          `^python3 measure\\.py --batch-size ${config.batchSizePerGpu} --precision ${config.precision}${config.gpusPerNode > 1 ? ` --gpus ${config.gpusPerNode}` : ''} --out runs\\.csv$`,
        ),
      );
    }
  });

  it('orders with a lead time: when to order, when the GPUs arrive, what is in service each month', async () => {
    const r =
      await run(`{ planProcurement(input: { horizonMonths: 12, jobs: [{ id: "rn50", workload: { model: "resnet50_v1.5", samples: 1.28e8 }, runsPerMonth: 9, deadlineHours: 30, batchSizes: [128] }],
      precisions: [AMP_FP16], maxNodes: 1,
      options: [{ gpu: "A100-SXM4-80GB", buy: { usdPerGpu: 12000, lifetimeMonths: 36, leadTimeMonths: 2 }, rentUsdPerGpuHour: 2.6 }] }) {
      status orders { gpu { id } count orderMonth arrivalMonth capitalUsd } months { month rentedGpuHours ownedGpus { gpu { id } count } } } }`);
    expect(r.errors).toBeUndefined();
    const p = r.data!.planProcurement;
    expect(p.status).toBe('OPTIMAL');
    expect(p.orders.length).toBeGreaterThan(0);
    for (const o of p.orders) expect(o.arrivalMonth).toBe(o.orderMonth + 2);
    expect(p.months[0].ownedGpus).toEqual([]);
    expect(p.months[0].rentedGpuHours).toBeGreaterThan(0);
    expect(p.months[2].ownedGpus[0].gpu.id).toBe('A100-SXM4-80GB');
  });

  it.each([
    ['options: []', /^options: must list at least one GPU type/],
    [
      'options: [{ gpu: "A100-SXM4-80GB", rent: false }]',
      /^options\[0\]: A100-SXM4-80GB can be neither bought/,
    ],
    [
      'options: [{ gpu: "RTX-3090" }]',
      /^options\[0\]\.rentUsdPerGpuHour: no offer rents RTX-3090: give rentUsdPerGpuHour, an offer for it in offers, or set rent: false/,
    ],
    [
      'options: [{ gpu: "A100-SXM4-80GB", buy: { usdPerGpu: 12000, utilization: 1.5 } }]',
      /^options\[0\]\.buy\.utilization: must be a finite number from 0.01 to 1/,
    ],
    [
      'options: [{ gpu: "A100-SXM4-80GB", buy: { usdPerGpu: -1 } }]',
      /^options\[0\]\.buy\.usdPerGpu: must be 0 or a finite number from 0.01/,
    ],
    ['options: [{ gpu: "T4" }, { gpu: "T4" }]', /^options\[1\]\.gpu: T4 is listed twice/],
  ])('bad input %# is BAD_USER_INPUT naming the field', async (args, message) => {
    const r = await run(Q(args));
    expect(r.errors?.[0].extensions?.code, JSON.stringify(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0].message).toMatch(message);
  });

  it('runsByMonth must cover the horizon', async () => {
    const r = await run(
      `{ planProcurement(input: { horizonMonths: 3, jobs: [{ id: "a", workload: { model: "resnet50_v1.5", samples: 1e8 }, runsPerMonth: 1, runsByMonth: [1, 2] }], options: [{ gpu: "T4" }] }) { status } }`,
    );
    expect(r.errors![0].message).toMatch(
      /^jobs\[0\]\.runsByMonth: must list one entry per month of the horizon \(3; got 2\)/,
    );
  });
});
