// Block checkpoints as frameworks name them (seeds/types.ts RECOMPUTE): torchtitan's op-level policy,
// the JAX policies that keep projections (MaxText save_qkv_proj, praxis SAVE_QKV_OUT_PROJ) and full.
// One per-layer plan (parallel.ts blockCheckpointsOf) drives both the memory kept and the work rerun.
import { describe, expect, it } from 'vitest';
import { llmPredictions } from '../cli/evaluate-llm.js';
import { llmModel } from '../predictor/llm.js';
import { costOf, predict, type PredictRequest } from '../predictor/predict.js';
import { BLOCK_CHECKPOINTS, RECOMPUTE, parallelStructure, type Recompute } from '../predictor/parallel.js';
import type { ModelDef } from '../predictor/types.js';
import { getGpu, loadEfficiency, MEMORY_FILE, parseMemoryConstants } from '../seeds/catalog.js';
import { loadLlmArchitectures } from '../seeds/llm.js';
import { readFileSync } from 'node:fs';
import { apolloForTests } from './graphql-client.js';
import { recommend } from '../optimizer/recommend.js';
import { HF_CONFIGS } from './import-fixtures.js';
import { fastestFittingPerSample } from './fastest-layout.js';
import { runKeyOf, runRecipe } from '../predictor/llm-recipes.js';

const eff = loadEfficiency();
const arch = (m: string) => loadLlmArchitectures().find((a) => a.model === m)!;
const llama70b = llmModel(arch('Llama-2-70B'), 4096) as ModelDef;
const H100 = getGpu('H100-SXM5-80GB')!;
/** Llama-2-70B at micro-batch 2 on H100s on TORCH_COMPILE (8 nodes, FSDP, one micro-batch unless said). */
const llama70bOn = (over: Partial<PredictRequest>) =>
  predict(
    {
      model: llama70b,
      gpu: H100,
      precision: 'BF16',
      batchSizePerGpu: 2,
      gpusPerNode: 8,
      nodes: 8,
      gradAccumSteps: 1,
      interNodeGbps: 3200,
      stack: 'TORCH_COMPILE',
      ...over,
    },
    eff,
  );
const at = (recompute: Recompute) =>
  llama70bOn({ parallelism: { tensorParallel: 1, pipelineParallel: 1, zeroStage: 3, recompute } });

describe('what each block checkpoint keeps and reruns, layer by layer', () => {
  const cost = costOf(llama70b);
  const s = parallelStructure(cost);
  const index = (name: string) => cost.layers.findIndex((l) => l.name === name);
  const plan = (c: (typeof BLOCK_CHECKPOINTS)[number], name: string) => ({
    kept: s.blockCheckpoint[c].kept[index(name)],
    rerun: s.blockCheckpoint[c].rerun[index(name)],
  });

  it("torchtitan's op-level policy on a Llama block: wq, wv, w1, w2 and the attention output kept; wk, wo, w3 and the cheap ops rerun", () => {
    // The fused QKV of Llama-2-70B: q 8192 wide, k and v 1024 each (8 KV heads of 128).
    const qkv = plan('selective_op', 'attn.qkv');
    expect(qkv.kept).toBeCloseTo((8192 + 1024) / 10240, 12);
    expect(qkv.rerun).toBeCloseTo(1024 / 10240, 12);
    expect(plan('selective_op', 'attn.out')).toEqual({ kept: 0, rerun: 1 });
    expect(plan('selective_op', 'mlp.gate')).toEqual({ kept: 1, rerun: 0 });
    expect(plan('selective_op', 'mlp.up')).toEqual({ kept: 0, rerun: 1 });
    expect(plan('selective_op', 'mlp.down')).toEqual({ kept: 1, rerun: 0 });
    // The fused attention is saved whole: its output kept, nothing in it rerun.
    expect(plan('selective_op', 'attn.context')).toEqual({ kept: 1, rerun: 0 });
    expect(plan('selective_op', 'attn.softmax')).toEqual({ kept: 0, rerun: 0 });
    expect(plan('selective_op', 'mlp.act')).toEqual({ kept: 0, rerun: 1 });
  });

  it('the JAX policies keep the projections they name and rerun the rest, attention included', () => {
    expect(plan('save_qkv_proj', 'attn.qkv')).toEqual({ kept: 1, rerun: 0 });
    expect(plan('save_qkv_proj', 'attn.out')).toEqual({ kept: 0, rerun: 1 });
    expect(plan('save_qkv_out_proj', 'attn.out')).toEqual({ kept: 1, rerun: 0 });
    for (const c of ['save_qkv_proj', 'save_qkv_out_proj'] as const) {
      expect(plan(c, 'attn.softmax')).toEqual({ kept: 0, rerun: 1 });
      expect(plan(c, 'mlp.down')).toEqual({ kept: 0, rerun: 1 });
    }
    for (const name of ['attn.qkv', 'attn.context', 'mlp.down'])
      expect(plan('full', name)).toEqual({ kept: 0, rerun: 1 });
    // Nothing outside the blocks is kept or rerun by any of them.
    for (const c of BLOCK_CHECKPOINTS) expect(plan(c, 'lm_head')).toEqual({ kept: 0, rerun: 0 });
  });

  it('in RECOMPUTE order each mode reruns more forward work and keeps less for backward (Llama-2-70B, micro-batch 2)', () => {
    const ps = RECOMPUTE.map(at);
    for (let i = 1; i < ps.length; i++) {
      expect(ps[i].breakdown.recomputeMs ?? 0).toBeGreaterThanOrEqual(ps[i - 1].breakdown.recomputeMs ?? 0);
      expect(ps[i].memory.activationsGb).toBeLessThanOrEqual(ps[i - 1].memory.activationsGb);
    }
    // Strictly, between the block checkpoints.
    const [op, qkvOut, qkv, full] = BLOCK_CHECKPOINTS.map(at);
    expect(op.breakdown.recomputeMs).toBeLessThan(qkvOut.breakdown.recomputeMs!);
    expect(qkvOut.breakdown.recomputeMs).toBeLessThan(qkv.breakdown.recomputeMs!);
    expect(qkv.breakdown.recomputeMs).toBeLessThan(full.breakdown.recomputeMs!);
    expect(op.memory.activationsGb).toBeGreaterThan(qkvOut.memory.activationsGb);
    expect(qkvOut.memory.activationsGb).toBeGreaterThan(qkv.memory.activationsGb);
    expect(qkv.memory.activationsGb).toBeGreaterThan(full.memory.activationsGb);
    // Keeping q, k and v (80 layers x 2 x 4096 tokens x 10240 bf16) is what separates save_qkv_proj
    // from full (memory figures are GiB).
    const qkvBytes = 80 * 2 * 4096 * 10240 * 2;
    expect((qkv.memory.activationsGb - full.memory.activationsGb) * 2 ** 30).toBeCloseTo(qkvBytes, -6);
  });
});

describe("the published JAX runs (dgxc-benchmarking MaxText, PaxML) at their scripts' remat policies", () => {
  it('MaxText Llama-2-70B ran save_qkv_proj and PaxML GPT-3 175B SAVE_QKV_OUT_PROJ: predicted with it, all 12 MaxText runs and 4 of 5 PaxML runs fit', () => {
    const jax = llmPredictions().filter(
      (p) => p.prediction && /MaxText|PaxML/.test(p.run.framework) && p.run.model !== 'GPT3-5B',
    );
    expect(jax).toHaveLength(17);
    for (const p of jax)
      expect(runRecipe({ ...runKeyOf(p.run), ...p.run }, eff.memory).recompute).toBe(
        /MaxText/.test(p.run.framework) ? 'save_qkv_proj' : 'save_qkv_out_proj',
      );
    const fits = (framework: RegExp) =>
      jax.filter((p) => framework.test(p.run.framework) && p.prediction!.fitsInMemory).length;
    expect(fits(/MaxText/)).toBe(12);
    expect(fits(/PaxML/)).toBeGreaterThanOrEqual(4);
    // MaxText's 64-GPU layout (FSDP 64, micro-batch 2) with nothing recomputed holds over twice the GPU.
    expect(at('none').memory.totalGb).toBeGreaterThan(160);
    expect(at('save_qkv_proj').fitsInMemory).toBe(true);
  });

  it('refuses a source recipe naming a recomputation the model does not know', () => {
    const file = JSON.parse(readFileSync(MEMORY_FILE, 'utf8')) as {
      sourceRecipes: Record<string, { recompute?: string }>;
    };
    expect(file.sourceRecipes['dgxc-maxtext-llama2-70b'].recompute).toBe('save_qkv_proj');
    file.sourceRecipes['dgxc-maxtext-llama2-70b'].recompute = 'save_qkv';
    expect(() => parseMemoryConstants(JSON.stringify(file))).toThrow(/"save_qkv" is not one of/);
  });
});

describe('GraphQL: the checkpoint policies through predict', () => {
  const run = apolloForTests();
  const llama = JSON.stringify(HF_CONFIGS.find((c) => c.id === 'meta-llama/Llama-2-7b-hf')!.config);
  const answer = async (recompute: string) => {
    const r = await run(
      `query($w: WorkloadInput!) { predict(input: { workload: $w, gpu: "H100-SXM5-80GB", precision: BF16, batchSizePerGpu: 4, nodes: 1, gpusPerNode: 8,
        parallelism: { tensorParallel: 1, pipelineParallel: 1, zeroStage: 3, recompute: ${recompute} } }) {
        memoryGbPerGpu parallelism { recompute } breakdown { recomputeMs } } }`,
      { w: { customModel: { huggingFaceConfig: llama }, seqLen: 4096, samples: 1e9 } },
    );
    return r;
  };
  it('SELECTIVE_OP, SAVE_QKV_OUT_PROJ and SAVE_QKV_PROJ are accepted and priced; an unknown policy is refused by validation', async () => {
    const modes = ['NONE', 'SELECTIVE_OP', 'SAVE_QKV_OUT_PROJ', 'SAVE_QKV_PROJ', 'FULL'];
    const answers = [];
    for (const m of modes) {
      const r = await answer(m);
      expect(r.errors).toBeUndefined();
      answers.push(r.data!.predict);
    }
    expect(answers.map((a) => a.parallelism.recompute)).toEqual(modes);
    expect(answers[0].breakdown.recomputeMs).toBe(0);
    for (let i = 1; i < answers.length; i++) {
      expect(answers[i].breakdown.recomputeMs).toBeGreaterThan(answers[i - 1].breakdown.recomputeMs);
      expect(answers[i].memoryGbPerGpu).toBeLessThan(answers[i - 1].memoryGbPerGpu);
    }
    const bad = await answer('SAVE_EVERYTHING');
    expect(bad.errors?.[0].message).toMatch(/SAVE_EVERYTHING/);
  });

  it('a block checkpoint on a model without blocks, or a projections-keeping one without attention, is BAD_USER_INPUT naming parallelism.recompute', async () => {
    const zoo = (model: string, recompute: string) =>
      run(`{ predict(input: { workload: { model: "${model}", samples: 1e6 }, gpu: "A100-SXM4-80GB", precision: BF16, batchSizePerGpu: 32, nodes: 1, gpusPerNode: 8,
        parallelism: { tensorParallel: 1, pipelineParallel: 1, zeroStage: 1, recompute: ${recompute} } }) { stepTimeMs } }`);
    for (const mode of ['SELECTIVE_OP', 'SAVE_QKV_PROJ', 'FULL']) {
      const r = await zoo('resnet50_v1.5', mode);
      expect(r.errors?.[0].extensions?.code, mode).toBe('BAD_USER_INPUT');
      expect(r.errors?.[0].message).toMatch(
        /parallelism\.recompute.*checkpoints transformer blocks, and this model has none/,
      );
    }
    // GNMT's LSTM stack is one block for the layout, with no attention core to keep projections of.
    const gnmt = await zoo('gnmt_v2', 'SAVE_QKV_OUT_PROJ');
    expect(gnmt.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(gnmt.errors?.[0].message).toMatch(/parallelism\.recompute.*no attention; use full/);
    expect((await zoo('gnmt_v2', 'FULL')).errors).toBeUndefined();
  });
});

describe("recommend on TORCH_COMPILE searches torchtitan's op-level checkpointing", () => {
  const request = (stack: 'TORCH_COMPILE' | 'PYTORCH_EAGER') =>
    recommend(
      {
        model: llama70b,
        samples: 1e9,
        objective: 'TIME',
        gpus: [H100],
        precisions: ['BF16'],
        maxNodes: 4,
        gpusPerNodeChoices: [8],
        batchSizes: [2],
        interNodeGbps: () => 3200,
        limit: 5,
        parallelismSearch: 'all',
        stack,
      },
      eff,
    );
  const compiled = request('TORCH_COMPILE');

  it('Llama-2-70B at micro-batch 2 on 4 nodes of H100: SELECTIVE_OP, which the other stacks do not search', () => {
    const four = compiled.plans.find((p) => p.nodes === 4)!;
    expect(four.parallelism.recompute).toBe('selective_op');
    for (const p of request('PYTORCH_EAGER').plans) expect(p.parallelism.recompute).not.toBe('selective_op');
  });

  it('the plan on 4 nodes is the fastest per sample of every layout that fits there at none, selective_op or full (exhaustive)', () => {
    const plan = compiled.plans.find((p) => p.nodes === 4)!;
    const best = fastestFittingPerSample(
      32,
      {
        tensorParallel: [1, 2, 4, 8],
        pipelineParallel: [1, 2, 4, 8, 16],
        recompute: ['none', 'selective_op', 'full'],
        // TORCH_COMPILE interleaves (torchtitan's Interleaved1F1B): Llama-2-70B's 80 blocks.
        interleavedBlocks: 80,
      },
      (gradAccumSteps, parallelism) => llama70bOn({ nodes: 4, gradAccumSteps, parallelism }),
    );
    const { dataParallel, microBatches } = plan.parallelism;
    expect(plan.stepTimeMs / (microBatches * dataParallel)).toBeCloseTo(best, 6);
  });
});
