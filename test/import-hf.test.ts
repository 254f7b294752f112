// Hugging Face config.json -> ModelDef (predictor/import/huggingface.ts) against published parameter
// counts, and against the zoo: a config and the zoo entry for the same model give the same layers.
import { describe, expect, it } from 'vitest';
import { fromHuggingFaceConfig, HF_MODEL_TYPES, parseHuggingFaceConfig } from '../predictor/import/index.js';
import { InputError } from '../predictor/input-error.js';
import { modelCost } from '../predictor/layers.js';
import { llmModel } from '../predictor/llm.js';
import { parallelStructure } from '../predictor/parallel.js';
import { activeParameters } from './active-parameters.js';
import type { ModelDef } from '../predictor/types.js';
import { getModel } from '../predictor/zoo/index.js';
import { loadLlmArchitectures } from '../seeds/llm.js';
import { HF_CONFIGS } from './import-fixtures.js';

/** `config` is refused as customModel.huggingFaceConfig, with a message matching `message`. */
function expectRefused(config: Record<string, unknown>, message: RegExp) {
  try {
    fromHuggingFaceConfig(config, { field: 'customModel.huggingFaceConfig' });
    expect.unreachable();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).field).toBe('customModel.huggingFaceConfig');
    expect((e as InputError).message).toMatch(message);
  }
}

const params = (cfg: object, seqLen?: number) =>
  modelCost(fromHuggingFaceConfig(cfg, { seqLen }).model).parameters;

describe('parameter counts of published models', () => {
  it.each(HF_CONFIGS)('$id', ({ config, published, tolerance, source }) => {
    const p = params(config);
    const rel = Math.abs(p / published - 1);
    expect(rel, `${source}: computed ${p}`).toBeLessThanOrEqual(tolerance);
  });

  it('covers every supported model_type', () => {
    const types = new Set(HF_CONFIGS.map((c) => c.config.model_type));
    for (const t of HF_MODEL_TYPES) expect(types, t).toContain(t);
  });
});

describe('a config builds what the zoo builds for the same model', () => {
  it.each([
    ['gpt2', 'gpt2_124m', {}],
    ['meta-llama/Llama-2-7b-hf', 'llama2_7b', {}],
    ['meta-llama/Llama-2-70b-hf', 'llama2_70b', {}],
    // The zoo trains ViT with dropout (DLE); the published config has hidden_dropout_prob 0.
    ['google/vit-base-patch16-224', 'vit_b16', { hidden_dropout_prob: 0.1 }],
  ])('%s = zoo %s: same parameters, FLOPs and activations per sample', (hf, zooId, over) => {
    const zoo = getModel(zooId)!;
    const m = fromHuggingFaceConfig(
      { ...HF_CONFIGS.find((c) => c.id === hf)!.config, ...over },
      { seqLen: zoo.seqLen ?? zoo.imageSize },
    ).model;
    const a = modelCost(m),
      b = modelCost(zoo);
    expect(a.parameters).toBe(b.parameters);
    expect(a.forwardFlops).toBeCloseTo(b.forwardFlops, -3);
    expect(a.activationElements).toBe(b.activationElements);
    expect(m.throughputUnit).toBe(zoo.throughputUnit);
  });
});

describe('mixture-of-experts configs', () => {
  const cfg = (id: string) => HF_CONFIGS.find((c) => c.id === id)!.config;

  it.each([
    ['Qwen/Qwen3-30B-A3B', 'Qwen3-30B-A3B', {}],
    // NeMo's Mixtral config class leaves the vocabulary to the tokenizer; the HF config gives 32000.
    ['mistralai/Mixtral-8x7B-v0.1', 'Mixtral-8x7B', { vocab: 32000 }],
    // Latent attention, 3 dense layers, 256 experts and a shared one.
    ['deepseek-ai/DeepSeek-V3', 'DeepSeek-V3', {}],
  ])(
    '%s builds what the architecture row of llm_models.csv (%s, NeMo) builds: same parameters, FLOPs and activations',
    (hf, row, over) => {
      const fromConfig = fromHuggingFaceConfig(cfg(hf), { seqLen: 4096 }).model;
      const arch = { ...loadLlmArchitectures().find((a) => a.model === row)!, ...over };
      const fromRow = llmModel(arch, 4096) as ModelDef;
      expect(typeof fromRow).toBe('object');
      const a = modelCost(fromConfig),
        b = modelCost(fromRow);
      expect(a.parameters).toBe(b.parameters);
      expect(a.forwardFlops).toBe(b.forwardFlops);
      expect(a.activationElements).toBe(b.activationElements);
      expect(parallelStructure(a, fromConfig.layers)).toEqual(parallelStructure(b, fromRow.layers));
    },
  );

  it.each([
    // Model cards: activated parameters per token (Qwen counts the embeddings in).
    ['Qwen/Qwen3-30B-A3B', 3.3e9, 128, 48],
    ['mistralai/Mixtral-8x7B-v0.1', 12.9e9, 8, 32],
    ['Qwen/Qwen1.5-MoE-A2.7B', 2.7e9, 60, 24],
  ])(
    '%s: a token passes top-k of the experts, the published active parameters',
    (id, active, experts, layers) => {
      const c = cfg(id);
      const m = fromHuggingFaceConfig(c).model;
      const cost = modelCost(m);
      const s = parallelStructure(cost, m.layers);
      expect(s.experts).toBe(experts);
      expect(s.moeLayers).toBe(layers);
      const topK = c.num_experts_per_tok as number;
      const activeParams = activeParameters(cost, topK);
      expect(Math.abs(activeParams / active - 1)).toBeLessThan(0.05);
    },
  );

  it("Qwen's mlp_only_layers keep the first layers dense: their experts become one dense MLP of intermediate_size", () => {
    const base = cfg('Qwen/Qwen3-30B-A3B');
    const all = fromHuggingFaceConfig(base).model;
    const two = fromHuggingFaceConfig({ ...base, mlp_only_layers: [1, 0] }).model;
    const s = parallelStructure(modelCost(two), two.layers);
    expect(s.moeLayers).toBe(46);
    // Each dense layer: 128 x 3 x 2048 x 768 expert weights and a 2048 x 128 router out, 3 x 2048 x 6144 in.
    expect(modelCost(all).parameters - modelCost(two).parameters).toBe(
      2 * (128 * 3 * 2048 * 768 + 2048 * 128 - 3 * 2048 * 6144),
    );
  });

  it('Qwen2-MoE: a shared expert beside the routed ones, Q/K/V biases, and a note on its gate', () => {
    const r = fromHuggingFaceConfig(cfg('Qwen/Qwen1.5-MoE-A2.7B'));
    const names = r.model.layers.map((l) => l.name ?? '');
    expect(names.some((n) => n.startsWith('moe.shared'))).toBe(true);
    expect(r.notes.join(' ')).toMatch(/shared expert is costed without its sigmoid gate/);
    const none = fromHuggingFaceConfig({
      ...cfg('Qwen/Qwen1.5-MoE-A2.7B'),
      shared_expert_intermediate_size: 0,
    });
    expect(none.model.layers.some((l) => (l.name ?? '').startsWith('moe.shared'))).toBe(false);
    expect(modelCost(r.model).parameters - modelCost(none.model).parameters).toBe(24 * 3 * 2048 * 5632);
  });

  it.each([
    [
      { decoder_sparse_step: 2 },
      /decoder_sparse_step 2 and mlp_only_layers \[\] interleave dense and expert layers/,
    ],
    [{ mlp_only_layers: [3] }, /interleave dense and expert layers; only dense layers first/],
    [{ mlp_only_layers: [48] }, /"mlp_only_layers" must be a list of layer indices from 0 to 47/],
    [{ mlp_only_layers: 'all' }, /"mlp_only_layers" must be a list of layer indices/],
    [{ num_experts: 1 }, /"num_experts" must be at least 2 for a mixture of experts/],
    [{ num_experts: 5000 }, /"num_experts" must be an integer from 1 to 4096/],
    [{ num_experts_per_tok: 200 }, /num_experts_per_tok \(200\) is more than the 128 experts of a layer/],
  ])('a layout the builder cannot express is refused with the reason: %j', (over, message) => {
    expectRefused({ ...cfg('Qwen/Qwen3-30B-A3B'), ...over }, message);
  });

  it('a sparse step larger than the model leaves every layer dense, and says so', () => {
    const r = fromHuggingFaceConfig({
      ...cfg('Qwen/Qwen3-30B-A3B'),
      num_hidden_layers: 2,
      decoder_sparse_step: 4,
    });
    expect(parallelStructure(modelCost(r.model), r.model.layers).experts).toBeNull();
    expect(r.notes.join(' ')).toMatch(/leave no layer with experts/);
  });
});

describe('DeepSeek configs: latent attention and DeepSeekMoE', () => {
  const v3 = HF_CONFIGS.find((c) => c.id === 'deepseek-ai/DeepSeek-V3')!.config;
  const lite = HF_CONFIGS.find((c) => c.id === 'deepseek-ai/DeepSeek-V2-Lite')!.config;

  it.each([
    // DeepSeek counts activated parameters without the input embedding table: DeepSeek-V3's
    // README_WEIGHTS.md gives 36.6B "including 0.9B for the output Head"; DeepSeek-V2-Lite's card 2.4B.
    ['deepseek-ai/DeepSeek-V3', 36.6e9, 256, 58],
    ['deepseek-ai/DeepSeek-V2-Lite', 2.4e9, 64, 26],
  ])(
    '%s: dense leading layers, then top-k of the routed experts and the shared ones in every layer',
    (id, active, experts, moeLayers) => {
      const c = HF_CONFIGS.find((f) => f.id === id)!.config;
      const m = fromHuggingFaceConfig(c).model;
      const cost = modelCost(m);
      const s = parallelStructure(cost, m.layers);
      expect(s.experts).toBe(experts);
      expect(s.moeLayers).toBe(moeLayers);
      const topK = c.num_experts_per_tok as number;
      const embedding = (c.vocab_size as number) * (c.hidden_size as number);
      const activeParams = activeParameters(cost, topK) - embedding;
      expect(Math.abs(activeParams / active - 1)).toBeLessThan(0.05);
      // The shared experts are one FFN of n_shared_experts x moe_intermediate_size.
      const shared = m.layers.find((l) => l.name === 'moe.shared.up');
      expect(shared).toMatchObject({
        type: 'linear',
        outFeatures: (c.n_shared_experts as number) * (c.moe_intermediate_size as number),
      });
    },
  );

  it('q_lora_rank null (DeepSeek-V2-Lite): the query is one column-parallel projection from the hidden state', () => {
    const m = fromHuggingFaceConfig(lite).model;
    const names = m.layers.map((l) => l.name ?? '');
    expect(names).not.toContain('attn.q_down');
    expect(names).not.toContain('attn.q_norm');
    const q = names.indexOf('attn.q');
    expect(m.layers[q]).toMatchObject({ type: 'linear', inFeatures: 2048, outFeatures: 16 * (128 + 64) });
    const s = parallelStructure(modelCost(m), m.layers);
    expect(s.columnParallel[q]).toBe(true);
    expect(s.columnParallel[names.indexOf('attn.kv_up')]).toBe(true);
    expect(s.tpSplit[names.indexOf('attn.kv_down')]).toBe(false);
    // With a query rank of 1536 instead, each of the 27 layers has the down-projection, its norm and
    // the up-projection in place of the one projection.
    const ranked = fromHuggingFaceConfig({ ...lite, q_lora_rank: 1536 }).model;
    expect(modelCost(ranked).parameters - modelCost(m).parameters).toBe(
      27 * (2048 * 1536 + 1536 + 1536 * 3072 - 2048 * 3072),
    );
  });

  it("says what is not modelled: DeepSeek-V3's multi-token prediction, group-limited routing, the router's bias", () => {
    const notes = fromHuggingFaceConfig(v3).notes.join(' ');
    expect(notes).toMatch(/num_nextn_predict_layers 1: multi-token prediction is not modelled/);
    expect(notes).toMatch(/group-limited routing \(n_group 8, topk_group\) is not modelled/);
    expect(notes).toMatch(/score-correction bias/);
    // DeepSeek-V2-Lite has none of them.
    expect(fromHuggingFaceConfig(lite).notes.join(' ')).not.toMatch(
      /multi-token|group-limited|score-correction/,
    );
  });

  it("deepseek_v3 alone is DeepSeek-V3 (transformers' DeepseekV3Config defaults), and says so; deepseek_v2 has no defaults to take", () => {
    const bare = fromHuggingFaceConfig({ model_type: 'deepseek_v3' });
    expect(modelCost(bare.model).parameters).toBe(modelCost(fromHuggingFaceConfig(v3).model).parameters);
    expect(bare.notes.join(' ')).toMatch(/deepseek_v3's Hugging Face defaults were used: hidden_size 7168/);
    expect(() => fromHuggingFaceConfig({ model_type: 'deepseek_v2' })).toThrow(/config lacks "hidden_size"/);
  });

  it('a dense DeepSeek (no routed experts, or every layer dense) keeps the MLP of intermediate_size, and says so', () => {
    for (const over of [{ n_routed_experts: null }, { first_k_dense_replace: 27 }]) {
      const r = fromHuggingFaceConfig({ ...lite, ...over });
      expect(parallelStructure(modelCost(r.model), r.model.layers).experts).toBeNull();
      expect(r.notes.join(' ')).toMatch(/every layer (with|keeps) the (dense )?MLP/);
    }
  });

  it.each([
    [
      { moe_layer_freq: 2 },
      /moe_layer_freq 2 puts experts only in the layers i >= first_k_dense_replace \(3\) with i % 2 == 0, so dense and expert layers interleave/,
    ],
    [{ first_k_dense_replace: 62 }, /"first_k_dense_replace" must be an integer from 0 to 61 \(got 62\)/],
    [{ n_routed_experts: 1 }, /"n_routed_experts" must be at least 2 for a mixture of experts/],
    [{ num_experts_per_tok: 300 }, /num_experts_per_tok \(300\) is more than the 256 experts of a layer/],
    [{ q_lora_rank: 0 }, /"q_lora_rank" must be an integer from 1/],
    [{ kv_lora_rank: '512' }, /"kv_lora_rank" must be an integer from 1 .* \(got "512"\)/],
    [{ n_shared_experts: -1 }, /"n_shared_experts" must be an integer from 0/],
  ])('a DeepSeek-V3 config the builder cannot take is refused with the reason: %j', (over, message) => {
    expectRefused({ ...v3, ...over }, message);
  });
});

describe('gpt-oss configs: windowed attention on every other layer, biased experts', () => {
  const cfg = (id: string) => HF_CONFIGS.find((c) => c.id === id)!.config;
  const row = (model: string) => loadLlmArchitectures().find((a) => a.model === model)!;

  it.each([
    // OpenAI's model card (arXiv:2508.10925) Table 1 counts the active parameters without the
    // embedding table (the unembedding is in).
    ['openai/gpt-oss-120b', 5.13e9, 128, 36],
    ['openai/gpt-oss-20b', 3.61e9, 32, 24],
  ])(
    '%s: top-4 of the experts in every layer, the published active parameters',
    (id, active, experts, layers) => {
      const c = cfg(id);
      const m = fromHuggingFaceConfig(c).model;
      const cost = modelCost(m);
      const s = parallelStructure(cost, m.layers);
      expect(s.experts).toBe(experts);
      expect(s.moeLayers).toBe(layers);
      expect(s.blocks).toBe(layers);
      const embedding = (c.vocab_size as number) * (c.hidden_size as number);
      const activeParams = activeParameters(cost, 4) - embedding;
      expect(Math.abs(activeParams / active - 1)).toBeLessThan(0.03);
    },
  );

  it.each([
    ['openai/gpt-oss-120b', 'gpt-oss-120b', 36],
    ['openai/gpt-oss-20b', 'gpt-oss-20b', 24],
  ])(
    '%s builds exactly what its llm_models.csv row (%s) builds: the same layers, parameters and FLOPs, half its layers seeing 128 keys',
    (id, model, layers) => {
      const imported = fromHuggingFaceConfig(cfg(id), { seqLen: 4096 }).model;
      const fromRow = llmModel(row(model), 4096) as ModelDef;
      // The row's window and biases come from measurements/llm_models_extra.json (NeMo's GPTOSSConfig
      // window_size, window_attn_skip_freq 2, add_bias_linear), the config's from sliding_window,
      // layer_types and attention_bias: layer for layer the same decoder. Only the code differs:
      // transformers' q, k and v are three linears (projections), Megatron's linear_qkv one.
      const oneProjection = (ls: ModelDef['layers']) => ls.map((l) => ({ ...l, projections: undefined }));
      expect(imported.layers.find((l) => l.name === 'attn.qkv')).toMatchObject({ projections: 3 });
      expect(oneProjection(fromRow.layers)).toEqual(oneProjection(imported.layers));
      const [a, b] = [modelCost(imported), modelCost(fromRow)];
      expect(b.parameters).toBe(a.parameters);
      expect(b.forwardFlops).toBe(a.forwardFlops);
      // The attention score GEMMs: half the layers over 128 keys, the others over the whole 4,096.
      const spans = fromRow.layers.flatMap((l) =>
        l.type === 'matmul' && l.name?.endsWith('.scores') ? Array<number>(l.count ?? 1).fill(l.n) : [],
      );
      expect(spans.filter((n) => n === 128)).toHaveLength(layers / 2);
      expect(spans.filter((n) => n === 4096)).toHaveLength(layers / 2);
      // Every layer at full attention (what the row built before the window): more FLOPs, the same parameters.
      const full = modelCost(
        fromHuggingFaceConfig(
          { ...cfg(id), layer_types: Array<string>(layers).fill('full_attention') },
          { seqLen: 4096 },
        ).model,
      );
      expect(full.parameters).toBe(b.parameters);
      expect(b.forwardFlops).toBeLessThan(0.95 * full.forwardFlops);
    },
  );

  it('layer_types says how many layers are windowed; without it every other one is, as transformers defaults', () => {
    const c = cfg('openai/gpt-oss-20b');
    const flops = (over: object) =>
      modelCost(fromHuggingFaceConfig({ ...c, ...over }, { seqLen: 4096 }).model).forwardFlops;
    const alternating = flops({});
    const allSliding = flops({ layer_types: Array<string>(24).fill('sliding_attention') });
    const allFull = flops({ layer_types: Array<string>(24).fill('full_attention') });
    expect(allSliding).toBeLessThan(alternating);
    expect(alternating).toBeLessThan(allFull);
    // Cost does not depend on which layers are windowed, only on how many.
    const firstHalf = Array.from({ length: 24 }, (_, i) => (i < 12 ? 'sliding_attention' : 'full_attention'));
    expect(flops({ layer_types: firstHalf })).toBe(alternating);
    const { layer_types: _, ...withoutTypes } = c;
    const bare = fromHuggingFaceConfig(withoutTypes, { seqLen: 4096 });
    expect(modelCost(bare.model).forwardFlops).toBe(alternating);
    expect(bare.notes.join(' ')).toMatch(/no layer_types: every other layer windowed/);
    // sliding_window null: the "sliding" layers attend to the whole sequence.
    expect(flops({ sliding_window: null })).toBe(allFull);
    // At 128 tokens the window covers the sequence: no layer is cheaper.
    const short = (over: object) =>
      modelCost(fromHuggingFaceConfig({ ...c, ...over }, { seqLen: 128 }).model).forwardFlops;
    expect(short({})).toBe(short({ layer_types: Array<string>(24).fill('full_attention') }));
  });

  it("gpt_oss alone is gpt-oss-120b (transformers' GptOssConfig defaults), and says so", () => {
    const bare = fromHuggingFaceConfig({ model_type: 'gpt_oss' }, { seqLen: 4096 });
    const full = fromHuggingFaceConfig(cfg('openai/gpt-oss-120b'), { seqLen: 4096 });
    expect(modelCost(bare.model).parameters).toBe(modelCost(full.model).parameters);
    expect(modelCost(bare.model).forwardFlops).toBe(modelCost(full.model).forwardFlops);
    expect(bare.notes.join(' ')).toMatch(/gpt_oss's Hugging Face defaults were used: hidden_size 2880/);
  });

  it('says what is not modelled: the attention sinks (and whether a kernel supports them), the router bias, the clamped SwiGLU', () => {
    const notes = fromHuggingFaceConfig(cfg('openai/gpt-oss-120b')).notes.join(' ');
    expect(notes).toMatch(/attention sinks .* are left out/);
    expect(notes).toMatch(/whether a fused attention kernel supports them .* is not modelled/);
    expect(notes).toMatch(/router's bias/);
    expect(notes).toMatch(/swiglu_limit/);
    expect(notes).toMatch(/sliding-window attention on 18 of the 36 layers/);
    expect(notes).toMatch(/quantization_config/);
  });

  it.each([
    [
      { layer_types: [...Array<string>(23).fill('full_attention'), 'chunked_attention'] },
      /"layer_types" has "chunked_attention"; only sliding_attention and full_attention are modelled/,
    ],
    [
      { layer_types: Array<string>(12).fill('full_attention') },
      /"layer_types" must list one attention kind per layer \(24, num_hidden_layers\)/,
    ],
    [{ layer_types: 'sliding_attention' }, /"layer_types" must list one attention kind per layer/],
    [{ sliding_window: 0 }, /"sliding_window" must be an integer from 1/],
    [{ num_local_experts: 1 }, /"num_local_experts" must be at least 2/],
    [{ num_experts_per_tok: 64 }, /num_experts_per_tok \(64\) is more than the 32 experts of a layer/],
    [{ num_key_value_heads: 7 }, /not a multiple of num_key_value_heads/],
  ])('a gpt-oss config the builder cannot take is refused with the reason: %j', (over, message) => {
    expectRefused({ ...cfg('openai/gpt-oss-20b'), ...over }, message);
  });
});

describe('sequence length', () => {
  const llama = HF_CONFIGS.find((c) => c.id === 'meta-llama/Llama-2-7b-hf')!.config;
  it("defaults to the model's context (capped at 4096) and says so; seqLen overrides it", () => {
    const d = fromHuggingFaceConfig(llama);
    expect(d.model.seqLen).toBe(4096);
    expect(d.notes.join(' ')).toMatch(/sequence length 4096/);
    const short = fromHuggingFaceConfig(llama, { seqLen: 1024 }).model;
    expect(short.seqLen).toBe(1024);
    expect(short.unitsPerBatchElement).toBe(1024);
    // Weights do not depend on it; attention FLOPs grow with its square.
    expect(modelCost(short).parameters).toBe(modelCost(d.model).parameters);
    expect(modelCost(d.model).forwardFlops / modelCost(short).forwardFlops).toBeGreaterThan(4);
  });

  it('beyond the position table is refused, naming the sequence-length field', () => {
    try {
      fromHuggingFaceConfig(HF_CONFIGS[0].config, { seqLen: 2048, seqLenField: 'workload.seqLen' });
      expect.unreachable();
    } catch (e) {
      expect((e as InputError).field).toBe('workload.seqLen');
      expect((e as InputError).message).toMatch(/exceeds the model's 1024-position/);
    }
  });

  it("Mistral's sliding window caps the keys each token attends to", () => {
    const mistral = HF_CONFIGS.find((c) => c.id === 'mistralai/Mistral-7B-v0.1')!.config;
    const windowed = fromHuggingFaceConfig(mistral, { seqLen: 16384 });
    const full = fromHuggingFaceConfig({ ...mistral, sliding_window: null }, { seqLen: 16384 });
    expect(windowed.notes.join(' ')).toMatch(/sliding-window/);
    expect(modelCost(windowed.model).forwardFlops).toBeLessThan(modelCost(full.model).forwardFlops);
    expect(modelCost(windowed.model).parameters).toBe(modelCost(full.model).parameters);
  });

  it('ViT: seqLen is the image size', () => {
    const vit = HF_CONFIGS.find((c) => c.id === 'google/vit-base-patch16-224')!.config;
    const m = fromHuggingFaceConfig(vit, { seqLen: 384 }).model;
    expect(m.imageSize).toBe(384);
    expect(
      modelCost(m).forwardFlops / modelCost(fromHuggingFaceConfig(vit).model).forwardFlops,
    ).toBeGreaterThan(2.9);
  });
});

describe('structure', () => {
  it('grouped-query attention: fewer K/V weights than multi-head at the same width', () => {
    const base = HF_CONFIGS.find((c) => c.id === 'meta-llama/Llama-2-7b-hf')!.config;
    const gqa = params({ ...base, num_key_value_heads: 8 });
    // K and V shrink from 4096 to 1024 outputs in each of 32 layers: 2 x 3072 x 4096 x 32 fewer weights.
    expect(params(base) - gqa).toBe(2 * 3072 * 4096 * 32);
  });

  it('T5 is an encoder-decoder: cross-attention in the decoder, relative position tables, tied or untied head', () => {
    const t5 = fromHuggingFaceConfig(HF_CONFIGS.find((c) => c.id === 't5-small')!.config, {
      seqLen: 128,
    }).model;
    const names = t5.layers.map((l) => l.name ?? '');
    expect(names.filter((n) => n.startsWith('dec.cross_attn')).length).toBeGreaterThan(0);
    expect(names).toContain('enc.relative_position_buckets');
    expect(t5.layers.find((l) => l.name === 'lm_head')).toMatchObject({ tied: true });
  });

  it('BERT heads follow `architectures`', () => {
    const bert = HF_CONFIGS.find((c) => c.id === 'bert-base-uncased')!.config;
    const cls = params({
      ...bert,
      architectures: ['BertForSequenceClassification'],
      id2label: { 0: 'neg', 1: 'pos', 2: 'neutral' },
    });
    // BertModel with pooler (109,482,240) + a 768 x 3 classifier.
    expect(cls).toBe(109_482_240 + 768 * 3 + 3);
  });

  it("BertForMaskedLM's head scores every position, as transformers computes it", () => {
    const bert = HF_CONFIGS.find((c) => c.id === 'bert-base-uncased')!.config;
    const imported = fromHuggingFaceConfig(bert, { seqLen: 128 });
    const layer = (name: string) =>
      imported.model.layers.find((l) => l.name === name) as Record<string, unknown>;
    // The vocabulary GEMM and the loss over its logits run on all 128 tokens, as the encoder's do.
    expect(layer('ffn.up')).toMatchObject({ tokens: 128 });
    expect(layer('mlm.decoder')).toMatchObject({ tokens: 128, outFeatures: 30522 });
    expect(layer('mlm.loss')).toMatchObject({ elements: 128 * 30522 });
    expect(imported.notes.join(' ')).toMatch(
      /masked-LM head over every position, as transformers computes it/,
    );
  });
});

describe('bad configs are refused, naming the field and what is allowed', () => {
  const f = 'workload.customModel.huggingFaceConfig';
  it.each([
    ['not json', /is not JSON/],
    ['[1, 2]', /must be a JSON object/],
    ['{}', /no "model_type"; supported: gpt2, gpt_neo/],
    [
      '{"model_type": "jamba"}',
      /"jamba" is not supported; supported: .*llama.*qwen3_moe, deepseek_v2, deepseek_v3/,
    ],
    [
      '{"model_type": "gpt2", "n_layer": -3, "n_embd": 768, "n_head": 12}',
      /"n_layer" must be an integer from 1/,
    ],
    [
      '{"model_type": "gpt2", "n_layer": 2, "n_embd": 770, "n_head": 12}',
      /n_embd \(770\) is not a multiple of n_head \(12\)/,
    ],
    [
      '{"model_type": "llama", "num_attention_heads": 32, "num_key_value_heads": 5}',
      /not a multiple of num_key_value_heads/,
    ],
  ])('%s', (text, message) => {
    try {
      parseHuggingFaceConfig(text, { field: f });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      expect((e as InputError).field).toBe(f);
      expect((e as InputError).message).toMatch(message);
    }
  });
});
