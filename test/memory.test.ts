// The memory model against what really ran (train.csv), what certainly cannot run, and the
// framework facts it is built from. The figures are the note's (trainplan memory-check).
import { describe, expect, it } from 'vitest';
import {
  getGpu,
  loadEfficiency,
  loadMeasurements,
  MEMORY_FILE,
  parseCsv,
  parseMemoryConstants,
} from '../seeds/catalog.js';
import { memoryPerGpu, plainLayout, savedBytesPerLayer, shardedMemoryPerGpu } from '../predictor/memory.js';
import {
  fitAllocatorFragmentation,
  fitRate,
  fitsWithFragmentation,
  llmCases,
  llmFitChecks,
  llmMemory,
  peakComparisons,
  splitByGpu,
  trainFitChecks,
} from '../predictor/memory-check.js';
import { frameworkFamily, recipeOf } from '../predictor/llm-recipes.js';
import { impossibleRefusals, largestBatches } from '../cli/memory-check.js';
import { BYTES, POLICIES, stockLoopPolicy } from '../predictor/precision.js';
import { costOf, predict } from '../predictor/predict.js';
import { getModel } from '../predictor/zoo/index.js';
import { PRECISIONS } from '../predictor/types.js';
import { readFileSync } from 'node:fs';
import { apolloForTests } from './graphql-client.js';

const GiB = 2 ** 30;
const eff = loadEfficiency();
const checks = trainFitChecks(loadMeasurements(), eff);

describe('memory against configurations that ran (train.csv)', () => {
  it('at least 99% of the configurations with a stated batch are predicted to fit, and at least 97% of every model with 20 or more', () => {
    expect(checks.length).toBeGreaterThan(3000);
    expect(fitRate(checks)).toBeGreaterThanOrEqual(0.99);
    const byModel = new Map<string, typeof checks>();
    for (const c of checks) byModel.set(c.model, [...(byModel.get(c.model) ?? []), c]);
    for (const [model, rows] of byModel)
      if (rows.length >= 20) expect(fitRate(rows), model).toBeGreaterThanOrEqual(0.97);
  });

  it('the allocator fragmentation is what fitting on half the GPUs gives, and the held-out GPUs still fit at 99% or more', () => {
    const { fitting, heldOut } = splitByGpu(checks);
    const gpus = (cs: typeof checks) => new Set(cs.map((c) => c.gpu));
    // A split by whole GPU: no GPU is on both sides.
    expect([...gpus(fitting)].some((g) => gpus(heldOut).has(g))).toBe(false);
    const fitted = fitAllocatorFragmentation(fitting, 0.995);
    expect(eff.memory.allocatorFragmentation).toBe(fitted);
    const rate = heldOut.filter((c) => fitsWithFragmentation(c, fitted)).length / heldOut.length;
    expect(rate).toBeGreaterThanOrEqual(0.99);
    // One step more and the fitting GPUs' configurations fall under 99.5%: Tacotron 2 in AMP at batch
    // 72 no longer fits the RTX 2080 Ti's 10.73 GiB (CUDA's total, seeds/gpu-memory.csv).
    const next = Math.round((fitted + 0.01) * 100) / 100;
    expect(fitting.filter((c) => fitsWithFragmentation(c, next)).length / fitting.length).toBeLessThan(0.995);
    const tacotron = fitting.filter((c) => c.model === 'tacotron2' && c.gpu === 'RTX-2080Ti');
    expect(tacotron.length).toBeGreaterThan(0);
    expect(tacotron.every((c) => fitsWithFragmentation(c, fitted))).toBe(true);
    expect(tacotron.some((c) => !fitsWithFragmentation(c, next))).toBe(true);
  });

  it("the LLM stacks' fragmentation is what the published LLM runs give by the same rule, lower than stock code's; a plan on them uses it", () => {
    const llm = llmFitChecks(llmCases(), eff);
    expect(llm.length).toBeGreaterThan(300);
    expect(eff.memory.frameworkAllocatorFragmentation).toBe(fitAllocatorFragmentation(llm, 0.995));
    // Stock code's fraction would put runs that ran over their GPUs' memory.
    expect(
      llm.filter((c) => fitsWithFragmentation(c, eff.memory.allocatorFragmentation)).length,
    ).toBeLessThan(llm.filter((c) => c.fits).length);
    // The same Llama-2-7B layout: the framework part differs only by the fragmentation of what is allocated.
    const at = (stack?: 'TORCH_COMPILE' | 'PYTORCH_EAGER') =>
      predict(
        {
          model: getModel('llama2_7b')!,
          gpu: getGpu('H100-SXM5-80GB')!,
          precision: 'BF16',
          batchSizePerGpu: 1,
          gpusPerNode: 8,
          nodes: 1,
          interNodeGbps: 100,
          ...(stack ? { stack } : {}),
        },
        eff,
      ).memory;
    const allocated = (m: ReturnType<typeof at>) =>
      m.weightsGb + m.gradientsGb + m.optimizerGb + m.activationsGb + m.workspaceGb;
    const outside = eff.memory.cudaContextGb + eff.memory.ncclBuffersGb;
    const compiled = at('TORCH_COMPILE');
    const eager = at();
    expect(compiled.frameworkGb).toBeCloseTo(
      outside + eff.memory.frameworkAllocatorFragmentation * allocated(compiled),
      6,
    );
    expect(eager.frameworkGb).toBeCloseTo(outside + eff.memory.allocatorFragmentation * allocated(eager), 6);
  });

  it('DeepLearningExamples defaults the old model refused now fit: ResNet-50 AMP at 256 on a 16 GB V100, GPT-2 small AMP at 8 x 1024', () => {
    const v100 = getGpu('V100-SXM2-16GB')!;
    const fitsAt = (model: string, batch: number, precision: 'AMP_FP16') =>
      predict(
        {
          model: getModel(model)!,
          gpu: v100,
          precision,
          batchSizePerGpu: batch,
          gpusPerNode: 1,
          nodes: 1,
          interNodeGbps: 100,
        },
        eff,
      );
    const resnet = fitsAt('resnet50_v1.5', 256, 'AMP_FP16');
    expect(resnet.fitsInMemory).toBe(true);
    expect(resnet.memory.totalGb).toBeGreaterThan(10); // not trivially small either
    expect(fitsAt('gpt2_124m', 8, 'AMP_FP16').fitsInMemory).toBe(true);
  });
});

describe('configurations that certainly cannot fit', () => {
  it.each(impossibleRefusals(eff))('$what: refused', (r) => {
    expect(r.refused).toBe(true);
    expect(r.predictedGb).toBeGreaterThan(r.capacityGb);
  });
});

describe('largest batch that fits', () => {
  it.each(largestBatches(eff, checks))(
    '$model on $gpu in $precision: at least the largest measured batch, and not absurdly more',
    (r) => {
      expect(r.measured).toBeGreaterThan(0);
      expect(r.largest).toBeGreaterThanOrEqual(r.measured);
      expect(r.largest).toBeLessThan(8 * r.measured);
    },
  );
});

describe('what the parts are made of', () => {
  const bert = getModel('bert_large_squad')!;
  const cost = costOf(bert);
  const P = cost.parameters;

  // BERT-large's encoder linears (24 blocks of QKV, output, FC1, FC2 with biases): the weights
  // Transformer Engine keeps FP8 copies of; the embeddings, pooler and heads stay bf16.
  const h = 1024;
  const blockLinears = 24 * (12 * h * h + 9 * h);

  it('weights, gradients and optimizer state follow the precision table for every mode (a new mode needs only its row)', () => {
    // On the default stack, a stock PyTorch loop (its FP8 and FP4 keep the model in fp32), and on a
    // stack that runs Megatron-Core's recipes (the table's rows as they are).
    for (const [precision, stack, policy] of PRECISIONS.flatMap((p) => [
      [p, undefined, stockLoopPolicy(p)] as const,
      [p, 'TORCH_COMPILE', POLICIES[p]] as const,
    ])) {
      const m = memoryPerGpu(bert, cost, precision, 1, false, eff, { stack });
      const copy = policy.forwardWeightCopy;
      const copyBytes = copy ? copy.copies * BYTES[copy.dtype] : 0;
      const copied = copy?.blockLinearsOnly ? blockLinears : P;
      expect(m.weightsGb * GiB, precision).toBeCloseTo(P * BYTES[policy.weights] + copied * copyBytes, -3);
      expect(m.gradientsGb * GiB, precision).toBeCloseTo(P * BYTES[policy.gradients], -3);
      expect(m.optimizerGb * GiB, precision).toBeCloseTo(
        P * ((policy.masterWeights ? 4 : 0) + 2 * BYTES[policy.optimizerState]),
        -3,
      );
    }
  });

  it("FP8 keeps Megatron-Core's Transformer Engine recipe: bf16 weights, an FP8 copy and transpose of the block linears, fp32 gradients, master weights and moments, FP8-saved GEMM inputs", () => {
    const stack = 'TORCH_COMPILE';
    const m = memoryPerGpu(bert, cost, 'FP8', 1, false, eff, { stack });
    expect(m.weightsGb * GiB).toBeCloseTo(2 * P + 2 * blockLinears, -3);
    expect((m.gradientsGb * GiB) / P).toBeCloseTo(4, 6);
    expect((m.optimizerGb * GiB) / P).toBeCloseTo(4 + 8, 6);
    expect(memoryPerGpu(bert, cost, 'FP8', 8, false, eff, { stack }).activationsGb).toBeLessThan(
      memoryPerGpu(bert, cost, 'AMP_BF16', 8, false, eff, { stack }).activationsGb,
    );
  });

  it('FP8 in a stock PyTorch loop keeps the model fp32 as AMP does, with the FP8 copies beside it, unless it states master weights', () => {
    // Transformer Engine's Linear under torch.autocast and fp8_autocast over an fp32 model (accelerate,
    // the harness): fp32 weights and gradients, the moments, no master copy; 2 bytes less per
    // parameter than the recipe above, the FP8 weight and its transpose as there.
    const m = memoryPerGpu(bert, cost, 'FP8', 1, false, eff);
    expect(m.weightsGb * GiB).toBeCloseTo(4 * P + 2 * blockLinears, -3);
    expect((m.gradientsGb * GiB) / P).toBeCloseTo(4, 6);
    expect((m.optimizerGb * GiB) / P).toBeCloseTo(8, 6);
    expect(m.masterWeightsGb).toBe(0);
    // The same activations as the recipe: only the stored states differ.
    expect(memoryPerGpu(bert, cost, 'FP8', 8, false, eff).activationsGb).toBeLessThan(
      memoryPerGpu(bert, cost, 'AMP_BF16', 8, false, eff).activationsGb,
    );
    // A loop that keeps bf16 weights beside an fp32 master says so, and is sized as the recipe.
    const layout = { ...plainLayout(1), stockLoop: true };
    const master = shardedMemoryPerGpu(bert, cost, 'FP8', 1, { ...layout, masterWeights: 'fp32' }, eff);
    expect(master.weightsGb * GiB).toBeCloseTo(2 * P + 2 * blockLinears, -3);
    expect((master.masterWeightsGb * GiB) / P).toBeCloseTo(4, 6);
  });

  it("recipes' storage choices: FP8 parameters (no bf16 copy of the FP8 weights), 16-bit master remainders, no master copy", () => {
    const layout = plainLayout(1);
    const plain = shardedMemoryPerGpu(bert, cost, 'FP8', 1, layout, eff);
    const fp8Parameters = shardedMemoryPerGpu(bert, cost, 'FP8', 1, { ...layout, fp8Parameters: true }, eff);
    expect((plain.weightsGb - fp8Parameters.weightsGb) * GiB).toBeCloseTo(2 * blockLinears, -3);
    const remainders = shardedMemoryPerGpu(
      bert,
      cost,
      'BF16',
      1,
      { ...layout, masterWeights: 'remainders' },
      eff,
    );
    expect((remainders.masterWeightsGb * GiB) / P).toBeCloseTo(2, 6);
    const none = shardedMemoryPerGpu(bert, cost, 'BF16', 1, { ...layout, masterWeights: 'none' }, eff);
    expect(none.masterWeightsGb).toBe(0);
    expect(none.optimizerStateGb).toBeCloseTo(remainders.optimizerStateGb, 9);
  });

  it('eager attention keeps the heads x queries x keys intermediates that fused attention never stores', () => {
    const fused = memoryPerGpu(bert, cost, 'AMP_FP16', 8, false, eff).activationsGb;
    const eager = memoryPerGpu(bert, cost, 'AMP_FP16', 8, false, eff, { attention: 'eager' }).activationsGb;
    // BERT-large at 384: 16 heads x 384 x 384 scores, fp32 softmax + 1-byte mask + fp16 probabilities, 24 layers.
    const scores = 16 * 384 * 384 * 24 * 8;
    expect((eager - fused) * GiB).toBeGreaterThan(scores * (4 + 1 + 2) * 0.95);
  });

  it('the parts add up, and the framework part is the context plus the fitted fraction of the rest', () => {
    const c = eff.memory;
    const m = memoryPerGpu(bert, cost, 'AMP_FP16', 16, true, eff);
    const allocated = m.weightsGb + m.gradientsGb + m.optimizerGb + m.activationsGb + m.workspaceGb;
    expect(m.totalGb).toBeCloseTo(allocated + m.frameworkGb, 9);
    expect(m.frameworkGb).toBeCloseTo(
      c.cudaContextGb + c.ncclBuffersGb + c.allocatorFragmentation * allocated,
      9,
    );
    expect(m.optimizerGb).toBeCloseTo(m.masterWeightsGb + m.optimizerStateGb, 9);
  });

  it('every constant in seeds/memory.json says where it comes from', () => {
    const file = JSON.parse(readFileSync(MEMORY_FILE, 'utf8')) as Record<
      string,
      { value?: unknown; source?: string }
    >;
    for (const [key, entry] of Object.entries(file))
      if (entry && typeof entry === 'object' && 'value' in entry) expect(entry.source, key).toMatch(/.{20}/);
    const parsed = parseMemoryConstants(readFileSync(MEMORY_FILE, 'utf8'));
    expect(parsed.savedForBackward['activation.relu'].output).toBe('pointwise');
  });

  it('refuses a source recipe naming a recompute module the model does not know', () => {
    const file = JSON.parse(readFileSync(MEMORY_FILE, 'utf8')) as {
      sourceRecipes: Record<string, { recomputeModules?: string[] }>;
    };
    const recipe = file.sourceRecipes['mbridge-gpt-oss-120b-h100'];
    expect(recipe.recomputeModules).toEqual(['layernorm', 'moe_act']);
    recipe.recomputeModules = ['layernorm', 'moe'];
    expect(() => parseMemoryConstants(JSON.stringify(file))).toThrow(/"moe" is not one of/);
  });

  /** ResNet-50 at batch 256 on one GPU: a request whose fit the tests below move with the headroom. */
  const resnet50On = (gpuId: string, precision: 'AMP_FP16' | 'AMP_BF16') => ({
    model: getModel('resnet50_v1.5')!,
    gpu: getGpu(gpuId)!,
    precision,
    batchSizePerGpu: 256,
    gpusPerNode: 1,
    nodes: 1,
    interNodeGbps: 100,
  });

  it('memoryHeadroomGb keeps room free: a configuration that fits flips when the headroom exceeds its slack', () => {
    const request = resnet50On('V100-SXM2-16GB', 'AMP_FP16');
    const p = predict(request, eff);
    expect(p.memoryHeadroomGb).toBe(eff.memory.defaultMemoryHeadroomGb);
    const slack = request.gpu.usableMemoryGb - p.memory.totalGb;
    expect(predict({ ...request, memoryHeadroomGb: slack * 0.9 }, eff).fitsInMemory).toBe(true);
    expect(predict({ ...request, memoryHeadroomGb: slack * 1.1 }, eff).fitsInMemory).toBe(false);
  });

  it('a plan fits in what CUDA gives a process, not the label: between the two it does not fit', () => {
    // An "80 GB" H100 gives a process 79.2 GiB (seeds/gpu-memory.csv); a peak (with its headroom) of
    // 79.6 GiB, which the label would hold, does not fit.
    const request = resnet50On('H100-SXM5-80GB', 'AMP_BF16');
    const gpu = request.gpu;
    expect(gpu.usableMemoryGb).toBeLessThan(gpu.memoryGb - 0.5);
    const total = predict(request, eff).memory.totalGb;
    const at = (peakGb: number) =>
      predict({ ...request, memoryHeadroomGb: peakGb - total }, eff).fitsInMemory;
    expect(at((gpu.usableMemoryGb + gpu.memoryGb) / 2)).toBe(false);
    expect(at(gpu.usableMemoryGb - 0.01)).toBe(true);
  });
});

describe('LLM rows (llm_train.csv) that give their layout', () => {
  const cases = llmCases();
  const rows = parseCsv(
    readFileSync(new URL('../seeds/measurements/llm_train.csv', import.meta.url), 'utf8'),
  );
  const byId = new Map(rows.map((r) => [r.id, r]));

  it('every checked row keeps its own layout: TP x PP x CP x DP is its GPU count, FSDP shards over its stated degree', () => {
    const checked = cases.filter((c) => c.decoder);
    expect(checked.length).toBeGreaterThan(250);
    for (const c of checked) {
      const r = byId.get(c.id)!;
      const L = c.layout;
      expect(L.tensorParallel * L.pipelineParallel * (L.contextParallel ?? 1) * L.dataParallel, c.id).toBe(
        Number(r.num_gpus),
      );
      const degree = /FSDP2 shard degree (\d+)/.exec(r.zero_or_fsdp);
      if (degree) expect(L.shardGroup, c.id).toBe(Number(degree[1]) * (L.contextParallel ?? 1));
    }
  });

  it('rows that cannot be checked say why: latent attention, no architecture or vocabulary, GPUs that are not whole replicas', () => {
    for (const c of cases.filter((x) => !x.decoder))
      expect(c.skipped, c.id).toMatch(/latent attention|architecture|vocabulary|layout/);
  });

  it('at least 306 of the 308 checked rows are predicted to fit (99.4%; nothing was fitted on them)', () => {
    const llm = llmFitChecks(
      cases.filter((c) => !c.moe),
      eff,
    );
    expect(llm.length).toBe(308);
    expect(llm.filter((c) => c.fits).length).toBeGreaterThanOrEqual(306);
    expect(llm.filter((c) => c.fits).length / llm.length).toBeGreaterThanOrEqual(0.99);
  });

  it("MaxText's Llama-2-70B rows (TP and PP left empty) are checked at the layout and remat policy their scripts set, and fit as they ran", () => {
    const maxtext = cases.filter((c) => /maxtext\/README_70b/.test(c.sourceFile));
    expect(maxtext.length).toBe(12);
    for (const c of maxtext) {
      expect(byId.get(c.id)!.tp).toBe('');
      expect(c.layout.tensorParallel * c.layout.pipelineParallel).toBe(1);
      expect(c.layout.shardGroup).toBe(Number(/FSDP=(\d+)/.exec(byId.get(c.id)!.zero_or_fsdp)![1]));
    }
    const checks = llmFitChecks(maxtext, eff);
    expect(checks.every((c) => c.fits)).toBe(true);
    // Their scripts' save_qkv_proj is what makes them fit: with nothing recomputed they would not.
    const none = maxtext.map((c) =>
      llmMemory({ ...c, sourceFile: 'unscripted', activationCheckpointing: '' }, eff)!,
    );
    expect(none.every((m) => m.totalGb > 160)).toBe(true);
  });

  it("NeMo 24.07's rows run the 24.07 launcher's scripts: Nemotron-4-340B and Llama-2 SFT with a bf16 Apex optimizer", () => {
    const row = (id: string) => cases.find((c) => c.id === id)!;
    const recipes = eff.memory.sourceRecipes;
    // Nemotron-4-340B (TP8 PP8 VP12, DP 2): bf16 moments, no master copy (optimizer dtype = model dtype).
    const nemotron = row('nemo2407-0010');
    expect(recipeOf(nemotron, recipes)?.name).toBe('nemo2407-nemotron4-340b');
    const n = llmMemory(nemotron, eff)!;
    expect(n.masterWeightsGb).toBe(0);
    // Llama-2-70B SFT (TP4 PP4, DP 1): FP8 block weights, bf16 master copy, bf16 moments, all unsharded;
    // the script's 20 interleaved chunks since the published table gives no VP.
    const sft = row('nemo2407-0015');
    expect(sft.layout.virtualStages).toBeUndefined();
    expect(recipeOf(sft, recipes)?.virtualStages?.['Llama-2-70B']).toBe(20);
    const s = llmMemory(sft, eff)!;
    expect(s.optimizerStateGb / s.masterWeightsGb).toBeCloseTo(2, 6);
    expect(s.gradientsGb / s.masterWeightsGb).toBeCloseTo(1, 6);
    // The same source's pre-training rows and other releases keep their family's recipe.
    expect(recipeOf(row('nemo2407-0007'), recipes)).toBeUndefined();
    expect(recipeOf({ ...sft, software: 'NeMo 24.03 container' }, recipes)).toBeUndefined();
    // Without the scripts' optimizer these rows do not fit: the recipe is what changes the verdict.
    const family = { ...eff, memory: { ...eff.memory, sourceRecipes: [] } };
    expect(llmMemory(nemotron, family)!.totalGb).toBeGreaterThan(80);
    expect(llmMemory(sft, family)!.totalGb).toBeGreaterThan(80);
    expect(n.totalGb).toBeLessThan(80);
    expect(s.totalGb).toBeLessThan(80);
  });

  it("each row keeps its framework's recipe: NeMo 2 FP8 parameters, NeMo 1.x Apex remainders, AutoModel's checkpointed layers", () => {
    const row = (id: string) => cases.find((c) => c.id === id)!;
    // Llama-3-8B FP8 at TP1: the same weights under NeMo 2 (dgxc) and NeMo 1.x (NeMo 24.07).
    const nemo2 = row('dgxc-0177'),
      nemo1 = row('nemo2407-0011');
    expect([frameworkFamily(nemo2), frameworkFamily(nemo1)]).toEqual(['megatron', 'nemo1']);
    const P = costOf(nemo2.decoder!).parameters;
    const m2 = llmMemory(nemo2, eff)!,
      m1 = llmMemory(nemo1, eff)!;
    // No bf16 copy of the FP8 block linears (about 87% of Llama-3-8B's parameters) under NeMo 2.
    expect((m1.weightsGb - m2.weightsGb) * GiB).toBeGreaterThan(2 * 0.85 * P);
    expect((m1.weightsGb - m2.weightsGb) * GiB).toBeLessThan(2 * 0.9 * P);
    // Apex keeps 2 bytes of master weight per parameter, sharded over DP x CP = 8.
    expect((m1.masterWeightsGb * GiB) / (P / 8)).toBeCloseTo(2, 6);
    expect((m2.masterWeightsGb * GiB) / (P / 8)).toBeCloseTo(4, 6);
    // dgxc-benchmarking's Nemotron-4-340B runs NeMo 1.x with a bf16 optimizer state: no master copy
    // in BF16, a bf16 one beside the FP8 weights; bf16 moments (2 + 2 bytes) sharded over DP 2.
    const bf16 = llmMemory(row('dgxc-0091'), eff)!,
      fp8 = llmMemory(row('dgxc-0096'), eff)!;
    const stageParameters = (bf16.weightsGb * GiB) / 2;
    expect(bf16.masterWeightsGb).toBe(0);
    expect((bf16.optimizerStateGb * GiB) / stageParameters).toBeCloseTo(4 / 2, 6);
    expect((fp8.masterWeightsGb * GiB) / stageParameters).toBeCloseTo(2 / 2, 6);
    // AutoModel's Llama-3.1-70B pre-training configuration checkpoints every layer; its table does not say so.
    const automodel = row('automodel-0010');
    expect(automodel.activationCheckpointing).toBe('');
    const unstated = llmMemory(automodel, eff)!;
    const asIfNone = llmMemory({ ...automodel, activationCheckpointing: 'none' }, eff)!;
    expect(unstated.activationsGb).toBeLessThan(asIfNone.activationsGb / 5);
    expect(unstated.masterWeightsGb).toBe(0);
  });

  it('LoRA rows train no base weights: no gradients or optimizer state', () => {
    const lora = cases.find((c) => c.decoder && byId.get(c.id)!.task === 'lora')!;
    const m = llmMemory(lora, eff)!;
    expect(m.gradientsGb).toBe(0);
    expect(m.optimizerGb).toBe(0);
    expect(m.weightsGb).toBeGreaterThan(0);
  });
});

describe('published peak memory (torchtitan, peak reserved by the caching allocator)', () => {
  const rows = parseCsv(
    readFileSync(new URL('../seeds/measurements/llm_train.csv', import.meta.url), 'utf8'),
  );
  const peaks = peakComparisons(llmCases(), eff);

  it('all 18 published peaks within 15% (none of them fitted: the fragmentation comes from train.csv)', () => {
    expect(peaks.length).toBe(18);
    for (const p of peaks) expect(Math.abs(p.ratio - 1), p.id).toBeLessThan(0.15);
  });

  it("torchtitan's DTensor tensor parallelism saves the column-parallel linears' gathered inputs and runs loss_parallel", () => {
    // Llama-3.1-70B, FP8 (torchao float8), TP 8, FSDP 32, local batch 16 x 8192, full AC.
    const row = llmCases().find((c) => c.id === 'torchtitan-0011')!;
    expect(row.layout).toMatchObject({ tensorParallel: 8, gatheredColumnInputs: true, lossParallel: true });
    // Only with TP: the FSDP-only rows keep Megatron's accounting.
    expect(llmCases().find((c) => c.id === 'torchtitan-0001')!.layout.gatheredColumnInputs).toBeUndefined();
    const m = llmMemory(row, eff)!;
    const without = (flag: 'gatheredColumnInputs' | 'lossParallel') =>
      llmMemory({ ...row, layout: { ...row.layout, [flag]: false } }, eff)!;
    const tokens = 16 * 8192,
      hidden = 8192,
      vocab = 128256,
      tp = 8;
    // The recomputed block keeps the float8 attention input (wq/wk/wv) and feed-forward input (w1 and
    // w3: one tensor) whole instead of 1/TP of each (QKV, gate, up); the output layer keeps its
    // bf16 input whole (it is not converted to float8).
    const gatheredBytes = tokens * hidden * (1 - 1 / tp + (1 - 2 / tp) + 2 * (1 - 1 / tp));
    expect((m.activationsGb - without('gatheredColumnInputs').activationsGb) * GiB).toBeCloseTo(
      gatheredBytes,
      -6,
    );
    // loss_parallel's backward: three fp32 tensors of the local logits beside the saved ones, not two.
    expect((m.workspaceGb - without('lossParallel').workspaceGb) * GiB).toBeCloseTo(
      ((tokens * vocab) / tp) * BYTES.fp32,
      -6,
    );
  });

  it("torchtitan's loss runs on fp32 logits (pred.float()): its backward tensors are fp32 in a BF16 run too", () => {
    // Llama-3.1-8B, BF16, FSDP 8, local batch 2 x 8192: the loss's two backward tensors of the
    // 2 x 8192 x 128,256 logits in fp32 rather than the BF16 mode's bf16 reduction type.
    const row = llmCases().find((c) => c.id === 'torchtitan-0001')!;
    expect(row.layout.fp32LossGradients).toBe(true);
    const m = llmMemory(row, eff)!;
    const bf16 = llmMemory({ ...row, layout: { ...row.layout, fp32LossGradients: false } }, eff)!;
    expect((m.workspaceGb - bf16.workspaceGb) * GiB).toBeCloseTo(
      eff.memory.backwardGradientTensors * 2 * 8192 * 128256 * (BYTES.fp32 - BYTES.bf16),
      -6,
    );
    // Megatron-Core rows keep the mode's type.
    expect(llmCases().find((c) => c.framework.startsWith('NeMo'))!.layout.fp32LossGradients).toBeUndefined();
  });

  it("an FP8 decoder saves the output layer's input in bf16 (the output layer is not an FP8 GEMM), the block linears' in FP8", () => {
    const llama3 = llmCases().find((c) => c.model === 'Llama-3.1-8B' && c.decoder)!.decoder!;
    const cost = costOf(llama3);
    const saved = savedBytesPerLayer(cost, POLICIES.FP8, 'fused', [], eff.memory);
    const index = (name: string) => cost.layers.findIndex((l) => l.name === name);
    expect(saved[index('lm_head')]).toBe(cost.layers[index('lm_head')].inputElements * BYTES.bf16);
    expect(saved[index('attn.out')]).toBe(cost.layers[index('attn.out')].inputElements * BYTES.fp8);
  });

  it("torchtitan's plain 'selective' is its op-level checkpointing (the train configs' default), between none and full", () => {
    const row = llmCases().find((c) => c.id === 'torchtitan-0001')!;
    expect(rows.find((r) => r.id === 'torchtitan-0001')!.activation_checkpointing).toBe('selective');
    expect(row.layout.recompute).toBe('selective_op');
    // What the row states decides (llm-recipes.ts runRecipe), as each cell would.
    const at = (cell: string) => llmMemory({ ...row, activationCheckpointing: cell }, eff)!.activationsGb;
    expect(at('selective')).toBe(at('selective (op)'));
    expect(at('selective')).toBeLessThan(at('none'));
    expect(at('selective')).toBeGreaterThan(at('full'));
  });

  it("grouped-query attention keeps the K and V the projection wrote, not the heads' broadcast copies", () => {
    const llama3 = llmCases().find((c) => c.model === 'Llama-3.1-8B' && c.decoder)!.decoder!;
    const gqa = memoryPerGpu(llama3, costOf(llama3), 'BF16', 1, false, eff).activationsGb;
    const mha = {
      ...llama3,
      layers: llama3.layers.map((l) =>
        l.name === 'attn.qkv' && l.type === 'linear' ? { ...l, outFeatures: 3 * 4096 } : l,
      ),
    };
    // 32 layers x seq tokens x (q + 2 kv = 6144 vs 12288 elements) x 2 bytes.
    const seq = llama3.seqLen!;
    expect((memoryPerGpu(mha, costOf(mha), 'BF16', 1, false, eff).activationsGb - gqa) * GiB).toBeCloseTo(
      32 * seq * 6144 * 2,
      -6,
    );
  });
});

describe('GraphQL: memory parts, headroom and attention', () => {
  const run = apolloForTests();

  it('predict returns the six parts adding up to memoryGbPerGpu, and names a bad headroom', async () => {
    const r =
      await run(`{ predict(input: { workload: { model: "bert_large_squad", samples: 1e5 }, gpu: "A100-SXM4-80GB",
      batchSizePerGpu: 32, precision: AMP_FP16, attention: EAGER, memoryHeadroomGb: 2 }) {
      memoryGbPerGpu fitsInMemory memoryHeadroomGb
      memory { weightsGb gradientsGb optimizerGb activationsGb workspaceGb frameworkGb totalGb } } }`);
    expect(r.errors).toBeUndefined();
    const p = r.data!.predict;
    const m = p.memory;
    expect(
      m.weightsGb + m.gradientsGb + m.optimizerGb + m.activationsGb + m.workspaceGb + m.frameworkGb,
    ).toBeCloseTo(p.memoryGbPerGpu, 6);
    expect(p.memoryHeadroomGb).toBe(2);
    const bad =
      await run(`{ predict(input: { workload: { model: "bert_large_squad", samples: 1e5 }, gpu: "A100-SXM4-80GB",
      batchSizePerGpu: 32, precision: AMP_FP16, memoryHeadroomGb: -1 }) { fitsInMemory } }`);
    expect(bad.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(bad.errors?.[0].message).toMatch(/memoryHeadroomGb/);
  });

  it('recommend keeps the headroom free on every plan, and drops the plans it would not leave', async () => {
    const query = (
      headroom: number,
    ) => `{ recommend(input: { workload: { model: "resnet50_v1.5", samples: 1e7 },
      gpus: ["V100-SXM2-16GB"], precisions: [AMP_FP16], maxNodes: 1, gpusPerNode: [1], limit: 20,
      memoryHeadroomGb: ${headroom} }) { plans { batchSizePerGpu memoryGbPerGpu } rejected { reason count } } }`;
    const none = (await run(query(0))).data!.recommend;
    const four = (await run(query(4))).data!.recommend;
    for (const p of four.plans) expect(p.memoryGbPerGpu + 4).toBeLessThanOrEqual(16);
    expect(four.plans.length).toBeLessThan(none.plans.length);
    expect(four.rejected.find((x: { reason: string }) => x.reason === 'OUT_OF_MEMORY').count).toBeGreaterThan(
      0,
    );
  });
});
