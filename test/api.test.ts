import { describe, expect, it } from 'vitest';
import { apolloForTests } from './graphql-client.js';
import { PRECISIONS } from '../predictor/types.js';

const run = apolloForTests();

async function badInput(query: string, field: RegExp) {
  const r = await run(query);
  expect(r.errors, JSON.stringify(r)).toBeDefined();
  expect(r.errors![0].extensions?.code).toBe('BAD_USER_INPUT');
  expect(r.errors![0].message).toMatch(field);
  return r.errors![0].message;
}

describe('catalog queries', () => {
  it('gpus, gpu(id), models, model(id), precisions', async () => {
    const r = await run(`{ gpus { id memoryGb priceUsdPerGpuHour supportedPrecisions peakTflops { fp16 } }
      gpu(id: "V100-SXM2-16GB") { id supportedPrecisions intraNodeBwSource }
      models { id parameters throughputUnit }
      model(id: "bert_large_squad") { id parameters seqLen batchElement layersByType { type count } }
      precisions { id matmulMath masterWeights lossScaling } }`);
    expect(r.errors).toBeUndefined();
    expect(r.data!.gpus.length).toBeGreaterThanOrEqual(53);
    expect(r.data!.gpu.supportedPrecisions).not.toContain('BF16');
    expect(r.data!.gpu.supportedPrecisions).toContain('AMP_FP16');
    expect(r.data!.models.map((m: { id: string }) => m.id)).toContain('resnet50_v1.5');
    expect(r.data!.model.parameters).toBeGreaterThan(330e6);
    expect(r.data!.model.parameters).toBeLessThan(345e6);
    expect(r.data!.precisions).toHaveLength(PRECISIONS.length);
    expect((await run('{ gpu(id: "nope") { id } }')).data!.gpu).toBeNull();
    // The label and what plans fit in: CUDA's total for an H100 SXM, with where that figure comes from.
    const h100 = (await run('{ gpu(id: "H100-SXM5-80GB") { memoryGb usableMemoryGb usableMemorySource } }'))
      .data!.gpu;
    expect(h100.memoryGb).toBe(80);
    expect(h100.usableMemoryGb).toBeCloseTo(79.2, 1);
    expect(h100.usableMemorySource).toMatch(/^CUDA deviceQuery totalGlobalMem \(thamada\/nvidia-smi /);
    // FP8 as a stock PyTorch loop stores it (the default stack) and as Megatron-Core's recipe does.
    const fp8 = async (stack: string) =>
      (
        await run(`{ precisions(softwareStack: ${stack}) { id weights gradients masterWeights } }`)
      ).data!.precisions.find((p: { id: string }) => p.id === 'FP8');
    expect(await fp8('PYTORCH_EAGER')).toEqual({
      id: 'FP8',
      weights: 'fp32',
      gradients: 'fp32',
      masterWeights: false,
    });
    expect(await fp8('MEGATRON')).toEqual({
      id: 'FP8',
      weights: 'bf16',
      gradients: 'fp32',
      masterWeights: true,
    });
    // A prediction says which it assumed.
    const evidence = async (more: string) =>
      (
        await run(
          `{ predict(input: { workload: { model: "gpt2_124m", samples: 1e6 }, gpu: "H100-SXM5-80GB", gpusPerNode: 8, batchSizePerGpu: 8, precision: FP8${more} }) { evidence } }`,
        )
      ).data!.predict.evidence;
    expect(await evidence('')).toMatch(
      /FP8 over an fp32 model, as a stock PyTorch loop runs Transformer Engine/,
    );
    expect(await evidence(', softwareStack: MEGATRON')).not.toMatch(/fp32 model/);
    expect(await evidence(', parallelism: { zeroStage: 1, masterWeights: FP32 }')).not.toMatch(/fp32 model/);
  });
});

describe('predict', () => {
  it('says how it runs a ZeRO stage, which frameworks run differently', async () => {
    const sharding = async (zeroStage: number, precision: string, stack = 'PYTORCH_EAGER') =>
      (
        await run(
          `{ predict(input: { workload: { model: "gpt2_124m", samples: 1e6 }, gpu: "H100-SXM5-80GB", gpusPerNode: 8, batchSizePerGpu: 8, precision: ${precision}, softwareStack: ${stack}, parallelism: { zeroStage: ${zeroStage} } }) { evidence } }`,
        )
      ).data!.predict.evidence.match(/ZeRO-\d as [^;]*/)?.[0];
    expect(await sharding(1, 'AMP_BF16')).toMatch(/^ZeRO-1 as PyTorch's ZeroRedundancyOptimizer over DDP/);
    expect(await sharding(1, 'BF16', 'MEGATRON')).toMatch(/^ZeRO-1 as Megatron-Core's distributed optimizer/);
    expect(await sharding(2, 'AMP_BF16')).toMatch(
      /^ZeRO-2 as FSDP's SHARD_GRAD_OP: .*, gathering bf16 copies of the fp32 shards \(its mixed precision\)$/,
    );
    expect(await sharding(2, 'BF16', 'MEGATRON')).toMatch(/^ZeRO-2 as DeepSpeed's stage 2/);
    // BF16 gathers its bf16 weights as they are: no copies to speak of.
    expect(await sharding(3, 'BF16')).toMatch(/^ZeRO-3 as FSDP's FULL_SHARD: [^,]*backward$/);
    expect(await sharding(0, 'BF16')).toBeUndefined();
  });

  it('takes the master weights as the optimizer keeps them, and refuses them where the mode keeps none', async () => {
    const q = (precision: string, master: string) =>
      `{ predict(input: { workload: { model: "llama2_7b", samples: 1e6 }, gpu: "H100-SXM5-80GB", nodes: 1, gpusPerNode: 8, batchSizePerGpu: 1, precision: ${precision}, softwareStack: MEGATRON, parallelism: { zeroStage: 1, masterWeights: ${master} } }) { memory { masterWeightsGb totalGb } } }`;
    const fp32 = await run(q('BF16', 'FP32')),
      none = await run(q('BF16', 'NONE'));
    expect(fp32.errors).toBeUndefined();
    expect(none.errors).toBeUndefined();
    expect(fp32.data!.predict.memory.masterWeightsGb).toBeGreaterThan(0);
    expect(none.data!.predict.memory.masterWeightsGb).toBe(0);
    expect(none.data!.predict.memory.totalGb).toBeLessThan(fp32.data!.predict.memory.totalGb);
    await badInput(q('FP32', 'NONE'), /parallelism\.masterWeights.*FP32 keeps no master copy/);
  });

  it('answers with a breakdown that adds up and a cost at the overridden price', async () => {
    const r =
      await run(`{ predict(input: { workload: { model: "resnet50_v1.5", samples: 1281167 }, gpu: "A100-SXM4-80GB", nodes: 1, gpusPerNode: 8, batchSizePerGpu: 256, precision: AMP_FP16, priceUsdPerGpuHour: 2 }) {
      stepTimeMs stepTimeMsP10 stepTimeMsP90 evidence throughput throughputUnit totalHours costUsd memoryGbPerGpu fitsInMemory globalBatch predictor
      breakdown { forwardMs backwardMs optimizerMs mixedPrecisionMs communicationMs overheadMs } } }`);
    expect(r.errors).toBeUndefined();
    const p = r.data!.predict;
    const b = p.breakdown;
    expect(
      b.forwardMs + b.backwardMs + b.optimizerMs + b.mixedPrecisionMs + b.communicationMs + b.overheadMs,
    ).toBeCloseTo(p.stepTimeMs, 6);
    expect(p.throughputUnit).toBe('images/s');
    expect(p.globalBatch).toBe(2048);
    expect(p.costUsd).toBeCloseTo(p.totalHours * 8 * 2, 6);
    expect(p.fitsInMemory).toBe(true);
    expect(p.predictor).toMatch(/^gbdt-v\d+$/);
    expect(p.stepTimeMsP10).toBeLessThanOrEqual(p.stepTimeMs);
    expect(p.stepTimeMsP90).toBeGreaterThanOrEqual(p.stepTimeMs);
    expect(p.evidence).toMatch(/^(measured|calibrated)/);
  });

  // A 16-bit CNN's convolutions run slower on PyTorch's default NCHW memory format: eager PyTorch
  // is NCHW unless the query says channelsLast; TensorFlow converts its fp16 graph itself.
  it('costs the convolution layout: eager PyTorch NCHW unless told, TensorFlow channels-last', async () => {
    const forward = async (extra: string) => {
      const r = await run(
        `{ predict(input: { workload: { model: "resnet50_v1.5", samples: 1e6 }, gpu: "V100-SXM2-16GB", batchSizePerGpu: 128, precision: AMP_FP16${extra} }) { breakdown { forwardMs } } }`,
      );
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      return r.data!.predict.breakdown.forwardMs as number;
    };
    expect((await forward('')) / (await forward(', channelsLast: true'))).toBeGreaterThan(1.1);
    expect(
      (await forward(', framework: TENSORFLOW, channelsLast: false')) /
        (await forward(', framework: TENSORFLOW')),
    ).toBeGreaterThan(1.1);
  });

  // recommend's note says NCHW only where a searched plan was costed so: an NVIDIA tensor-core GPU
  // at a 16-bit precision, in eager PyTorch, not on AMD (no figure says what MIOpen does).
  it('recommend notes NCHW costing where a searched plan had it, and only there', async () => {
    const notes = async (extra: string) => {
      const r = await run(
        `{ recommend(input: { workload: { model: "resnet50_v1.5", samples: 1e7 }, limit: 1${extra} }) { notes } }`,
      );
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      return (r.data!.recommend.notes as string[]).filter((n) => /NCHW/.test(n));
    };
    expect(await notes(', gpus: ["A100-SXM4-80GB"]')).toHaveLength(1);
    expect(await notes(', gpus: ["A100-SXM4-80GB"], channelsLast: true')).toHaveLength(0);
    expect(await notes(', gpus: ["A100-SXM4-80GB"], precisions: [FP32, TF32]')).toHaveLength(0);
    expect(await notes(', gpus: ["MI300X"]')).toHaveLength(0);
  });

  it('BF16 on a V100 is a BAD_USER_INPUT naming precision', async () => {
    await badInput(
      `{ predict(input: { workload: { model: "resnet50_v1.5", samples: 1e6 }, gpu: "V100-SXM2-16GB", batchSizePerGpu: 64, precision: BF16 }) { stepTimeMs } }`,
      /^precision: .*bf16/,
    );
  });
});

describe('recommend', () => {
  it('returns ranked plans, a Pareto front and rejection reasons', async () => {
    const r =
      await run(`{ recommend(input: { workload: { model: "bert_large_squad", samples: 5e6 }, objective: COST, deadlineHours: 12, maxNodes: 2, limit: 5,
        gpus: ["V100-SXM2-16GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "T4"] }) {
      evaluated feasible plans { rank gpu { id memoryGb } nodes gpusPerNode batchSizePerGpu precision stepTimeMs totalHours costUsd memoryGbPerGpu breakdown { forwardMs } }
      paretoFront { totalHours costUsd } rejected { reason count } } }`);
    expect(r.errors).toBeUndefined();
    const rec = r.data!.recommend;
    expect(rec.plans).toHaveLength(5);
    expect(rec.plans.map((p: { rank: number }) => p.rank)).toEqual([1, 2, 3, 4, 5]);
    for (const p of rec.plans) {
      expect(p.totalHours).toBeLessThanOrEqual(12);
      expect(p.memoryGbPerGpu).toBeLessThanOrEqual(p.gpu.memoryGb);
    }
    expect(rec.paretoFront.length).toBeGreaterThan(0);
    expect(rec.rejected.map((x: { reason: string }) => x.reason)).toContain('UNSUPPORTED_PRECISION');
  });

  it('honours negotiated prices', async () => {
    const q = (price: number) =>
      `{ recommend(input: { workload: { model: "resnet50_v1.5", samples: 1e8 }, gpus: ["A100-SXM4-80GB"], maxNodes: 1, limit: 1, prices: [{ gpu: "A100-SXM4-80GB", usdPerGpuHour: ${price} }] }) { plans { costUsd totalHours gpusPerNode priceUsdPerGpuHour } } }`;
    const a = (await run(q(1))).data!.recommend.plans[0];
    const b = (await run(q(3))).data!.recommend.plans[0];
    expect(a.priceUsdPerGpuHour).toBe(1);
    expect(b.costUsd).toBeCloseTo(3 * a.costUsd, 6);
  });
});

describe('bad input is BAD_USER_INPUT naming the field and the range', () => {
  const W = 'workload: { model: "resnet50_v1.5", samples: 1e6 }';
  it.each([
    [
      `{ predict(input: { workload: { model: "nope", samples: 1 }, gpu: "T4", batchSizePerGpu: 8, precision: FP32 }) { stepTimeMs } }`,
      /workload\.model: unknown model "nope"; allowed: .*resnet/,
    ],
    [
      `{ predict(input: { ${W}, gpu: "B9000", batchSizePerGpu: 8, precision: FP32 }) { stepTimeMs } }`,
      /^gpu: unknown GPU/,
    ],
    [
      `{ predict(input: { workload: { model: "resnet50_v1.5", samples: -5 }, gpu: "T4", batchSizePerGpu: 8, precision: FP32 }) { stepTimeMs } }`,
      /workload\.samples: must be a finite number from 1 to 1e\+18/,
    ],
    [
      `{ predict(input: { ${W}, gpu: "T4", batchSizePerGpu: 0, precision: FP32 }) { stepTimeMs } }`,
      /batchSizePerGpu: must be an integer from 1 to 1e\+7/,
    ],
    [
      `{ predict(input: { ${W}, gpu: "T4", batchSizePerGpu: 8, nodes: -1, precision: FP32 }) { stepTimeMs } }`,
      /nodes: must be an integer from 1/,
    ],
    [
      `{ predict(input: { ${W}, gpu: "T4", batchSizePerGpu: 8, gpusPerNode: 99, precision: FP32 }) { stepTimeMs } }`,
      /gpusPerNode: must be an integer from 1 to 16/,
    ],
    [
      `{ predict(input: { ${W}, gpu: "T4", batchSizePerGpu: 8, precision: FP32, interNodeGbps: 0 }) { stepTimeMs } }`,
      /interNodeGbps: must be a finite number from 0.1 to 100000 Gbps/,
    ],
    [`{ recommend(input: { ${W}, gpus: [] }) { evaluated } }`, /^gpus: must not be an empty list/],
    [
      `{ recommend(input: { ${W}, precisions: [] }) { evaluated } }`,
      /^precisions: must not be an empty list/,
    ],
    [`{ recommend(input: { ${W}, gpus: ["T4", "nope"] }) { evaluated } }`, /^gpus\[1\]: unknown GPU "nope"/],
    [
      `{ recommend(input: { ${W}, deadlineHours: -1 }) { evaluated } }`,
      /^deadlineHours: must be a finite number from 0.001 to/,
    ],
    [
      `{ recommend(input: { ${W}, budgetUsd: 0 }) { evaluated } }`,
      /^budgetUsd: must be a finite number from 0.01 to/,
    ],
    [`{ recommend(input: { ${W}, limit: 0 }) { evaluated } }`, /^limit: must be an integer from 1 to 200/],
    [
      `{ recommend(input: { ${W}, batchSizes: [8, -2] }) { evaluated } }`,
      /^batchSizes\[1\]: must be an integer/,
    ],
    [
      `{ recommend(input: { ${W}, prices: [{ gpu: "T4", usdPerGpuHour: -1 }] }) { evaluated } }`,
      /^prices\[0\]\.usdPerGpuHour: must be 0 or a finite number from 0.0001 to 10000/,
    ],
    [
      `{ recommend(input: { ${W}, maxNodes: 4096, batchSizes: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20] }) { evaluated } }`,
      /would enumerate \d+ candidates.*narrow/,
    ],
  ])('%#', async (query, message) => {
    await badInput(query, message);
  });

  it('a huge float is rejected, not computed', async () => {
    await badInput(
      `{ predict(input: { workload: { model: "resnet50_v1.5", samples: 1e300 }, gpu: "T4", batchSizePerGpu: 8, precision: FP32 }) { stepTimeMs } }`,
      /workload\.samples: .*to 1e\+18/,
    );
  });
});
