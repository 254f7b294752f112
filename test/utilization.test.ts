// Model FLOPs and MFU (predictor/utilization.ts) against the published runs' own figures: NeMo's
// model TFLOPS per GPU, dgxc-benchmarking's MFU, Megatron-Bridge's count of causal attention, and the
// Megatron-LM paper's formula; then the API's predictions and plans carry them.
import { describe, expect, it } from 'vitest';
import { modelFlopsChecks, type ModelFlopsCheck } from '../cli/evaluate-llm.js';
import { llmModel, llmSourceOf } from '../predictor/llm.js';
import { costOf } from '../predictor/predict.js';
import { modelFlopsPerSample } from '../predictor/utilization.js';
import { aboveBestPublishedWords, highestPublishedMfu } from '../predictor/published-mfu.js';
import { loadCalibrationSettings } from '../seeds/calibration.js';
import { getGpu } from '../seeds/catalog.js';
import { getModel } from '../predictor/zoo/index.js';
import { loadLlmArchitectures } from '../seeds/llm.js';
import { loadLlmVocab } from '../seeds/tables.js';
import { apolloForTests } from './graphql-client.js';

const checks = modelFlopsChecks();
const of = (source: string, task: string, family?: RegExp) =>
  checks.filter(
    (c) => llmSourceOf(c.run) === source && c.run.task === task && (!family || family.test(c.run.model)),
  );
const ratio = (c: ModelFlopsCheck) => c.perToken.ALL_KEYS / c.publishedPerToken!;
/** The vocabulary a model's row leaves to its tokenizer (measurements/llm_vocab.json). */
const vocabOf = (model: string) => {
  const e = loadLlmVocab()[model];
  if (typeof e !== 'object') throw new Error(`no vocabulary for ${model}`);
  return e.vocab;
};

describe('model FLOPs as the published runs count them', () => {
  it("reproduces NeMo's published model TFLOPS of every pre-training run within 0.3%, at 2K to 1M tokens", () => {
    const runs = of('NVIDIA/NeMo', 'pretrain');
    expect(runs.length).toBeGreaterThanOrEqual(15);
    expect(new Set(runs.map((c) => c.run.seqLen)).size).toBeGreaterThanOrEqual(6);
    for (const c of runs) expect(Math.abs(ratio(c) - 1), c.run.id).toBeLessThan(0.003);
  });

  it("gives dgxc-benchmarking's MFU at its measured throughput for GPT-3 and Llama, BF16 against the BF16 peak and FP8 against FP8's", () => {
    const runs = of('NVIDIA/dgxc-benchmarking', 'pretrain', /^(GPT3|Llama)/);
    expect(runs.length).toBeGreaterThanOrEqual(60);
    expect(new Set(runs.map((c) => c.run.precision))).toEqual(new Set(['BF16', 'FP8']));
    for (const c of runs) expect(Math.abs(c.mfu! / c.publishedMfu! - 1), c.run.id).toBeLessThan(0.01);
  });

  it("differs from dgxc-benchmarking's Nemotron-4 MFU by its K and V projections: theirs counts them at every head, not at the 8 KV heads", () => {
    const runs = of('NVIDIA/dgxc-benchmarking', 'pretrain', /^Nemotron-4/);
    expect(runs.length).toBeGreaterThanOrEqual(10);
    // With grouped-query attention (what the architecture is) the count is 11-15% under theirs.
    for (const c of runs) expect(c.mfu! / c.publishedMfu!).toBeGreaterThan(0.84);
    for (const c of runs) expect(c.mfu! / c.publishedMfu!).toBeLessThan(0.9);
    // Counted at every head, the same runs give their figure.
    const archs = new Map(loadLlmArchitectures().map((a) => [a.model, a]));
    for (const c of runs) {
      const a = archs.get(c.run.model)!;
      // Under another name (the model cache is keyed by it), with the vocabulary the name looked up.
      const mha = llmModel(
        { ...a, model: `${a.model} (every head K/V)`, kvHeads: a.heads, vocab: a.vocab ?? vocabOf(a.model) },
        c.run.seqLen!,
      );
      if (typeof mha === 'string') throw new Error(mha);
      const perToken = modelFlopsPerSample(costOf(mha)) / c.run.seqLen!;
      expect(
        Math.abs((c.mfu! * perToken) / c.perToken.ALL_KEYS / c.publishedMfu! - 1),
        c.run.id,
      ).toBeLessThan(0.01);
    }
  });

  it("matches Megatron-Bridge's dense Llama pre-training TFLOPS with causal attention counted at half, 4-13% under the all-keys count", () => {
    const runs = of('NVIDIA-NeMo/Megatron-Bridge', 'pretrain', /^Llama-3(\.1)?-\d+B$/);
    expect(runs.length).toBeGreaterThanOrEqual(10);
    const causal = runs.map((c) => c.perToken.CAUSAL_HALF / c.publishedPerToken!);
    // All but one within 0.3% (the other 2.3%: one of the 70B runs, the rest of whose set match).
    expect(causal.filter((r) => Math.abs(r - 1) < 0.003).length).toBeGreaterThanOrEqual(runs.length - 1);
    for (const c of runs) expect(ratio(c)).toBeGreaterThan(1.03);
  });

  it("finds NeMo AutoModel's LoRA figures at 2/3 of its pre-training count: forward and input gradients, attention's too", () => {
    const archs = new Map(loadLlmArchitectures().map((a) => [a.model, a]));
    const runs = of('NVIDIA-NeMo/Automodel', 'lora');
    expect(runs.length).toBeGreaterThanOrEqual(5);
    for (const c of runs) {
      const m = llmModel(archs.get(c.run.model)!, c.run.seqLen!, c.run.layers);
      if (typeof m === 'string') throw new Error(m);
      const pretraining = modelFlopsPerSample(costOf(m), false, 'CAUSAL_HALF') / c.run.seqLen!;
      expect(Math.abs(c.publishedPerToken! / pretraining / (2 / 3) - 1), c.run.id).toBeLessThan(0.004);
      // This count runs attention's backward whole, as a LoRA step does: above theirs.
      expect(c.perToken.ALL_KEYS).toBeGreaterThan(c.publishedPerToken!);
    }
  });

  it("equals the Megatron-LM paper's 72 B s l h^2 (1 + s/6h + V/12lh) for GPT-3 175B", () => {
    const a = loadLlmArchitectures().find((x) => x.model === 'GPT3-175B')!;
    const s = 2048;
    const m = llmModel(a, s);
    if (typeof m === 'string') throw new Error(m);
    // The paper pads the vocabulary to 51,200; the model here has GPT-2's tokenizer's.
    const [l, h, V] = [a.layers!, a.hidden!, a.vocab ?? vocabOf(a.model)];
    const paper = 72 * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    expect(modelFlopsPerSample(costOf(m)) / paper).toBeCloseTo(1, 6);
  });
});

describe('MFU in the API', () => {
  const gql = apolloForTests();

  it("predict gives model TFLOPS per GPU and MFU at its step time: Llama 3 8B under Megatron on 8 H100s near dgxc-benchmarking's 0.62 (BF16) and 0.41 (FP8)", async () => {
    const h100 = getGpu('H100-SXM5-80GB')!;
    for (const [precision, published, peak] of [
      ['BF16', 0.62, h100.peakTflops.bf16!],
      ['FP8', 0.41, h100.peakTflops.fp8!],
    ] as const) {
      const res = await gql(`{ predict(input: {
        workload: { model: "llama3_8b", samples: 1e9 }, gpu: "H100-SXM5-80GB", gpusPerNode: 8
        batchSizePerGpu: 1, gradAccumSteps: 16, precision: ${precision}, softwareStack: MEGATRON
        parallelism: { zeroStage: 1 }
      }) { stepTimeMs globalBatch modelTflopsPerGpu mfu dominantMath } }`);
      expect(res.errors).toBeUndefined();
      const p = res.data!.predict;
      expect(p.dominantMath).toBe(precision.toLowerCase());
      expect(p.mfu).toBeCloseTo(p.modelTflopsPerGpu / peak, 12);
      // The throughput's own check: the predicted MFU is as near the published one as its step time is.
      expect(p.mfu / published).toBeGreaterThan(0.85);
      expect(p.mfu / published).toBeLessThan(1.15);
    }
  });

  it("predict's evidence says so where the MFU is above the best published run's, as recommend's note does", async () => {
    const evidence = async (gpu: string) => {
      const res = await gql(`{ predict(input: {
        workload: { model: "llama3_8b", samples: 1e9 }, gpu: "${gpu}", gpusPerNode: 8, batchSizePerGpu: 2
        precision: BF16, softwareStack: MEGATRON, parallelism: { zeroStage: 1 }
      }) { mfu evidence } }`);
      expect(res.errors).toBeUndefined();
      return res.data!.predict as { mfu: number; evidence: string };
    };
    const a100 = await evidence('A100-SXM4-80GB');
    expect(a100.evidence).toMatch(
      new RegExp(
        `; this time assumes ${Math.round(100 * a100.mfu)}% MFU .* more likely too short than too long`,
      ),
    );
    expect((await evidence('H100-SXM5-80GB')).evidence).not.toMatch(/time assumes/);
  });

  it('a plan carries the MFU of its own step time, and a CNN plan one against the math its convolutions run in', async () => {
    for (const [model, samples] of [
      ['llama3_8b', 1e9],
      ['resnet50_v1.5', 1e8],
    ] as const) {
      const res = await gql(`{ recommend(input: {
        workload: { model: "${model}", samples: ${samples} }, gpus: ["A100-SXM4-80GB", "H100-SXM5-80GB"]
        precisions: [BF16, AMP_FP16, TF32], gpusPerNode: [8], maxNodes: 1, limit: 3
      }) { plans { gpu { id } precision stepTimeMs totalGpus modelTflopsPerGpu mfu } } }`);
      expect(res.errors).toBeUndefined();
      const plans = res.data!.recommend.plans;
      expect(plans.length).toBeGreaterThan(0);
      for (const p of plans) {
        const gpu = getGpu(p.gpu.id)!;
        const peak = p.precision === 'TF32' ? gpu.peakTflops.tf32! : gpu.peakTflops.fp16!;
        expect(p.mfu).toBeCloseTo(p.modelTflopsPerGpu / peak, 12);
        expect(p.mfu).toBeGreaterThan(0.05);
        expect(p.mfu).toBeLessThan(0.8);
      }
    }
  });

  it("warns where plan 1's MFU is above what the best published run of its math reached by more than repeats differ, and not otherwise", async () => {
    const best = highestPublishedMfu('bf16')!;
    // The ceiling is a published run's own figure, counted as its source counted it.
    expect(best.run.mfu).not.toBeNull();
    expect(Math.abs(best.mfu / best.run.mfu! - 1)).toBeLessThan(0.01);
    // "By more than repeats of one run differ": a repeat's step at the P10 of seeds/calibration.json's
    // sameConfiguration, about 4.6% shorter than the mean.
    const fastestRepeat = Math.exp(-loadCalibrationSettings().sameConfiguration.q10);
    expect(fastestRepeat).toBeGreaterThan(1.02);
    expect(fastestRepeat).toBeLessThan(1.1);
    const words = (mfu: number) =>
      aboveBestPublishedWords({ mfu, modelTflopsPerGpu: mfu * 312 }, 'A100-SXM4-80GB', 'bf16');
    expect(words(best.mfu * fastestRepeat * 0.999)).toBeUndefined();
    expect(words(best.mfu * fastestRepeat * 1.001)).toContain(
      `above the ${Math.round(100 * best.mfu)}% that the best published bf16 pre-training run reached (${best.run.model} on ${best.run.numGpus} ${best.run.gpu}`,
    );
    const planOne = async (gpu: string) => {
      const res = await gql(`{ recommend(input: {
        workload: { model: "llama3_8b", samples: 2e10 }, gpus: ["${gpu}"], precisions: [BF16]
        softwareStack: MEGATRON, maxNodes: 2, limit: 1
      }) { plans { mfu dominantMath evidence } notes } }`);
      expect(res.errors).toBeUndefined();
      const r = res.data!.recommend;
      const [plan] = r.plans;
      return {
        mfu: plan.mfu as number,
        math: plan.dominantMath,
        evidence: plan.evidence as string,
        notes: r.notes as string[],
      };
    };
    const warned = (notes: string[]) =>
      notes.filter((n) => /^warning: plan 1's time assumes \d+% MFU/.test(n));
    // On A100s the Megatron stack (fitted on H100 runs) is predicted above the best published BF16
    // run, by less than its repeats differ: no warning. (Before Megatron's distributed optimizer hid
    // its reduce-scatter behind the last micro-batch's backward only, plan 1 here assumed more and
    // was warned of; predict's evidence still says it for a configuration above, test above.)
    const a100 = await planOne('A100-SXM4-80GB');
    expect(a100.math).toBe('bf16');
    expect(a100.mfu).toBeGreaterThan(best.mfu);
    expect(a100.mfu).toBeLessThan(best.mfu * fastestRepeat);
    expect(warned(a100.notes)).toHaveLength(0);
    expect(a100.evidence).not.toMatch(/time assumes/);
    // On H100s, at the best run's own figure (calibrated by it), within what repeats of one run differ.
    const h100 = await planOne('H100-SXM5-80GB');
    expect(h100.mfu).toBeLessThan(best.mfu * fastestRepeat);
    expect(warned(h100.notes)).toHaveLength(0);
    expect(h100.evidence).not.toMatch(/time assumes/);
  });

  it("a fleet's assignment and a procurement's run carry their MFU: the model's FLOPs over their step time", async () => {
    const resnet = getModel('resnet50_v1.5')!;
    const perSample = modelFlopsPerSample(costOf(resnet));
    const a100 = getGpu('A100-SXM4-80GB')!;
    const fleet = await gql(`{ planFleet(input: { jobs: [
        { id: "rn50", workload: { model: "resnet50_v1.5", samples: 2e8 }, deadlineHours: 100, batchSizes: [128] } ],
      inventory: [{ gpu: "A100-SXM4-80GB", count: 8 }], gpusPerNode: [8], maxNodes: 1, precisions: [AMP_FP16] }) {
      status assignments { totalGpus batchSizePerGpu gradAccumSteps stepTimeMs dominantMath modelTflopsPerGpu mfu } } }`);
    const procurement = await gql(`{ planProcurement(input: { horizonMonths: 3, jobs: [{ id: "rn50",
        workload: { model: "resnet50_v1.5", samples: 1.28e8 }, runsPerMonth: 2, batchSizes: [128] }],
      precisions: [AMP_FP16], gpusPerNode: [8], maxNodes: 1, options: [{ gpu: "A100-SXM4-80GB", rentUsdPerGpuHour: 2.6 }] }) {
      status allocations { config { totalGpus batchSizePerGpu gradAccumSteps hoursPerRun dominantMath modelTflopsPerGpu mfu } } } }`);
    expect(fleet.errors).toBeUndefined();
    expect(procurement.errors).toBeUndefined();
    const [assignment] = fleet.data!.planFleet.assignments;
    const flops = perSample * assignment.batchSizePerGpu * assignment.gradAccumSteps * assignment.totalGpus;
    expect(assignment.modelTflopsPerGpu).toBeCloseTo(
      flops / (assignment.stepTimeMs / 1e3) / assignment.totalGpus / 1e12,
      9,
    );
    for (const c of [assignment, procurement.data!.planProcurement.allocations[0].config]) {
      expect(c.dominantMath).toBe('fp16');
      expect(c.mfu).toBeCloseTo(c.modelTflopsPerGpu / a100.peakTflops.fp16!, 12);
      expect(c.mfu).toBeGreaterThan(0.1);
      expect(c.mfu).toBeLessThan(0.8);
    }
  });
});
