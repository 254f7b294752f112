// Parallelism beyond plain data parallelism (predictor/parallel.ts, step.ts, memory.ts,
// optimizer/parallel-search.ts): the defaults change nothing, each formula does what its comment
// says, and the results are held against published figures:
//   - ZeRO model-state memory: Rajbhandari et al. 2020 (arXiv:1910.02054), Figure 1;
//   - activation memory: Korthikanti et al. 2022 (arXiv:2205.05198), Table 2;
//   - step time and MFU of Megatron-LM runs on A100s: Korthikanti et al. 2022, Table 5 (also the
//     reference data of Calculon's `llm-validation`, calculon/llm/validation.py).
import { describe, expect, it } from 'vitest';
import { predictedAtPlan } from './plan-as-predicted.js';
import { recommend, type RecommendRequest } from '../optimizer/recommend.js';
import { pipelineDegrees, pipelineSchedules } from '../optimizer/parallel-search.js';
import {
  activationBytesPerSampleOn,
  activationProfile,
  regionParameters,
  shardedMemoryPerGpu,
} from '../predictor/memory.js';
import { checkParallelism, parallelStructure, PLAIN, type Parallelism } from '../predictor/parallel.js';
import { costOf, InputError, predict, type PredictRequest } from '../predictor/predict.js';
import { communicationTime, intraNodeBandwidth } from '../predictor/step.js';
import { allReduceLinkFraction } from '../predictor/achievable.js';
import { overrideStackEffects, softwareFile, type SoftwareStack } from '../predictor/software.js';
import type { ModelDef } from '../predictor/types.js';
import { modelFromZooEntry, getModel, loadZoo } from '../predictor/zoo/index.js';
import { getGpu, loadEfficiency } from '../seeds/catalog.js';

const gpu = (id: string) => getGpu(id)!;
const A100 = gpu('A100-SXM4-80GB');
const GB = 1e9,
  GIB = 2 ** 30;
const eff = loadEfficiency();

/** A Megatron-LM GPT (Korthikanti et al. 2022 Table 3: vocabulary 51200, sequence 2048, learned positions, dropout). */
function megatronGpt(id: string, layers: number, hidden: number, heads: number, seq = 2048): ModelDef {
  return modelFromZooEntry({
    id,
    name: id,
    family: 'decoder',
    batchElement: 'sequence',
    throughputUnit: 'tokens/s',
    unitsPerBatchElement: 'seqLen',
    seqLen: seq,
    optimizer: 'adam',
    batchSizes: [1],
    source: 'Korthikanti et al. 2022, Table 3',
    arch: {
      layers,
      hidden,
      heads,
      ffn: 4 * hidden,
      vocab: 51200,
      norm: 'layernorm',
      mlp: 'gelu',
      positions: 'learned',
      maxPositions: seq,
      bias: true,
      tiedHead: true,
      dropout: true,
    },
  });
}

const llama = getModel('llama2_7b')!;
const base = (over: Partial<PredictRequest>): PredictRequest => ({
  model: llama,
  gpu: A100,
  precision: 'BF16',
  batchSizePerGpu: 1,
  gpusPerNode: 8,
  nodes: 1,
  interNodeGbps: 400,
  ...over,
});

describe('defaults: plain data parallelism changes nothing', () => {
  it('an explicit plain layout predicts exactly what no layout does, for every zoo model', () => {
    for (const model of loadZoo()) {
      for (const [g, n] of [
        [1, 1],
        [8, 2],
      ]) {
        const r: PredictRequest = {
          model,
          gpu: A100,
          precision: 'AMP_BF16',
          batchSizePerGpu: model.batchSizes[0],
          gpusPerNode: g,
          nodes: n,
          gradAccumSteps: 2,
          interNodeGbps: 400,
        };
        const a = predict(r, eff),
          b = predict({ ...r, parallelism: { ...PLAIN } }, eff);
        expect(b.stepTimeMs, model.id).toBe(a.stepTimeMs);
        expect(b.memory, model.id).toEqual(a.memory);
        expect(b.globalBatch).toBe(a.globalBatch);
        expect(
          b.breakdown.recomputeMs +
            b.breakdown.pipelineBubbleMs +
            b.breakdown.tensorParallelCommMs +
            b.breakdown.pipelineCommMs,
        ).toBe(0);
      }
    }
  });

  it('recommend searches plain data parallelism only unless asked, and then every plan says what it chose', () => {
    const req: RecommendRequest = {
      model: getModel('bert_large_squad')!,
      samples: 1e7,
      objective: 'COST',
      gpus: [A100, gpu('T4')],
      precisions: ['AMP_FP16', 'BF16'],
      maxNodes: 2,
      gpusPerNodeChoices: [1, 8],
      batchSizes: [32],
      interNodeGbps: () => 400,
      limit: 50,
    };
    const off = recommend(req, eff);
    for (const p of off.plans)
      expect(p.parallelism).toEqual({
        dataParallel: p.nodes * p.gpusPerNode,
        tensorParallel: 1,
        pipelineParallel: 1,
        contextParallel: 1,
        virtualPipelineStages: 1,
        expertParallel: 1,
        zeroStage: 0,
        recompute: 'none',
        microBatches: 1,
      });
    const auto = recommend({ ...req, parallelismSearch: 'auto' }, eff);
    expect(auto.evaluated).toBe(off.evaluated);
    expect(auto.feasible).toBeGreaterThanOrEqual(off.feasible);
  });
});

describe('what the layer list says about splitting it', () => {
  it('GPT-2: two split linear pairs per block, 12 blocks of 12 heads, a 1024 x 768 residual stream', () => {
    const m = getModel('gpt2_124m')!;
    const s = parallelStructure(costOf(m), m.layers);
    expect(s.blocks).toBe(12);
    expect(s.heads).toBe(12);
    expect(s.tpCollectives).toBe(24);
    expect(s.residualElements).toBe(1024 * 768);
    expect(s.tpReduceElements).toBe(24 * 1024 * 768);
    expect(s.tensorParallelizable).toBe(true);
  });

  it('a CNN has no linear pairs to split: tensor parallelism is refused, ZeRO is not', () => {
    const m = getModel('resnet50_v1.5')!;
    const s = parallelStructure(costOf(m), m.layers);
    expect(s.tensorParallelizable).toBe(false);
    expect(() =>
      predict(base({ model: m, batchSizePerGpu: 64, parallelism: { ...PLAIN, tensorParallel: 2 } }), eff),
    ).toThrow(/no pair of linear layers/);
    expect(
      predict(base({ model: m, batchSizePerGpu: 64, parallelism: { ...PLAIN, zeroStage: 3 } }), eff).memory
        .weightsGb,
    ).toBeLessThan(predict(base({ model: m, batchSizePerGpu: 64 }), eff).memory.weightsGb / 7);
  });

  it.each([
    [{ tensorParallel: 16 }, 'parallelism.tensorParallel', /must divide gpusPerNode/],
    [{ tensorParallel: 3 }, 'parallelism.tensorParallel', /must divide gpusPerNode/],
    [{ pipelineParallel: 64 }, 'parallelism.pipelineParallel', /64 stages for 32 transformer block/],
    [{ pipelineParallel: 3 }, 'parallelism.pipelineParallel', /do not split into whole replicas/],
    [{ zeroStage: 4 }, 'parallelism.zeroStage', /0, 1, 2 or 3/],
    // Master weights where the mode keeps none, and remainders beside weights that are not bf16.
    [
      { masterWeights: 'none' },
      'parallelism.masterWeights',
      /FP32 keeps no master copy.*FP16, BF16, FP8, FP4/,
      { precision: 'FP32' },
    ],
    [
      { masterWeights: 'bf16' },
      'parallelism.masterWeights',
      /AMP_BF16 keeps no master copy/,
      { precision: 'AMP_BF16' },
    ],
    [
      { masterWeights: 'remainders' },
      'parallelism.masterWeights',
      /remainders complete bf16 weights.*FP16 keeps its weights in fp16/,
      { precision: 'FP16' },
    ],
  ] as [Partial<Parallelism>, string, RegExp, Partial<PredictRequest>?][])(
    '%j is refused, naming %s',
    (p, field, message, request) => {
      try {
        predict(base({ ...request, parallelism: { ...PLAIN, ...p } }), eff);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
        expect((e as InputError).field).toBe(field);
        expect((e as InputError).message).toMatch(message);
      }
    },
  );

  it('tensor parallelism must divide the attention heads (GPT-2 XL has 25)', () => {
    const m = getModel('gpt2_1558m')!;
    const bad = checkParallelism({ ...PLAIN, tensorParallel: 2 }, parallelStructure(costOf(m), m.layers), {
      gpusPerNode: 8,
      nodes: 1,
    });
    expect(bad?.message).toMatch(/does not divide the 25 attention heads/);
  });

  it('a pipeline runs ZeRO 0, 1 or 3, not 2: no framework shards its gradients per micro-batch', () => {
    const s = parallelStructure(costOf(llama), llama.layers);
    const check = (pipelineParallel: number, zeroStage: 0 | 1 | 2 | 3) =>
      checkParallelism({ ...PLAIN, pipelineParallel, zeroStage }, s, { gpusPerNode: 8, nodes: 1 });
    expect(check(2, 2)).toMatchObject({
      field: 'parallelism.zeroStage',
      message: expect.stringMatching(
        /^must be 0, 1 or 3 with pipelineParallel 2 \(got 2\): .*DeepSpeed refuses/,
      ),
    });
    for (const z of [0, 1, 3] as const) expect(check(2, z)).toBeNull();
    expect(check(1, 2)).toBeNull();
  });
});

describe('memory', () => {
  it('ZeRO reproduces Rajbhandari et al. 2020, Figure 1: 7.5B parameters, 64-way data parallel, mixed-precision Adam (K = 12)', () => {
    // A 7.5B-parameter stand-in: the figure counts model states only, 2 + 2 + 12 bytes per parameter.
    const m: ModelDef = {
      ...llama,
      id: 'states-7.5b',
      layers: [
        { type: 'linear', inFeatures: 75_000, outFeatures: 100_000, bias: false, tokens: 1 },
        { type: 'loss', elements: 1 },
      ],
    };
    const c = costOf(m);
    expect(c.parameters).toBe(7.5e9);
    const states = (z: 0 | 1 | 2 | 3) => {
      const mem = shardedMemoryPerGpu(
        m,
        c,
        'BF16',
        1,
        {
          tensorParallel: 1,
          pipelineParallel: 1,
          dataParallel: 64,
          zeroStage: z,
          recompute: 'none',
          microBatches: 1,
        },
        eff,
      );
      return ((mem.weightsGb + mem.gradientsGb + mem.masterWeightsGb + mem.optimizerStateGb) * GIB) / GB;
    };
    expect(states(0)).toBeCloseTo(120, 6); // baseline (2 + 2 + K) x 7.5B
    expect(states(1)).toBeCloseTo(31.4, 1); // P_os
    expect(states(2)).toBeCloseTo(16.6, 1); // P_os+g
    expect(states(3)).toBeCloseTo(1.9, 1); // P_os+g+p
  });

  it('fp32 -> bf16 optimizer state halves the moments', () => {
    const fp32 = predict(base({ parallelism: { ...PLAIN, zeroStage: 1 } }), eff).memory.optimizerStateGb;
    const bf16 = predict(base({ parallelism: { ...PLAIN, zeroStage: 1, optimizerState: 'bf16' } }), eff)
      .memory.optimizerStateGb;
    expect(bf16).toBeCloseTo(fp32 / 2, 9);
  });

  it('master weights as the optimizer keeps them: fp32 4 bytes, bf16 or remainders 2, none 0; the update moves less without one', () => {
    const at = (masterWeights?: Parallelism['masterWeights'], stack?: SoftwareStack) =>
      predict(
        base({ parallelism: { ...PLAIN, zeroStage: 1, ...(masterWeights ? { masterWeights } : {}) }, stack }),
        eff,
      );
    const fp32 = at(),
      none = at('none');
    expect(at('fp32').memory.masterWeightsGb).toBeCloseTo(fp32.memory.masterWeightsGb, 9);
    expect(at('bf16').memory.masterWeightsGb).toBeCloseTo(fp32.memory.masterWeightsGb / 2, 9);
    expect(at('remainders').memory.masterWeightsGb).toBeCloseTo(fp32.memory.masterWeightsGb / 2, 9);
    expect(fp32.memory.masterWeightsGb).toBeGreaterThan(0);
    expect(none.memory.masterWeightsGb).toBe(0);
    // (and the allocator's fragmentation on it)
    expect(fp32.memory.totalGb - none.memory.totalGb).toBeGreaterThanOrEqual(fp32.memory.masterWeightsGb);
    // Without a master copy: no up-cast or working-copy refresh, and the update reads bf16 weights.
    expect(none.breakdown.mixedPrecisionMs).toBeLessThan(fp32.breakdown.mixedPrecisionMs);
    expect(none.breakdown.optimizerMs).toBeLessThan(fp32.breakdown.optimizerMs);
    // The remainders are read and written with the weights: an fp32 master's traffic.
    expect(at('remainders').breakdown.optimizerMs).toBeCloseTo(fp32.breakdown.optimizerMs, 9);
    // What the request states wins over the stack's recipes (MEGATRON keeps fp32 masters).
    expect(at(undefined, 'MEGATRON').memory.masterWeightsGb).toBeGreaterThan(0);
    expect(at('none', 'MEGATRON').memory.masterWeightsGb).toBe(0);
    // A bf16 master beside fp16 weights is a layout the mode can keep (the refusals: above).
    expect(() =>
      predict(base({ precision: 'FP16', parallelism: { ...PLAIN, masterWeights: 'bf16' } }), eff),
    ).not.toThrow();
  });

  it('activations per transformer layer against Korthikanti et al. 2022, Table 2 (GPT-3 175B layer, TP 8 with sequence parallelism)', () => {
    // Per layer, bytes: eager attention without recomputation sbh(34 + 5as/h)/t, selective (and fused
    // attention, which never keeps the scores) 34sbh/t, full 2sbh/t (the checkpointed layer input is
    // split along the sequence under sequence parallelism). The saved-tensor rules of seeds/memory.json
    // reproduce the derivation term by term: layer-norm inputs, GEMM inputs, GELU's input, 1-byte
    // dropout masks, and for eager attention q and k, the softmax output, its mask and the dropped-out
    // probabilities with v.
    const [L, h, a, s, t] = [4, 12288, 96, 2048, 8];
    const m = megatronGpt('gpt3-4-layers', L, h, a, s);
    const c = costOf(m);
    const perLayer = (recompute: 'none' | 'selective' | 'full', attention: 'fused' | 'eager') => {
      // Difference of two depths isolates one layer from the embedding, head and loss.
      const two = megatronGpt('gpt3-2-layers', 2, h, a, s);
      return (
        (activationBytesPerSampleOn(c, 'BF16', t, recompute, eff.memory, attention) -
          activationBytesPerSampleOn(costOf(two), 'BF16', t, recompute, eff.memory, attention)) /
        (L - 2)
      );
    };
    const sbh = s * h;
    expect(perLayer('none', 'eager') / ((sbh * (34 + (5 * a * s) / h)) / t)).toBeCloseTo(1, 6);
    expect(perLayer('selective', 'eager') / ((34 * sbh) / t)).toBeCloseTo(1, 6);
    // Fused attention keeps one fp32 softmax statistic per head and query beyond Table 2's terms.
    expect(perLayer('none', 'fused') / ((34 * sbh) / t)).toBeCloseTo(1, 3);
    expect(perLayer('full', 'fused') / ((2 * sbh) / t)).toBeCloseTo(1, 6);
  });

  it('the first pipeline stage holds the embeddings beside its 1/PP of the blocks, the last the output layer', () => {
    const cost = costOf(llama);
    const r = regionParameters(cost, 1);
    // Llama-2-7B: a 32,000 x 4,096 embedding on the first stage and an untied head on the last.
    expect(r.before).toBe(32000 * 4096);
    expect(r.after).toBeGreaterThanOrEqual(32000 * 4096);
    const m = shardedMemoryPerGpu(
      llama,
      cost,
      'BF16',
      1,
      {
        tensorParallel: 1,
        pipelineParallel: 4,
        dataParallel: 1,
        zeroStage: 0,
        recompute: 'selective',
        microBatches: 8,
      },
      eff,
    );
    // The first stage is the fuller one: it holds 4 micro-batches of activations, the last one.
    expect(m.weightsGb * 2 ** 30).toBeCloseTo((r.before + r.blocks / 4) * 2, -3);
    expect(r.before + r.blocks + r.after).toBeCloseTo(cost.parameters, -3);
  });

  it('an uneven split is sized at its heaviest stage: Llama-2-7B, 32 blocks over 5 stages hold 7 on the first, not 6.4', () => {
    const cost = costOf(llama);
    const r = regionParameters(cost, 1);
    const at = (pp: number) =>
      shardedMemoryPerGpu(
        llama,
        cost,
        'BF16',
        1,
        {
          tensorParallel: 1,
          pipelineParallel: pp,
          dataParallel: 1,
          zeroStage: 0,
          recompute: 'selective',
          microBatches: 8,
        },
        eff,
      );
    expect(at(5).weightsGb * 2 ** 30).toBeCloseTo((r.before + (r.blocks * 7) / 32) * 2, -3);
    // A divisor keeps the even split.
    expect(at(4).weightsGb * 2 ** 30).toBeCloseTo((r.before + r.blocks / 4) * 2, -3);
    expect(at(5).totalGb).toBeGreaterThan(at(6).totalGb);
  });

  it('a pipeline stage holds min(micro-batches, stages) micro-batches of its 1/PP of the layers (1F1B)', () => {
    const act = (pipelineParallel: number, microBatches: number) =>
      shardedMemoryPerGpu(
        llama,
        costOf(llama),
        'BF16',
        1,
        {
          tensorParallel: 1,
          pipelineParallel,
          dataParallel: 1,
          zeroStage: 0,
          recompute: 'selective',
          microBatches,
        },
        eff,
      ).activationsGb;
    // The first stage (the fuller one here) holds the embeddings' saved tensors for every micro-batch
    // in flight; the output layer's and the loss's are on the last stage.
    const p = activationProfile(costOf(llama), 'BF16', 1, 'selective', eff.memory);
    const blocks = p.savedBytes - p.savedBeforeBlocksBytes - p.savedAfterBlocksBytes;
    expect(p.savedAfterBlocksBytes).toBeGreaterThan(0);
    expect(act(4, 16) * 2 ** 30).toBeCloseTo(blocks + 4 * p.savedBeforeBlocksBytes, 0);
    expect(act(4, 2) * 2 ** 30).toBeCloseTo(blocks / 2 + 2 * p.savedBeforeBlocksBytes, 0);
    expect(act(1, 1) * 2 ** 30).toBeCloseTo(p.savedBytes, 0);
  });
});

describe('time', () => {
  it('the pipeline bubble is (PP - 1)/(m + PP - 1) of the pipelined compute', () => {
    for (const [pp, m] of [
      [2, 8],
      [4, 16],
      [8, 8],
    ]) {
      const p = predict(
        base({
          gpusPerNode: 8,
          gradAccumSteps: m,
          parallelism: { ...PLAIN, pipelineParallel: pp, recompute: 'selective' },
        }),
        eff,
      );
      const b = p.breakdown;
      const pipelined = b.forwardMs + b.backwardMs + b.recomputeMs + b.tensorParallelCommMs;
      expect(b.pipelineBubbleMs / (pipelined + b.pipelineBubbleMs)).toBeCloseTo((pp - 1) / (m + pp - 1), 9);
    }
  });

  it("tensor parallelism all-reduces each split pair's output, twice per micro-batch (forward, backward), over the node's link", () => {
    const t = 4;
    const p = predict(base({ parallelism: { ...PLAIN, tensorParallel: t } }), eff);
    const s = parallelStructure(costOf(llama));
    const bytes = s.tpReduceElements * 2; // bf16, batch 1
    // Each all-reduce runs at the bus bandwidth measured for its message size (nccl-tests, 8x A100).
    const link = intraNodeBandwidth(A100, t, eff, 1) * allReduceLinkFraction(A100, bytes / s.tpCollectives);
    const expected = (1e3 * 2 * (((2 * (t - 1)) / t) * bytes)) / link;
    expect(p.breakdown.tensorParallelCommMs).toBeCloseTo(expected, 6);
    // Full recomputation reruns the forward, and its all-reduces.
    const full = predict(base({ parallelism: { ...PLAIN, tensorParallel: t, recompute: 'full' } }), eff);
    expect(full.breakdown.tensorParallelCommMs).toBeCloseTo(1.5 * expected, 6);
    // TP splits each layer's work: forward time falls by about the TP degree.
    const plain = predict(base({ parallelism: { ...PLAIN, recompute: 'selective' } }), eff);
    expect(plain.breakdown.forwardMs / p.breakdown.forwardMs).toBeGreaterThan(3);
    expect(plain.breakdown.forwardMs / p.breakdown.forwardMs).toBeLessThan(4.2);
  });

  it('ZeRO-3 moves 1.5x the data of a data-parallel all-reduce (Rajbhandari et al. 2020, section 7.2.2); ZeRO-1 and 2 the same as it, but for ZeroRedundancyOptimizer', () => {
    // The collectives alone: without the wait for the slowest GPU the data-parallel time also holds.
    const r = (zeroStage: 0 | 1 | 2 | 3, stack?: 'MEGATRON') =>
      predict(
        base({ gpusPerNode: 8, nodes: 2, stack, parallelism: { ...PLAIN, zeroStage, recompute: 'full' } }),
        { ...eff, stragglerCv: 0 },
      ).breakdown.dataParallelCommMs;
    const G = costOf(llama).parameters * 2;
    const allReduce = communicationTime(
      G,
      0,
      A100,
      { gpusPerNode: 8, nodes: 2, interNodeGbps: 400 },
      eff,
    ).totalMs;
    expect(r(0)).toBeCloseTo(allReduce, 6);
    // Megatron's distributed optimizer, and with one micro-batch DeepSpeed's stage 2 (Megatron's
    // stack): a reduce-scatter and a gather after the step.
    expect(r(1, 'MEGATRON')).toBeCloseTo(allReduce, 6);
    expect(r(2, 'MEGATRON')).toBeCloseTo(allReduce, 6);
    // PyTorch's ZeroRedundancyOptimizer (the default stack): DDP's all-reduce, then a broadcast.
    expect(r(1)).toBeCloseTo(1.5 * allReduce, 6);
    // FSDP (ZeRO-3, and ZeRO-2 as SHARD_GRAD_OP on the default stack) gathers and reduce-scatters one
    // transformer block per collective (the unit FSDP shards by), so its latency counts once per
    // block, not once per 25 MB DDP bucket.
    const blocks = parallelStructure(costOf(llama)).blocks;
    expect(blocks).toBeGreaterThan(1);
    const perBlock = communicationTime(
      G,
      0,
      A100,
      { gpusPerNode: 8, nodes: 2, interNodeGbps: 400 },
      eff,
      blocks,
    ).totalMs;
    expect(r(2)).toBeCloseTo(perBlock, 6);
    expect(r(3)).toBeCloseTo(1.5 * perBlock, 6);
    expect(perBlock).toBeLessThan(allReduce);
  });

  it("ZeRO-3 under a pipeline is torchtitan's FSDP: a stage gathers its weights once a step and keeps them, with its fp32 gradients whole", () => {
    const at = (pipelineParallel: number, zeroStage: 0 | 1 | 3, gradAccumSteps: number) =>
      predict(
        base({
          gpusPerNode: 8,
          nodes: 2,
          gradAccumSteps,
          parallelism: { ...PLAIN, pipelineParallel, zeroStage, recompute: 'full' },
        }),
        { ...eff, stragglerCv: 0 },
      );
    // Without a pipeline FSDP gathers and reduce-scatters every micro-batch: twice the micro-batches,
    // twice the data-parallel traffic. Under one, a stage moves its weights and gradients once a step.
    expect(at(1, 3, 8).breakdown.dataParallelCommMs).toBeCloseTo(
      2 * at(1, 3, 4).breakdown.dataParallelCommMs,
      6,
    );
    expect(at(2, 3, 8).breakdown.dataParallelCommMs).toBeCloseTo(at(2, 3, 4).breakdown.dataParallelCommMs, 6);
    expect(at(2, 3, 4).breakdown.dataParallelCommMs).toBeLessThan(at(1, 3, 4).breakdown.dataParallelCommMs);
    // The stage's weights in bf16 and its gradients in fp32, unsharded through the step: more than
    // ZeRO-1 keeps (its bf16 weights and gradients whole, its fp32 states sharded), so a plan gains
    // no memory from it there.
    const stage = (costOf(llama).parameters / 2) * (2 + 4);
    const z3 = at(2, 3, 4).memory,
      z1 = at(2, 1, 4).memory;
    expect(z3.workspaceGb * GIB).toBeGreaterThan(stage);
    expect(z3.totalGb).toBeGreaterThan(z1.totalGb);
  });

  it('the data-parallel group is GPUs / (TP x PP): global batch and throughput count replicas, not GPUs', () => {
    const p = predict(
      base({
        gpusPerNode: 8,
        nodes: 2,
        gradAccumSteps: 16,
        parallelism: { ...PLAIN, tensorParallel: 2, pipelineParallel: 2 },
      }),
      eff,
    );
    expect(p.globalBatch).toBe(1 * 16 * 4);
    expect(p.throughput).toBeCloseTo((64 * 4096) / (p.stepTimeMs / 1e3), 6);
  });
});

describe('against published Megatron-LM runs on A100-80GB (Korthikanti et al. 2022, Table 5)', () => {
  // Iteration times (s) with full recomputation and with sequence parallelism + selective recomputation,
  // the configurations Calculon's validation replays (validation/seqsel/tab5/*.json): float16, micro-batch
  // 4 (22B) or 1, TP 8, data parallel 1. 175B and 530B ran the interleaved schedule (3 virtual stages),
  // whose bubble is a third of 1F1B's: each run is predicted on its own schedule.
  const runs: [string, ModelDef, number, number, number, number, number, [number, number], number][] = [
    // name, model, TP, PP, GPUs, global batch, micro-batch, [full, selective] seconds, virtual stages
    ['22B', megatronGpt('megatron-22b', 48, 6144, 64), 8, 1, 8, 4, 4, [1.42, 1.1], 1],
    ['175B', megatronGpt('megatron-175b', 96, 12288, 96), 8, 8, 64, 64, 1, [18.13, 13.75], 3],
    ['530B', megatronGpt('megatron-530b', 105, 20480, 128), 8, 35, 280, 280, 1, [49.05, 37.83], 3],
    ['1T', megatronGpt('megatron-1t', 128, 25600, 160), 8, 64, 512, 512, 1, [94.42, 71.49], 1],
  ];
  const predicted = (
    model: ModelDef,
    t: number,
    pp: number,
    gpus: number,
    batch: number,
    micro: number,
    recompute: 'full' | 'selective',
    virtualPipelineStages = 1,
    stack?: SoftwareStack,
  ) =>
    predict(
      {
        model,
        gpu: A100,
        precision: 'FP16',
        batchSizePerGpu: micro,
        gpusPerNode: 8,
        nodes: gpus / 8,
        gradAccumSteps: batch / micro / (gpus / (t * pp)),
        interNodeGbps: 1600,
        parallelism: {
          tensorParallel: t,
          pipelineParallel: pp,
          zeroStage: 0,
          recompute,
          ...(virtualPipelineStages > 1 ? { virtualPipelineStages } : {}),
        },
        ...(stack ? { stack } : {}),
      },
      eff,
    );

  it.each(runs)(
    '%s as stock PyTorch: step time within +50% (slower than Megatron ran it) and the full/selective ratio within 5%',
    (_, model, t, pp, gpus, batch, micro, [fullS, selS], v) => {
      const full = predicted(model, t, pp, gpus, batch, micro, 'full', v).stepTimeMs / 1e3;
      const sel = predicted(model, t, pp, gpus, batch, micro, 'selective', v).stepTimeMs / 1e3;
      // Computed (s), full / selective: 22B 1.93 / 1.55, 175B 23.62 / 18.15, 530B 61.32 / 46.73, 1T
      // 119.74 / 90.84, 24-41% over the published times. The default
      // stack (PYTORCH_EAGER) is stock framework code: GEMMs at the fraction of the measured kernel rate
      // fitted on the benchmark rows (0.706 in fp16), attention and elementwise layers unfused.
      for (const [ours, published] of [
        [full, fullS],
        [sel, selS],
      ]) {
        expect(ours / published).toBeGreaterThan(1);
        expect(ours / published).toBeLessThan(1.5);
      }
      expect(full / sel / (fullS / selS)).toBeGreaterThan(0.95);
      expect(full / sel / (fullS / selS)).toBeLessThan(1.05);
      // Everything fits in 80 GB, as it did on Selene.
      expect(predicted(model, t, pp, gpus, batch, micro, 'selective', v).fitsInMemory).toBe(true);
    },
  );

  it.each(runs)(
    '%s as Megatron ran it (MEGATRON stack, its own schedule): step time within 15% and the full/selective ratio within 5%',
    (_, model, t, pp, gpus, batch, micro, [fullS, selS], v) => {
      // Computed (s), full / selective: 22B 1.32 / 1.01, 175B 17.46 / 13.01, 530B 46.66 / 34.98, 1T
      // 91.30 / 68.27: 8% under to 1% over the published times. The stack's effects were fitted on
      // published H100 runs only (llm_train.csv), none of them these A100 runs.
      const full = predicted(model, t, pp, gpus, batch, micro, 'full', v, 'MEGATRON').stepTimeMs / 1e3;
      const sel = predicted(model, t, pp, gpus, batch, micro, 'selective', v, 'MEGATRON').stepTimeMs / 1e3;
      for (const [ours, published] of [
        [full, fullS],
        [sel, selS],
      ]) {
        expect(ours / published).toBeGreaterThan(0.85);
        expect(ours / published).toBeLessThan(1.15);
      }
      expect(full / sel / (fullS / selS)).toBeGreaterThan(0.95);
      expect(full / sel / (fullS / selS)).toBeLessThan(1.05);
    },
  );

  it('memory per GPU against the profiled figures (Korthikanti et al. 2022, Figure 1; the values Calculon validates against)', () => {
    // GiB per GPU, sequence parallelism + selective recomputation: [parameters + optimizer, activations].
    // The last column: virtual pipeline stages. 175B and 530B ran the interleaved schedule with 3
    // (Calculon's validation/seqsel/tab5 configurations), whose first stage holds 1 + (PP - 1)/(PP x 3)
    // times the micro-batches' activations of 1F1B.
    const profiled: [string, ModelDef, number, number, number, number, [number, number], number][] = [
      ['22B', megatronGpt('m22b', 48, 6144, 64), 8, 1, 8, 4, [45.5625, 9.5625], 1],
      ['175B', megatronGpt('gpt3', 96, 12288, 96), 8, 8, 64, 1, [45.5625, 12.3515625], 3],
      ['530B', megatronGpt('t530', 105, 20480, 128), 8, 35, 280, 1, [31.640625, 23.076171875], 3],
      ['1T', megatronGpt('m1t', 128, 25600, 160), 8, 64, 512, 1, [32.958984375, 26.5625], 1],
    ];
    for (const [name, model, t, pp, gpus, micro, [states, activations], v] of profiled) {
      const m = predicted(model, t, pp, gpus, gpus * micro, micro, 'selective', v).memory;
      // Megatron keeps fp32 "main" gradients: 18 bytes per parameter where this BF16/FP16 mode keeps 16.
      // The profile counts a stage's transformer layers only (45.5625 GiB = 18 B x 12 h^2 x 12 layers / 8
      // for 175B); the first stage, whose memory this is, also holds the embeddings.
      const embeddings = (regionParameters(costOf(model), t).before * 16) / 2 ** 30;
      const ours = m.weightsGb + m.gradientsGb + m.masterWeightsGb + m.optimizerStateGb - embeddings;
      expect(Math.abs((ours * 18) / 16 / states - 1), name).toBeLessThan(0.001); // computed: within 0.02%
      // Activations: Table 2's 34sbh/t per layer (the test above) for the first stage's layers and
      // micro-batches in flight, interleaved where the run was: all four within 3% of the profile
      // (without the interleaving, 175B and 530B came out 22-24% under).
      expect(m.activationsGb / activations, name).toBeGreaterThan(0.97);
      expect(m.activationsGb / activations, name).toBeLessThan(1.03);
    }
  });

  it('model FLOPs utilization of GPT-3 175B (published 51.4% with selective recomputation, 64 A100s, 3 virtual stages): 35-50% as stock PyTorch, within 10% of it as Megatron', () => {
    // MFU = model FLOPs (72 B s l h^2 (1 + s/6h + V/12lh), no recomputation counted) / (time x GPUs x 312 TFLOPS).
    const [B, s, l, h, V] = [64, 2048, 96, 12288, 51200];
    const flops = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    const published = flops / (13.75 * 64 * 312e12);
    expect(published).toBeCloseTo(0.514, 3);
    const model = megatronGpt('gpt3-175b', l, h, 96);
    const mfu = (stack?: SoftwareStack) =>
      flops / ((predicted(model, 8, 8, 64, B, 1, 'selective', 3, stack).stepTimeMs / 1e3) * 64 * 312e12);
    // Computed: 38.9% as stock PyTorch (36.5% on 1F1B, whose bubble is three times the interleaved
    // one: 1.89 s against 0.63 s), 54.3% under the MEGATRON stack.
    expect(mfu()).toBeGreaterThan(0.35);
    expect(mfu()).toBeLessThan(0.5);
    expect(mfu('MEGATRON') / published).toBeGreaterThan(0.9);
    expect(mfu('MEGATRON') / published).toBeLessThan(1.1);
  });
});

describe('recommend: Llama-2-7B full fine-tuning on 80 GB GPUs', () => {
  const req: RecommendRequest = {
    model: llama,
    samples: 1e9,
    objective: 'COST',
    gpus: [A100, gpu('H100-SXM5-80GB')],
    precisions: ['BF16', 'AMP_BF16'],
    maxNodes: 2,
    gpusPerNodeChoices: [1, 2, 4, 8],
    batchSizes: [1, 2, 4],
    interNodeGbps: (g) => (g.id.startsWith('H100') ? 3200 : 400),
    limit: 20,
    parallelismSearch: 'auto',
  };

  it('plain data parallelism does not fit; sharded plans do, and say why the rest were rejected', () => {
    const plain = recommend({ ...req, parallelismSearch: 'off' }, eff);
    expect(plain.plans).toEqual([]);
    expect(plain.rejected.map((x) => x.reason)).toEqual(['OUT_OF_MEMORY']);
    const r = recommend(req, eff);
    expect(r.plans.length).toBeGreaterThan(5);
    expect(r.feasible + r.rejected.reduce((n, x) => n + x.count, 0)).toBe(r.evaluated);
    for (const p of r.plans) {
      expect(p.parallelism.dataParallel * p.parallelism.tensorParallel * p.parallelism.pipelineParallel).toBe(
        p.nodes * p.gpusPerNode,
      );
      expect(
        p.parallelism.zeroStage > 0 ||
          p.parallelism.tensorParallel > 1 ||
          p.parallelism.pipelineParallel > 1 ||
          p.parallelism.recompute !== 'none',
      ).toBe(true);
      expect(p.memoryGbPerGpu).toBeLessThanOrEqual(p.gpu.memoryGb);
    }
    // A single GPU cannot hold 16 bytes per parameter of 6.7B parameters, however it recomputes.
    expect(r.plans.every((p) => p.nodes * p.gpusPerNode > 1)).toBe(true);
    expect(r.rejected.find((x) => x.reason === 'OUT_OF_MEMORY')!.count).toBeGreaterThan(0);
  });

  it('each plan is what predict says for its layout', () => {
    for (const p of recommend(req, eff).plans.slice(0, 8)) {
      const d = predictedAtPlan(p, llama, req.samples, eff);
      expect(p.stepTimeMs).toBeCloseTo(d.stepTimeMs, 6);
      expect(p.memoryGbPerGpu).toBeCloseTo(d.memory.totalGb, 9);
      expect(p.totalHours).toBeCloseTo(d.totalHours!, 9);
      expect(d.fitsInMemory).toBe(true);
    }
  });

  it("without a fixed global batch the notes say pipelines ran 4 micro-batches per stage, and how to plan at a recipe's batch", () => {
    const note =
      /^global batch: without globalBatch a pipeline here runs 4 micro-batches per stage, a bubble of \(PP - 1\)\/\(5 PP - 1\) of its compute; a training recipe accumulates to a fixed global batch \(\d+ sequences for this model/;
    expect(recommend(req, eff).notes.some((n) => note.test(n))).toBe(true);
    expect(recommend({ ...req, globalBatch: 64 }, eff).notes.some((n) => note.test(n))).toBe(false);
    // Plain data parallelism searched alone has no pipelines to speak of.
    const gpt2 = { ...req, model: getModel('gpt2_124m')!, parallelismSearch: 'off' as const };
    expect(recommend(gpt2, eff).notes.some((n) => note.test(n))).toBe(false);
  });

  it('with a fixed global batch, every plan reaches it with whole micro-batches per replica', () => {
    const r = recommend({ ...req, globalBatch: 64, limit: 30 }, eff);
    expect(r.plans.length).toBeGreaterThan(0);
    for (const p of r.plans)
      expect(p.batchSizePerGpu * p.gradAccumSteps * p.parallelism.dataParallel).toBe(64);
  });

  it('where plain data parallelism fits but trains above the global batch cap, a layout that splits the model keeps within it', () => {
    // GPT-2 124M fits on one GPU; 8 per GPU on 32 GPUs is a global batch of 256, above a cap of 128.
    const small = {
      ...req,
      model: getModel('gpt2_124m')!,
      gpus: [gpu('H100-SXM5-80GB')],
      precisions: ['BF16' as const],
      batchSizes: [8],
      gpusPerNodeChoices: [8],
      maxNodes: 4,
      maxGlobalBatch: 128,
      objective: 'TIME' as const,
    };
    const plain = recommend({ ...small, parallelismSearch: 'off' }, eff);
    expect(plain.rejected.find((x) => x.reason === 'GLOBAL_BATCH_TOO_LARGE')?.count).toBe(2);
    expect(plain.plans.map((p) => p.nodes)).toEqual([2, 1]);
    const r = recommend(small, eff);
    expect(r.rejected).toEqual([]);
    expect(r.plans.map((p) => p.nodes).sort()).toEqual([1, 2, 3, 4]);
    for (const p of r.plans) {
      const { dataParallel, tensorParallel, pipelineParallel } = p.parallelism;
      expect(p.batchSizePerGpu * p.gradAccumSteps * dataParallel).toBeLessThanOrEqual(128);
      if (p.nodes > 2) expect(tensorParallel * pipelineParallel).toBeGreaterThan(1);
      const d = predictedAtPlan(p, small.model, small.samples, eff);
      expect(p.stepTimeMs).toBeCloseTo(d.stepTimeMs, 6);
      expect(d.fitsInMemory).toBe(true);
    }
    // GPT-2 XL's 25 heads admit no TP, and a pipeline's 4 micro-batches per stage train more per
    // step, not fewer: nothing keeps it within the cap, so it is turned away as plain data parallelism is.
    const xl = { ...small, model: getModel('gpt2_1558m')!, batchSizes: [1], maxGlobalBatch: 8 };
    const gbtl = (q: RecommendRequest) =>
      recommend(q, eff).rejected.find((x) => x.reason === 'GLOBAL_BATCH_TOO_LARGE')?.count;
    expect(gbtl({ ...xl, parallelismSearch: 'off' })).toBe(3);
    expect(gbtl(xl)).toBe(3);
  });

  it('searching every layout never does worse than searching only where plain data parallelism fails', () => {
    const small = {
      ...req,
      model: getModel('gpt2_774m')!,
      gpus: [A100],
      batchSizes: [8],
      precisions: ['BF16' as const],
    };
    const auto = recommend({ ...small, objective: 'TIME' }, eff).plans[0];
    const all = recommend({ ...small, objective: 'TIME', parallelismSearch: 'all' }, eff).plans[0];
    expect(all.totalHours).toBeLessThanOrEqual(auto.totalHours + 1e-9);
  });
});

describe('recommend: pipelines over blocks the stages do not divide', () => {
  it('searches the divisors and the powers of two, up to 64 stages and one block a stage', () => {
    expect(pipelineDegrees(32)).toEqual([1, 2, 4, 8, 16, 32]);
    // DeepSeek-V3's 61 blocks (a prime): only PP 1 and 61 divide them; its published runs used 4 and 8.
    expect(pipelineDegrees(61)).toEqual([1, 2, 4, 8, 16, 32, 61]);
    expect(pipelineDegrees(126)).toEqual([1, 2, 3, 4, 6, 7, 8, 9, 14, 16, 18, 21, 32, 42, 63, 64]);
    expect(pipelineDegrees(3)).toEqual([1, 2, 3]);
  });

  it("DeepSeek-V3 at its published global batch pipelines its 61 blocks unevenly, each plan as predict has it, and plan 1's notes say how to split", () => {
    const model = getModel('deepseek_v3')!;
    const blocks = parallelStructure(costOf(model), model.layers).blocks;
    expect(blocks).toBe(61);
    const req: RecommendRequest = {
      model,
      samples: 1e11,
      objective: 'COST',
      gpus: [gpu('H100-SXM5-80GB')],
      precisions: ['FP8'],
      maxNodes: 128,
      gpusPerNodeChoices: [8],
      batchSizes: [1],
      globalBatch: 8192,
      interNodeGbps: () => 3200,
      stack: 'MEGATRON',
      limit: 5,
      parallelismSearch: 'auto',
    };
    const r = recommend(req, eff);
    const top = r.plans[0];
    const pp = top.parallelism.pipelineParallel;
    expect(pp).toBeGreaterThan(1);
    expect(blocks % pp).not.toBe(0);
    expect(r.notes.join('\n')).toContain(
      `plan 1 splits deepseek_v3's 61 transformer blocks over ${pp} pipeline stages unevenly (${Math.ceil(61 / pp)} on the heaviest)`,
    );
    for (const p of r.plans) {
      const d = predictedAtPlan(p, model, req.samples, eff, 'MEGATRON');
      expect(p.stepTimeMs).toBeCloseTo(d.stepTimeMs, 6);
      expect(p.memoryGbPerGpu).toBeCloseTo(d.memory.totalGb, 9);
      expect(d.fitsInMemory).toBe(true);
    }
  });
});

describe('recommend: interleaved pipelines (model chunks per stage)', () => {
  it('tries chunks of two blocks (one where a stage holds an odd number), on the stacks that interleave', () => {
    const s = { tensorParallelizable: true, blocks: 80 };
    const chunks = (pp: number, interleaved: boolean) =>
      pipelineSchedules(s, interleaved)
        .filter((x) => x.pp === pp)
        .map((x) => x.v);
    // Llama 3 70B's 80 blocks at PP 4: 20 a stage, 10 chunks of two (its published runs used 5 and 20
    // chunks); at PP 16, 5 a stage, 5 chunks of one; at PP 40, 2 a stage, 2 chunks of one.
    expect(chunks(4, true)).toEqual([1, 10]);
    expect(chunks(16, true)).toEqual([1, 5]);
    expect(chunks(40, true)).toEqual([1, 2]);
    expect(chunks(4, false)).toEqual([1]);
    // A stage count that does not divide the blocks (an uneven split) keeps one chunk per stage.
    expect(chunks(32, true)).toEqual([1]);
    expect(chunks(1, true)).toEqual([1]);
    expect(softwareFile().stacks.MEGATRON.interleavedPipeline).toBe(true);
    expect(softwareFile().stacks.PYTORCH_EAGER.interleavedPipeline).toBe(false);
  });

  const model = getModel('llama3_70b')!;
  const blocks = parallelStructure(costOf(model), model.layers).blocks;
  const req: RecommendRequest = {
    model,
    samples: 1e10,
    objective: 'COST',
    gpus: [gpu('H100-SXM5-80GB')],
    precisions: ['BF16'],
    maxNodes: 16,
    gpusPerNodeChoices: [8],
    batchSizes: [1],
    interNodeGbps: () => 3200,
    stack: 'MEGATRON',
    limit: 10,
    parallelismSearch: 'auto',
  };
  const chunksOf = (p: { parallelism: { virtualPipelineStages: number } }) =>
    p.parallelism.virtualPipelineStages;

  it('Llama 3 70B on MEGATRON without a global batch: plan 1 interleaves, is what predict says for it, and is cheaper than the search without chunks finds', () => {
    const r = recommend(req, eff);
    const top = r.plans[0];
    const { pipelineParallel: pp, virtualPipelineStages: v } = top.parallelism;
    expect(pp).toBeGreaterThan(1);
    expect(v).toBeGreaterThan(1);
    expect(blocks % (pp * v)).toBe(0);
    expect(r.notes).toContain(
      `plan 1 interleaves its pipeline: each of its ${pp} stages runs ${v} chunks of ${blocks / (pp * v)} transformer block(s) (Megatron-Core: virtual_pipeline_model_parallel_size ${v}), which divides the bubble by ${v} and sends ${v} times as many activations between stages; on plain 1F1B its time is longer`,
    );
    for (const p of r.plans) {
      const d = predictedAtPlan(p, model, req.samples, eff, 'MEGATRON');
      expect(p.stepTimeMs).toBeCloseTo(d.stepTimeMs, 6);
      expect(p.memoryGbPerGpu).toBeCloseTo(d.memory.totalGb, 9);
      expect(d.fitsInMemory).toBe(true);
    }
    const restore = overrideStackEffects('MEGATRON', { interleavedPipeline: false });
    let plain;
    try {
      plain = recommend(req, eff);
    } finally {
      restore();
    }
    expect(plain.plans.every((p) => chunksOf(p) === 1)).toBe(true);
    // The space with chunks holds the one without: never dearer, and here strictly cheaper.
    expect(top.costUsd!).toBeLessThan(plain.plans[0].costUsd!);
  });

  it('PYTORCH_EAGER keeps one chunk per stage', () => {
    // Over a slower network, where pipelines are among the plans (over 3.2 Tbps ZeRO-3 across the
    // nodes leads on this stack).
    const r = recommend({ ...req, stack: 'PYTORCH_EAGER', interNodeGbps: () => 100 }, eff);
    expect(r.plans.length).toBeGreaterThan(0);
    expect(r.plans.some((p) => p.parallelism.pipelineParallel > 1)).toBe(true);
    expect(r.plans.every((p) => chunksOf(p) === 1)).toBe(true);
    expect(r.notes.join('\n')).not.toMatch(/interleaves its pipeline/);
  });

  it("with a fixed global batch, an interleaved plan's micro-batches come in groups of its stages", () => {
    const r = recommend({ ...req, globalBatch: 96, limit: 40 }, eff);
    const interleaved = r.plans.filter((p) => chunksOf(p) > 1);
    expect(interleaved.length).toBeGreaterThan(0);
    for (const p of interleaved) {
      expect(p.parallelism.microBatches % p.parallelism.pipelineParallel).toBe(0);
      expect(blocks % (p.parallelism.pipelineParallel * chunksOf(p))).toBe(0);
      const d = predictedAtPlan(p, model, req.samples, eff, 'MEGATRON');
      expect(p.stepTimeMs).toBeCloseTo(d.stepTimeMs, 6);
    }
  });
});
