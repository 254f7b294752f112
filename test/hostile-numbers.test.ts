// Numbers at the edges (issue 14): each class an attacker or an unlucky client found, kept as a
// regression test. Positive inputs have floors as well as ceilings, answers are checked finite,
// custom models cannot carry negative or overflowing dimensions, and values are shown as sent.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromOnnx } from '../predictor/import/index.js';
import { InputError } from '../predictor/input-error.js';
import { searchCandidates, rankCandidates, type RecommendRequest } from '../optimizer/recommend.js';
import { getModel } from '../predictor/zoo/index.js';
import { getGpu, defaultInterNodeGbps, loadEfficiency } from '../seeds/catalog.js';
import { assertFiniteAnswer, nonFinitePaths } from '../service/finite.js';
import { apolloForTests } from './graphql-client.js';
import { FLOAT, OnnxBuilder } from './import-fixtures.js';

const run = apolloForTests();
const example = (name: string) =>
  JSON.parse(readFileSync(new URL(`../docs/examples/${name}.json`, import.meta.url), 'utf8'));

async function refused(query: string, variables: Record<string, unknown> | undefined, message: RegExp) {
  const r = await run(query, variables);
  expect(r.errors, JSON.stringify(r)).toBeDefined();
  expect(r.errors![0].extensions?.code).toBe('BAD_USER_INPUT');
  expect(r.errors![0].message).toMatch(message);
  return r.errors![0];
}

const PREDICT = (extra: string, samples = '1e6') =>
  `{ predict(input: { workload: { model: "resnet50_v1.5", samples: ${samples} }, gpu: "A100-SXM4-80GB", nodes: 2, gpusPerNode: 8, batchSizePerGpu: 64, precision: AMP_FP16 ${extra} }) { totalHours costUsd stepTimeMs } }`;

describe('positive inputs have floors: subnormal and near-zero values are refused, naming the field and the range', () => {
  it.each([
    [
      '1e-300 samples (answered 0 hours and $0)',
      PREDICT('', '1e-300'),
      /^workload\.samples: .*from 1 to 1e\+18 \(got 1e-300\)/,
    ],
    ['5e-324 samples', PREDICT('', '5e-324'), /^workload\.samples: .*from 1 /],
    [
      'a near-zero network (stepped to 1e300 hours)',
      PREDICT(', interNodeGbps: 1e-300'),
      /^interNodeGbps: .*from 0\.1 to 100000 Gbps/,
    ],
    [
      'a subnormal price',
      PREDICT(', priceUsdPerGpuHour: 1e-310'),
      /^priceUsdPerGpuHour: must be 0 or a finite number from 0\.0001/,
    ],
  ])('%s', async (_, query, message) => {
    await refused(query, undefined, message);
  });

  it('still takes the floors themselves and 0 where 0 means something (a GPU already paid for)', async () => {
    const r = await run(PREDICT(', interNodeGbps: 0.1, priceUsdPerGpuHour: 0', '1'));
    expect(r.errors).toBeUndefined();
    const p = r.data!.predict;
    expect(p.totalHours).toBeGreaterThan(0);
    expect(Number.isFinite(p.stepTimeMs)).toBe(true);
    expect(p.costUsd).toBe(0);
  });

  it('federated devices: near-zero peaks, bandwidths and links are refused (they were internal errors)', async () => {
    const fed = example('federated');
    const q = `query($input: FederatedInput!) { planFederatedRound(input: $input) { status roundTimeSeconds } }`;
    const device = { peakTflops: { fp32: 1e-300 }, memoryBwGbps: 100, memoryGb: 16 };
    await refused(
      q,
      {
        input: {
          ...fed,
          clients: [{ id: 'x', samplesAvailable: 100, uplinkMbps: 10, downlinkMbps: 10, device }],
        },
      },
      /^clients\[0\]\.device\.peakTflops\.fp32: .*from 0\.001 to 100000 TFLOPS/,
    );
    await refused(
      q,
      { input: { ...fed, clients: fed.clients.map((c: object) => ({ ...c, uplinkMbps: 1e-300 })) } },
      /^clients\[0\]\.uplinkMbps: .*from 0\.01 to 1e\+7 Mbps/,
    );
    const slow = { peakTflops: { fp32: 0.001 }, memoryBwGbps: 0.1, memoryGb: 16 };
    const r = await run(q, {
      input: {
        ...fed,
        clients: [
          ...fed.clients,
          { id: 'slowest', samplesAvailable: 100, uplinkMbps: 0.01, downlinkMbps: 0.01, device: slow },
        ],
        allowDropout: true,
      },
    });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect(Number.isFinite(r.data!.planFederatedRound.roundTimeSeconds)).toBe(true);
  });

  it('fleet priorities are relative weights from 1e-3 to 1e3; at the floor a job that fits is still placed', async () => {
    const fleet = example('fleet');
    const q = `query($input: FleetInput!) { planFleet(input: $input) { status assignments { jobId } unplaced { jobId } } }`;
    const withPriority = (p: number) => ({
      ...fleet,
      allowUnplaced: true,
      jobs: fleet.jobs.map((j: object, i: number) => ({ ...j, priority: i === 0 ? p : 1 })),
    });
    await refused(q, { input: withPriority(1e-7) }, /^jobs\[0\]\.priority: .*from 0\.001 to 1000/);
    const r = await run(q, { input: withPriority(1e-3) });
    expect(r.errors).toBeUndefined();
    // Every job of the example fits together (its plan places all four): none may be left out.
    expect(r.data!.planFleet.unplaced).toEqual([]);
    expect(r.data!.planFleet.assignments).toHaveLength(fleet.jobs.length);
  });

  it('duplicate prices are refused, not silently last-wins', async () => {
    const e = await refused(
      `{ recommend(input: { workload: { model: "resnet50_v1.5", samples: 1e6 }, gpus: ["A100-SXM4-80GB"], maxNodes: 1, prices: [{gpu: "A100-SXM4-80GB", usdPerGpuHour: 1}, {gpu: "A100-SXM4-80GB", usdPerGpuHour: 2}] }) { status } }`,
      undefined,
      /^prices\[1\]\.gpu: A100-SXM4-80GB is already priced by prices\[0\]/,
    );
    expect(e.extensions?.field).toBe('prices[1].gpu');
  });
});

describe('answers are finite', () => {
  it('finds every non-finite number in an answer, with its path', () => {
    expect(nonFinitePaths({ a: 1, b: [2, Infinity], c: { d: NaN }, e: null, f: 'x' })).toEqual([
      'b[1] = Infinity',
      'c.d = NaN',
    ]);
    let error: unknown;
    try {
      assertFiniteAnswer({ stepTimeMs: Infinity }, ['interNodeGbps', 'workload.samples']);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).field).toBe('interNodeGbps');
    expect((error as InputError).message).toMatch(
      /^the answer would hold numbers that are not finite \(stepTimeMs = Infinity\); they are computed from interNodeGbps, workload\.samples/,
    );
  });

  it('recommend drops a candidate whose numbers overflowed (rejected NOT_FINITE) instead of failing the whole answer', () => {
    const gpu = getGpu('A100-SXM4-80GB')!;
    const r: RecommendRequest = {
      model: getModel('resnet50_v1.5')!,
      samples: 1e6,
      objective: 'COST',
      gpus: [gpu],
      precisions: ['AMP_FP16'],
      maxNodes: 2,
      gpusPerNodeChoices: [1, 8],
      batchSizes: [64, 128],
      interNodeGbps: (g) => defaultInterNodeGbps(g.id),
      limit: 50,
    };
    const search = searchCandidates(r, loadEfficiency());
    const clean = rankCandidates(r, searchCandidates(r, loadEfficiency()));
    search.candidates[0].analyticalStepMs = Infinity;
    const ranked = rankCandidates(r, search);
    expect(ranked.rejected.find((x) => x.reason === 'NOT_FINITE')?.count).toBe(1);
    expect(ranked.plans.length).toBe(clean.plans.length - 1);
    for (const p of [...ranked.plans, ...ranked.paretoFront]) expect(nonFinitePaths(p)).toEqual([]);
  });
});

describe('custom models cannot carry impossible dimensions', () => {
  const conv = (weightDims: number[], strides = [1, 1]) => {
    const b = new OnnxBuilder('conv');
    const x = b.input('image', ['N', 3, 32, 32]);
    const y = b.node('Conv', [x, b.weight('w', weightDims)], { strides })[0];
    b.output(y, ['N', 16, 30, 30], FLOAT);
    return b.encode();
  };

  it('a negative weight dimension is refused (it gave negative parameters, FLOPs and memory)', () => {
    expect(() => fromOnnx(conv([16, 3, -3, 3]))).toThrow(/initializer "w" has dimension -3 at position 2/);
  });

  it('a dimension above the documented per-dimension limit is refused', () => {
    expect(() => fromOnnx(conv([16, 3, 3, 2e9]))).toThrow(
      /dimension 2000000000 at position 3; dimensions are integers from 0 to 1e\+9/,
    );
  });

  it('a Conv with stride 0 is refused naming the custom model, not answered with Infinity', async () => {
    const onnxBase64 = Buffer.from(conv([16, 3, 3, 3], [0, 0])).toString('base64');
    const r = await run(
      `query($m: ModelInput!) { predict(input: { workload: { customModel: $m, samples: 1e6 }, gpu: "A100-SXM4-80GB", batchSizePerGpu: 8, precision: AMP_FP16 }) { stepTimeMs } }`,
      { m: { onnxBase64 } },
    );
    expect(r.errors, JSON.stringify(r)).toBeDefined();
    expect(r.errors![0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(String(r.errors![0].extensions?.field)).toMatch(/^workload\.customModel/);
  });
});

describe('values are shown as sent', () => {
  it('1e999 in a config is reported as a number too large, not "(got null)"', async () => {
    const e = await refused(
      `{ modelSummary(customModel: { huggingFaceConfig: "{\\"model_type\\":\\"llama\\",\\"hidden_size\\":1e999}" }) { parameters } }`,
      undefined,
      /"hidden_size" must be an integer from 1 to .* \(got Infinity \(a number beyond/,
    );
    expect(e.message).not.toMatch(/got null/);
  });

  it('{"model_type":"llama"} alone says which dimensions Hugging Face defaults filled in', async () => {
    const r = await run(
      `{ modelSummary(customModel: { huggingFaceConfig: "{\\"model_type\\":\\"llama\\"}" }) { parameters notes } }`,
    );
    expect(r.errors).toBeUndefined();
    const notes: string[] = r.data!.modelSummary.notes;
    expect(notes.join('\n')).toMatch(
      /llama's Hugging Face defaults were used: hidden_size 4096, .*num_hidden_layers 32/,
    );
  });
});

describe('property: any double the API accepts gives a finite answer; any it refuses names the field', () => {
  // Generators at the edges: subnormals, values around each floor, huge values, and ratios of 1e300
  // between inputs of one request (a tiny network beside a huge sample count).
  const edge = fc.oneof(
    fc.constantFrom(5e-324, 2.2250738585072014e-308, 1e-300, 1e-7, 1e-3, 0.01, 0.1, 1, 1e6, 1e18, 1e300, 0),
    fc.double({ min: 0, max: 1e20, noNaN: true }),
    fc.double({ min: 0, max: 1e-3, noNaN: true }),
  );
  it('predict: samples, interNodeGbps and price anywhere from 0 to 1e300', async () => {
    await fc.assert(
      fc.asyncProperty(edge, edge, edge, async (samples, gbps, price) => {
        const r = await run(
          `query($s: Float!, $g: Float, $p: Float) { predict(input: { workload: { model: "bert_large_squad", samples: $s }, gpu: "A100-SXM4-80GB", nodes: 4, gpusPerNode: 8, batchSizePerGpu: 16, precision: AMP_BF16, interNodeGbps: $g, priceUsdPerGpuHour: $p }) { stepTimeMs totalHours costUsd throughput } }`,
          { s: samples, g: gbps, p: price },
        );
        if (r.errors) {
          expect(r.errors[0].extensions?.code).toBe('BAD_USER_INPUT');
          expect(['workload.samples', 'interNodeGbps', 'priceUsdPerGpuHour']).toContain(
            r.errors[0].extensions?.field,
          );
        } else {
          const p = r.data!.predict;
          expect(nonFinitePaths(p)).toEqual([]);
          expect(p.totalHours).toBeGreaterThan(0);
          expect(p.stepTimeMs).toBeGreaterThan(0);
        }
      }),
      { numRuns: 60, seed: 14 },
    );
  });

  it('recommend: a tiny network beside huge sample counts never sinks the answer', async () => {
    await fc.assert(
      fc.asyncProperty(edge, edge, async (samples, gbps) => {
        const r = await run(
          `query($s: Float!, $g: Float) { recommend(input: { workload: { model: "resnet50_v1.5", samples: $s }, gpus: ["A100-SXM4-80GB", "T4"], maxNodes: 4, interNodeGbps: $g, limit: 5 }) { status plans { totalHours costUsd } rejected { reason count } } }`,
          { s: samples, g: gbps },
        );
        if (r.errors) {
          expect(r.errors[0].extensions?.code).toBe('BAD_USER_INPUT');
          expect(['workload.samples', 'interNodeGbps']).toContain(r.errors[0].extensions?.field);
        } else expect(nonFinitePaths(r.data!.recommend)).toEqual([]);
      }),
      { numRuns: 30, seed: 14 },
    );
  });
});
