// An LLM answer is calibrated by the published runs of its own architecture on its GPU and stack
// (learned/published-calibration.ts): the weighted, shrunk mean of their errors moves the estimate,
// the interval is the one measured on runs held out of the trees and the calibration, and a query on
// another stack or GPU is left alone.
import { describe, expect, it } from 'vitest';
import { calibrateOnPublished, type PublishedResidual } from '../predictor/learned/published-calibration.js';
import { correctionInputOf, learnedPredictor } from '../predictor/learned/model.js';
import { llmExamples } from '../predictor/learned/train.js';
import { fittedLlmRuns, loadLlmRuns } from '../seeds/llm.js';
import { loadCalibrationSettings } from '../seeds/calibration.js';
import { loadEfficiency } from '../seeds/catalog.js';
import { stackOfFramework } from '../predictor/software.js';
import { apolloForTests } from './graphql-client.js';

const settings = { otherPrecision: 0.5, prior: 1, interval: { q10: -0.05, q90: 0.1, rows: 40 } };
const run = (precision: 'BF16' | 'FP8', logError: number, id = 'x'): PublishedResidual => ({
  id,
  framework: 'NeMo (Megatron-Core)',
  precision,
  logError,
});

describe('calibrateOnPublished', () => {
  it('moves the step by the weighted mean of the runs shrunk towards no correction, counting other precisions less', () => {
    expect(calibrateOnPublished('FP8', 'MEGATRON', [], settings)).toBeUndefined();
    const c = calibrateOnPublished(
      'FP8',
      'MEGATRON',
      [run('FP8', 0.2), run('FP8', 0.2), run('BF16', -0.2)],
      settings,
    )!;
    // (0.2 + 0.2 - 0.5 * 0.2) / (2.5 + 1 prior)
    expect(Math.log(c.scale)).toBeCloseTo(0.3 / 3.5, 12);
    expect(c).toMatchObject({ runs: 3, samePrecision: 2 });
    expect(c.spread).toBeGreaterThan(0);
  });

  it("takes the stack's held-out interval, widened where the runs disagree more", () => {
    const byStack = { ...settings, byStack: { TORCH_COMPILE: { q10: -0.2, q90: 0.3, rows: 12 } } };
    const agreeing = calibrateOnPublished('FP8', 'MEGATRON', [run('FP8', 0.01)], byStack)!;
    expect(agreeing.interval).toEqual(settings.interval);
    expect(agreeing.widenedBySpread).toBe(false);
    expect(calibrateOnPublished('FP8', 'TORCH_COMPILE', [run('FP8', 0.01)], byStack)!.interval).toEqual(
      byStack.byStack.TORCH_COMPILE,
    );
    const split = calibrateOnPublished('FP8', 'MEGATRON', [run('FP8', 0.3), run('FP8', -0.3)], settings)!;
    expect(split.spread).toBeCloseTo(0.3, 12);
    expect(split.interval.q10).toBeCloseTo(-1.28 * 0.3, 12);
    expect(split.interval.q90).toBeCloseTo(1.28 * 0.3, 12);
    expect(split.widenedBySpread).toBe(true);
  });
});

describe('the shipped predictor, calibrated by the published runs', () => {
  it("Llama 2 7B's Megatron runs on H100: each run's error is the shipped trees' and the calibration takes their mean in", async () => {
    const learned = (await learnedPredictor()).predictor!;
    const runs = fittedLlmRuns().filter(
      (r) =>
        r.model === 'Llama-2-7B' &&
        r.gpu === 'H100-SXM5-80GB' &&
        stackOfFramework(r.framework) === 'MEGATRON',
    );
    expect(runs.length).toBeGreaterThanOrEqual(10);
    const ex = llmExamples(loadEfficiency(), runs);
    const items = ex.map(correctionInputOf);
    const k = await learned.correct(items);
    // log(measured / estimated step), before (the shipped trees alone) and after the calibration.
    const after = ex.map((e, i) => Math.log(e.aware.throughput / k.mid[i] / e.row.throughput!));
    const before = ex.map((e, i) => after[i] + Math.log(learned.publishedCalibrationOf(items[i])!.scale));
    const s = loadCalibrationSettings().published;
    for (const [i, e] of ex.entries()) {
      const c = learned.publishedCalibrationOf(items[i])!;
      expect(c.runs).toBe(runs.length);
      // Its errors are the shipped trees' own on these runs (before), so its scale is their shrunk mean.
      const w = ex.map((o) => (o.row.precision === e.row.precision ? 1 : s.otherPrecision));
      const mean = before.reduce((a, x, j) => a + w[j] * x, 0) / (w.reduce((a, b) => a + b, 0) + s.prior);
      expect(Math.log(c.scale)).toBeCloseTo(mean, 4);
    }
    const mape = (xs: number[]) => xs.reduce((a, x) => a + Math.abs(Math.exp(x) - 1), 0) / xs.length;
    expect(mape(after)).toBeLessThan(mape(before));
  });
});

describe('predict says so', () => {
  const gql = apolloForTests();
  const predict = (gpu: string, extra: string) =>
    gql(`{ predict(input: {
      workload: { model: "llama2_7b", samples: 1e9 }
      gpu: "${gpu}", gpusPerNode: 8, batchSizePerGpu: 1, gradAccumSteps: 16 ${extra}
    }) { stepTimeMs stepTimeMsP10 stepTimeMsP90 evidence evidenceLevel } }`);

  /** Eight nodes of eight GPUs, ZeRO-3 in BF16: the layouts torchtitan's and MaxText's runs used. */
  const zero3 = (model: string, gpu: string, batch: number, accum: number, stack: string, fields: string) =>
    gql(`{ predict(input: {
      workload: { model: "${model}", samples: 1e9 }, gpu: "${gpu}", gpusPerNode: 8, nodes: 8
      batchSizePerGpu: ${batch}, gradAccumSteps: ${accum}, precision: BF16, softwareStack: ${stack}
      parallelism: { zeroStage: 3 }
    }) { ${fields} } }`);

  it('Llama 2 7B in FP8 under Megatron on 8 H100s: calibrated by its runs there, and the nearest one measured inside the interval', async () => {
    const p = (await predict('H100-SXM5-80GB', 'precision: FP8, softwareStack: MEGATRON')).data!.predict;
    const runs = fittedLlmRuns().filter(
      (r) =>
        r.model === 'Llama-2-7B' &&
        r.gpu === 'H100-SXM5-80GB' &&
        stackOfFramework(r.framework) === 'MEGATRON',
    );
    expect(p.evidence).toMatch(
      new RegExp(
        `calibrated by the ${runs.length} latest published runs of this architecture on H100-SXM5-80GB under MEGATRON \\(NeMo \\(Megatron-Core\\); ${runs.filter((r) => r.precision === 'FP8').length} at FP8; superseded versions left out\\): their errors against this predictor made the step [0-9.]+% (longer|shorter)`,
      ),
    );
    expect(p.evidence).not.toMatch(/widened to a held-out model's/);
    // nemo2407-0005 ran this layout (8 GPUs, micro-batch 1, global batch 128 of 4,096 tokens).
    const nearest = runs.find((r) => r.id === 'nemo2407-0005')!;
    expect(nearest.globalBatch).toBe(128);
    const measuredMs = ((128 * 4096) / (nearest.tokensPerSecondPerGpu! * 8)) * 1000;
    expect(p.stepTimeMsP10).toBeLessThanOrEqual(measuredMs);
    expect(p.stepTimeMsP90).toBeGreaterThanOrEqual(measuredMs);
  });

  it("Llama 2 70B under TORCH_COMPILE is calibrated by MaxText's runs, and the evidence says they ran JAX/XLA", async () => {
    const p = (await zero3('llama2_70b', 'H100-SXM5-80GB', 1, 4, 'TORCH_COMPILE', 'evidence')).data!.predict;
    const maxText = fittedLlmRuns().filter(
      (r) =>
        r.model === 'Llama-2-70B' &&
        r.gpu === 'H100-SXM5-80GB' &&
        stackOfFramework(r.framework) === 'TORCH_COMPILE',
    );
    expect(new Set(maxText.map((r) => r.framework))).toEqual(new Set(['MaxText (JAX/XLA)']));
    expect(p.evidence).toContain(
      `calibrated by the ${maxText.length} latest published runs of this architecture on H100-SXM5-80GB under TORCH_COMPILE (MaxText (JAX/XLA); `,
    );
  });

  it("Llama 2 13B on A100s under TORCH_COMPILE: calibrated by torchtitan's three A100 runs, superseded in their source and never fitted, and says so", async () => {
    const a100 = loadLlmRuns().filter(
      (r) => r.model === 'Llama-2-13B' && r.gpu === 'A100-SXM4-80GB' && r.tokensPerSecondPerGpu !== null,
    );
    expect(a100.length).toBe(3);
    expect(a100.every((r) => !r.isLatest)).toBe(true);
    const p = (
      await zero3(
        'llama2_13b',
        'A100-SXM4-80GB',
        2,
        1,
        'TORCH_COMPILE',
        'stepTimeMs stepTimeMsP10 stepTimeMsP90 evidence',
      )
    ).data!.predict;
    expect(p.evidence).toContain(
      'calibrated by the 3 published runs of this architecture on A100-SXM4-80GB under TORCH_COMPILE (torchtitan (PyTorch FSDP2/DTensor); 3 at BF16; 3 superseded in their source by tables without this GPU, never fitted by the trees)',
    );
    // torchtitan-0039 ran this layout (64 GPUs, micro-batch 2, no recomputation): its step lies inside.
    const r = a100.find((x) => x.id === 'torchtitan-0039')!;
    const measuredMs = ((2 * 4096) / r.tokensPerSecondPerGpu!) * 1000;
    expect(p.stepTimeMsP10).toBeLessThanOrEqual(measuredMs);
    expect(p.stepTimeMsP90).toBeGreaterThanOrEqual(measuredMs);
    // The A100-40GB has the A100-80GB's die, SMs and clock but less memory bandwidth: it does not read
    // as it, and those runs do not calibrate it.
    const a100_40 = (await zero3('llama2_13b', 'A100-SXM4-40GB', 1, 2, 'TORCH_COMPILE', 'evidence')).data!
      .predict;
    expect(a100_40.evidence).not.toMatch(/calibrated by the \d+ (latest )?published run/);
  });

  it("Llama 2 7B under TUNED (MEGATRON's fitted effects, CUDA graphs added) is calibrated by the same Megatron runs, and says so", async () => {
    const tuned = (await predict('H100-SXM5-80GB', 'precision: FP8, softwareStack: TUNED')).data!.predict;
    const megatron = (await predict('H100-SXM5-80GB', 'precision: FP8, softwareStack: MEGATRON')).data!
      .predict;
    expect(tuned.evidence).toMatch(
      /calibrated by the \d+ latest published runs of this architecture on H100-SXM5-80GB under MEGATRON, whose effects TUNED takes \(NeMo \(Megatron-Core\); /,
    );
    expect(tuned.evidence).toMatch(
      /software stack assumed: TUNED \(analytical effects MEGATRON's, fitted on its published LLM runs/,
    );
    const moved = (e: string) =>
      /their errors against this predictor made the step ([0-9.]+% (longer|shorter))/.exec(e)?.[1];
    expect(moved(tuned.evidence)).toBeDefined();
    expect(moved(tuned.evidence)).toBe(moved(megatron.evidence));
    // The calibrated interval, not the wider one of a stack no run used.
    expect(tuned.stepTimeMsP90 / tuned.stepTimeMs).toBeCloseTo(
      megatron.stepTimeMsP90 / megatron.stepTimeMs,
      6,
    );
    expect(tuned.stepTimeMsP10 / tuned.stepTimeMs).toBeCloseTo(
      megatron.stepTimeMsP10 / megatron.stepTimeMs,
      6,
    );
  });

  it("an H200-SXM, with no run of its own, is calibrated by the H100-SXM5's runs it reads as, and is no slower", async () => {
    const llama3 = (gpu: string) =>
      gql(`{ predict(input: {
        workload: { model: "llama3_8b", samples: 1e9 }, gpu: "${gpu}", gpusPerNode: 8, batchSizePerGpu: 1
        gradAccumSteps: 16, precision: BF16, softwareStack: MEGATRON, parallelism: { zeroStage: 1 }
      }) { stepTimeMs analyticalStepTimeMs stepTimeMsP10 stepTimeMsP90 evidence evidenceLevel } }`);
    const h200 = (await llama3('H200-SXM-141GB')).data!.predict;
    const h100 = (await llama3('H100-SXM5-80GB')).data!.predict;
    expect(h200.evidence).toMatch(
      /calibrated by the \d+ latest published runs of this architecture on H100-SXM5-80GB \(H200-SXM-141GB reads as it: the same die, SM count and clock, and no more memory bandwidth; none ran on H200-SXM-141GB\) under MEGATRON/,
    );
    const moved = (e: string) =>
      /their errors against this predictor made the step ([0-9.]+% (longer|shorter))/.exec(e)?.[1];
    expect(moved(h200.evidence)).toBe(moved(h100.evidence));
    // Its roofline is the faster (more memory bandwidth); calibrated only on the H100 the answer had
    // it 5% slower than the H100's (12.6 s against 12.0 s).
    expect(h200.analyticalStepTimeMs).toBeLessThan(h100.analyticalStepTimeMs);
    expect(h200.stepTimeMs).toBeLessThanOrEqual(h100.stepTimeMs);
    // No H200 run is measured: its interval stays at least as wide as an unmeasured GPU's.
    expect(h200.evidenceLevel).toBe('UNMEASURED');
    expect(h200.stepTimeMsP90 / h200.stepTimeMs - h200.stepTimeMsP10 / h200.stepTimeMs).toBeGreaterThan(
      h100.stepTimeMsP90 / h100.stepTimeMs - h100.stepTimeMsP10 / h100.stepTimeMs,
    );
  });

  it('another stack (stock PyTorch) or a GPU without runs of this architecture is not calibrated', async () => {
    for (const [gpu, extra] of [
      ['H100-SXM5-80GB', 'precision: BF16'],
      ['A100-SXM4-80GB', 'precision: BF16, softwareStack: MEGATRON'],
      ['A100-SXM4-80GB', 'precision: BF16, softwareStack: TUNED'],
    ])
      expect((await predict(gpu, extra)).data!.predict.evidence).not.toMatch(
        /calibrated by the \d+ (latest )?published run/,
      );
  });
});
