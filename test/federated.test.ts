import { describe, expect, it } from 'vitest';
import { apolloForTests } from './graphql-client.js';
import {
  breakpointSearch,
  clientOptions,
  customGpuSpec,
  planFederatedRound,
  transferSeconds,
  verifyFederatedPlan,
  type FederatedClient,
  type FederatedPlan,
  type FederatedRequest,
} from '../optimizer/federated.js';
import { shutdownSolverWorkers } from '../optimizer/milp/solver.js';
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
function bruteForce(r: FederatedRequest): number {
  const { all } = clientOptions(r);
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

describe('planFederatedRound (library)', () => {
  it.each([true, false])(
    'the round time equals brute-force enumeration of every option and step count (allowDropout %s)',
    async (allowDropout) => {
      for (const minSamplesPerRound of [100, 300, 450]) {
        const r = { ...base, allowDropout, minSamplesPerRound };
        const bf = bruteForce(r);
        const p = await planFederatedRound(r);
        if (bf === Infinity) {
          expect(p.status).toBe('INFEASIBLE');
          continue;
        }
        expect(p.status, `min ${minSamplesPerRound}`).toBe('OPTIMAL');
        expect(p.roundTimeSeconds!).toBeCloseTo(bf, 9);
        expect(p.samplesPerRound!).toBeGreaterThanOrEqual(minSamplesPerRound);
        expect(p.solver).toMatch(/^highs 1\.15\.3/);
        expect(verifyFederatedPlan(r, p)).toEqual([]);
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
    const { kept } = clientOptions(r);
    const bp = breakpointSearch(
      r,
      kept,
      many.map((c) => transferSeconds(model, c, 4)),
    )!;
    expect(p.roundTimeSeconds!).toBeCloseTo(bp.roundTime, 9);
    expect(verifyFederatedPlan(r, p)).toEqual([]);
    expect(p.notes.join(' ')).toMatch(/HiGHS started from the breakpoint search/);
  });

  it('a custom device is a GpuSpec built from its figures: modes it lacks are not offered', () => {
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
    const { all } = clientOptions(base);
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
    expect(verifyFederatedPlan(r, good)).toEqual([]);
    const tweak = (f: (p: FederatedPlan) => void) => {
      const p = structuredClone(good);
      f(p);
      return verifyFederatedPlan(r, p).join(' ');
    };
    expect(
      tweak((p) => {
        for (const c of p.clients) {
          c.localSteps = 1;
          c.samples = c.batchSizePerGpu!;
          c.computeSeconds =
            c.computeSeconds / Math.max(1, good.clients.find((g) => g.id === c.id)!.localSteps);
        }
        p.samplesPerRound = p.clients.reduce((s, c) => s + c.samples, 0);
      }),
    ).toMatch(/samples per round, at least 300 required/);
    expect(
      tweak((p) => {
        const c = p.clients[2];
        c.batchSizePerGpu = 32;
        c.localSteps = 5;
        c.samples = 160;
      }),
    ).toMatch(/client c: trains \d+ samples, holds 100/);
    expect(
      tweak((p) => {
        p.roundTimeSeconds = p.roundTimeSeconds! * 0.8;
      }),
    ).toMatch(/round time reported/);
    expect(
      tweak((p) => {
        p.clients[0].participates = false;
      }),
    ).toMatch(/client a left out but allowDropout is off/);
  });
});

describe('planFederatedRound over GraphQL', () => {
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

  it.each([
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
      /^clients\[0\]\.uplinkMbps: must be a finite number > 0/,
    ],
    [
      `clients: [{ id: "x", device: { peakTflops: { fp32: -1 }, memoryBwGbps: 1, memoryGb: 1 }, samplesAvailable: 10, uplinkMbps: 1, downlinkMbps: 1 }], minSamplesPerRound: 5`,
      /^clients\[0\]\.device\.peakTflops\.fp32: must be a finite number > 0/,
    ],
    [`clients: [], minSamplesPerRound: 5`, /^clients: must not be an empty list/],
    [`${CLIENTS}, minSamplesPerRound: 0`, /^minSamplesPerRound: must be a finite number > 0/],
    [`${CLIENTS}, minSamplesPerRound: 5, maxLocalSteps: 0`, /^maxLocalSteps: must be an integer from 1/],
  ])('bad input %# is BAD_USER_INPUT naming the field', async (args, message) => {
    const r = await run(
      `{ planFederatedRound(input: { workload: { model: "resnet50_v1.5", samples: 1e6 }, ${args} }) { status } }`,
    );
    expect(r.errors?.[0].extensions?.code, JSON.stringify(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0].message).toMatch(message);
  });
});
