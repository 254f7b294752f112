// Custom models and parallelism through GraphQL: modelSummary, workload.customModel / seqLen,
// predict's parallelism input, recommend's parallelism on every plan, and BAD_USER_INPUT naming the
// field for every bad input.
import { describe, expect, it } from 'vitest';
import { fromHuggingFaceConfig } from '../predictor/import/index.js';
import { llmModel } from '../predictor/llm.js';
import { predict, type PredictRequest } from '../predictor/predict.js';
import type { ModelDef } from '../predictor/types.js';
import { defaultInterNodeGbps, getGpu, loadEfficiency } from '../seeds/catalog.js';
import { loadLlmArchitectures } from '../seeds/llm.js';
import { apolloForTests } from './graphql-client.js';
import { HF_CONFIGS, tinyGpt } from './import-fixtures.js';

const run = apolloForTests();

const llamaConfig = JSON.stringify(HF_CONFIGS.find((c) => c.id === 'meta-llama/Llama-2-7b-hf')!.config);
const SUMMARY = `query($model: String, $custom: ModelInput, $seqLen: Int) { modelSummary(model: $model, customModel: $custom, seqLen: $seqLen) {
  id name family parameters forwardFlopsPerSample activationGbPerSample activationGbPerSampleSelective transformerBlocks attentionHeads tensorParallelizable
  seqLen throughputUnit layersByType { type count parameters } unsupportedOperators { opType domain count nodes reason } notes } }`;

describe('modelSummary', () => {
  it('a Hugging Face config: Llama-2-7B at 2048 tokens', async () => {
    const r = await run(SUMMARY, { custom: { huggingFaceConfig: llamaConfig }, seqLen: 2048 });
    expect(r.errors).toBeUndefined();
    const s = r.data!.modelSummary;
    expect(s.parameters).toBe(6_738_415_616);
    expect(s).toMatchObject({
      family: 'decoder',
      seqLen: 2048,
      transformerBlocks: 32,
      attentionHeads: 32,
      tensorParallelizable: true,
      throughputUnit: 'tokens/s',
      unsupportedOperators: [],
    });
    expect(s.id).toMatch(/^hf:llama:/);
    // Fused attention (the default) never keeps the scores, so selective recomputation saves nothing
    // more; 32 layers x 2048 tokens keep about 5 GiB in fp16-sized tensors.
    expect(s.activationGbPerSampleSelective).toBeCloseTo(s.activationGbPerSample, 9);
    expect(s.activationGbPerSample).toBeGreaterThan(3);
    expect(s.activationGbPerSample).toBeLessThan(20);
    // ~6 x parameters FLOPs per token for training (2 forward) plus attention.
    expect(s.forwardFlopsPerSample / 2048).toBeGreaterThan(2 * 6.7e9);
  });

  it('an ONNX graph (base64) lists what it could not cost', async () => {
    const b64 = Buffer.from(tinyGpt().bytes).toString('base64');
    const r = await run(SUMMARY, { custom: { onnxBase64: b64, name: 'tiny gpt' }, seqLen: 16 });
    expect(r.errors).toBeUndefined();
    expect(r.data!.modelSummary).toMatchObject({
      name: 'tiny gpt',
      family: 'onnx',
      transformerBlocks: 2,
      attentionHeads: 4,
      unsupportedOperators: [],
    });
    expect(r.data!.modelSummary.notes.join(' ')).toMatch(/no loss/);
  });

  it('a layer list, with kernel and padding as one value or a pair', async () => {
    const layers = [
      { type: 'CONV2D', inC: 3, outC: 8, kernel: [3], padding: [1, 1], inH: 32, inW: 32 },
      { type: 'ACTIVATION', kind: 'relu', elements: 8 * 32 * 32 },
      { type: 'POOL', kind: 'global_avg', channels: 8, inH: 32, inW: 32, kernel: [32], stride: 1 },
      { type: 'LINEAR', inFeatures: 8, outFeatures: 10 },
      { type: 'LOSS', elements: 10 },
    ];
    const r = await run(SUMMARY, { custom: { layers } });
    expect(r.errors).toBeUndefined();
    expect(r.data!.modelSummary.parameters).toBe(3 * 9 * 8 + 8 * 10 + 10);
  });

  it('a zoo model, at another sequence length', async () => {
    const r = await run(SUMMARY, { model: 'gpt2_124m', seqLen: 512 });
    expect(r.data!.modelSummary).toMatchObject({
      id: 'gpt2_124m',
      seqLen: 512,
      parameters: 124_439_808,
      unsupportedOperators: [],
      notes: [],
    });
  });
});

describe('predict and recommend with custom models and parallelism', () => {
  it('predict a custom Llama config on 16 A100s with TP 4, ZeRO-1 and selective recomputation', async () => {
    const r = await run(
      `query($w: WorkloadInput!) { predict(input: { workload: $w, gpu: "A100-SXM4-80GB", nodes: 2, gpusPerNode: 8, batchSizePerGpu: 2, gradAccumSteps: 4, precision: BF16,
        parallelism: { tensorParallel: 4, zeroStage: 1, recompute: SELECTIVE } }) {
      model globalBatch stepTimeMs fitsInMemory memoryGbPerGpu parallelism { dataParallel tensorParallel pipelineParallel zeroStage recompute microBatches }
      breakdown { forwardMs backwardMs optimizerMs mixedPrecisionMs communicationMs overheadMs recomputeMs pipelineBubbleMs tensorParallelCommMs dataParallelCommMs pipelineCommMs } } }`,
      { w: { customModel: { huggingFaceConfig: llamaConfig }, seqLen: 4096, samples: 1e9 } },
    );
    expect(r.errors).toBeUndefined();
    const p = r.data!.predict;
    expect(p.parallelism).toEqual({
      dataParallel: 4,
      tensorParallel: 4,
      pipelineParallel: 1,
      zeroStage: 1,
      recompute: 'SELECTIVE',
      microBatches: 4,
    });
    expect(p.globalBatch).toBe(2 * 4 * 4);
    expect(p.fitsInMemory).toBe(true);
    const b = p.breakdown;
    expect(b.recomputeMs).toBeGreaterThan(0);
    expect(b.tensorParallelCommMs).toBeGreaterThan(0);
    expect(b.pipelineBubbleMs).toBe(0);
  });

  it('recommend Llama-2-7B full fine-tuning on 80 GB GPUs: sharded plans, each saying its layout, and why the rest were rejected', async () => {
    const r =
      await run(`{ recommend(input: { workload: { model: "llama2_7b", samples: 2e9 }, gpus: ["A100-SXM4-80GB", "H100-SXM5-80GB"], maxNodes: 2, gpusPerNode: [1, 8], precisions: [BF16], limit: 5 }) {
      evaluated feasible rejected { reason description count }
      plans { totalGpus gpu { id } memoryGbPerGpu parallelism { dataParallel tensorParallel pipelineParallel zeroStage recompute microBatches } } } }`);
    expect(r.errors).toBeUndefined();
    const rec = r.data!.recommend;
    expect(rec.plans.length).toBe(5);
    for (const p of rec.plans) {
      expect(p.parallelism.dataParallel * p.parallelism.tensorParallel * p.parallelism.pipelineParallel).toBe(
        p.totalGpus,
      );
      expect(p.totalGpus).toBeGreaterThan(1);
    }
    expect(rec.rejected.find((x: { reason: string }) => x.reason === 'OUT_OF_MEMORY').description).toMatch(
      /does not fit/,
    );
    // Without the search, nothing fits.
    const off = await run(
      `{ recommend(input: { workload: { model: "llama2_7b", samples: 2e9 }, gpus: ["A100-SXM4-80GB"], maxNodes: 2, gpusPerNode: [8], precisions: [BF16], parallelismSearch: OFF }) { feasible plans { rank } } }`,
    );
    expect(off.data!.recommend).toEqual({ feasible: 0, plans: [] });
  });

  it('plain plans say so', async () => {
    const r = await run(
      `{ recommend(input: { workload: { model: "resnet50_v1.5", samples: 1e8 }, gpus: ["A100-SXM4-80GB"], maxNodes: 1, gpusPerNode: [8], limit: 1 }) { plans { parallelism { dataParallel tensorParallel pipelineParallel zeroStage recompute } } } }`,
    );
    expect(r.data!.recommend.plans[0].parallelism).toEqual({
      dataParallel: 8,
      tensorParallel: 1,
      pipelineParallel: 1,
      zeroStage: 0,
      recompute: 'NONE',
    });
  });
});

describe('mixture of experts through the API', () => {
  const qwenConfig = HF_CONFIGS.find((c) => c.id === 'Qwen/Qwen3-30B-A3B')!.config;
  const MOE = `query($w: WorkloadInput!, $p: ParallelismInput) { predict(input: { workload: $w, gpu: "H100-SXM5-80GB", nodes: 2, gpusPerNode: 8, batchSizePerGpu: 1, gradAccumSteps: 8, precision: BF16, parallelism: $p }) {
    model stepTimeMs analyticalStepTimeMs throughput fitsInMemory memoryGbPerGpu memory { weightsGb optimizerGb }
    parallelism { dataParallel tensorParallel pipelineParallel contextParallel expertParallel zeroStage recompute microBatches }
    breakdown { forwardMs backwardMs communicationTotalMs dataParallelCommMs expertParallelCommMs } } }`;
  // What the predictor itself answers for the same request (the API's defaults filled in).
  const direct = (model: ModelDef, expertParallel: number) => {
    const gpu = getGpu('H100-SXM5-80GB')!;
    const r: PredictRequest = {
      model,
      gpu,
      precision: 'BF16',
      batchSizePerGpu: 1,
      gpusPerNode: 8,
      nodes: 2,
      gradAccumSteps: 8,
      interNodeGbps: defaultInterNodeGbps(gpu.id),
      fp32UsesTf32: true,
      parallelism: {
        tensorParallel: 1,
        pipelineParallel: 1,
        zeroStage: 1,
        recompute: 'none',
        expertParallel,
      },
    };
    return predict(r, loadEfficiency());
  };

  it('predict Qwen3-30B-A3B from its config.json on 16 H100s with the experts spread 8 ways', async () => {
    const w = { customModel: { huggingFaceConfig: JSON.stringify(qwenConfig) }, seqLen: 4096, samples: 1e9 };
    const r = await run(MOE, { w, p: { expertParallel: 8, zeroStage: 1 } });
    expect(r.errors).toBeUndefined();
    const p = r.data!.predict;
    expect(p.model).toMatch(/^hf:qwen3_moe:/);
    expect(p.parallelism).toEqual({
      dataParallel: 16,
      tensorParallel: 1,
      pipelineParallel: 1,
      contextParallel: 1,
      expertParallel: 8,
      zeroStage: 1,
      recompute: 'NONE',
      microBatches: 8,
    });
    expect(Number.isFinite(p.stepTimeMs)).toBe(true);
    expect(p.stepTimeMs).toBeGreaterThan(0);
    expect(p.breakdown.expertParallelCommMs).toBeGreaterThan(0);
    // The analytical step is the predictor's own for this model and layout, EP included.
    const m = fromHuggingFaceConfig(qwenConfig, { seqLen: 4096 }).model;
    expect(p.analyticalStepTimeMs).toBeCloseTo(direct(m, 8).stepTimeMs, 6);
    // The breakdown is the predictor's, scaled as the step is by the learned correction.
    const scale = p.stepTimeMs / p.analyticalStepTimeMs;
    expect(p.breakdown.expertParallelCommMs).toBeCloseTo(
      direct(m, 8).breakdown.expertParallelCommMs * scale,
      6,
    );

    // The same without expert parallelism: no all-to-all, and every GPU holds all 128 experts.
    const plain = (await run(MOE, { w, p: { zeroStage: 1 } })).data!.predict;
    expect(plain.parallelism.expertParallel).toBe(1);
    expect(plain.breakdown.expertParallelCommMs).toBe(0);
    expect(p.memory.weightsGb).toBeLessThan(plain.memory.weightsGb / 4);
  });

  it('predict DeepSeek-V3 from its config.json on 1024 H100s (128 nodes x 8): TP 2, PP 8, the 256 experts spread 64 ways', async () => {
    const config = HF_CONFIGS.find((c) => c.id === 'deepseek-ai/DeepSeek-V3')!.config;
    const parallelism = {
      tensorParallel: 2,
      pipelineParallel: 8,
      expertParallel: 64,
      zeroStage: 1,
      recompute: 'none',
    } as const;
    const r = await run(
      `query($w: WorkloadInput!, $p: ParallelismInput) { predict(input: { workload: $w, gpu: "H100-SXM5-80GB", nodes: 128, gpusPerNode: 8, batchSizePerGpu: 1, gradAccumSteps: 16, precision: BF16, parallelism: $p }) {
        model stepTimeMs analyticalStepTimeMs parallelism { dataParallel tensorParallel pipelineParallel expertParallel zeroStage recompute microBatches }
        breakdown { expertParallelCommMs tensorParallelCommMs pipelineBubbleMs } } }`,
      {
        w: { customModel: { huggingFaceConfig: JSON.stringify(config) }, seqLen: 4096, samples: 1e9 },
        p: { ...parallelism, recompute: 'NONE' },
      },
    );
    expect(r.errors).toBeUndefined();
    const p = r.data!.predict;
    expect(p.model).toMatch(/^hf:deepseek_v3:/);
    expect(p.parallelism).toEqual({
      dataParallel: 64,
      tensorParallel: 2,
      pipelineParallel: 8,
      expertParallel: 64,
      zeroStage: 1,
      recompute: 'NONE',
      microBatches: 16,
    });
    expect(Number.isFinite(p.stepTimeMs)).toBe(true);
    expect(p.stepTimeMs).toBeGreaterThan(0);
    // The EP group of 64 spans 8 nodes: the all-to-all leaves the node.
    expect(p.breakdown.expertParallelCommMs).toBeGreaterThan(0);
    expect(p.breakdown.tensorParallelCommMs).toBeGreaterThan(0);
    expect(p.breakdown.pipelineBubbleMs).toBeGreaterThan(0);
    // The analytical step is the predictor's own for the imported model at this layout.
    const gpu = getGpu('H100-SXM5-80GB')!;
    const direct = predict(
      {
        model: fromHuggingFaceConfig(config, { seqLen: 4096 }).model,
        gpu,
        precision: 'BF16',
        batchSizePerGpu: 1,
        gpusPerNode: 8,
        nodes: 128,
        gradAccumSteps: 16,
        interNodeGbps: defaultInterNodeGbps(gpu.id),
        fp32UsesTf32: true,
        parallelism,
      },
      loadEfficiency(),
    );
    expect(p.analyticalStepTimeMs).toBeCloseTo(direct.stepTimeMs, 6);
  });

  it('predict gpt-oss-20b from its config.json on 8 H100s (one node), the 32 experts spread 8 ways', async () => {
    const config = HF_CONFIGS.find((c) => c.id === 'openai/gpt-oss-20b')!.config;
    const parallelism = {
      tensorParallel: 1,
      pipelineParallel: 1,
      expertParallel: 8,
      zeroStage: 1,
      recompute: 'none',
    } as const;
    const r = await run(
      `query($w: WorkloadInput!, $p: ParallelismInput) { predict(input: { workload: $w, gpu: "H100-SXM5-80GB", nodes: 1, gpusPerNode: 8, batchSizePerGpu: 1, gradAccumSteps: 8, precision: BF16, parallelism: $p }) {
        model stepTimeMs analyticalStepTimeMs fitsInMemory parallelism { dataParallel expertParallel }
        breakdown { expertParallelCommMs } } }`,
      {
        w: { customModel: { huggingFaceConfig: JSON.stringify(config) }, seqLen: 4096, samples: 1e9 },
        p: { ...parallelism, recompute: 'NONE' },
      },
    );
    expect(r.errors).toBeUndefined();
    const p = r.data!.predict;
    expect(p.model).toMatch(/^hf:gpt_oss:/);
    expect(p.parallelism).toEqual({ dataParallel: 8, expertParallel: 8 });
    expect(Number.isFinite(p.stepTimeMs)).toBe(true);
    expect(p.stepTimeMs).toBeGreaterThan(0);
    expect(p.breakdown.expertParallelCommMs).toBeGreaterThan(0);
    // The analytical step is the predictor's own for the imported model at this layout, and the one
    // for the llm_models.csv row's model (its window and biases from llm_models_extra.json) too, with
    // its attention as transformers runs gpt-oss's on stock PyTorch: eager (its attention sinks).
    expect(fromHuggingFaceConfig(config, { seqLen: 4096 }).model.attention).toBe('eager');
    const gpu = getGpu('H100-SXM5-80GB')!;
    const at = (model: ModelDef) =>
      predict(
        {
          model,
          gpu,
          precision: 'BF16',
          batchSizePerGpu: 1,
          gpusPerNode: 8,
          nodes: 1,
          gradAccumSteps: 8,
          interNodeGbps: defaultInterNodeGbps(gpu.id),
          fp32UsesTf32: true,
          parallelism,
        },
        loadEfficiency(),
      ).stepTimeMs;
    const imported = at(fromHuggingFaceConfig(config, { seqLen: 4096 }).model);
    expect(p.analyticalStepTimeMs).toBeCloseTo(imported, 6);
    const row = loadLlmArchitectures().find((a) => a.model === 'gpt-oss-20b')!;
    expect(at({ ...(llmModel(row, 4096) as ModelDef), attention: 'eager' })).toBe(imported);
    expect(at(llmModel(row, 4096) as ModelDef)).toBeLessThan(imported);
  });

  it('the same model as a GraphQL layer list (router and experts fields) predicts the same expert-parallel step', async () => {
    const built = llmModel(
      loadLlmArchitectures().find((a) => a.model === 'Qwen3-30B-A3B')!,
      4096,
    ) as ModelDef;
    const layers = built.layers.map((l) => ({ ...l, type: l.type.toUpperCase() }));
    expect(layers.some((l) => 'experts' in l)).toBe(true);
    expect(layers.some((l) => 'router' in l)).toBe(true);
    const w = { customModel: { layers }, samples: 1e9 };
    const summary = await run(
      `query($c: ModelInput) { modelSummary(customModel: $c) { parameters experts expertParameters notes } }`,
      { c: { layers } },
    );
    expect(summary.errors).toBeUndefined();
    expect(summary.data!.modelSummary).toMatchObject({ experts: 128, notes: [] });
    // 48 layers x 128 experts x 3 x 2048 x 768: 29.0 B of the 30.5 B.
    expect(summary.data!.modelSummary.expertParameters).toBe(48 * 128 * 3 * 2048 * 768);
    const r = await run(MOE, { w, p: { expertParallel: 8, zeroStage: 1 } });
    expect(r.errors).toBeUndefined();
    expect(r.data!.predict.parallelism.expertParallel).toBe(8);
    expect(r.data!.predict.analyticalStepTimeMs).toBeCloseTo(direct(built, 8).stepTimeMs, 6);
  });

  it('recommend chooses expert parallelism for it, each plan saying its degree, and predict at that layout gives the same step', async () => {
    const c = JSON.stringify(qwenConfig);
    const r = await run(
      `query($c: String!) { recommend(input: { workload: { customModel: { huggingFaceConfig: $c }, seqLen: 4096, samples: 1e8 }, gpus: ["H100-SXM5-80GB"], precisions: [BF16], maxNodes: 2, gpusPerNode: [8], batchSizes: [1], objective: TIME, softwareStack: MEGATRON, limit: 3 }) {
        status plans { nodes gpusPerNode batchSizePerGpu stepTimeMs interNodeGbps parallelism { dataParallel tensorParallel pipelineParallel contextParallel virtualPipelineStages expertParallel zeroStage recompute microBatches } } } }`,
      { c },
    );
    expect(r.errors).toBeUndefined();
    const plans = r.data!.recommend.plans;
    expect(plans.length).toBeGreaterThan(0);
    expect(plans[0].parallelism.expertParallel).toBeGreaterThan(1);
    const { dataParallel: _, microBatches, ...layout } = plans[0].parallelism;
    const again = await run(
      `query($w: WorkloadInput!, $p: ParallelismInput, $nodes: Int!, $m: Int!, $net: Float) { predict(input: { workload: $w, gpu: "H100-SXM5-80GB", nodes: $nodes, gpusPerNode: 8, batchSizePerGpu: 1, gradAccumSteps: $m, precision: BF16, softwareStack: MEGATRON, parallelism: $p, interNodeGbps: $net }) {
        stepTimeMs parallelism { expertParallel } } }`,
      {
        w: { customModel: { huggingFaceConfig: c }, seqLen: 4096, samples: 1e8 },
        p: layout,
        nodes: plans[0].nodes,
        m: microBatches,
        // The network of the offer the plan was priced on (an offer may state less than the GPU's default).
        net: plans[0].interNodeGbps,
      },
    );
    expect(again.errors).toBeUndefined();
    expect(again.data!.predict.parallelism.expertParallel).toBe(plans[0].parallelism.expertParallel);
    expect(again.data!.predict.stepTimeMs / plans[0].stepTimeMs).toBeCloseTo(1, 9);
  });

  it.each([
    [{ expertParallel: 3 }, /3 does not divide the 128 experts of a layer/],
    [{ expertParallel: 32 }, /the 16 GPUs of a pipeline stage do not split into groups of 32/],
    [{ expertParallel: 0 }, /must be an integer from 1 to 1024 \(got 0\)/],
    [{ expertParallel: 2048 }, /must be an integer from 1 to 1024/],
  ])('a Qwen3-30B-A3B layout %j is BAD_USER_INPUT naming parallelism.expertParallel', async (p, message) => {
    const w = { customModel: { huggingFaceConfig: JSON.stringify(qwenConfig) }, samples: 1e9 };
    const r = await run(MOE, { w, p });
    expect(r.errors, JSON.stringify(r)).toBeDefined();
    expect(r.errors![0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(r.errors![0].extensions?.field).toBe('parallelism.expertParallel');
    expect(r.errors![0].message).toMatch(message);
  });

  it('expert parallelism on a dense model is BAD_USER_INPUT too', async () => {
    const r = await run(MOE, { w: { model: 'llama2_7b', samples: 1 }, p: { expertParallel: 2 } });
    expect(r.errors![0].extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'parallelism.expertParallel',
    });
    expect(r.errors![0].message).toMatch(/this model has none/);
  });
});

describe('bad input is BAD_USER_INPUT naming the field', () => {
  const expectBad = async (
    query: string,
    variables: Record<string, unknown>,
    field: string,
    message: RegExp,
  ) => {
    const r = await run(query, variables);
    expect(r.errors, JSON.stringify(r)).toBeDefined();
    expect(r.errors![0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(r.errors![0].extensions?.field).toBe(field);
    expect(r.errors![0].message).toMatch(message);
  };
  const P = `query($w: WorkloadInput!, $p: ParallelismInput) { predict(input: { workload: $w, gpu: "A100-SXM4-80GB", gpusPerNode: 8, batchSizePerGpu: 1, precision: BF16, parallelism: $p }) { stepTimeMs } }`;

  it.each([
    [{ custom: { onnxBase64: 'A'.repeat(64_000_004) } }, 'customModel.onnxBase64', /at most 64000000/],
    [{ custom: { onnxBase64: 'not base64!!' } }, 'customModel.onnxBase64', /is not base64/],
    [
      { custom: { onnxBase64: Buffer.from('hello world, not a model').toString('base64') } },
      'customModel.onnxBase64',
      /not an ONNX model/,
    ],
    [
      { custom: { huggingFaceConfig: '{"model_type": "bloom"}' } },
      'customModel.huggingFaceConfig',
      /"bloom" is not supported/,
    ],
    [
      { custom: { layers: [{ type: 'LINEAR', inFeatures: 4 }] } },
      'customModel.layers',
      /needs "outFeatures"/,
    ],
    [
      {
        custom: {
          layers: [
            { type: 'LINEAR', inFeatures: 4, outFeatures: 4 },
            { type: 'LINEAR', inFeatures: 4, outFeatures: 4, sameInputAs: 3 },
          ],
        },
      },
      'customModel.layers',
      /\[1\]\.sameInputAs must be from 1 to 1/,
    ],
    [{ custom: {} }, 'customModel', /exactly one of huggingFaceConfig, onnxBase64 or layers/],
    [
      { model: 'gpt2_124m', custom: { huggingFaceConfig: llamaConfig } },
      'model',
      /exactly one of model .* or customModel/,
    ],
    [{ model: 'gpt2_124m', seqLen: 0 }, 'seqLen', /integer from 1/],
    [
      { custom: { onnxBase64: Buffer.from(tinyGpt().bytes).toString('base64') } },
      'seqLen',
      /symbolic dimension/,
    ],
  ])('modelSummary %#', async (v, field, message) => {
    await expectBad(SUMMARY, v, field, message);
  });

  it.each([
    [
      { model: 'llama2_7b', samples: 1 },
      { tensorParallel: 16 },
      'parallelism.tensorParallel',
      /must divide gpusPerNode/,
    ],
    [
      { model: 'llama2_7b', samples: 1 },
      { tensorParallel: 3 },
      'parallelism.tensorParallel',
      /must divide gpusPerNode/,
    ],
    [
      { model: 'llama2_7b', samples: 1 },
      { pipelineParallel: 33 },
      'parallelism.pipelineParallel',
      /33 stages for 32/,
    ],
    [{ model: 'llama2_7b', samples: 1 }, { zeroStage: 5 }, 'parallelism.zeroStage', /0, 1, 2 or 3/],
    [
      { model: 'resnet50_v1.5', samples: 1 },
      { tensorParallel: 2 },
      'parallelism.tensorParallel',
      /no pair of linear layers/,
    ],
    [
      { customModel: { huggingFaceConfig: llamaConfig }, seqLen: 8192, samples: 1 },
      undefined,
      'workload.seqLen',
      /exceeds the model's 4096-position/,
    ],
    [{ samples: 1 }, undefined, 'workload.model', /exactly one of workload.model/],
  ])('predict %#', async (w, p, field, message) => {
    await expectBad(P, { w, p }, field, message);
  });
});
