import { describe, expect, it } from 'vitest';
import { getGpu, LEARNED_META_FILE, LEARNED_MODEL_FILE, loadEfficiency, loadGpus } from '../seeds/catalog.js';
import type { CatalogGpu } from '../seeds/types.js';
import {
  evidenceOf,
  evidenceRows,
  featuresOf,
  fit,
  PARAMS,
  target,
  trainingExamples,
} from '../predictor/learned/train.js';
import {
  EvidenceIndex,
  mergeEvidence,
  NO_EVIDENCE,
  residualTrend,
  TREND_RIDGE,
} from '../predictor/learned/evidence.js';
import { averageEnsembles, predictEnsemble, trainGbdt } from '../predictor/learned/gbdt.js';
import { ensembleToOnnx, loadOnnxCorrection, RUN_ROWS } from '../predictor/learned/onnx.js';
import { LearnedPredictor } from '../predictor/learned/model.js';
import { featureNames } from '../predictor/learned/features.js';
import { predictCorrected } from '../predictor/corrected.js';
import { recommendCorrected } from '../optimizer/recommend-corrected.js';
import { correctAndRank } from '../optimizer/pruned.js';
import { searchCandidates, type RecommendRequest } from '../optimizer/recommend.js';
import { selectOffers } from '../optimizer/offers.js';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getModel } from '../predictor/zoo/index.js';
import { predictZoo } from './zoo-prediction.js';
import { PRECISIONS } from '../predictor/types.js';
import type { GpuSpec } from '../predictor/types.js';

const eff = loadEfficiency();

describe('the residual trend across GPUs (evidence)', () => {
  const point = (gpu: string, logPeak: number, residual: number, n = 1) => ({
    gpu,
    logPeak,
    sum: residual * n,
    n,
  });

  it('is a least-squares line with its slope shrunk by TREND_RIDGE, every GPU one point', () => {
    // y = 0.1 + 0.2 x at x = -1, 0, 1: sxx = 2, sxy = 0.4, so the slope is 0.4 / (2 + ridge).
    const pts = [point('a', -1, -0.1, 45), point('b', 0, 0.1), point('c', 1, 0.3)];
    const t = residualTrend(pts, 2);
    expect(t.trendSlope).toBeCloseTo(0.4 / (2 + TREND_RIDGE), 12);
    expect(t.trend).toBeCloseTo(0.1 + t.trendSlope * 2, 12);
    expect(t.trendGpus).toBe(3);
    // One GPU: no line, its mean.
    expect(residualTrend([point('a', 1, 0.25, 4)], 3)).toEqual({ trend: 0.25, trendSlope: 0, trendGpus: 1 });
    expect(residualTrend([], 3)).toEqual({ trend: 0, trendSlope: 0, trendGpus: 0 });
  });

  it("joins a user's runs on another GPU to the shipped points, one point per GPU", () => {
    const at = { ...NO_EVIDENCE, trendLogPeak: 2 };
    const shipped = { ...at, trendPoints: [point('a', 0, 0.1, 3), point('b', 1, 0.3)] };
    const user = { ...at, trendPoints: [point('b', 1, -0.1), point('c', 2, 0.5)] };
    const merged = mergeEvidence(shipped, user);
    expect(merged.trendGpus).toBe(3);
    const b = merged.trendPoints.find((p) => p.gpu === 'b')!;
    expect(b.n).toBe(2);
    expect(b.sum).toBeCloseTo(0.2, 12);
    expect(merged).toMatchObject(residualTrend(merged.trendPoints, 2));
  });
});

describe('gradient-boosted trees and their ONNX export', () => {
  it('onnxruntime reproduces the TypeScript ensemble', async () => {
    const X = Array.from({ length: 400 }, (_, i) => [i % 7, Math.sin(i), (i * 37) % 11, i / 400]);
    const y = X.map((x) => x[0] * 0.3 + (x[2] > 5 ? 1 : -1) + x[1]);
    const e = trainGbdt(X, y, { ...PARAMS, trees: 30, depth: 3 });
    const ort = await loadOnnxCorrection(ensembleToOnnx(e, 'test'), 4);
    const out = await ort.run(Float32Array.from(X.flat()), X.length);
    X.forEach((x, i) => expect(Math.abs(out[i] - predictEnsemble(e, x))).toBeLessThan(1e-4));
    // It learned something: residual error well below the target's spread.
    const mse = X.reduce((s, x, i) => s + (predictEnsemble(e, x) - y[i]) ** 2, 0) / X.length;
    const variance = y.reduce((s, v) => s + (v - y.reduce((a, b) => a + b) / y.length) ** 2, 0) / y.length;
    expect(mse).toBeLessThan(0.1 * variance);
  });

  it('an averaged ensemble predicts the mean of its members, and onnxruntime runs it as one', async () => {
    const X = Array.from({ length: 300 }, (_, i) => [i % 9, Math.cos(i), (i * 29) % 13]);
    const y = X.map((x) => x[0] * 0.2 - (x[2] > 6 ? 0.5 : 0) + x[1]);
    const members = [1, 2, 3].map((seed) => trainGbdt(X, y, { ...PARAMS, trees: 20, depth: 3, seed }));
    const avg = averageEnsembles(members);
    expect(avg.trees).toHaveLength(60);
    const ort = await loadOnnxCorrection(ensembleToOnnx(avg, 'test'), 3);
    const out = await ort.run(Float32Array.from(X.flat()), X.length);
    X.forEach((x, i) => {
      const mean = members.reduce((a, e) => a + predictEnsemble(e, x), 0) / members.length;
      expect(predictEnsemble(avg, x)).toBeCloseTo(mean, 12);
      expect(Math.abs(out[i] - mean)).toBeLessThan(1e-4);
    });
    // Differently seeded members differ, so the average is not any one of them.
    expect(predictEnsemble(members[0], X[5])).not.toBeCloseTo(predictEnsemble(members[1], X[5]), 6);
    expect(averageEnsembles([members[0]])).toBe(members[0]);
  });

  it('onnxruntime runs a large batch in blocks, each its own turn of the event loop, for what one run gives', async () => {
    // onnxruntime-node runs a session on the JavaScript thread: one run of a request's candidates
    // held the event loop until it ended (100,000 rows: about 0.7 s). Blocks of RUN_ROWS let it turn.
    const X = Array.from({ length: 300 }, (_, i) => [i % 7, Math.sin(i), (i * 37) % 11]);
    const e = trainGbdt(
      X,
      X.map((x) => x[0] - x[2] / 3 + x[1]),
      { ...PARAMS, trees: 10, depth: 3 },
    );
    const ort = await loadOnnxCorrection(ensembleToOnnx(e, 'test'), 3, 1);
    const n = 10 * RUN_ROWS + 7;
    const rows = Float32Array.from({ length: n * 3 }, (_, i) => X[Math.floor(i / 3) % X.length][i % 3]);
    let turns = 0,
      done = false;
    const turn = () => {
      turns++;
      if (!done) setImmediate(turn);
    };
    setImmediate(turn);
    const out = await ort.run(rows, n);
    done = true;
    // One turn per block at least (one run took one turn: the old code fails this).
    expect(turns).toBeGreaterThanOrEqual(Math.ceil(n / RUN_ROWS) - 1);
    expect(out).toHaveLength(n);
    for (const i of [0, RUN_ROWS - 1, RUN_ROWS, 5 * RUN_ROWS + 3, n - 1])
      expect(Math.abs(out[i] - predictEnsemble(e, Array.from(rows.subarray(3 * i, 3 * i + 3))))).toBeLessThan(
        1e-4,
      );
  });

  it('training is deterministic given its seed', () => {
    const X = Array.from({ length: 200 }, (_, i) => [i % 5, (i * 13) % 17]);
    const y = X.map((x) => x[0] - x[1] / 10);
    expect(trainGbdt(X, y, { ...PARAMS, trees: 10 })).toEqual(trainGbdt(X, y, { ...PARAMS, trees: 10 }));
  });
});

describe('the committed learned model (seeds/predictor.onnx)', async () => {
  const learned = await LearnedPredictor.load();
  // The benchmark rows and the LLM runs, as npm run train:predictor trains on them.
  const ex = trainingExamples(eff);

  it('is what npm run train:predictor produces from the seeds: ONNX output equals a fresh TypeScript fit on fixed rows', async () => {
    const final = fit(ex, true, PARAMS);
    // Benchmark rows and LLM runs (the last rows), each with the layout and stack features it has.
    const rows = [0, 100, 500, 1000, 2000, 3000, ex.length - 60, ex.length - 1]
      .filter((i) => i < ex.length)
      .map((i) => ex[i]);
    expect(rows.some((e) => e.kind === 'llm')).toBe(true);
    const X = rows.map((e) => featuresOf(e, true, evidenceOf(e, final.evidence)));
    const ort = await loadOnnxCorrection(LEARNED_MODEL_FILE.pathname, featureNames(true).length);
    const out = await ort.run(Float32Array.from(X.flat()), X.length);
    X.forEach((x, i) => expect(Math.abs(out[i] - predictEnsemble(final.ensemble, x))).toBeLessThan(1e-4));
  });

  it('the residual trend across GPUs, read at a GPU left out of it, is nearer that GPU than the other GPUs mean is', () => {
    // Every (model, GPU, precision, framework) of the benchmark rows with at least 3 other GPUs
    // behind its trend: the query never counts the group's own rows, so each is held out.
    const index = new EvidenceIndex(evidenceRows(ex, true));
    const groups = new Map<string, { e: (typeof ex)[number]; sum: number; n: number }>();
    for (const e of ex) {
      if (e.kind === 'llm') continue;
      const key = `${e.row.model}|${e.row.gpu}|${e.row.precision}|${e.software.framework}`;
      const g = groups.get(key) ?? { e, sum: 0, n: 0 };
      g.sum += target(e, true);
      g.n++;
      groups.set(key, g);
    }
    let line = 0,
      flat = 0,
      n = 0;
    for (const { e, sum, n: rows } of groups.values()) {
      const ev = index.query(e.row.model, e.row.gpu, e.row.precision, e.software.framework);
      if (ev.trendGpus < 3) continue;
      line += Math.abs(ev.trend - sum / rows);
      flat += Math.abs(ev.samePrecision - sum / rows);
      n++;
    }
    // 522 groups: mean |error| 0.137 for the line, 0.179 for the mean when this was written.
    expect(n).toBeGreaterThan(450);
    expect(line / n).toBeLessThan(0.85 * (flat / n));
  });

  it('says which case a prediction is (measured vs unmeasured model) and widens the interval for unmeasured ones', async () => {
    const model = getModel('resnet50_v1.5')!;
    const gpu = getGpu('A100-SXM4-80GB')!;
    const p = await predictCorrected(
      {
        model,
        gpu,
        precision: 'TF32',
        batchSizePerGpu: 256,
        gpusPerNode: 8,
        nodes: 1,
        interNodeGbps: 400,
        samples: 1e8,
      },
      { predictor: learned, reason: '' },
      eff,
    );
    expect(p.predictor).toBe(learned.name);
    expect(p.evidence).toMatch(/^measured/);
    expect(p.stepTimeMsP10).toBeLessThanOrEqual(p.stepTimeMs);
    expect(p.stepTimeMsP90).toBeGreaterThanOrEqual(p.stepTimeMs);
    const unmeasured = await predictCorrected(
      {
        model: getModel('gpt2_124m')!,
        gpu,
        precision: 'AMP_BF16',
        batchSizePerGpu: 8,
        gpusPerNode: 1,
        nodes: 1,
        interNodeGbps: 400,
      },
      { predictor: learned, reason: '' },
      eff,
    );
    expect(unmeasured.evidence).toMatch(/^unmeasured/);
    // Wider interval where nothing about the model was measured.
    expect(unmeasured.stepTimeMsP90 / unmeasured.stepTimeMs).toBeGreaterThanOrEqual(
      p.stepTimeMsP90 / p.stepTimeMs - 1e-9,
    );
  });

  // One node of A100s, 400 Gbps between nodes: the configuration the layout and stack cases vary.
  const onA100 = (
    model: string,
    precision: 'AMP_FP16' | 'AMP_BF16',
    batchSizePerGpu: number,
    gpusPerNode: number,
  ) => ({
    model: getModel(model)!,
    gpu: getGpu('A100-SXM4-80GB')!,
    precision,
    batchSizePerGpu,
    gpusPerNode,
    nodes: 1,
    interNodeGbps: 400,
  });

  it('the wait for the slowest GPU is in the breakdown, and evidence says when its GPU count is beyond the fitted runs', async () => {
    const at = async (nodes: number, stack?: 'MEGATRON') =>
      predictCorrected(
        { ...onA100('resnet50_v1.5', 'AMP_BF16', 256, 8), nodes, ...(stack ? { stack } : {}) },
        { predictor: learned, reason: '' },
        eff,
      );
    const fitted = eff.stragglerFittedGpus!;
    expect(fitted).toBe(16); // DeepLearningExamples' DGX-2 runs are the largest with a one-GPU twin
    const one = await predictCorrected(
      onA100('resnet50_v1.5', 'AMP_BF16', 256, 1),
      { predictor: learned, reason: '' },
      eff,
    );
    const [eight, many, megatron] = [await at(1), await at(4), await at(4, 'MEGATRON')];
    expect(one.breakdown.synchronizationWaitMs).toBe(0);
    expect(eight.breakdown.synchronizationWaitMs).toBeGreaterThan(0);
    expect(eight.breakdown.synchronizationWaitMs).toBeLessThanOrEqual(eight.breakdown.communicationMs);
    expect(eight.evidence).not.toMatch(/slowest/);
    // 32 GPUs wait longer than 8 (held at 16 GPUs': E[max] of 16 normals is 1.77, of 8 1.42), and say
    // that the wait is held at the fitted count.
    expect(many.breakdown.synchronizationWaitMs / many.stepTimeMs).toBeGreaterThan(
      eight.breakdown.synchronizationWaitMs / eight.stepTimeMs,
    );
    expect(many.evidence).toMatch(
      /waits for the slowest GPU, [\d.]+% of the roofline's step, as for 16 GPUs: .* held there at 32 .* an extrapolation/,
    );
    // A tuned stack's LLM runs refute the wait (seeds/software.json): none, and nothing to say.
    expect(megatron.breakdown.synchronizationWaitMs).toBe(0);
    expect(megatron.evidence).not.toMatch(/slowest/);
  });

  it('a sharded layout, measured only in the LLM runs, says so and takes their held-out interval', async () => {
    const base = onA100('bert_large_squad', 'AMP_FP16', 16, 8);
    const plain = await predictCorrected(base, { predictor: learned, reason: '' }, eff);
    const zero = await predictCorrected(
      { ...base, parallelism: { tensorParallel: 1, pipelineParallel: 1, zeroStage: 2, recompute: 'none' } },
      { predictor: learned, reason: '' },
      eff,
    );
    expect(plain.evidence).not.toMatch(/split layout/);
    // On the default stack, which no published LLM run ran: said, with the runs' interval all the same.
    expect(zero.evidence).toMatch(/a split layout under PYTORCH_EAGER, which no published LLM run ran/);
    expect(zero.evidence).not.toMatch(/widened to a held-out model's/);
    // The model and GPU are measured: nothing widens the LLM runs' leave-one-family-out interval.
    const llm = learned.meta.intervals.llmRuns!;
    expect(llm.rows).toBeGreaterThan(100);
    expect(zero.stepTimeMsP90 / zero.stepTimeMs).toBeCloseTo(Math.exp(llm.q90), 6);
    expect(zero.stepTimeMsP10 / zero.stepTimeMs).toBeCloseTo(Math.exp(llm.q10), 6);
  });

  it("a stack with 30 or more LLM runs takes its own held-out interval: the compiled stacks' is wider than Megatron's", async () => {
    const byStack = learned.meta.intervals.llmRunsByStack!;
    const compiledIv = byStack.TORCH_COMPILE!,
      megatronIv = byStack.MEGATRON!;
    expect(compiledIv.rows).toBeGreaterThanOrEqual(30);
    expect(megatronIv.rows).toBeGreaterThanOrEqual(30);
    expect(compiledIv.q90).toBeGreaterThan(megatronIv.q90);
    // BERT-large is a measured model, so nothing widens the stack's interval.
    const under = (stack: 'TORCH_COMPILE' | 'MEGATRON') =>
      predictCorrected(
        // One GPU: no floor at a lone GPU's step moves the interval.
        { ...onA100('bert_large_squad', 'AMP_BF16', 16, 1), stack },
        { predictor: learned, reason: '' },
        eff,
      );
    for (const [stack, iv] of [
      ['TORCH_COMPILE', compiledIv],
      ['MEGATRON', megatronIv],
    ] as const) {
      const p = await under(stack);
      expect(p.evidence).toContain(`interval: the ${stack} runs' errors held out by model family`);
      expect(p.stepTimeMsP90 / p.stepTimeMs).toBeCloseTo(Math.exp(iv.q90), 6);
      expect(p.stepTimeMsP10 / p.stepTimeMs).toBeCloseTo(Math.exp(iv.q10), 6);
    }
  });

  // The tuned stacks' effects were fitted on transformer LLM runs only: a compiled ResNet-50 is a
  // model class no run measured under them, so it gets at least an unmeasured model's interval.
  it('a tuned stack on a convolutional model says none was measured and widens to the unmeasured-model interval', async () => {
    const compiled = await predictCorrected(
      { ...onA100('resnet50_v1.5', 'AMP_BF16', 256, 1), stack: 'TORCH_COMPILE' },
      { predictor: learned, reason: '' },
      eff,
    );
    expect(compiled.evidence).toMatch(/on a convolutional model: only transformer LLM runs were measured so/);
    const { llmRuns, unmeasuredModel } = learned.meta.intervals;
    const q90 = Math.max(llmRuns!.q90, unmeasuredModel.q90);
    const q10 = Math.min(llmRuns!.q10, unmeasuredModel.q10);
    expect(compiled.stepTimeMsP90 / compiled.stepTimeMs).toBeGreaterThanOrEqual(Math.exp(q90) - 1e-9);
    expect(compiled.stepTimeMsP10 / compiled.stepTimeMs).toBeLessThanOrEqual(Math.exp(q10) + 1e-9);
    // A transformer under the same stack keeps the LLM runs' interval.
    const bert = await predictCorrected(
      { ...onA100('bert_large_squad', 'AMP_BF16', 16, 1), stack: 'TORCH_COMPILE' },
      { predictor: learned, reason: '' },
      eff,
    );
    expect(bert.evidence).toMatch(/as in the published LLM runs/);
  });

  it('plain data parallelism never gives a shorter step than one GPU at the same batch (estimate, P10, P90)', async () => {
    for (const [modelId, gpuId, precision, batch] of [
      // The case the floor was built for: gbdt-v3 put 2 single-GPU GH200 instances 2.5% ahead of one.
      ['resnet50_v1.5', 'GH200', 'BF16', 256],
      ['resnet50_v1.5', 'A100-SXM4-80GB', 'AMP_FP16', 256],
      ['bert_large_squad', 'V100-SXM2-16GB', 'FP32', 8],
      ['gpt2_355m', 'H100-SXM5-80GB', 'AMP_BF16', 8],
      ['vgg16', 'RTX-A6000', 'FP16', 64],
    ] as const) {
      const at = (gpusPerNode: number, nodes: number) =>
        predictZoo(learned, {
          model: modelId,
          gpu: gpuId,
          precision,
          batchSizePerGpu: batch,
          gpusPerNode,
          nodes,
          interNodeGbps: 200,
        });
      const one = await at(1, 1);
      for (const [g, n] of [
        [1, 2],
        [1, 4],
        [2, 1],
        [8, 1],
        [8, 4],
      ]) {
        const p = await at(g, n);
        const tol = 1 - 1e-12;
        expect(p.stepTimeMs).toBeGreaterThanOrEqual(one.stepTimeMs * tol);
        expect(p.stepTimeMsP10).toBeGreaterThanOrEqual(one.stepTimeMsP10 * tol);
        expect(p.stepTimeMsP90).toBeGreaterThanOrEqual(one.stepTimeMsP90 * tol);
      }
    }
  });

  it('the floor holds against a correction that rewards more GPUs, says so, and pruning still gives the unpruned answer', async () => {
    // A synthetic ensemble on the shipped features: 35% more throughput whenever there is more than one GPU.
    const names = featureNames(true);
    const g = names.indexOf('log_gpus');
    const X = Array.from({ length: 400 }, (_, i) => {
      const x = new Array<number>(names.length).fill(0);
      x[g] = Math.log(1 + (i % 8));
      return x;
    });
    const y = X.map((x) => (x[g] > 0.1 ? 0.3 : 0));
    const e = trainGbdt(X, y, {
      ...PARAMS,
      trees: 30,
      depth: 2,
      subsample: 1,
      learningRate: 0.5,
      minLeaf: 5,
    });
    const dir = mkdtempSync(join(tmpdir(), 'superlinear-'));
    writeFileSync(join(dir, 'model.onnx'), ensembleToOnnx(e, 'superlinear'));
    const meta = JSON.parse(readFileSync(LEARNED_META_FILE, 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'meta.json'), JSON.stringify({ ...meta, name: 'superlinear' }));
    const superlinear = await LearnedPredictor.load(join(dir, 'model.onnx'), join(dir, 'meta.json'));
    const req = (gpusPerNode: number, nodes: number) => ({
      model: getModel('resnet50_v1.5')!,
      gpu: getGpu('GH200')!,
      precision: 'BF16' as const,
      batchSizePerGpu: 256,
      gpusPerNode,
      nodes,
      interNodeGbps: 200,
    });
    const state = { predictor: superlinear, reason: '' };
    const one = await predictCorrected(req(1, 1), state, eff);
    expect(one.evidence).not.toMatch(/floored/);
    for (const [gpn, n] of [
      [1, 2],
      [1, 4],
      [4, 1],
    ]) {
      const p = await predictCorrected(req(gpn, n), state, eff);
      // Without the floor: analytical x e^-0.3, about 26% below one GPU's step.
      expect(p.analyticalStepTimeMs * Math.exp(-0.29)).toBeLessThan(one.stepTimeMs);
      expect(p.stepTimeMs).toBeGreaterThanOrEqual(one.stepTimeMs * (1 - 1e-12));
      expect(p.stepTimeMsP90).toBeGreaterThanOrEqual(one.stepTimeMsP90 * (1 - 1e-12));
      expect(p.evidence).toMatch(
        /floored at one GH200's step at this batch plus the gradient synchronisation/,
      );
      // Across instances the all-reduce is not all hidden: the floor adds what the roofline leaves
      // exposed, so more instances never tie one on cost through the floor alone.
      if (n > 1) expect(p.stepTimeMs).toBeGreaterThan(one.stepTimeMs * 1.005);
    }
    // The search's pruning bounds the floor: the same plans as correcting every candidate.
    const r: RecommendRequest = {
      model: getModel('resnet50_v1.5')!,
      samples: 1e8,
      objective: 'COST',
      gpus: loadGpus().filter((x) => ['GH200', 'H100-SXM5-80GB', 'A100-SXM4-80GB'].includes(x.id)),
      precisions: ['BF16', 'AMP_FP16', 'AMP_BF16'],
      maxNodes: 8,
      gpusPerNodeChoices: [1, 2, 4, 8],
      batchSizes: [64, 128, 256],
      limit: 10,
      offers: selectOffers({ catalog: true, own: [], perGpuPrices: [] }),
      // A stated network, so plans joining single-GPU instances (where the floor binds) are ranked.
      interNodeGbps: () => 200,
      today: new Date('2026-12-01'),
    };
    const sw = { framework: 'PyTorch' as const, xla: false };
    const pruned = await correctAndRank(r, searchCandidates(r, eff), superlinear, sw, 'always');
    const full = await correctAndRank(r, searchCandidates(r, eff), superlinear, sw, 'never');
    expect(pruned.recommendation.plans).toEqual(full.recommendation.plans);
    expect(pruned.recommendation.paretoFront).toEqual(full.recommendation.paretoFront);
    expect(pruned.stats.corrected).toBeLessThan(full.stats.corrected);
    expect(full.recommendation.plans.some((p) => /floored/.test(p.evidence ?? ''))).toBe(true);
  });

  it('more peak FLOPS in the dominant math mode never predicts a slower step, all else equal', async () => {
    for (const [modelId, gpuId, precision, batch] of [
      ['resnet50_v1.5', 'A100-SXM4-80GB', 'AMP_FP16', 256],
      ['bert_large_squad', 'V100-SXM2-16GB', 'FP32', 8],
      ['gpt2_355m', 'H100-SXM5-80GB', 'AMP_BF16', 8],
      ['vgg16', 'RTX-3090', 'FP16', 64],
    ] as const) {
      const base = getGpu(gpuId)!;
      let previous = Infinity;
      for (const factor of [1, 1.25, 1.5, 2, 3, 4]) {
        const math = precision === 'FP32' ? 'fp32' : precision === 'AMP_BF16' ? 'bf16' : 'fp16';
        const gpu: GpuSpec = {
          ...base,
          peakTflops: { ...base.peakTflops, [math]: base.peakTflops[math]! * factor },
        };
        const p = await predictCorrected(
          {
            model: getModel(modelId)!,
            gpu,
            precision,
            batchSizePerGpu: batch,
            gpusPerNode: 1,
            nodes: 1,
            interNodeGbps: 200,
          },
          { predictor: learned, reason: '' },
          eff,
        );
        expect(p.stepTimeMs, `${modelId} ${gpuId} x${factor}`).toBeLessThanOrEqual(previous * (1 + 1e-9));
        previous = p.stepTimeMs;
      }
    }
  });

  it('recommend ranks with the learned model and can require the deadline at P90', async () => {
    const req = {
      model: getModel('bert_large_squad')!,
      samples: 2e7,
      objective: 'COST' as const,
      gpus: ['V100-SXM2-16GB', 'A100-SXM4-80GB', 'H100-SXM5-80GB'].map((id) => getGpu(id)!),
      precisions: [...PRECISIONS],
      maxNodes: 2,
      gpusPerNodeChoices: [1, 2, 4, 8],
      batchSizes: [8, 16, 32],
      interNodeGbps: () => 400,
      limit: 20,
      deadlineHours: 6,
    };
    const r = await recommendCorrected(req, { predictor: learned, reason: '' }, eff);
    expect(r.predictor).toBe(learned.name);
    for (const p of r.plans) {
      expect(p.predictor).toBe(learned.name);
      expect(p.totalHours).toBeLessThanOrEqual(6);
    }
    const strict = await recommendCorrected(
      { ...req, deadlineConfidence: true },
      { predictor: learned, reason: '' },
      eff,
    );
    for (const p of strict.plans) expect(p.totalHoursP90).toBeLessThanOrEqual(6);
    expect(strict.feasible).toBeLessThanOrEqual(r.feasible);
  });

  it('recommend refuses a search whose learned correction outlives the time budget, never answers late', async () => {
    // The search itself is small; onnxruntime answers only after 400 ms (a server busy with other
    // requests' corrections). A 150 ms budget was once checked after the search alone, so the answer
    // came at 400 ms and more; 10 s of budget answers the same request.
    const slow: LearnedPredictor = Object.create(learned);
    slow.correct = async (...args) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      return learned.correct(...args);
    };
    const req = oneGpuRecommend(getGpu('A100-SXM4-80GB')!);
    await expect(
      recommendCorrected({ ...req, timeBudgetMs: 150 }, { predictor: slow, reason: '' }, eff),
    ).rejects.toThrow(/did not finish within its time budget of 150 ms/);
    const answered = await recommendCorrected(
      { ...req, timeBudgetMs: 10_000 },
      { predictor: slow, reason: '' },
      eff,
    );
    expect(answered.plans).toHaveLength(1);
  });
});

/** The smallest recommend: ResNet-50 at AMP_FP16, batch 64, on one GPU of one type. */
const oneGpuRecommend = (gpu: CatalogGpu): RecommendRequest => ({
  model: getModel('resnet50_v1.5')!,
  samples: 1e7,
  objective: 'COST',
  gpus: [gpu],
  precisions: ['AMP_FP16'],
  maxNodes: 1,
  gpusPerNodeChoices: [1],
  batchSizes: [64],
  interNodeGbps: () => 100,
  limit: 1,
});

describe('fallback when the learned model is missing', () => {
  it('load fails with a clear error, and the analytical estimate answers with the reason', async () => {
    await expect(LearnedPredictor.load('/nonexistent/predictor.onnx', LEARNED_META_FILE)).rejects.toThrow();
    const reason = 'learned model unavailable (test); using the analytical estimate';
    const req = {
      model: getModel('resnet50_v1.5')!,
      gpu: getGpu('T4')!,
      precision: 'AMP_FP16' as const,
      batchSizePerGpu: 64,
      gpusPerNode: 1,
      nodes: 1,
      interNodeGbps: 100,
    };
    const p = await predictCorrected(req, { predictor: null, reason }, eff);
    expect(p.predictor).toBe('analytical');
    expect(p.evidence).toBe(reason);
    expect(p.stepTimeMs).toBe(p.analyticalStepTimeMs);
    const r = await recommendCorrected(oneGpuRecommend(req.gpu), { predictor: null, reason }, eff);
    expect(r.predictor).toBe('analytical');
    expect(r.predictorNote).toBe(reason);
    expect(r.plans[0].stepTimeMs).toBe(r.plans[0].analyticalStepTimeMs);
  });
});
