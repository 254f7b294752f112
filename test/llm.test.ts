// LLM training as the published runs show it (seeds/measurements/llm_*.csv): models built from their
// architectures, FP8 as Transformer Engine runs it, interleaved pipelines, context parallelism, software
// stacks, and the Llama 2 campaigns.
import { describe, expect, it } from 'vitest';
import {
  campaignHours,
  fp8Pairs,
  ape,
  learnedCampaignHours,
  learnedOtherGpuRuns,
  llmPredictions,
  otherGpuRuns,
} from '../cli/evaluate-llm.js';
import { costOf, InputError, predict, type PredictRequest } from '../predictor/predict.js';
import { defaultSearchPrecisions, quantizedGemmShare } from '../predictor/precision.js';
import { jobPrecisions } from '../optimizer/fleet.js';
import { fp8NotSearchedNote } from '../service/planning.js';
import { causalShare } from '../predictor/step.js';
import { llmModel, predictLlmRun } from '../predictor/llm.js';
import { llmCases } from '../predictor/memory-check.js';
import { getModel } from '../predictor/zoo/index.js';
import { checkParallelism, parallelStructure } from '../predictor/parallel.js';
import { stackOfFramework } from '../predictor/software.js';
import type { ModelDef } from '../predictor/types.js';
import { getGpu, loadEfficiency } from '../seeds/catalog.js';

const eff = loadEfficiency();
import { loadLlmArchitectures, loadLlmCampaigns, loadLlmRuns, roundedCount } from '../seeds/llm.js';
import { apolloForTests } from './graphql-client.js';

const arch = (m: string) => loadLlmArchitectures().find((a) => a.model === m)!;
const llama8b = llmModel(arch('Llama-3-8B'), 8192) as ModelDef;
const H100 = getGpu('H100-SXM5-80GB')!;
const base = (over: Partial<PredictRequest> = {}): PredictRequest => ({
  model: llama8b,
  gpu: H100,
  precision: 'BF16',
  batchSizePerGpu: 1,
  gpusPerNode: 8,
  nodes: 1,
  gradAccumSteps: 16,
  interNodeGbps: 3200,
  parallelism: { tensorParallel: 1, pipelineParallel: 1, zeroStage: 1, recompute: 'none' },
  stack: 'MEGATRON',
  ...over,
});

describe('LLM runs from their published architectures', () => {
  it('builds the decoder an architecture row describes (Llama-2-7B: 6.74 B parameters)', () => {
    const m = llmModel(arch('Llama-2-7B'), 4096) as ModelDef;
    // meta-llama/Llama-2-7b-hf: 6,738,415,616 parameters.
    expect(costOf(m).parameters / 6_738_415_616).toBeCloseTo(1, 2);
  });

  it("builds GPT-3 with NeMo GPTConfig's learned positions and biases, Nemotron-4 with rotary positions and none", () => {
    const layers = (m: string) => (llmModel(arch(m), 2048) as ModelDef).layers;
    const gpt3 = layers('GPT3-175B');
    expect(gpt3.some((l) => l.name === 'position_embeddings')).toBe(true);
    expect(gpt3.find((l) => l.name === 'attn.qkv')).toMatchObject({ bias: true });
    const nemotron = layers('Nemotron-4-15B');
    expect(nemotron.some((l) => l.name === 'position_embeddings')).toBe(false);
    expect(nemotron.find((l) => l.name === 'attn.qkv')).toMatchObject({ bias: false });
    // Brown et al. 2020, table 2.1: 175.0 B parameters; Parmar et al. 2024: 3.2 B embedding + 12.5 B others.
    expect(costOf(llmModel(arch('GPT3-175B'), 2048) as ModelDef).parameters / 175e9).toBeCloseTo(1, 2);
    expect(costOf(llmModel(arch('Nemotron-4-15B'), 4096) as ModelDef).parameters / 15.7e9).toBeCloseTo(1, 2);
  });

  it('is the one decoder builder: the memory checks of llm_train.csv rows use the same models', () => {
    const runs = new Map(loadLlmRuns().map((r) => [r.id, r]));
    const checked = llmCases().filter((c) => c.decoder);
    expect(checked.length).toBeGreaterThan(250);
    for (const c of checked)
      expect(c.decoder, c.id).toBe(llmModel(arch(c.model), c.seqLen, runs.get(c.id)!.layers));
  });

  it("builds a proxy configuration's model with the layers its config table states (dgxc-benchmarking's reduced Llama 3.1 405B)", () => {
    const proxy = loadLlmRuns().find((r) => r.id === 'dgxc-0243')!;
    expect(proxy.layers).toBe(8);
    const full = costOf(llmModel(arch('Llama-3.1-405B'), 8192) as ModelDef).parameters;
    const reduced = costOf(llmModel(arch('Llama-3.1-405B'), 8192, proxy.layers) as ModelDef).parameters;
    // 126 blocks of about 3.2 B each plus 2.1 B of embedding and head: 8 blocks leave about 28 B.
    expect(reduced / 1e9).toBeGreaterThan(25);
    expect(reduced / 1e9).toBeLessThan(30);
    expect(full / 1e9).toBeCloseTo(405.9, 0);
  });

  it('says why an architecture it cannot build is not modelled: unpublished sizes, latent attention without its ranks', () => {
    expect(llmModel(arch('Kimi-K2'), 4096)).toMatch(/architecture not published/);
    const partial = {
      ...arch('DeepSeek-V3'),
      model: 'DeepSeek-V3 without ranks',
      attention: 'MLA (q_lora_rank=1536)',
    };
    expect(llmModel(partial, 4096)).toMatch(/multi-head latent attention without all of its sizes/);
  });

  it('infers the software stack from the framework label', () => {
    expect(stackOfFramework('NeMo (Megatron-Core)')).toBe('MEGATRON');
    expect(stackOfFramework('torchtitan (PyTorch FSDP2/DTensor)')).toBe('TORCH_COMPILE');
    // NeMo AutoModel is PyTorch FSDP2/DTensor, not Megatron-Core, whatever its NeMo name.
    expect(stackOfFramework('NeMo AutoModel (PyTorch FSDP2/DTensor + TE)')).toBe('TORCH_COMPILE');
    expect(stackOfFramework('PyTorch')).toBe('PYTORCH_EAGER');
  });

  it('predicts the published Megatron/NeMo runs within 25% MAPE at their own layouts', () => {
    const ps = llmPredictions().filter(
      (p) => p.tokensPerSecondPerGpu !== undefined && stackOfFramework(p.run.framework) === 'MEGATRON',
    );
    expect(ps.length).toBeGreaterThan(100);
    const mape =
      ps.reduce((s, p) => s + Math.abs(p.tokensPerSecondPerGpu! / p.run.tokensPerSecondPerGpu! - 1), 0) /
      ps.length;
    expect(mape).toBeLessThan(0.25);
  });

  it('a MEGATRON prediction stores what Megatron-Core stores, so the published Megatron runs fit as they ran', () => {
    // FP8: bf16 gradient buffers (FP8's general policy keeps fp32 ones), block weights only in FP8.
    const memory = (precision: 'BF16' | 'FP8', stack: 'MEGATRON' | 'PYTORCH_EAGER') =>
      predict(base({ precision, stack }), eff).memory;
    expect(memory('FP8', 'MEGATRON').gradientsGb).toBeCloseTo(
      memory('FP8', 'PYTORCH_EAGER').gradientsGb / 2,
      6,
    );
    expect(memory('FP8', 'MEGATRON').weightsGb).toBeLessThan(memory('FP8', 'PYTORCH_EAGER').weightsGb);
    // Its fused SwiGLU keeps less for backward than eager kernels do.
    expect(memory('BF16', 'MEGATRON').activationsGb).toBeLessThan(
      memory('BF16', 'PYTORCH_EAGER').activationsGb,
    );
    // The general rules put 54 of the 121 published Megatron runs over their GPUs' memory.
    const ps = llmPredictions().filter(
      (p) => p.prediction !== undefined && stackOfFramework(p.run.framework) === 'MEGATRON',
    );
    expect(ps.length).toBeGreaterThan(100);
    const fit = ps.filter((p) => p.prediction!.fitsInMemory).length;
    expect(fit / ps.length).toBeGreaterThan(0.95);
    // NeMo 1.x recipes ran Apex's distributed_fused_adam in bf16: no fp32 master copy (a bf16 one
    // under FP8) and bf16 moments (seeds/memory.json sourceRecipes). Predicted with those states, as
    // the memory check does, the four runs that were over 80 GB with fp32 masters fit.
    const recipeStates = ps.filter((p) => p.prediction!.execution.parallelism?.masterWeights !== undefined);
    expect(recipeStates.map((p) => p.run.id)).toEqual(
      expect.arrayContaining(['nemo2407-0010', 'nemo2407-0015', 'dgxc-0091', 'dgxc-0096']),
    );
    expect(recipeStates.filter((p) => !p.prediction!.fitsInMemory).map((p) => p.run.id)).toEqual([]);
  });

  it('fused causal attention: the NeMo long-context Llama-2-7B runs (16k to 1M tokens) are predicted within 20%, with no drift in sequence length', () => {
    // At 1M tokens attention is ~98% of the FLOPs. Costed at a plain GEMM's rate over the whole score
    // matrix (and with the probabilities' traffic charged to the context GEMM) these ran 0.84x at 16k
    // falling to 0.63x at 1M; at FlashAttention's measured rate over the causal half they stay level.
    const ps = llmPredictions().filter(
      (p) => p.tokensPerSecondPerGpu !== undefined && p.run.model === 'Llama-2-7B' && p.run.seqLen! >= 16384,
    );
    expect(ps.length).toBeGreaterThanOrEqual(7);
    const ratios = ps.map((p) => p.tokensPerSecondPerGpu! / p.run.tokensPerSecondPerGpu!);
    for (const r of ratios) expect(Math.abs(r - 1)).toBeLessThan(0.2);
    expect(Math.max(...ratios) / Math.min(...ratios)).toBeLessThan(1.1);
  });

  it('LoRA on a frozen base: no optimizer step or gradient reduction for the base, input gradients only in backward; the published LoRA runs come within 15%', () => {
    const full = predict(base(), eff),
      lora = predict(base({ frozenBase: true }), eff);
    expect(full.breakdown.optimizerMs).toBeGreaterThan(0);
    expect(lora.breakdown.optimizerMs).toBe(0);
    expect(full.breakdown.dataParallelCommMs).toBeGreaterThan(0);
    expect(lora.breakdown.dataParallelCommMs).toBe(0);
    // The GEMMs' weight gradients go; the attention core and elementwise backward stay.
    expect(lora.breakdown.backwardMs).toBeLessThan(0.75 * full.breakdown.backwardMs);
    expect(lora.breakdown.backwardMs).toBeGreaterThan(0.4 * full.breakdown.backwardMs);
    expect(lora.breakdown.forwardMs).toBeCloseTo(full.breakdown.forwardMs, 9);
    // The Megatron-Core LoRA rows: predicted as LoRA, and (for contrast) as if every weight trained.
    const archs = new Map(loadLlmArchitectures().map((a) => [a.model, a]));
    const runs = loadLlmRuns().filter(
      (r) => r.isLatest && r.task === 'lora' && stackOfFramework(r.framework) === 'MEGATRON',
    );
    const mape = (rs: typeof runs) => {
      const ps = rs
        .map((r) => predictLlmRun(r, archs, 'MEGATRON', eff))
        .filter((p) => p.tokensPerSecondPerGpu);
      expect(ps.length).toBeGreaterThanOrEqual(10);
      return (
        ps.reduce((s, p) => s + Math.abs(p.tokensPerSecondPerGpu! / p.run.tokensPerSecondPerGpu! - 1), 0) /
        ps.length
      );
    };
    expect(mape(runs)).toBeLessThan(0.15);
    expect(mape(runs.map((r) => ({ ...r, task: 'pretrain' })))).toBeGreaterThan(0.2);
  });

  it('FSDP gathers per transformer block: the MaxText Llama-2-70B runs keep their measured per-GPU throughput from 64 to 2,048 GPUs', () => {
    // With a latency per 25 MB bucket and log2(nodes) hops, the FP8 runs were predicted to fall from
    // 0.97x to 0.70x of measured as the GPU count grew; measured throughput per GPU stays level.
    for (const precision of ['BF16', 'FP8']) {
      const ratios = llmPredictions()
        .filter(
          (p) =>
            p.tokensPerSecondPerGpu !== undefined &&
            /MaxText/.test(p.run.framework) &&
            p.run.model === 'Llama-2-70B' &&
            p.run.precision === precision,
        )
        .map((p) => p.tokensPerSecondPerGpu! / p.run.tokensPerSecondPerGpu!);
      expect(ratios.length).toBe(6);
      expect(Math.max(...ratios) / Math.min(...ratios)).toBeLessThan(1.2);
    }
  });

  it('a decoder marks its attention GEMMs causal, an encoder does not, and a fused kernel runs the blocks on or below the diagonal', () => {
    const causal = (m: ModelDef) => costOf(m).layers.filter((l) => l.causalKeys !== undefined).length;
    expect(causal(llama8b)).toBe(2); // scores and context (one layer definition, repeated per block)
    expect(causal(getModel('bert_large_squad')!)).toBe(0);
    expect(causalShare(128)).toBe(1);
    expect(causalShare(8192)).toBeCloseTo(65 / 128, 12);
  });
});

describe('FP8 as Transformer Engine runs it', () => {
  it('is faster than BF16 on H100 at the same layout, by about the published ratio', () => {
    const bf16 = predict(base(), eff).throughput,
      fp8 = predict(base({ precision: 'FP8' }), eff).throughput;
    expect(fp8 / bf16).toBeGreaterThan(1.15);
    expect(fp8 / bf16).toBeLessThan(1.6);
  });

  it('matches the published FP8/BF16 pairs on H100 within 10% on average, most of them singly', () => {
    const pairs = fp8Pairs(llmPredictions());
    expect(pairs.length).toBeGreaterThan(30);
    const errors = pairs.map((x) => Math.abs(x.predicted / x.measured - 1));
    expect(errors.reduce((a, b) => a + b, 0) / errors.length).toBeLessThan(0.1);
    expect(errors.filter((e) => e <= 0.1).length / pairs.length).toBeGreaterThan(0.6);
  });

  it('gathers bf16 weights under ZeRO-3, not fp32 (half the bytes)', () => {
    const z3 = { tensorParallel: 1, pipelineParallel: 1, zeroStage: 3 as const, recompute: 'none' as const };
    const fp8 = predict(base({ precision: 'FP8', parallelism: z3 }), eff).breakdown.dataParallelCommMs;
    const bf16 = predict(base({ parallelism: z3 }), eff).breakdown.dataParallelCommMs;
    expect(fp8).toBeCloseTo(bf16, 6);
  });

  it('quantizes linear layers only: a CNN in FP8 or FP4 runs its convolutions as BF16 does', () => {
    // Transformer Engine has FP8 linear modules and no FP8 convolution: ResNet-50 "in FP8" gains
    // nothing (its one linear layer is quantized; the recipe's fp32 gradient buffers and fp32 norm
    // inputs cost some), while the decoder, all linear layers, gains.
    const resnet = base({ model: getModel('resnet50_v1.5')!, batchSizePerGpu: 256, gradAccumSteps: 1 });
    const b200 = getGpu('B200')!;
    const cnn = (precision: 'BF16' | 'FP8' | 'FP4', gpu = H100) =>
      predict({ ...resnet, gpu, precision }, eff).throughput;
    expect(cnn('FP8') / cnn('BF16')).toBeGreaterThan(0.8);
    expect(cnn('FP8') / cnn('BF16')).toBeLessThanOrEqual(1.01);
    expect(cnn('FP4', b200) / cnn('BF16', b200)).toBeLessThanOrEqual(1.01);
    // Memory likewise: a convolution keeps the bf16 input the (in-place) ReLU before it already holds,
    // not a second, FP8 copy of it, so a CNN saves what it saves in BF16.
    const saved = (precision: 'BF16' | 'FP8') => predict({ ...resnet, precision }, eff).memory.activationsGb;
    expect(saved('FP8') / saved('BF16')).toBeCloseTo(1, 2);
    expect(
      predict(base({ precision: 'FP8' }), eff).throughput / predict(base(), eff).throughput,
    ).toBeGreaterThan(1.15);
  });

  it('FP4 runs only where the datasheet gives an FP4 rate, and is faster than FP8 there', () => {
    expect(() => predict(base({ precision: 'FP4' }), eff)).toThrow(/FP4 tensor-core rate/);
    const b200 = getGpu('B200')!;
    const fp8 = predict(base({ gpu: b200, precision: 'FP8' }), eff).throughput,
      fp4 = predict(base({ gpu: b200, precision: 'FP4' }), eff).throughput;
    expect(fp4).toBeGreaterThan(fp8);
  });
});

describe('interleaved pipelines and context parallelism', () => {
  const pp = { tensorParallel: 1, pipelineParallel: 4, zeroStage: 1 as const, recompute: 'none' as const };
  it('interleaving v chunks per GPU shrinks the pipeline bubble by v', () => {
    const plain = predict(base({ parallelism: pp }), eff).breakdown.pipelineBubbleMs;
    const v4 = predict(base({ parallelism: { ...pp, virtualPipelineStages: 4 } }), eff).breakdown
      .pipelineBubbleMs;
    expect(v4).toBeCloseTo(plain / 4, 6);
  });

  it('context parallelism splits each sequence: forward time per GPU falls by the CP degree', () => {
    const one = predict(base(), eff).breakdown.forwardMs;
    const cp2 = predict(
      base({
        parallelism: {
          tensorParallel: 1,
          pipelineParallel: 1,
          zeroStage: 1,
          recompute: 'none',
          contextParallel: 2,
        },
      }),
      eff,
    );
    expect(cp2.breakdown.forwardMs).toBeCloseTo(one / 2, 6);
    // Half as many replicas: the global batch halves at the same micro-batch and accumulation.
    expect(cp2.globalBatch).toBe(predict(base(), eff).globalBatch / 2);
  });

  it('rejects a virtual pipeline without a pipeline, naming the field', () => {
    const s = parallelStructure(costOf(llama8b), llama8b.layers);
    const bad = checkParallelism(
      { tensorParallel: 1, pipelineParallel: 1, zeroStage: 0, recompute: 'none', virtualPipelineStages: 2 },
      s,
      { gpusPerNode: 8, nodes: 1 },
    );
    expect(bad).toBeInstanceOf(InputError);
    expect(bad!.field).toBe('parallelism.virtualPipelineStages');
    const cp = checkParallelism(
      { tensorParallel: 1, pipelineParallel: 1, zeroStage: 0, recompute: 'none', contextParallel: 3 },
      s,
      { gpusPerNode: 8, nodes: 1 },
    );
    expect(cp!.field).toBe('parallelism.contextParallel');
  });
});

describe('software stacks', () => {
  it('a tuned stack is faster than stock PyTorch for the same job (fused attention, tuned GEMMs)', () => {
    const eager = predict(base({ stack: 'PYTORCH_EAGER' }), eff).throughput;
    const megatron = predict(base(), eff).throughput;
    expect(megatron).toBeGreaterThan(1.2 * eager);
  });
});

describe('a GPU new to LLM training: runs nothing was fitted on', () => {
  it("torchtitan's A100 runs (replaced by H100 figures in their source): the shipped trees within 15% on average, each inside P10-P90", async () => {
    // Every run the stacks and the trees were fitted on is an H100 run; these eight A100 runs (FSDP2,
    // Llama-3-8B/70B, Llama-2-13B/70B on 64 GPUs) are not in any fit. predict calibrates an
    // architecture's answers on a GPU by its published runs there (published-calibration.test.ts),
    // which here are these very runs: that is left out (no published architecture), so what is
    // checked is what a GPU new to LLM training gets (7.4%, the analytical estimate's 9.8%).
    const runs = otherGpuRuns();
    expect(new Set(runs.map((r) => r.gpu))).toEqual(new Set(['A100-SXM4-80GB']));
    const ps = await learnedOtherGpuRuns(eff);
    expect(ps.length).toBe(8);
    expect(ps[0].predictor).toMatch(/^gbdt-v\d+$/);
    const errors = ps.map((p) => ape(p));
    expect(errors.reduce((a, b) => a + b, 0) / errors.length).toBeLessThan(0.15);
    for (const p of ps) {
      expect(p.p10!, p.run.id).toBeLessThanOrEqual(p.run.tokensPerSecondPerGpu!);
      expect(p.p90!, p.run.id).toBeGreaterThanOrEqual(p.run.tokensPerSecondPerGpu!);
    }
  });
});

describe('stock PyTorch on LLMs: attention as PyTorch runs it today, FSDP as its runs show it', () => {
  it('eager FSDP against compiled FSDP: torchtitan ran eager at 0.86 of compiled on the same machines, and so does the estimate', () => {
    // torchtitan's Llama 3.1 8B under FSDP2 with selective recomputation, eager and torch.compile, on
    // 8 and on 128 of the same 96 GB / 500 W H100s (the same commit, batch and layout). That GPU has no
    // published peak, so the runs are predicted on H100-SXM5, and the ratio is what is compared: 0.833
    // and 0.831 against 0.864 and 0.860. DDP's fitted wait for the slowest GPU and interference
    // (software.json fullyShardedSync) put eager at 0.750 and 0.720 of compiled.
    const runs = new Map(loadLlmRuns().map((r) => [r.id, r]));
    const archs = new Map(loadLlmArchitectures().map((a) => [a.model, a]));
    const onProxy = (id: string) => ({ ...runs.get(id)!, gpu: 'H100-SXM5-80GB' });
    for (const [eagerId, compiledId] of [
      ['torchtitan-0001', 'torchtitan-0002'],
      ['torchtitan-0008', 'torchtitan-0009'],
    ]) {
      const eager = predictLlmRun(onProxy(eagerId), archs, 'PYTORCH_EAGER', eff);
      const compiled = predictLlmRun(onProxy(compiledId), archs, 'TORCH_COMPILE', eff);
      const published = eager.run.tokensPerSecondPerGpu! / compiled.run.tokensPerSecondPerGpu!;
      expect(published).toBeGreaterThan(0.85);
      expect(published).toBeLessThan(0.87);
      const predicted = eager.tokensPerSecondPerGpu! / compiled.tokensPerSecondPerGpu!;
      expect(Math.abs(predicted / published - 1), eagerId).toBeLessThan(0.05);
    }
  });

  it("torchtitan's A100 runs under the default stack: 0.74-1.06 of their throughput, their attention one fused kernel", () => {
    // torchtitan's FSDP2 Llama runs call scaled_dot_product_attention (FlashAttention on A100); the
    // default stack used to cost every attention with its scores written to memory, as the benchmark
    // rows' scripts did: 0.45-0.57 of their measured throughput; then FSDP's communication, half of
    // it left exposed with a wait for the slowest GPU as DDP's all-reduce was fitted: 0.58-0.81. Their
    // source does not say whether they were compiled: under TORCH_COMPILE they are 0.88-1.18, so
    // eager comes out at 0.88 of compiled, as torchtitan's eager and compiled pairs above ran.
    const runs = otherGpuRuns();
    const ratios = llmPredictions(eff, () => 'PYTORCH_EAGER', runs).map(
      (p) => p.tokensPerSecondPerGpu! / p.run.tokensPerSecondPerGpu!,
    );
    expect(ratios.length).toBe(8);
    expect(Math.min(...ratios)).toBeGreaterThan(0.7);
    expect(Math.max(...ratios)).toBeLessThan(1.1);
  });
});

describe('Llama 2 pre-training campaigns (model card GPU-hours)', () => {
  it('predicts the 7B and 13B campaigns as a tuned stack at steady state: no more GPU-hours than published, within 40%', () => {
    // The published GPU-hours are whole campaigns (restarts, evaluation, checkpoints included; their
    // share is not published), so a steady-state step time can only come in under them. Within 20%
    // held while FSDP's gathers paid a latency per 25 MB DDP bucket; per transformer block (what FSDP
    // issues), with the Megatron effects refitted on the published runs, they come in 17-22% under.
    const c = campaignHours();
    expect(c.map((x) => x.campaign.model).sort()).toEqual(['Llama-2-13B', 'Llama-2-7B']);
    for (const x of c) {
      expect('ratio' in x && x.fits).toBe(true);
      if ('ratio' in x) {
        expect(x.ratio!).toBeLessThanOrEqual(1);
        expect(x.ratio!).toBeGreaterThan(0.6);
      }
    }
  });

  it('as predict answers them (the learned correction applied): within 20% of the published GPU-hours, which its P10-P90 holds', async () => {
    // Issue #11's target. The trees trained on Llama 2's H100 runs, not on any A100 run of it (the only
    // ones are superseded torchtitan rows) nor on a campaign; here they lengthen the analytical step by
    // a few percent, which the analytical campaign above (17-20% under) does not have.
    const c = await learnedCampaignHours();
    expect(c.map((x) => x.campaign.model).sort()).toEqual(['Llama-2-13B', 'Llama-2-7B']);
    for (const x of c) {
      expect(x.predictor).toMatch(/^gbdt-v\d+$/);
      expect(x.ratio, x.campaign.model).toBeGreaterThan(0.8);
      expect(x.ratio, x.campaign.model).toBeLessThanOrEqual(1);
      expect(x.p10).toBeLessThanOrEqual(x.campaign.gpuHours!);
      expect(x.p90).toBeGreaterThanOrEqual(x.campaign.gpuHours!);
    }
  });

  it('the runs file is read as published: per-GPU throughput, latest versions flagged', () => {
    const runs = loadLlmRuns();
    expect(runs.length).toBe(459);
    expect(runs.filter((r) => r.isLatest).length).toBeLessThan(runs.length);
  });

  it('a rounded published count is the interval of counts that round to it', () => {
    expect(roundedCount('4M')).toEqual({ low: 3.5e6, high: 4.5e6 });
    expect(roundedCount('2.5K')).toEqual({ low: 2450, high: 2550 });
    expect(roundedCount('1024')).toEqual({ low: 1023.5, high: 1024.5 });
    expect(roundedCount('')).toBeNull();
    expect(roundedCount('15T+')).toBeNull();
    expect(loadLlmCampaigns().find((c) => c.model === 'Llama-2-7B')!.globalBatchTokens).toEqual({
      low: 3.5e6,
      high: 4.5e6,
    });
  });
});

describe('the API: softwareStack, FP8/FP4, virtual stages and context parallelism', () => {
  const run = apolloForTests();
  const query = (extra: string) => `{
    predict(input: {
      workload: { model: "llama2_7b", samples: 1e9 }
      gpu: "H100-SXM5-80GB", gpusPerNode: 8, batchSizePerGpu: 1, gradAccumSteps: 8, precision: FP8
      ${extra}
    }) { predictor evidence stepTimeMs stepTimeMsP10 stepTimeMsP90 }
  }`;

  it('a tuned stack gets the learned correction, trained on the LLM runs of that stack, and says so', async () => {
    const tuned = await run(
      query(
        'softwareStack: MEGATRON, parallelism: { tensorParallel: 2, pipelineParallel: 2, virtualPipelineStages: 4, zeroStage: 1 }',
      ),
    );
    const p = tuned.data!.predict;
    expect(p.predictor).toMatch(/^gbdt-v\d+$/);
    expect(p.evidence).toMatch(
      /software stack assumed: MEGATRON \(analytical effects fitted on the published LLM runs of this stack: [^;]*NeMo \(Megatron-Core\)[^;]*; learned correction applied/,
    );
    // Llama 2 7B's own Megatron runs on H100s calibrate it and set its interval (published-calibration.ts).
    expect(p.evidence).toMatch(
      /calibrated by the \d+ latest published runs of this architecture on H100-SXM5-80GB under MEGATRON .*interval: runs held out of the trees and of this calibration a layout at a time/,
    );
    expect(p.stepTimeMsP10).toBeLessThan(p.stepTimeMs);
    expect(p.stepTimeMsP90).toBeGreaterThan(p.stepTimeMs);
    const eager = await run(query(''));
    expect(eager.data!.predict.evidence).toMatch(/software stack assumed: PYTORCH_EAGER/);
    // TORCH_COMPILE's runs are JAX/XLA and NeMo AutoModel ones, and it says so; torchtitan's ran a GPU
    // the catalog lacks (H100-SXM-96GB-HBM2e-500W), so they fit nothing and are not named.
    const compiled = (await run(query('softwareStack: TORCH_COMPILE'))).data!.predict.evidence;
    expect(compiled).toMatch(
      /fitted on the published LLM runs of this stack: MaxText \(JAX\/XLA\), NeMo AutoModel \(PyTorch FSDP2 \+ TE\), PaxML \(JAX\/XLA\);/,
    );
    expect(compiled).not.toMatch(/torchtitan/);
    // No published run used TUNED: it takes MEGATRON's fitted effects, and its CUDA graphs are an assumption.
    const assumed = await run(query('softwareStack: TUNED'));
    expect(assumed.data!.predict.evidence).toMatch(
      /software stack assumed: TUNED \(analytical effects MEGATRON's, fitted on its published LLM runs \(.*NeMo \(Megatron-Core\).*\), with CUDA graphs hiding kernel launches, an assumption no run tests: no published run used TUNED;/,
    );
  });

  it('recommend searches FP4 only when asked, and says so', async () => {
    const ask = (precisions: string) =>
      run(`{ recommend(input: {
        workload: { model: "bert_large_pretrain", samples: 1e8 }, gpus: ["B200"], maxNodes: 1, limit: 50 ${precisions}
      }) { plans { precision } notes } }`);
    const plain = (await ask('')).data!.recommend;
    expect(plain.plans.length).toBeGreaterThan(0);
    expect(plain.plans.some((p: { precision: string }) => p.precision === 'FP4')).toBe(false);
    expect(plain.notes.join('\n')).toMatch(/FP4 was not searched.*list FP4 in precisions.*B200/);
    const asked = (await ask(', precisions: [FP4, BF16]')).data!.recommend;
    expect(asked.plans.some((p: { precision: string }) => p.precision === 'FP4')).toBe(true);
    expect(asked.notes.join('\n')).not.toMatch(/FP4 was not searched/);
  });

  it('recommend searches FP16_PURE (apex O3) only when asked, and says so', async () => {
    const ask = (precisions: string) =>
      run(`{ recommend(input: {
        workload: { model: "resnet50_v1.5", samples: 1e8 }, gpus: ["V100-SXM2-16GB", "A100-SXM4-80GB"], maxNodes: 1, limit: 100 ${precisions}
      }) { plans { precision } notes } }`);
    const plain = (await ask('')).data!.recommend;
    expect(plain.plans.length).toBeGreaterThan(0);
    expect(plain.plans.some((p: { precision: string }) => p.precision === 'FP16_PURE')).toBe(false);
    expect(plain.notes.join('\n')).toMatch(/FP16_PURE was not searched.*list FP16_PURE in precisions/);
    const asked = (await ask(', precisions: [FP16_PURE, AMP_FP16]')).data!.recommend;
    expect(asked.plans.some((p: { precision: string }) => p.precision === 'FP16_PURE')).toBe(true);
    expect(asked.notes.join('\n')).not.toMatch(/FP16_PURE was not searched/);
  });

  // Transformer Engine quantizes linear layers only: a CNN's FP8 run is its BF16 run plus casts, and
  // the learned correction's FP8 effect (fitted on LLM runs) made it the cheapest ResNet-50 plan.
  it('searches FP8 by default only for a model whose GEMM FLOPs are mostly in linear layers, and says so', async () => {
    expect(quantizedGemmShare(costOf(getModel('resnet50_v1.5')!))).toBeLessThan(0.01);
    expect(quantizedGemmShare(costOf(getModel('bert_large_pretrain')!))).toBeGreaterThan(0.9);
    expect(defaultSearchPrecisions(costOf(getModel('resnet50_v1.5')!))).not.toContain('FP8');
    expect(defaultSearchPrecisions(costOf(getModel('gpt2_124m')!))).toContain('FP8');
    const ask = (model: string, precisions: string) =>
      run(`{ recommend(input: {
        workload: { model: "${model}", samples: 1e8 }, gpus: ["H100-SXM5-80GB"], maxNodes: 1, limit: 100 ${precisions}
      }) { plans { precision } notes } }`);
    const cnn = (await ask('resnet50_v1.5', '')).data!.recommend;
    expect(cnn.plans.length).toBeGreaterThan(0);
    expect(cnn.plans.some((p: { precision: string }) => p.precision === 'FP8')).toBe(false);
    expect(cnn.notes.join('\n')).toMatch(
      /FP8 was not searched: .* 0\.\d% of resnet50_v1\.5's GEMM FLOPs.*list FP8 in precisions/,
    );
    const asked = (await ask('resnet50_v1.5', ', precisions: [FP8, BF16]')).data!.recommend;
    expect(asked.plans.some((p: { precision: string }) => p.precision === 'FP8')).toBe(true);
    const bert = (await ask('bert_large_pretrain', '')).data!.recommend;
    expect(bert.plans.some((p: { precision: string }) => p.precision === 'FP8')).toBe(true);
    expect(bert.notes.join('\n')).not.toMatch(/FP8 was not searched/);
    // Fleet and procurement jobs: the same defaults per job's model, the request's list as given.
    const search = { precisions: ['BF16', 'FP8'] as const, precisionsByDefault: true };
    const jobs = (r: object, id: string) => jobPrecisions(r as never, getModel(id)!);
    expect(jobs(search, 'resnet50_v1.5')).toEqual(['BF16']);
    expect(jobs(search, 'bert_large_pretrain')).toEqual(['BF16', 'FP8']);
    expect(jobs({ ...search, precisionsByDefault: false }, 'resnet50_v1.5')).toEqual(['BF16', 'FP8']);
    // The coupled planners' notes: the models it left out, only where a searched GPU runs FP8.
    const [h100, v100] = [getGpu('H100-SXM5-80GB')!, getGpu('V100-SXM2-16GB')!];
    const [resnet, vgg, bertModel] = ['resnet50_v1.5', 'vgg16', 'bert_large_pretrain'].map((id) =>
      getModel(id)!,
    );
    expect(fp8NotSearchedNote(null, [resnet, bertModel], [v100, h100])).toMatch(
      /^FP8 was not searched: .* of resnet50_v1\.5's GEMM FLOPs/,
    );
    expect(fp8NotSearchedNote(null, [resnet, vgg, bertModel], [h100])).toMatch(
      /^FP8 was not searched for resnet50_v1\.5 \(0\.1% .*\), vgg16 \(0\.8% .*\): .*list FP8 in precisions for their plans$/,
    );
    expect(fp8NotSearchedNote(null, [resnet], [v100])).toBeNull();
    expect(fp8NotSearchedNote(null, [bertModel], [h100])).toBeNull();
    expect(fp8NotSearchedNote(['BF16'], [resnet], [h100])).toBeNull();
  });

  it('workload.fineTuning: LORA times and sizes a frozen base in predict and recommend; planners that cannot say so refuse it', async () => {
    const ask = async (workload: string) =>
      (
        await run(`{ predict(input: {
          workload: { ${workload} }, gpu: "H100-SXM5-80GB", gpusPerNode: 8, batchSizePerGpu: 1, gradAccumSteps: 8,
          precision: BF16, softwareStack: MEGATRON
        }) { stepTimeMs fitsInMemory evidence memory { gradientsGb optimizerGb totalGb } breakdown { optimizerMs } } }`)
      ).data!.predict;
    const full = await ask('model: "llama2_7b", samples: 1e9');
    const lora = await ask('model: "llama2_7b", samples: 1e9, fineTuning: LORA');
    expect(full.fitsInMemory).toBe(false); // fp32 master weights and Adam state for 6.7B parameters
    expect(lora.fitsInMemory).toBe(true);
    expect(lora.memory.gradientsGb).toBe(0);
    expect(lora.memory.optimizerGb).toBe(0);
    expect(lora.breakdown.optimizerMs).toBe(0);
    expect(lora.stepTimeMs).toBeLessThan(full.stepTimeMs);
    expect(lora.evidence).toMatch(/LoRA on a frozen base/);
    const plans = await run(`{ recommend(input: {
      workload: { model: "llama2_7b", samples: 1e9, fineTuning: LORA }, gpus: ["H100-SXM5-80GB"], maxNodes: 1, limit: 3
    }) { plans { memoryGbPerGpu } notes } }`);
    expect(plans.data!.recommend.plans.length).toBeGreaterThan(0);
    expect(plans.data!.recommend.notes.join('\n')).toMatch(
      /LoRA: plans are timed and sized for a frozen base/,
    );
    const fleet = await run(`{ planFleet(input: {
      jobs: [{ id: "a", workload: { model: "llama2_7b", samples: 1e9, fineTuning: LORA }, deadlineHours: 100 }],
      inventory: [{ gpu: "H100-SXM5-80GB", count: 8 }]
    }) { status } }`);
    expect(fleet.errors![0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(fleet.errors![0].message).toMatch(/jobs\[0\]\.workload\.fineTuning: LORA is not supported/);
  });

  it('a context-parallel degree the GPUs cannot hold is refused, naming the field', async () => {
    const r = await run(query('parallelism: { contextParallel: 3 }'));
    expect(r.errors![0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(r.errors![0].message).toMatch(/parallelism\.contextParallel/);
  });
});
