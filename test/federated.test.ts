import { describe, expect, it } from 'vitest';
import { apolloForTests } from './graphql-client.js';
import {
  breakpointSearch,
  clientOptions,
  customGpuSpec,
  dropoutsToTolerate,
  planFederatedRound,
  successProbability,
  transferSeconds,
  verifyFederatedPlan,
  type FederatedClient,
  type FederatedPlan,
  type FederatedRequest,
} from '../optimizer/federated.js';
import { shutdownSolverWorkers } from '../optimizer/milp/solver.js';
import { learnedPredictor } from '../predictor/learned/model.js';
import { unsupportedReason } from '../predictor/precision.js';
import { getModel } from '../predictor/zoo/index.js';
import { getGpu, loadEfficiency } from '../seeds/catalog.js';

const run = apolloForTests(() => shutdownSolverWorkers());

const model = getModel('resnet50_v1.5')!;
const jetson = customGpuSpec({
  name: 'jetson-orin',
  peakTflops: { fp32: 5.3, fp16: 42 },
  memoryBwGbps: 204,
  memoryGb: 32,
});
const clients: FederatedClient[] = [
  { id: 'a', gpu: getGpu('T4')!, samplesAvailable: 150, uplinkMbps: 20, downlinkMbps: 100 },
  { id: 'b', gpu: jetson, samplesAvailable: 130, uplinkMbps: 50, downlinkMbps: 200 },
  { id: 'c', gpu: getGpu('A10G')!, samplesAvailable: 100, uplinkMbps: 8, downlinkMbps: 40 },
  { id: 'd', gpu: getGpu('RTX-4090')!, samplesAvailable: 170, uplinkMbps: 100, downlinkMbps: 500 },
];
const base: FederatedRequest = {
  model,
  clients,
  minSamplesPerRound: 300,
  allowDropout: true,
  precisions: ['FP32', 'AMP_FP16', 'AMP_BF16'],
  batchSizes: [16, 32],
  maxLocalSteps: 5,
  bytesPerParameter: 4,
  solve: { timeLimitSeconds: 10 },
  efficiency: loadEfficiency(),
};

/** Every (option, steps) per client, or sitting out where allowed: the least round time reaching the samples. */
async function bruteForce(r: FederatedRequest): Promise<number> {
  const { all } = await clientOptions(r);
  const tr = r.clients.map((c) => transferSeconds(r.model, c, r.bytesPerParameter));
  const choices = all.map((opts, i) => {
    const list: { samples: number; time: number }[] = r.allowDropout ? [{ samples: 0, time: 0 }] : [];
    for (const o of opts)
      for (let s = 1; s <= o.maxSteps; s++)
        list.push({
          samples: s * o.batchSizePerGpu * r.model.unitsPerBatchElement,
          time: tr[i] + s * o.stepSeconds,
        });
    return list;
  });
  let best = Infinity;
  const walk = (i: number, samples: number, time: number) => {
    if (time >= best) return;
    if (i === choices.length) {
      if (samples >= r.minSamplesPerRound) best = time;
      return;
    }
    for (const c of choices[i]) walk(i + 1, samples + c.samples, Math.max(time, c.time));
  };
  walk(0, 0, 0);
  return best;
}

/** Per client every (option, steps) choice, and sitting out where allowed: samples and time. */
async function choicesOf(r: FederatedRequest) {
  const { all } = await clientOptions(r);
  const tr = r.clients.map((c) => transferSeconds(r.model, c, r.bytesPerParameter));
  return all.map((opts, i) => {
    const list: { samples: number; time: number }[] = r.allowDropout ? [{ samples: 0, time: 0 }] : [];
    for (const o of opts)
      for (let s = 1; s <= o.maxSteps; s++)
        list.push({
          samples: s * o.batchSizePerGpu * r.model.unitsPerBatchElement,
          time: tr[i] + s * o.stepSeconds,
        });
    return list;
  });
}

/** Probability that the completing clients reach `need`, by enumerating every subset of completions. */
function subsetProbability(samples: number[], availability: number[], need: number): number {
  let p = 0;
  for (let mask = 0; mask < 1 << samples.length; mask++) {
    let q = 1,
      total = 0;
    samples.forEach((x, i) => {
      const done = (mask >> i) & 1;
      q *= done ? availability[i] : 1 - availability[i];
      total += done ? x : 0;
    });
    if (total >= need) p += q;
  }
  return p;
}

/** The least round time over every choice per client whose exact success probability reaches alpha. */
async function bruteForceChance(r: FederatedRequest, alpha: number): Promise<number> {
  const choices = await choicesOf(r);
  const availability = r.clients.map((c) => c.availability ?? 1);
  let best = Infinity;
  const pick: number[] = [];
  const walk = (i: number, time: number) => {
    if (time >= best) return;
    if (i === choices.length) {
      if (subsetProbability(pick, availability, r.minSamplesPerRound) >= alpha) best = time;
      return;
    }
    for (const c of choices[i]) {
      pick[i] = c.samples;
      walk(i + 1, Math.max(time, c.time));
    }
  };
  walk(0, 0);
  return best;
}

/**
 * Brute force over a cycle of rounds with a participation floor (every participant completes):
 * per set of participants the least round time reaching the samples (every member training at least
 * one step), then every assignment of sets to the rounds that gives each client its floor.
 */
async function bruteForceCycle(r: FederatedRequest, rounds: number, floor: number): Promise<number> {
  const choices = await choicesOf(r);
  const n = choices.length;
  const bestBySet = new Array<number>(1 << n).fill(Infinity);
  const walk = (i: number, set: number, samples: number, time: number) => {
    if (time >= bestBySet[set] && i === n) return;
    if (i === n) {
      if (samples >= r.minSamplesPerRound) bestBySet[set] = Math.min(bestBySet[set], time);
      return;
    }
    for (const c of choices[i])
      walk(i + 1, c.samples > 0 ? set | (1 << i) : set, samples + c.samples, Math.max(time, c.time));
  };
  walk(0, 0, 0, 0);
  let best = Infinity;
  const sets: number[] = [];
  const assign = (k: number, total: number) => {
    if (total >= best) return;
    if (k === rounds) {
      for (let i = 0; i < n; i++) if (sets.filter((x) => (x >> i) & 1).length < floor) return;
      best = total;
      return;
    }
    for (let set = 0; set < 1 << n; set++) {
      if (bestBySet[set] === Infinity) continue;
      sets[k] = set;
      assign(k + 1, total + bestBySet[set]);
    }
  };
  assign(0, 0);
  return best;
}

/** Seeded dropout simulation: the share of rounds whose completing clients reach the samples. */
function simulate(plan: FederatedPlan, r: FederatedRequest, draws: number, seed: number): number {
  let s = seed;
  const rnd = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const availability = new Map(r.clients.map((c) => [c.id, c.availability ?? 1]));
  let ok = 0;
  for (let k = 0; k < draws; k++) {
    const total = plan.clients.reduce(
      (t, c) => t + (c.participates && rnd() < availability.get(c.id)! ? c.samples : 0),
      0,
    );
    if (total >= r.minSamplesPerRound) ok++;
  }
  return ok / draws;
}

describe('planFederatedRound (library)', () => {
  it.each([true, false])(
    'the round time equals brute-force enumeration of every option and step count (allowDropout %s)',
    async (allowDropout) => {
      for (const minSamplesPerRound of [100, 300, 450]) {
        const r = { ...base, allowDropout, minSamplesPerRound };
        const bf = await bruteForce(r);
        const p = await planFederatedRound(r);
        if (bf === Infinity) {
          expect(p.status).toBe('INFEASIBLE');
          continue;
        }
        expect(p.status, `min ${minSamplesPerRound}`).toBe('OPTIMAL');
        expect(p.roundTimeSeconds!).toBeCloseTo(bf, 9);
        expect(p.samplesPerRound!).toBeGreaterThanOrEqual(minSamplesPerRound);
        expect(p.solver).toMatch(/^highs 1\.15\.3/);
        expect(await verifyFederatedPlan(r, p)).toEqual([]);
        if (!allowDropout) expect(p.clients.every((c) => c.participates)).toBe(true);
      }
    },
  );

  it('on a larger random round HiGHS proves the breakpoint search optimal', async () => {
    let s = 11;
    const rnd = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    const ids = ['T4', 'L4', 'A10G', 'RTX-3090', 'V100-PCIE-16GB'];
    const many: FederatedClient[] = Array.from({ length: 30 }, (_, i) => ({
      id: `c${i}`,
      gpu: i % 6 === 5 ? jetson : getGpu(ids[Math.floor(rnd() * ids.length)])!,
      samplesAvailable: Math.round(500 + rnd() * 5000),
      uplinkMbps: 10 + rnd() * 200,
      downlinkMbps: 50 + rnd() * 500,
    }));
    const total = many.reduce((x, c) => x + c.samplesAvailable, 0);
    const r: FederatedRequest = {
      ...base,
      clients: many,
      minSamplesPerRound: Math.round(total * 0.4),
      batchSizes: [16, 32, 64],
      maxLocalSteps: 1000,
    };
    const p = await planFederatedRound(r);
    expect(p.status).toBe('OPTIMAL');
    expect(p.optimalityProven).toBe(true);
    const { kept } = await clientOptions(r);
    const bp = breakpointSearch(
      r,
      kept,
      many.map((c) => transferSeconds(model, c, 4)),
    )!;
    expect(p.roundTimeSeconds!).toBeCloseTo(bp.roundTime, 9);
    expect(await verifyFederatedPlan(r, p)).toEqual([]);
    expect(p.notes.join(' ')).toMatch(/HiGHS started from the breakpoint search/);
  });

  it('success probability by dynamic programming equals enumeration of every subset of completions', () => {
    let seed = 5;
    const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    for (let t = 0; t < 20; t++) {
      const n = 2 + Math.floor(rnd() * 8);
      const samples = Array.from({ length: n }, () => 16 * Math.floor(1 + rnd() * 20));
      const availability = Array.from({ length: n }, () => 0.3 + 0.7 * rnd());
      const need = Math.floor(samples.reduce((a, b) => a + b, 0) * (0.2 + 0.7 * rnd()));
      const dp = successProbability(
        samples.map((x, i) => ({ samples: x, availability: availability[i] })),
        need,
      );
      expect(dp).toBeCloseTo(subsetProbability(samples, availability, need), 12);
    }
    // Dropouts: three clients at 0.9 drop none with 0.729, at most one with 0.972.
    expect(dropoutsToTolerate([0.9, 0.9, 0.9], 0.7)).toBe(0);
    expect(dropoutsToTolerate([0.9, 0.9, 0.9], 0.95)).toBe(1);
    expect(dropoutsToTolerate([1, 1, 0.9], 0.95)).toBe(1);
  });

  const flaky: FederatedRequest = {
    ...base,
    clients: clients.map((c, i) => ({ ...c, availability: [0.8, 0.9, 0.7, 0.85][i] })),
    minSamplesPerRound: 200,
    minSuccessProbability: 0.9,
  };

  it('a round under dropouts over-provisions: it reaches its samples with the probability asked for, in exact terms and in a 20,000-round simulation', async () => {
    const p = await planFederatedRound(flaky);
    expect(p.status).toBe('OPTIMAL');
    expect(await verifyFederatedPlan(flaky, p)).toEqual([]);
    expect(p.successProbability!).toBeGreaterThanOrEqual(0.9);
    const participating = p.clients.filter((c) => c.participates);
    expect(p.successProbability!).toBeCloseTo(
      subsetProbability(
        participating.map((c) => c.samples),
        participating.map((c) => c.availability),
        200,
      ),
      12,
    );
    const simulated = simulate(p, flaky, 20000, 42);
    // Binomial standard error at 20,000 draws is at most 0.0036; 4 of them either side.
    expect(Math.abs(simulated - p.successProbability!)).toBeLessThan(0.0144);
    expect(simulated).toBeGreaterThan(0.9 - 0.0144);
    // Planning as if nobody dropped out reaches the samples far less often.
    const naive = await planFederatedRound({ ...flaky, minSuccessProbability: undefined });
    expect(naive.successProbability!).toBeLessThan(0.9);
    expect(simulate(naive, flaky, 20000, 43)).toBeLessThan(0.9);
    expect(p.samplesPerRound!).toBeGreaterThan(naive.samplesPerRound!);
    // No plan meeting the probability is faster than the exact optimum by brute force.
    const bf = await bruteForceChance(flaky, 0.9);
    expect(p.roundTimeSeconds!).toBeGreaterThanOrEqual(bf * (1 - 1e-9));
  });

  it('a cycle of rounds with a participation floor equals brute force over the participants of each round, and starves no client', async () => {
    const r: FederatedRequest = { ...base, minSamplesPerRound: 200, rounds: 3, minRoundsPerClient: 1 };
    const bf = await bruteForceCycle(r, 3, 1);
    const p = await planFederatedRound(r);
    expect(p.status).toBe('OPTIMAL');
    expect(await verifyFederatedPlan(r, p)).toEqual([]);
    expect(p.schedule).toHaveLength(3);
    expect(p.roundTimeSeconds! * 3).toBeCloseTo(bf, 6);
    for (const x of p.participation) expect(x.rounds).toBeGreaterThanOrEqual(1);
    // Without the floor the fastest cycle leaves somebody out of every round.
    const free = await planFederatedRound({ ...r, minRoundsPerClient: 0 });
    expect(free.participation.some((x) => x.rounds === 0)).toBe(true);
    expect(free.roundTimeSeconds!).toBeLessThan(p.roundTimeSeconds!);
  });

  it("the learned correction times a catalog client's steps with their P90, a custom device keeps the analytical step; energy at TDP", async () => {
    const learned = await learnedPredictor();
    expect(learned.predictor).not.toBeNull();
    const r = { ...base, learned };
    const p = await planFederatedRound(r);
    expect(await verifyFederatedPlan(r, p)).toEqual([]);
    // Verified against the analytical estimate, the corrected plan's compute times are wrong.
    expect((await verifyFederatedPlan(base, p)).join(' ')).toMatch(/s reported, [\d.e-]+ s predicted/);
    expect(p.roundTimeSecondsP90!).toBeGreaterThanOrEqual(p.roundTimeSeconds!);
    for (const c of p.clients.filter((x) => x.participates)) {
      expect(c.computeSecondsP90).toBeGreaterThanOrEqual(c.computeSeconds);
      const gpu = clients.find((x) => x.id === c.id)!.gpu;
      if (gpu.tdpW === null) expect(c.energyWh).toBeNull();
      else expect(c.energyWh!).toBeCloseTo((c.computeSeconds * gpu.tdpW) / 3600, 9);
    }
    expect(p.clients.some((c) => c.participates && c.computeSecondsP90 > c.computeSeconds * (1 + 1e-9))).toBe(
      true,
    );
    // Option by option: a catalog GPU's step is the corrected one, with its evidence; the custom
    // device's is the analytical one (no training row describes a device known only by its peaks).
    const [plain, corrected] = [(await clientOptions(base)).all, (await clientOptions(r)).all];
    r.clients.forEach((c, i) => {
      const custom = c.gpu.vendor === 'custom';
      expect(corrected[i].length).toBe(plain[i].length);
      corrected[i].forEach((o, k) => {
        expect(o.evidence === null).toBe(custom);
        if (custom) expect(o.stepSeconds).toBe(plain[i][k].stepSeconds);
      });
      if (!custom)
        expect(
          corrected[i].some((o, k) => Math.abs(o.stepSeconds / plain[i][k].stepSeconds - 1) > 0.01),
        ).toBe(true);
    });
  });

  it('a custom device is a GpuSpec built from its figures: modes it lacks are not offered', async () => {
    expect(jetson).toMatchObject({
      id: 'jetson-orin',
      vendor: 'custom',
      generation: 'unknown',
      releaseYear: null,
      memoryGb: 32,
    });
    // Hardware facts only: a custom device has no catalog price.
    expect('priceUsdPerGpuHour' in jetson).toBe(false);
    expect(unsupportedReason(jetson, 'AMP_BF16')).toMatch(/no bf16 support/);
    expect(unsupportedReason(jetson, 'AMP_FP16')).toBeNull();
    const { all } = await clientOptions(base);
    expect(all[1].map((o) => o.precision)).not.toContain('AMP_BF16');
    expect(all[1].length).toBeGreaterThan(0);
  });

  it('infeasible rounds name the reason: too little data (SAMPLES), a client that fits nothing and may not sit out (MEMORY)', async () => {
    const data = await planFederatedRound({ ...base, minSamplesPerRound: 1e6 });
    expect(data.status).toBe('INFEASIBLE');
    expect(data.infeasible[0]).toMatchObject({ clientId: null, reason: 'SAMPLES' });
    expect(data.infeasible[0].message).toMatch(
      /at most \d+ samples in a round .* fewer than minSamplesPerRound 1000000/,
    );

    const tiny = customGpuSpec({ name: 'mcu', peakTflops: { fp32: 0.01 }, memoryBwGbps: 1, memoryGb: 0.05 });
    const withTiny = [
      ...clients,
      { id: 'e', gpu: tiny, samplesAvailable: 500, uplinkMbps: 1, downlinkMbps: 1 },
    ];
    const strict = await planFederatedRound({ ...base, clients: withTiny, allowDropout: false });
    expect(strict.status).toBe('INFEASIBLE');
    expect(strict.infeasible).toEqual([expect.objectContaining({ clientId: 'e', reason: 'MEMORY' })]);
    const loose = await planFederatedRound({ ...base, clients: withTiny, allowDropout: true });
    expect(loose.status).toBe('OPTIMAL');
    expect(loose.clients.find((c) => c.id === 'e')).toMatchObject({ participates: false });
    expect(loose.clients.find((c) => c.id === 'e')!.note).toMatch(/fits no allowed batch size/);
  });

  it('verification rejects planted wrong plans: too few samples, more data than a client holds, a wrong round time, a dropout not allowed', async () => {
    const r = { ...base, allowDropout: false };
    const good = await planFederatedRound(r);
    expect(await verifyFederatedPlan(r, good)).toEqual([]);
    const tweak = async (f: (p: FederatedPlan) => void) => {
      const p = structuredClone(good);
      f(p);
      return (await verifyFederatedPlan(r, p)).join(' ');
    };
    expect(
      await tweak((p) => {
        for (const c of p.clients) {
          c.localSteps = 1;
          c.samples = c.batchSizePerGpu!;
          c.computeSeconds =
            c.computeSeconds / Math.max(1, good.clients.find((g) => g.id === c.id)!.localSteps);
        }
        p.samplesPerRound = p.clients.reduce((s, c) => s + c.samples, 0);
      }),
    ).toMatch(/round 1: \d+ samples, at least 300 required/);
    expect(
      await tweak((p) => {
        const c = p.clients[2];
        c.batchSizePerGpu = 32;
        c.localSteps = 5;
        c.samples = 160;
      }),
    ).toMatch(/round 1, client c: trains \d+ samples, holds 100/);
    expect(
      await tweak((p) => {
        p.roundTimeSeconds = p.roundTimeSeconds! * 0.8;
      }),
    ).toMatch(/round time reported/);
    expect(
      await tweak((p) => {
        p.clients[0].participates = false;
      }),
    ).toMatch(/round 1, client a: left out but allowDropout is off/);
  });
});

describe('planFederatedRound over GraphQL', () => {
  // Clients' steps are costed on the memory format the request states (eager PyTorch's NCHW unless
  // channelsLast), and the plan says so as recommend does.
  it('costs 16-bit convolutions on NCHW unless channelsLast says otherwise, and notes it', async () => {
    const plan = async (extra: string) => {
      const r = await run(`{ planFederatedRound(input: { workload: { model: "resnet50_v1.5", samples: 1e6 },
          clients: [{ id: "4090", gpu: "RTX-4090", samplesAvailable: 5000, uplinkMbps: 100, downlinkMbps: 500 }],
          minSamplesPerRound: 4000, batchSizes: [32], precisions: [AMP_FP16]${extra} }) {
          status notes clients { samples computeSeconds } } }`);
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      expect(r.data!.planFederatedRound.status).toBe('OPTIMAL');
      return r.data!.planFederatedRound as {
        notes: string[];
        clients: { samples: number; computeSeconds: number }[];
      };
    };
    const nchw = await plan('');
    const nhwc = await plan(', channelsLast: true');
    expect(nchw.notes.filter((n) => /NCHW/.test(n))).toHaveLength(1);
    expect(nhwc.notes.filter((n) => /NCHW/.test(n))).toHaveLength(0);
    // Seconds per sample on the one client: its step at batch 32.
    const perSample = (p: typeof nchw) => p.clients[0].computeSeconds / p.clients[0].samples;
    expect(perSample(nchw) / perSample(nhwc)).toBeGreaterThan(1.1);
  });

  const CLIENTS = `clients: [
    { id: "t4", gpu: "T4", samplesAvailable: 3000, uplinkMbps: 20, downlinkMbps: 100 },
    { id: "orin", device: { name: "jetson-orin", peakTflops: { fp32: 5.3, fp16: 42 }, memoryBwGbps: 204, memoryGb: 32 }, samplesAvailable: 2000, uplinkMbps: 50, downlinkMbps: 200 },
    { id: "4090", gpu: "RTX-4090", samplesAvailable: 5000, uplinkMbps: 100, downlinkMbps: 500 } ]`;

  it('answers with the round time, per-client choices, and rounds to train the workload', async () => {
    const r =
      await run(`{ planFederatedRound(input: { workload: { model: "resnet50_v1.5", samples: 1e6 }, ${CLIENTS}, minSamplesPerRound: 4000, batchSizes: [16, 32, 64] }) {
      status roundTimeSeconds solver optimalityProven samplesPerRound slowestClient rounds totalHours
      clients { id participates precision batchSizePerGpu localSteps samples computeSeconds transferSeconds totalSeconds } modelSize { variables } } }`);
    expect(r.errors).toBeUndefined();
    const p = r.data!.planFederatedRound;
    expect(p.status).toBe('OPTIMAL');
    expect(p.samplesPerRound).toBeGreaterThanOrEqual(4000);
    expect(p.rounds).toBe(Math.ceil(1e6 / p.samplesPerRound));
    expect(p.roundTimeSeconds).toBeCloseTo(
      Math.max(...p.clients.map((c: { totalSeconds: number }) => c.totalSeconds)),
      9,
    );
    expect(p.clients.find((c: { id: string }) => c.id === 'orin').precision).not.toMatch(/BF16/);
  });

  it("times every client under the round's softwareStack, as a fleet job's, and its harness note says the harness runs eager", async () => {
    const plan = async (stack: string) => {
      const r =
        await run(`{ planFederatedRound(input: { workload: { model: "bert_large_squad", samples: 1e5 }, clients: [
          { id: "t4", gpu: "T4", samplesAvailable: 3000, uplinkMbps: 20, downlinkMbps: 100 },
          { id: "4090", gpu: "RTX-4090", samplesAvailable: 5000, uplinkMbps: 100, downlinkMbps: 500 } ],
          minSamplesPerRound: 4000, batchSizes: [8], precisions: [AMP_FP16], softwareStack: ${stack} }) {
        status clients { id participates samples computeSeconds harness { note } } } }`);
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      return r.data!.planFederatedRound;
    };
    const eager = await plan('PYTORCH_EAGER');
    const compiled = await plan('TORCH_COMPILE');
    expect(compiled.status).toBe('OPTIMAL');
    const perSample = (p: typeof eager, id: string) => {
      const c = p.clients.find((x: { id: string }) => x.id === id);
      return c.computeSeconds / c.samples;
    };
    for (const id of ['t4', '4090']) expect(perSample(compiled, id)).toBeLessThan(perSample(eager, id));
    expect(compiled.clients[0].harness.note).toMatch(/not TORCH_COMPILE/);
    expect(eager.clients[0].harness.note).not.toMatch(/not TORCH_COMPILE/);
  });

  it("times every client's attention as the round says it runs (BERT from Hugging Face's code: fused)", async () => {
    const plan = async (attention: string) => {
      const r =
        await run(`{ planFederatedRound(input: { workload: { model: "bert_large_squad", samples: 1e5 }, clients: [
          { id: "4090", gpu: "RTX-4090", samplesAvailable: 5000, uplinkMbps: 100, downlinkMbps: 500 } ],
          minSamplesPerRound: 4000, batchSizes: [8], precisions: [AMP_FP16]${attention} }) {
        status clients { samples computeSeconds harness { commands } } } }`);
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      expect(r.data!.planFederatedRound.status).toBe('OPTIMAL');
      return r.data!.planFederatedRound.clients[0];
    };
    const script = await plan('');
    const fused = await plan(', attention: FUSED');
    expect(script.computeSeconds / script.samples / (fused.computeSeconds / fused.samples)).toBeGreaterThan(
      1.1,
    );
    expect(fused.harness.commands[1]).toMatch(/ --attention fused /);
  });

  it('gives each participating client the harness commands that time its configuration on its device', async () => {
    const r =
      await run(`{ planFederatedRound(input: { workload: { model: "resnet50_v1.5", samples: 1e6 }, ${CLIENTS}, minSamplesPerRound: 4000, batchSizes: [16, 32, 64] }) {
      clients { id participates precision batchSizePerGpu recompute harness { commands note } }
      schedule { clients { id harness { commands } } } } }`);
    expect(r.errors).toBeUndefined();
    const p = r.data!.planFederatedRound;
    type Client = {
      id: string;
      participates: boolean;
      precision: string | null;
      batchSizePerGpu: number | null;
      recompute: string | null;
      harness: { commands: string[]; note: string } | null;
    };
    const clients: Client[] = p.clients;
    expect(clients.filter((c) => c.participates && c.id !== 'orin').length).toBeGreaterThan(0);
    for (const c of clients) {
      if (!c.participates) {
        expect(c.harness, c.id).toBeNull();
        continue;
      }
      if (c.id === 'orin') {
        // A device given by its figures has no catalog id to record a run under.
        expect(c.harness!.commands).toEqual([]);
        expect(c.harness!.note).toMatch(/^orin is a device given by its figures, not a catalog GPU/);
        continue;
      }
      // One GPU, the client's batch, precision and recomputation, recorded as any run is.
      const recompute = c.recompute === 'NONE' ? '' : ` --recompute ${c.recompute!.toLowerCase()}`;
      expect(c.harness!.commands).toEqual([
        'npx trainplan harness --model resnet50_v1.5 --out measure.py',
        `python3 measure.py --batch-size ${c.batchSizePerGpu} --precision ${c.precision}${recompute} --out runs.csv`,
        'npx trainplan calibrate import runs.csv',
      ]);
    }
    // The schedule's clients carry the same commands as the first round's.
    expect(p.schedule[0].clients.map((c: Client) => c.harness)).toEqual(
      clients.map((c) => (c.harness ? { commands: c.harness.commands } : null)),
    );
  });

  it('plans a cycle under dropouts: success probability, P90, per-round schedule, participation, energy', async () => {
    const flakyClients = CLIENTS.replace('downlinkMbps: 100 }', 'downlinkMbps: 100, availability: 0.8 }')
      .replace('downlinkMbps: 200 }', 'downlinkMbps: 200, availability: 0.9 }')
      .replace('memoryGb: 32 }', 'memoryGb: 32, tdpW: 60 }');
    const r =
      await run(`{ planFederatedRound(input: { workload: { model: "resnet50_v1.5", samples: 1e6 }, ${flakyClients}, minSamplesPerRound: 4000,
        batchSizes: [16, 32, 64], minSuccessProbability: 0.9, rounds: 2, minRoundsPerClient: 1 }) {
      status roundTimeSeconds roundTimeSecondsP90 successProbability dropoutsTolerated expectedSamplesPerRound energyWhPerRound
      schedule { round roundTimeSeconds successProbability energyWh clients { id participates availability energyWh recompute computeSecondsP90 } }
      participation { clientId rounds } } }`);
    expect(r.errors).toBeUndefined();
    const p = r.data!.planFederatedRound;
    expect(['OPTIMAL', 'FEASIBLE']).toContain(p.status);
    expect(p.successProbability).toBeGreaterThanOrEqual(0.9);
    expect(p.schedule).toHaveLength(2);
    expect(p.roundTimeSecondsP90).toBeGreaterThanOrEqual(p.roundTimeSeconds);
    for (const x of p.participation) expect(x.rounds).toBeGreaterThanOrEqual(1);
    const orin = p.schedule.flatMap(
      (x: { clients: { id: string; participates: boolean; energyWh: number }[] }) =>
        x.clients.filter((c) => c.id === 'orin' && c.participates),
    );
    expect(orin.length).toBeGreaterThan(0);
    for (const c of orin) expect(c.energyWh).toBeGreaterThan(0);
  });

  it.each([
    [
      `${CLIENTS}, minSamplesPerRound: 5, minSuccessProbability: 1.5`,
      /^minSuccessProbability: must be a finite number from 0.01 to 1/,
    ],
    [`${CLIENTS}, minSamplesPerRound: 5, rounds: 0`, /^rounds: must be an integer from 1 to 20/],
    [
      `${CLIENTS}, minSamplesPerRound: 5, rounds: 2, minRoundsPerClient: 3`,
      /^minRoundsPerClient: must be an integer from 0 to 2/,
    ],
    [
      `clients: [{ id: "x", gpu: "T4", samplesAvailable: 10, uplinkMbps: 1, downlinkMbps: 1, availability: 0 }], minSamplesPerRound: 5`,
      /^clients\[0\]\.availability: must be a finite number from 0.01 to 1/,
    ],
    [
      `clients: [{ id: "x", samplesAvailable: 10, uplinkMbps: 1, downlinkMbps: 1 }], minSamplesPerRound: 5`,
      /^clients\[0\]\.gpu: give exactly one of gpu \(a catalog id\) and device/,
    ],
    [
      `clients: [{ id: "x", gpu: "T4", device: { peakTflops: { fp32: 1 }, memoryBwGbps: 1, memoryGb: 1 }, samplesAvailable: 10, uplinkMbps: 1, downlinkMbps: 1 }], minSamplesPerRound: 5`,
      /^clients\[0\]\.gpu: give exactly one/,
    ],
    [
      `clients: [{ id: "x", gpu: "T4", samplesAvailable: 10, uplinkMbps: 0, downlinkMbps: 1 }], minSamplesPerRound: 5`,
      /^clients\[0\]\.uplinkMbps: must be a finite number from/,
    ],
    [
      `clients: [{ id: "x", device: { peakTflops: { fp32: -1 }, memoryBwGbps: 1, memoryGb: 1 }, samplesAvailable: 10, uplinkMbps: 1, downlinkMbps: 1 }], minSamplesPerRound: 5`,
      /^clients\[0\]\.device\.peakTflops\.fp32: must be a finite number from/,
    ],
    [`clients: [], minSamplesPerRound: 5`, /^clients: must not be an empty list/],
    [`${CLIENTS}, minSamplesPerRound: 0`, /^minSamplesPerRound: must be a finite number from 1 to/],
    [`${CLIENTS}, minSamplesPerRound: 5, maxLocalSteps: 0`, /^maxLocalSteps: must be an integer from 1/],
  ])('bad input %# is BAD_USER_INPUT naming the field', async (args, message) => {
    const r = await run(
      `{ planFederatedRound(input: { workload: { model: "resnet50_v1.5", samples: 1e6 }, ${args} }) { status } }`,
    );
    expect(r.errors?.[0].extensions?.code, JSON.stringify(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0].message).toMatch(message);
  });
});
