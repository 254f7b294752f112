// Selective recomputation by module (Megatron-Core's recompute_modules) through every door a layout
// comes in by: GraphQL predict (ParallelismInput.recomputeModules, reported back on Parallelism), the
// recorded runs' request and refit row, and predict-csv's recompute_modules column. The layouts are
// Megatron-Bridge's published H100 recipes (seeds/memory.json sourceRecipes): gpt-oss-120b PP 4, EP 8,
// micro-batch 1, global batch 1280 on 64 GPUs with [layernorm, moe_act]; DeepSeek-V3 TP 2, PP 8, VP 4,
// EP 64, global batch 8192 on 1024 GPUs with [mla_up_proj, mlp].
import { describe, expect, it } from 'vitest';
import { fromHuggingFaceConfig } from '../predictor/import/index.js';
import { predictRow } from '../predictor/measured.js';
import type { Parallelism, RecomputeModule } from '../predictor/parallel.js';
import { predict } from '../predictor/predict.js';
import { getModel } from '../predictor/zoo/index.js';
import { defaultInterNodeGbps, getGpu, loadEfficiency } from '../seeds/catalog.js';
import { predictRequestOf, type RunConfiguration } from '../service/measurements.js';
import { runMeasurement } from '../service/refit.js';
import type { MeasurementRunRow } from '../store/schema.js';
import { apolloForTests } from './graphql-client.js';
import { HF_CONFIGS } from './import-fixtures.js';
import { predictCsv } from './predict-csv.js';

const run = apolloForTests();
const eff = loadEfficiency();
const H100 = getGpu('H100-SXM5-80GB')!;

const PREDICT = `query($w: WorkloadInput!, $nodes: Int!, $accum: Int!, $p: ParallelismInput) {
  predict(input: { workload: $w, gpu: "H100-SXM5-80GB", nodes: $nodes, gpusPerNode: 8, batchSizePerGpu: 1,
    gradAccumSteps: $accum, precision: BF16, softwareStack: MEGATRON, parallelism: $p }) {
  stepTimeMs analyticalStepTimeMs fitsInMemory memory { totalGb activationsGb }
  parallelism { recompute recomputeModules }
  breakdown { recomputeMs } } }`;

const RECIPES = [
  {
    id: 'openai/gpt-oss-120b',
    nodes: 8,
    accum: 80, // 1280 / (micro-batch 1 x DP 16)
    layout: { tensorParallel: 1, pipelineParallel: 4, expertParallel: 8, zeroStage: 1 },
    modules: ['layernorm', 'moe_act'] as RecomputeModule[],
  },
  {
    id: 'deepseek-ai/DeepSeek-V3',
    nodes: 128,
    accum: 128, // 8192 / (micro-batch 1 x DP 64)
    layout: {
      tensorParallel: 2,
      pipelineParallel: 8,
      virtualPipelineStages: 4,
      expertParallel: 64,
      zeroStage: 1,
    },
    modules: ['mla_up_proj', 'mlp'] as RecomputeModule[],
  },
];
const enumOf = (modules: readonly string[]) => modules.map((m) => m.toUpperCase());

/** What the predictor itself answers for a recipe's layout (the API's defaults filled in), at selective recomputation of these modules. */
const predictAt = (
  config: Record<string, unknown>,
  nodes: number,
  gradAccumSteps: number,
  layout: (typeof RECIPES)[number]['layout'],
  recomputeModules?: RecomputeModule[],
  stack?: 'MEGATRON',
) =>
  predict(
    {
      model: fromHuggingFaceConfig(config, { seqLen: 4096 }).model,
      gpu: H100,
      precision: 'BF16',
      batchSizePerGpu: 1,
      gpusPerNode: 8,
      nodes,
      gradAccumSteps,
      interNodeGbps: defaultInterNodeGbps(H100.id),
      ...(stack ? { fp32UsesTf32: true, stack } : {}),
      parallelism: {
        ...layout,
        zeroStage: 1,
        recompute: 'selective',
        ...(recomputeModules ? { recomputeModules } : {}),
      },
    },
    eff,
  );

describe.each(RECIPES)('$id at its Megatron-Bridge H100 layout through GraphQL predict', (recipe) => {
  const config = HF_CONFIGS.find((c) => c.id === recipe.id)!.config;
  const w = { customModel: { huggingFaceConfig: JSON.stringify(config) }, seqLen: 4096, samples: 1e9 };
  const ask = (p: Record<string, unknown>) =>
    run(PREDICT, { w, nodes: recipe.nodes, accum: recipe.accum, p: { ...recipe.layout, ...p } });
  // What the predictor itself answers for the same request (the API's defaults filled in).
  const direct = (recomputeModules?: RecomputeModule[]) =>
    predictAt(config, recipe.nodes, recipe.accum, recipe.layout, recomputeModules, 'MEGATRON');

  it("the recipe's modules keep less than plain selective, rerun their own forward, and equal predict()", async () => {
    const withModules = await ask({ recompute: 'SELECTIVE', recomputeModules: enumOf(recipe.modules) });
    const plain = await ask({ recompute: 'SELECTIVE' });
    expect(withModules.errors, JSON.stringify(withModules.errors)).toBeUndefined();
    expect(plain.errors).toBeUndefined();
    const m = withModules.data!.predict,
      p = plain.data!.predict;
    // The answer says what was rerun: the request's modules, else the attention core.
    expect(m.parallelism).toEqual({ recompute: 'SELECTIVE', recomputeModules: enumOf(recipe.modules) });
    expect(p.parallelism).toEqual({ recompute: 'SELECTIVE', recomputeModules: ['CORE_ATTN'] });
    expect(m.memory.activationsGb).toBeLessThan(p.memory.activationsGb);
    expect(m.memory.totalGb).toBeLessThan(p.memory.totalGb);
    expect(m.breakdown.recomputeMs).toBeGreaterThan(0);
    // The API's answer is the predictor's: the analytical step and the memory exactly, the recompute
    // time scaled as the whole step is by the learned correction.
    for (const [answer, d] of [
      [m, direct(recipe.modules)],
      [p, direct()],
    ] as const) {
      expect(answer.analyticalStepTimeMs).toBeCloseTo(d.stepTimeMs, 6);
      expect(answer.memory.totalGb).toBeCloseTo(d.memory.totalGb, 9);
      expect(answer.fitsInMemory).toBe(d.fitsInMemory);
      expect(answer.breakdown.recomputeMs).toBeCloseTo(
        (d.breakdown.recomputeMs! * answer.stepTimeMs) / answer.analyticalStepTimeMs,
        6,
      );
    }
    // The recipe's list replaces the attention core (Megatron's default), it does not add to it:
    // naming core_attn too keeps the same memory (fused attention keeps no scores) and reruns both.
    const both = await ask({
      recompute: 'SELECTIVE',
      recomputeModules: ['CORE_ATTN', ...enumOf(recipe.modules)],
    });
    expect(both.errors).toBeUndefined();
    const b = both.data!.predict;
    expect(b.memory.totalGb).toBeCloseTo(m.memory.totalGb, 9);
    expect(b.analyticalStepTimeMs).toBeGreaterThan(p.analyticalStepTimeMs);
    expect(b.analyticalStepTimeMs).toBeGreaterThan(m.analyticalStepTimeMs);
    expect(direct(['core_attn', ...recipe.modules]).breakdown.recomputeMs).toBeCloseTo(
      direct().breakdown.recomputeMs! + direct(recipe.modules).breakdown.recomputeMs!,
      6,
    );
  });

  it('no recomputation reports no modules; modules given as null are the attention core', async () => {
    const r = await ask({ recompute: 'NONE' });
    expect(r.errors).toBeUndefined();
    expect(r.data!.predict.parallelism).toEqual({ recompute: 'NONE', recomputeModules: null });
    const n = await ask({ recompute: 'SELECTIVE', recomputeModules: null });
    expect(n.errors).toBeUndefined();
    expect(n.data!.predict.parallelism.recomputeModules).toEqual(['CORE_ATTN']);
  });
});

describe('bad recomputeModules are BAD_USER_INPUT naming parallelism.recomputeModules', () => {
  const config = HF_CONFIGS.find((c) => c.id === 'openai/gpt-oss-120b')!.config;
  const w = { customModel: { huggingFaceConfig: JSON.stringify(config) }, seqLen: 4096, samples: 1e9 };
  const layout = RECIPES[0].layout;

  it.each([
    [
      { recompute: 'NONE', recomputeModules: ['MOE_ACT'] },
      /selective recomputation only \(recompute is none\)/,
    ],
    [
      { recompute: 'FULL', recomputeModules: ['LAYERNORM'] },
      /selective recomputation only \(recompute is full\)/,
    ],
    [
      { recompute: 'SELECTIVE', recomputeModules: ['MOE_ACT', 'LAYERNORM', 'MOE_ACT'] },
      /moe_act is given twice/,
    ],
    [
      { recompute: 'SELECTIVE', recomputeModules: [] },
      /at least one of core_attn, mlp, moe_act, layernorm, mla_up_proj/,
    ],
  ])('%j', async (p, message) => {
    const r = await run(PREDICT, { w, nodes: 8, accum: 80, p: { ...layout, ...p } });
    expect(r.errors, JSON.stringify(r)).toBeDefined();
    expect(r.errors![0].extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'parallelism.recomputeModules',
    });
    expect(r.errors![0].message).toMatch(message);
  });

  it('an unknown module is refused by the schema, naming the field and the enum', async () => {
    // Megatron's "moe" (the whole MoE layer) is not modelled: not a RecomputeModule.
    const r = await run(PREDICT, {
      w,
      nodes: 8,
      accum: 80,
      p: { ...layout, recompute: 'SELECTIVE', recomputeModules: ['MOE'] },
    });
    expect(r.data).toBeUndefined();
    expect(r.errors![0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(r.errors![0].message).toMatch(/recomputeModules/);
    expect(r.errors![0].message).toMatch(/"MOE" does not exist in "RecomputeModule" enum/);
  });
});

describe('recorded runs keep the modules', () => {
  const llama = getModel('llama2_7b')!;
  const layout = {
    tensorParallel: 2,
    pipelineParallel: 1,
    zeroStage: 1 as const,
    recompute: 'selective' as const,
    recomputeModules: ['core_attn', 'mlp'] as RecomputeModule[],
  };
  const configuration: RunConfiguration = {
    workload: { model: 'llama2_7b', samples: 1 },
    gpu: 'A100-SXM4-80GB',
    nodes: 1,
    gpusPerNode: 8,
    batchSizePerGpu: 2,
    gradAccumSteps: 4,
    precision: 'AMP_BF16',
    framework: 'PyTorch',
    xla: false,
    fp32UsesTf32: true,
    parallelism: layout,
  };
  const gpu = getGpu('A100-SXM4-80GB')!;
  const direct = (parallelism: Parallelism) =>
    predict(
      {
        model: llama,
        gpu,
        precision: 'AMP_BF16',
        batchSizePerGpu: 2,
        gpusPerNode: 8,
        nodes: 1,
        gradAccumSteps: 4,
        interNodeGbps: defaultInterNodeGbps(gpu.id),
        fp32UsesTf32: true,
        parallelism,
      },
      eff,
    );

  it("in the request a recorded run is checked against, and in the refit's training row", () => {
    const request = predictRequestOf(configuration);
    expect(request.parallelism?.recomputeModules).toEqual(['core_attn', 'mlp']);
    // GraphQL's null (the field given as null) is no list: the attention core.
    expect(
      predictRequestOf({ ...configuration, parallelism: { ...layout, recomputeModules: null } }).parallelism
        ?.recomputeModules,
    ).toBeUndefined();
    const row: MeasurementRunRow = {
      id: 1,
      owner: 'test',
      recorded_at: '2026-12-02T00:00:00Z',
      model: 'llama2_7b',
      gpu: 'A100-SXM4-80GB',
      precision: 'AMP_BF16',
      framework: 'PyTorch',
      nodes: 1,
      gpus_per_node: 8,
      batch_size_per_gpu: 2,
      grad_accum_steps: 4,
      configuration: JSON.stringify(configuration),
      step_time_ms: 1000,
      peak_memory_gb: null,
      gpu_memory_gb: null,
      source: 'test',
      note: null,
    };
    const m = runMeasurement(row);
    if (typeof m === 'string') throw new Error(m);
    const refitRow = predictRow(m, eff).prediction!;
    const withModules = direct(layout);
    // mlp on top of the attention core: a different (smaller) memory than the attention core alone.
    expect(withModules.memory.totalGb).toBeLessThan(
      direct({ ...layout, recomputeModules: undefined }).memory.totalGb,
    );
    expect(refitRow.memory.totalGb).toBeCloseTo(withModules.memory.totalGb, 9);
    expect(refitRow.stepTimeMs).toBeCloseTo(withModules.stepTimeMs, 9);
  });
});

describe('predict-csv recompute_modules column', () => {
  it("predicts gpt-oss-120b at the recipe's modules, keeps the column, and says why a list cannot be", () => {
    const config = HF_CONFIGS.find((c) => c.id === 'openai/gpt-oss-120b')!.config;
    const row = (recompute: string, modules: string) =>
      `gpt-oss-120b.json,H100-SXM5-80GB,64,8,1,80,4096,BF16,1,4,1,${recompute},${modules},8`;
    const { stdout: out, rows } = predictCsv(
      [
        'model,gpu,num_gpus,num_nodes,batch_size_per_gpu,grad_accum_steps,seq_len_or_image_size,precision,tensor_parallel,pipeline_parallel,zero_stage,recompute,recompute_modules,expert_parallel',
        row('selective', 'layernorm;moe_act'),
        row('selective', ''),
        row('selective', 'layernorm;moe'),
        row('none', 'moe_act'),
        row('selective', 'moe_act;moe_act'),
      ],
      { 'gpt-oss-120b.json': config },
    );
    expect(out).toMatch(/wrote 5 rows \(2 predicted, 3 with an error\)/);
    expect(rows.map((r) => r.recompute_modules)).toEqual([
      'layernorm;moe_act',
      '',
      'layernorm;moe',
      'moe_act',
      'moe_act;moe_act',
    ]);
    // The analytical memory is the predictor's at the same layout.
    const at = (recomputeModules?: RecomputeModule[]) =>
      predictAt(config, 8, 80, RECIPES[0].layout, recomputeModules);
    expect(Number(rows[0].predicted_memory_gb_per_gpu)).toBeCloseTo(
      at(['layernorm', 'moe_act']).memory.totalGb,
      6,
    );
    expect(Number(rows[1].predicted_memory_gb_per_gpu)).toBeCloseTo(at().memory.totalGb, 6);
    expect(Number(rows[0].predicted_memory_gb_per_gpu)).toBeLessThan(
      Number(rows[1].predicted_memory_gb_per_gpu),
    );
    expect(rows[2].error).toMatch(
      /must each be one of core_attn, mlp, moe_act, layernorm, mla_up_proj \(got moe\)/,
    );
    expect(rows[3].error).toMatch(/selective recomputation only/);
    expect(rows[4].error).toMatch(/moe_act is given twice/);
  });
});
