// Hugging Face config.json -> ModelDef (predictor/import/huggingface.ts) against published parameter
// counts, and against the zoo: a config and the zoo entry for the same model give the same layers.
import { describe, expect, it } from 'vitest';
import { fromHuggingFaceConfig, HF_MODEL_TYPES, parseHuggingFaceConfig } from '../predictor/import/index.js';
import { InputError } from '../predictor/input-error.js';
import { modelCost } from '../predictor/layers.js';
import { getModel } from '../predictor/zoo/index.js';
import { HF_CONFIGS } from './import-fixtures.js';

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
});

describe('bad configs are refused, naming the field and what is allowed', () => {
  const f = 'workload.customModel.huggingFaceConfig';
  it.each([
    ['not json', /is not JSON/],
    ['[1, 2]', /must be a JSON object/],
    ['{}', /no "model_type"; supported: gpt2, gpt_neo/],
    ['{"model_type": "mixtral"}', /"mixtral" is not supported; supported: .*llama/],
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
