// Hugging Face config.json -> ModelDef. Each supported `model_type` is translated into the `arch` of
// the zoo builder that already models that family (predictor/zoo/: decoder.ts for GPT-2, GPT-Neo,
// GPT-J, GPT-NeoX, OPT, Llama, Mistral, Qwen2, the mixture-of-experts Mixtral, Qwen2-MoE and
// Qwen3-MoE, DeepSeek-V2/V3 with their latent attention, and gpt-oss with its alternating windowed
// attention; bert.ts; t5.ts; vit.ts) and built by the zoo's own
// modelFromZooEntry, so a config and the zoo entry for the same model give the same layers. Keys and
// defaults follow the transformers library's configuration classes (configuration_<type>.py).
import { createHash } from 'node:crypto';
import { InputError, shownValue } from '../input-error.js';
import type { ModelDef } from '../types.js';
import type { LatentAttentionArch, MoeArch } from '../zoo/decoder.js';
import { modelFromZooEntry } from '../zoo/index.js';
import type { ZooEntry } from '../zoo/spec.js';
import { IMPORT_LIMITS, type ImportedModel, type ImportOptions } from './types.js';

export const HF_MODEL_TYPES = [
  'gpt2',
  'gpt_neo',
  'gptj',
  'gpt_neox',
  'opt',
  'llama',
  'mistral',
  'qwen2',
  'mixtral',
  'qwen2_moe',
  'qwen3_moe',
  'deepseek_v2',
  'deepseek_v3',
  'gpt_oss',
  'bert',
  't5',
  'vit',
] as const;
type HfType = (typeof HF_MODEL_TYPES)[number];
/**
 * The types whose transformers model writes the attention scores to memory by default
 * (config._attn_implementation "eager" in transformers 5.17: GPT-Neo's local attention, GPT-J, and
 * gpt-oss's attention sinks); every other type's calls scaled_dot_product_attention ("sdpa").
 */
const EAGER_ATTENTION: ReadonlySet<HfType> = new Set(['gpt_neo', 'gptj', 'gpt_oss']);
const ALIASES: Record<string, HfType> = {
  'gpt-neo': 'gpt_neo',
  'gpt-j': 'gptj',
  gpt_j: 'gptj',
  'gpt-neox': 'gpt_neox',
  qwen: 'qwen2',
};

type Config = Record<string, unknown>;

/** Reads typed keys of one config, each failure an InputError naming the config key. */
class Reader {
  constructor(
    readonly cfg: Config,
    readonly field: string,
  ) {}

  /** Dimensions the config left out and Hugging Face's defaults for the model type filled in, as "key value". */
  readonly defaulted: string[] = [];

  fail(message: string): never {
    throw new InputError(this.field, message);
  }

  has(key: string): boolean {
    return this.cfg[key] !== undefined && this.cfg[key] !== null;
  }

  /** A positive integer, from the first of `keys` present (or the default). */
  int(keys: string | string[], dflt?: number, max: number = IMPORT_LIMITS.dimension): number {
    const names = Array.isArray(keys) ? keys : [keys];
    const key = names.find((k) => this.has(k));
    if (key === undefined) {
      if (dflt !== undefined) {
        this.defaulted.push(`${names[0]} ${dflt}`);
        return dflt;
      }
      this.fail(`config lacks "${names[0]}"${names.length > 1 ? ` (or ${names.slice(1).join(', ')})` : ''}`);
    }
    const v = this.cfg[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max)
      this.fail(`"${key}" must be an integer from 1 to ${max} (got ${shownValue(v)})`);
    return v;
  }

  /** A whole number that may be 0 (a count of layers or experts), or the default. */
  count(key: string, dflt: number | undefined, max: number): number {
    if (!this.has(key)) {
      if (dflt === undefined) this.fail(`config lacks "${key}"`);
      this.defaulted.push(`${key} ${dflt}`);
      return dflt;
    }
    const v = this.cfg[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max)
      this.fail(`"${key}" must be an integer from 0 to ${max} (got ${shownValue(v)})`);
    return v;
  }

  /** The config sets the key to null (not merely leaves it out). */
  isNull(key: string): boolean {
    return key in this.cfg && this.cfg[key] === null;
  }

  num(key: string, dflt: number): number {
    if (!this.has(key)) return dflt;
    const v = this.cfg[key];
    if (typeof v !== 'number' || !Number.isFinite(v))
      this.fail(`"${key}" must be a number (got ${shownValue(v)})`);
    return v;
  }

  bool(key: string, dflt: boolean): boolean {
    if (!this.has(key)) return dflt;
    const v = this.cfg[key];
    if (typeof v !== 'boolean') this.fail(`"${key}" must be true or false (got ${shownValue(v)})`);
    return v;
  }

  str(key: string, dflt: string): string {
    if (!this.has(key)) return dflt;
    const v = this.cfg[key];
    if (typeof v !== 'string') this.fail(`"${key}" must be a string (got ${shownValue(v)})`);
    return v;
  }
}

/** Parses config.json text (GraphQL passes the text; the CLI reads the file). */
export function parseHuggingFaceConfig(text: string, o: ImportOptions = {}): ImportedModel {
  const field = o.field ?? 'huggingFaceConfig';
  if (text.length > IMPORT_LIMITS.configChars)
    throw new InputError(
      field,
      `is ${text.length} characters; a config.json is at most ${IMPORT_LIMITS.configChars}`,
    );
  let cfg: unknown;
  try {
    cfg = JSON.parse(text);
  } catch (e) {
    throw new InputError(field, `is not JSON: ${(e as Error).message.slice(0, 200)}`);
  }
  return fromHuggingFaceConfig(cfg, o);
}

export function fromHuggingFaceConfig(config: unknown, o: ImportOptions = {}): ImportedModel {
  const field = o.field ?? 'huggingFaceConfig';
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw new InputError(field, 'must be a JSON object (the contents of config.json)');
  const c = new Reader(config as Config, field);
  const raw = c.str('model_type', '').toLowerCase();
  if (!raw) c.fail(`config has no "model_type"; supported: ${HF_MODEL_TYPES.join(', ')}`);
  const type = (HF_MODEL_TYPES as readonly string[]).includes(raw) ? (raw as HfType) : ALIASES[raw];
  if (!type)
    c.fail(
      `model_type "${raw.slice(0, 60)}" is not supported; supported: ${HF_MODEL_TYPES.join(', ')} (or give the model as an ONNX graph or a layer list)`,
    );
  const notes: string[] = [];
  const seqField = o.seqLenField ?? 'seqLen';
  const seqLen = (dflt: number, max: number, what = 'sequence length') => {
    const s = o.seqLen ?? dflt;
    if (!Number.isInteger(s) || s < 1 || s > IMPORT_LIMITS.seqLen)
      throw new InputError(seqField, `must be an integer from 1 to ${IMPORT_LIMITS.seqLen} (got ${s})`);
    if (s > max)
      throw new InputError(
        seqField,
        `${s} exceeds the model's ${max}-position ${what} (${raw}: ${what === 'image size' ? 'image_size' : 'max_position_embeddings'})`,
      );
    if (o.seqLen === undefined) notes.push(`${what} ${s} (the config's default; set seqLen to change it)`);
    return s;
  };
  const built = build(type, c, seqLen, notes);
  // transformers' attention runs q, k and v as separate linears, but for GPT-2's c_attn and
  // GPT-NeoX's query_key_value (test/harness-transformers.test.ts lists each type's modules).
  if (built.entry.family === 'decoder' || built.entry.family === 'vit')
    built.entry.arch = { ...built.entry.arch, separateQkv: !FUSED_QKV.includes(type) };
  // Say which dimensions were not in the config: `{"model_type": "llama"}` alone is Llama-2-7B by
  // Hugging Face's defaults, which is rarely what a client meant to send.
  if (c.defaulted.length)
    notes.push(
      `the config does not give ${c.defaulted.length === 1 ? 'this dimension' : 'these dimensions'}; ${raw}'s Hugging Face defaults were used: ${[...new Set(c.defaulted)].join(', ')}`,
    );
  const hash = createHash('sha1')
    .update(JSON.stringify(config))
    .update(`@${built.entry.seqLen ?? built.entry.imageSize}`)
    .digest('hex')
    .slice(0, 10);
  const nameOrPath = c.str('_name_or_path', '');
  const name = o.name ?? (nameOrPath || `${raw} (Hugging Face config)`);
  const entry: ZooEntry = {
    ...built.entry,
    id: `hf:${type}:${hash}`,
    name,
    optimizer: o.optimizer ?? 'adam',
    source: `Hugging Face config.json (model_type ${raw}${nameOrPath ? `, ${nameOrPath}` : ''}) through the zoo's ${built.entry.family} builder`,
    ...(EAGER_ATTENTION.has(type) ? { attention: 'eager' as const } : {}),
  };
  let model: ModelDef;
  try {
    model = modelFromZooEntry(entry);
  } catch (e) {
    throw new InputError(field, `could not build the model: ${(e as Error).message.slice(0, 300)}`);
  }
  return { model, notes, unsupported: [] };
}

type SeqLen = (dflt: number, max: number, what?: string) => number;
type Built = { entry: Omit<ZooEntry, 'id' | 'name' | 'optimizer' | 'source'> };

/** model_types whose transformers attention computes q, k and v in one linear. */
const FUSED_QKV: readonly HfType[] = ['gpt2', 'gpt_neox'];

// A config says nothing about batch sizes: search micro-batches 1 to 32 (those that do not fit are
// rejected for memory; 1-8 alone left small decoders' faster large batches unsearched).
const lm = (seq: number, arch: Record<string, unknown>, batchSizes = [1, 2, 4, 8, 16, 32]): Built => ({
  entry: {
    family: 'decoder',
    batchElement: 'sequence',
    throughputUnit: 'tokens/s',
    unitsPerBatchElement: 'seqLen',
    seqLen: seq,
    batchSizes,
    arch,
  },
});

/**
 * A GPT-2-family MLP activation (transformers' ACT2FN): relu; gelu_new, the tanh approximation as
 * Python ops (NewGELUActivation, what stock eager code keeps more of); any other GELU as one kernel.
 */
const geluOf = (act: string): 'relu' | 'gelu' | 'gelu_new' =>
  act === 'relu' ? 'relu' : act === 'gelu_new' ? 'gelu_new' : 'gelu';

function divides(c: Reader, what: string, n: number, by: number, byWhat: string) {
  if (n % by !== 0) c.fail(`${what} (${n}) is not a multiple of ${byWhat} (${by})`);
}

type LlamaLike = 'llama' | 'mistral' | 'qwen2' | 'mixtral' | 'qwen2_moe' | 'qwen3_moe';

/**
 * What a Llama-like config that leaves a key out gets. llama, mistral and qwen2 keep the values this
 * importer has always used (Llama-2-7B's: the llama defaults of transformers' LlamaConfig); the
 * mixture-of-experts types take their transformers configuration class's defaults
 * (configuration_mixtral.py, configuration_qwen2_moe.py, configuration_qwen3_moe.py).
 */
const LLAMA_LIKE_DEFAULTS: Record<
  LlamaLike,
  {
    hidden: number;
    heads: number;
    kvHeads?: number;
    layers: number;
    ffn: number;
    vocab: number;
    positions: number;
  }
> = {
  llama: { hidden: 4096, heads: 32, layers: 32, ffn: 11008, vocab: 32000, positions: 2048 },
  mistral: { hidden: 4096, heads: 32, layers: 32, ffn: 11008, vocab: 32000, positions: 32768 },
  qwen2: { hidden: 4096, heads: 32, layers: 32, ffn: 11008, vocab: 32000, positions: 32768 },
  mixtral: { hidden: 4096, heads: 32, kvHeads: 8, layers: 32, ffn: 14336, vocab: 32000, positions: 131072 },
  qwen2_moe: { hidden: 2048, heads: 16, kvHeads: 16, layers: 24, ffn: 5632, vocab: 151936, positions: 32768 },
  qwen3_moe: { hidden: 2048, heads: 32, kvHeads: 4, layers: 24, ffn: 6144, vocab: 151936, positions: 32768 },
};

/**
 * The experts of a mixture-of-experts config (null for the dense types), as the zoo's decoder builds
 * them (zoo/decoder.ts MoeArch: every token through top-k of E gated experts, plus a shared expert
 * where there is one; the first k layers may keep the dense MLP).
 * - mixtral: num_local_experts experts of intermediate_size each, in every layer
 *   (transformers' MixtralSparseMoeBlock).
 * - qwen2_moe, qwen3_moe: num_experts experts of moe_intermediate_size; layer i has experts unless it
 *   is in mlp_only_layers or (i + 1) is not a multiple of decoder_sparse_step, and then keeps a dense
 *   MLP of intermediate_size (Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer). The builder puts dense
 *   layers first, so only a layout of k dense layers followed by expert layers is read; any other is
 *   refused with the reason.
 * - qwen2_moe's shared expert (shared_expert_intermediate_size; 0 = none) is gated by
 *   sigmoid(hidden x 1 linear) per token. The builder's shared expert has no gate: the gate's
 *   `hidden` weights a layer and its sigmoid are left out (under 0.001% of Qwen1.5-MoE-A2.7B's
 *   parameters), and a note says so.
 */
function moeOf(type: LlamaLike, c: Reader, layers: number, notes: string[]): MoeArch | undefined {
  if (type !== 'mixtral' && type !== 'qwen2_moe' && type !== 'qwen3_moe') return undefined;
  const dflt = {
    mixtral: { experts: 8, topK: 2, ffn: 14336 },
    qwen2_moe: { experts: 60, topK: 4, ffn: 1408 },
    qwen3_moe: { experts: 128, topK: 8, ffn: 768 },
  }[type];
  const expertsKey = type === 'mixtral' ? 'num_local_experts' : 'num_experts';
  const experts = c.int(expertsKey, dflt.experts, IMPORT_LIMITS.experts);
  if (experts < 2) c.fail(`"${expertsKey}" must be at least 2 for a mixture of experts (got ${experts})`);
  const topK = c.int('num_experts_per_tok', dflt.topK);
  if (topK > experts)
    c.fail(`num_experts_per_tok (${topK}) is more than the ${experts} experts of a layer (${expertsKey})`);
  const ffn =
    type === 'mixtral' ? c.int('intermediate_size', dflt.ffn) : c.int('moe_intermediate_size', dflt.ffn);
  if (type === 'mixtral') return { experts, topK, ffn };
  const denseLayers = denseLayersOf(c, layers);
  if (denseLayers === layers)
    notes.push(
      'decoder_sparse_step and mlp_only_layers leave no layer with experts: every layer keeps the dense MLP (intermediate_size)',
    );
  if (type === 'qwen3_moe')
    notes.push("Qwen3's per-head RMSNorm of queries and keys is not costed (2 x head_dim weights a layer)");
  const shared =
    type === 'qwen2_moe' && !(c.cfg.shared_expert_intermediate_size === 0)
      ? c.int('shared_expert_intermediate_size', 5632)
      : 0;
  if (shared > 0)
    notes.push(
      "Qwen2-MoE's shared expert is costed without its sigmoid gate (a hidden x 1 linear a layer, under 0.001% of the FLOPs)",
    );
  return {
    experts,
    topK,
    ffn,
    ...(shared > 0 ? { sharedFfn: shared } : {}),
    ...(denseLayers > 0 ? { denseLayers } : {}),
  };
}

/** Qwen-MoE: how many leading layers keep the dense MLP, or why the layout cannot be built. */
function denseLayersOf(c: Reader, layers: number): number {
  const step = c.int('decoder_sparse_step', 1);
  const raw = c.cfg.mlp_only_layers ?? [];
  if (
    !Array.isArray(raw) ||
    raw.length > layers ||
    !raw.every((i) => typeof i === 'number' && Number.isInteger(i) && i >= 0 && i < layers)
  )
    c.fail(
      `"mlp_only_layers" must be a list of layer indices from 0 to ${layers - 1} (got ${shownValue(raw)})`,
    );
  const dense = new Set(raw as number[]);
  const sparse = Array.from({ length: layers }, (_, i) => !dense.has(i) && (i + 1) % step === 0);
  const first = sparse.indexOf(true);
  const k = first < 0 ? layers : first;
  if (sparse.slice(k).some((s) => !s))
    c.fail(
      `decoder_sparse_step ${step} and mlp_only_layers ${JSON.stringify(raw).slice(0, 80)} interleave dense and expert layers; only dense layers first and experts in every layer after them are modelled (decoder_sparse_step 1, mlp_only_layers [0, ..., k - 1])`,
    );
  return k;
}

/** deepseek_v3's default for a key (transformers' DeepseekV3Config: DeepSeek-V3's sizes); deepseek_v2 has none. */
const v3Default = (v3: boolean, value: number): number | undefined => (v3 ? value : undefined);

/**
 * DeepSeek-V2 / V3 (deepseek_v2, deepseek_v3): multi-head latent attention and DeepSeekMoE, as the
 * modeling_deepseek.py shipped with their checkpoints builds them. Layer i has experts when
 * n_routed_experts is set, i >= first_k_dense_replace and i % moe_layer_freq == 0; otherwise a dense
 * MLP of intermediate_size. Experts are moe_intermediate_size wide; the n_shared_experts shared experts
 * every token passes are one FFN of n_shared_experts x moe_intermediate_size (as Megatron-Core's
 * moe_shared_expert_intermediate_size is set). q_lora_rank null (DeepSeek-V2-Lite) projects the query
 * straight from the hidden state. deepseek_v3 takes transformers' DeepseekV3Config defaults (which are
 * DeepSeek-V3's own sizes); deepseek_v2 takes none, since DeepSeek's configuration_deepseek.py and
 * transformers' DeepseekV2Config disagree on them (n_routed_experts None or 64, 30 or 32 layers).
 */
function deepseek(type: 'deepseek_v2' | 'deepseek_v3', c: Reader, seqLen: SeqLen, notes: string[]): Built {
  const v3 = type === 'deepseek_v3';
  const dflt = (v: number) => v3Default(v3, v);
  const d = c.int('hidden_size', dflt(7168)),
    heads = c.int('num_attention_heads', dflt(128)),
    layers = c.int('num_hidden_layers', dflt(61));
  const positions = c.int('max_position_embeddings', dflt(4096));
  const seq = seqLen(Math.min(positions, 4096), positions);
  const act = c.str('hidden_act', 'silu');
  if (act !== 'silu' && act !== 'swish')
    notes.push(`hidden_act "${act}" is costed as SiLU (same memory traffic, similar FLOPs)`);
  if (c.bool('attention_bias', false))
    notes.push("attention_bias: the latent attention's projection biases are not costed");
  const latentAttention: LatentAttentionArch = {
    ...(c.isNull('q_lora_rank') ? {} : { qLoraRank: c.int('q_lora_rank', dflt(1536)) }),
    kvLoraRank: c.int('kv_lora_rank', dflt(512)),
    qkHeadDim: c.int('qk_nope_head_dim', dflt(128)),
    qkRopeHeadDim: c.int('qk_rope_head_dim', dflt(64)),
    vHeadDim: c.int('v_head_dim', dflt(128)),
  };
  const moe = deepseekMoe(c, layers, v3, notes);
  const mtp = c.has('num_nextn_predict_layers')
    ? c.count('num_nextn_predict_layers', 0, IMPORT_LIMITS.dimension)
    : 0;
  if (mtp > 0)
    notes.push(
      `num_nextn_predict_layers ${mtp}: multi-token prediction is not modelled (the extra decoder layer${mtp > 1 ? 's' : ''}, projection and loss; DeepSeek-V3's checkpoint is 685 B with its 14 B module, 671 B without)`,
    );
  return lm(seq, {
    layers,
    hidden: d,
    heads,
    ffn: c.int('intermediate_size', dflt(18432)),
    vocab: c.int('vocab_size', dflt(129280)),
    norm: 'rmsnorm',
    mlp: 'swiglu',
    positions: 'rotary',
    bias: false,
    mlpBias: c.bool('mlp_bias', false),
    tiedHead: c.bool('tie_word_embeddings', false),
    dropout: c.num('attention_dropout', 0) > 0,
    latentAttention,
    ...(moe ? { moe } : {}),
  });
}

/** DeepSeekMoE's experts, or undefined where no layer has them (n_routed_experts null: a dense model). */
function deepseekMoe(c: Reader, layers: number, v3: boolean, notes: string[]): MoeArch | undefined {
  const dflt = (v: number) => v3Default(v3, v);
  const denseLayers = c.count('first_k_dense_replace', v3 ? 3 : 0, layers);
  // Absent (transformers' own DeepseekV3Config has no such key): experts in every layer after the dense ones.
  const freq = c.has('moe_layer_freq') ? c.int('moe_layer_freq') : 1;
  if (freq !== 1)
    c.fail(
      `moe_layer_freq ${freq} puts experts only in the layers i >= first_k_dense_replace (${denseLayers}) with i % ${freq} == 0, so dense and expert layers interleave; only dense layers first and experts in every layer after them are modelled (moe_layer_freq 1)`,
    );
  if (c.isNull('n_routed_experts') || denseLayers === layers) {
    notes.push(
      c.isNull('n_routed_experts')
        ? 'n_routed_experts null: a dense model, every layer with the MLP of intermediate_size'
        : 'first_k_dense_replace leaves no layer with experts: every layer keeps the dense MLP (intermediate_size)',
    );
    return undefined;
  }
  const experts = c.int('n_routed_experts', dflt(256), IMPORT_LIMITS.experts);
  if (experts < 2) c.fail(`"n_routed_experts" must be at least 2 for a mixture of experts (got ${experts})`);
  const topK = c.int('num_experts_per_tok', dflt(8));
  if (topK > experts)
    c.fail(`num_experts_per_tok (${topK}) is more than the ${experts} experts of a layer (n_routed_experts)`);
  const ffn = c.int('moe_intermediate_size', dflt(2048));
  const shared = c.isNull('n_shared_experts')
    ? 0
    : c.count('n_shared_experts', dflt(1), IMPORT_LIMITS.experts);
  const groups = c.num('n_group', v3 ? 8 : 1);
  if (groups > 1)
    notes.push(
      `group-limited routing (n_group ${groups}, topk_group) is not modelled: the all-to-all sends a token to experts anywhere in the expert-parallel group`,
    );
  if (c.str('topk_method', '') === 'noaux_tc')
    notes.push(
      "the router's per-expert score-correction bias (n_routed_experts weights a layer) is not counted",
    );
  return {
    experts,
    topK,
    ffn,
    ...(shared > 0 ? { sharedFfn: shared * ffn } : {}),
    ...(denseLayers > 0 ? { denseLayers } : {}),
  };
}

/** The attention kinds a gpt_oss config's layer_types may name (transformers' GptOssAttention). */
const GPT_OSS_LAYER_TYPES = ['sliding_attention', 'full_attention'] as const;

/**
 * How many of a gpt_oss config's layers attend through the sliding window (layer_types), or why the
 * list cannot be read. Absent, transformers' GptOssConfig alternates them, windowed first
 * ("sliding_attention" on layers 0, 2, 4, ...).
 */
function slidingLayersOf(c: Reader, layers: number, notes: string[]): number {
  const raw = c.cfg.layer_types;
  if (raw === undefined || raw === null) {
    notes.push(
      "no layer_types: every other layer windowed, from the first (transformers' GptOssConfig default)",
    );
    return Math.ceil(layers / 2);
  }
  if (!Array.isArray(raw) || raw.length !== layers)
    c.fail(
      `"layer_types" must list one attention kind per layer (${layers}, num_hidden_layers) (got ${shownValue(raw)})`,
    );
  const other = raw.find((t) => !(GPT_OSS_LAYER_TYPES as readonly unknown[]).includes(t));
  if (other !== undefined)
    c.fail(
      `"layer_types" has ${shownValue(other)}; only ${GPT_OSS_LAYER_TYPES.join(' and ')} are modelled (a window of sliding_window keys, or the whole sequence)`,
    );
  return raw.filter((t) => t === 'sliding_attention').length;
}

/**
 * gpt-oss (gpt_oss), as transformers' modeling_gpt_oss.py builds it: grouped-query attention with
 * biases on Q/K/V and the output (attention_bias), head_dim wider than hidden / heads, a window of
 * sliding_window keys on the layers layer_types names "sliding_attention" and full attention on the
 * rest, and in every layer num_local_experts experts of intermediate_size, num_experts_per_tok per
 * token. The experts always have biases (GptOssExperts: gate_up_proj_bias, down_proj_bias; no config
 * key turns them off). Defaults are transformers' GptOssConfig's (gpt-oss-120b's sizes).
 */
function gptOss(c: Reader, seqLen: SeqLen, notes: string[]): Built {
  const d = c.int('hidden_size', 2880),
    heads = c.int('num_attention_heads', 64),
    layers = c.int('num_hidden_layers', 36);
  const kvHeads = c.int('num_key_value_heads', 8);
  if (heads % kvHeads !== 0)
    c.fail(`num_attention_heads (${heads}) is not a multiple of num_key_value_heads (${kvHeads})`);
  const headDim = c.int('head_dim', 64);
  const positions = c.int('max_position_embeddings', 131072);
  const seq = seqLen(Math.min(positions, 4096), positions);
  // num_experts is GptOssConfig's attribute_map name for num_local_experts.
  const experts = c.int(['num_local_experts', 'num_experts'], 128, IMPORT_LIMITS.experts);
  if (experts < 2) c.fail(`"num_local_experts" must be at least 2 for a mixture of experts (got ${experts})`);
  const topK = c.int('num_experts_per_tok', 4);
  if (topK > experts)
    c.fail(
      `num_experts_per_tok (${topK}) is more than the ${experts} experts of a layer (num_local_experts)`,
    );
  const ffn = c.int('intermediate_size', 2880);
  const sliding = slidingLayersOf(c, layers, notes);
  // sliding_window null: the layers named sliding attend to the whole sequence.
  const window = sliding > 0 && !c.isNull('sliding_window') ? c.int('sliding_window', 128) : undefined;
  if (window !== undefined && window < seq)
    notes.push(
      `sliding-window attention on ${sliding} of the ${layers} layers: each token attends to its last ${window} positions there, to the whole sequence in the others`,
    );
  const bias = c.bool('attention_bias', true);
  notes.push(
    'attention sinks (one learned logit per head added to the softmax) are left out: num_attention_heads weights and one more score column a layer; whether a fused attention kernel supports them in a given software stack is not modelled',
    "the router's bias (num_local_experts weights a layer) is not counted",
    "the experts' clamped SwiGLU (swiglu_limit, and (up + 1) x gate x sigmoid(1.702 gate)) is costed as SwiGLU",
  );
  if (c.has('quantization_config'))
    notes.push(
      'quantization_config describes how the checkpoint is stored (the experts in MXFP4); training is costed at the precision asked for',
    );
  return lm(seq, {
    layers,
    hidden: d,
    heads,
    kvHeads,
    ...(headDim * heads !== d ? { headDim } : {}),
    ffn,
    vocab: c.int('vocab_size', 201088),
    norm: 'rmsnorm',
    mlp: 'swiglu',
    positions: 'rotary',
    bias: false,
    qkvBias: bias,
    outBias: bias,
    mlpBias: true,
    tiedHead: c.bool('tie_word_embeddings', false),
    dropout: c.num('attention_dropout', 0) > 0,
    ...(window !== undefined ? { attentionWindow: window, windowedLayers: sliding } : {}),
    moe: { experts, topK, ffn },
  });
}

function build(type: HfType, c: Reader, seqLen: SeqLen, notes: string[]): Built {
  switch (type) {
    case 'gpt2': {
      // GPT2Config's defaults are GPT-2 small (124M).
      const d = c.int(['n_embd', 'hidden_size'], 768),
        heads = c.int(['n_head', 'num_attention_heads'], 12);
      divides(c, 'n_embd', d, heads, 'n_head');
      const positions = c.int(['n_positions', 'n_ctx'], 1024);
      const dropout = ['resid_pdrop', 'embd_pdrop', 'attn_pdrop'].some((k) => c.num(k, 0.1) > 0);
      return lm(seqLen(positions, positions), {
        layers: c.int(['n_layer', 'num_hidden_layers'], 12),
        hidden: d,
        heads,
        ffn: c.int('n_inner', 4 * d),
        vocab: c.int('vocab_size', 50257),
        norm: 'layernorm',
        mlp: geluOf(c.str('activation_function', 'gelu_new')),
        positions: 'learned',
        maxPositions: positions,
        bias: true,
        tiedHead: c.bool('tie_word_embeddings', true),
        dropout,
      });
    }
    case 'gpt_neo': {
      const d = c.int('hidden_size', 2048),
        heads = c.int('num_heads', 16);
      divides(c, 'hidden_size', d, heads, 'num_heads');
      const positions = c.int('max_position_embeddings', 2048);
      const types = JSON.stringify(c.cfg.attention_types ?? c.cfg.attention_layers ?? '');
      if (types.includes('local'))
        notes.push(
          `GPT-Neo's local attention layers (window ${c.int('window_size', 256)}) are costed as global attention over the whole sequence: an upper bound on their attention FLOPs`,
        );
      return lm(seqLen(positions, positions), {
        layers: c.int('num_layers', 24),
        hidden: d,
        heads,
        ffn: c.int('intermediate_size', 4 * d),
        vocab: c.int('vocab_size', 50257),
        norm: 'layernorm',
        mlp: geluOf(c.str('activation_function', 'gelu_new')),
        positions: 'learned',
        maxPositions: positions,
        bias: true,
        qkvBias: false,
        outBias: true,
        mlpBias: true,
        tiedHead: c.bool('tie_word_embeddings', true),
        dropout: ['embed_dropout', 'resid_dropout', 'attention_dropout'].some((k) => c.num(k, 0) > 0),
      });
    }
    case 'gptj': {
      const d = c.int('n_embd', 4096),
        heads = c.int('n_head', 16);
      divides(c, 'n_embd', d, heads, 'n_head');
      const positions = c.int('n_positions', 2048);
      return lm(seqLen(positions, positions), {
        layers: c.int('n_layer', 28),
        hidden: d,
        heads,
        ffn: c.int('n_inner', 4 * d),
        vocab: c.int('vocab_size', 50400),
        norm: 'layernorm',
        mlp: geluOf(c.str('activation_function', 'gelu_new')),
        positions: 'rotary',
        bias: false,
        qkvBias: false,
        outBias: false,
        mlpBias: true,
        headBias: true,
        parallelBlock: 'shared-norm',
        tiedHead: c.bool('tie_word_embeddings', false),
        dropout: ['resid_pdrop', 'embd_pdrop', 'attn_pdrop'].some((k) => c.num(k, 0) > 0),
      });
    }
    case 'gpt_neox': {
      const d = c.int('hidden_size', 6144),
        heads = c.int('num_attention_heads', 64);
      divides(c, 'hidden_size', d, heads, 'num_attention_heads');
      const positions = c.int('max_position_embeddings', 2048);
      const bias = c.bool('attention_bias', true);
      return lm(seqLen(positions, positions), {
        layers: c.int('num_hidden_layers', 44),
        hidden: d,
        heads,
        ffn: c.int('intermediate_size', 4 * d),
        vocab: c.int('vocab_size', 50432),
        norm: 'layernorm',
        mlp: c.str('hidden_act', 'gelu') === 'relu' ? 'relu' : 'gelu',
        positions: 'rotary',
        bias,
        qkvBias: bias,
        outBias: bias,
        mlpBias: true,
        ...(c.bool('use_parallel_residual', true) ? { parallelBlock: 'two-norms' } : {}),
        tiedHead: c.bool('tie_word_embeddings', false),
        dropout: ['hidden_dropout', 'attention_dropout'].some((k) => c.num(k, 0) > 0),
      });
    }
    case 'opt': {
      const d = c.int('hidden_size', 768),
        heads = c.int('num_attention_heads', 12);
      divides(c, 'hidden_size', d, heads, 'num_attention_heads');
      const positions = c.int('max_position_embeddings', 2048);
      const preNorm = c.bool('do_layer_norm_before', true);
      const embedDim = c.int('word_embed_proj_dim', d);
      const bias = c.bool('enable_bias', true);
      return lm(seqLen(positions, positions), {
        // OPT's learned position table has 2 extra rows (its padding offset).
        layers: c.int('num_hidden_layers', 12),
        hidden: d,
        heads,
        ffn: c.int('ffn_dim', 4 * d),
        vocab: c.int('vocab_size', 50272),
        norm: 'layernorm',
        mlp: c.str('activation_function', 'relu') === 'relu' ? 'relu' : 'gelu',
        positions: 'learned',
        maxPositions: positions + 2,
        bias,
        tiedHead: c.bool('tie_word_embeddings', true),
        dropout: ['dropout', 'attention_dropout'].some((k) => c.num(k, 0.1) > 0),
        ...(preNorm ? {} : { preNorm: false }),
        ...(embedDim !== d ? { embedDim } : {}),
      });
    }
    case 'llama':
    case 'mistral':
    case 'qwen2':
    case 'mixtral':
    case 'qwen2_moe':
    case 'qwen3_moe': {
      const dflt = LLAMA_LIKE_DEFAULTS[type];
      const d = c.int('hidden_size', dflt.hidden),
        heads = c.int('num_attention_heads', dflt.heads);
      const kvHeads = c.int('num_key_value_heads', dflt.kvHeads ?? heads);
      if (heads % kvHeads !== 0)
        c.fail(`num_attention_heads (${heads}) is not a multiple of num_key_value_heads (${kvHeads})`);
      const headDim = c.int('head_dim', d / heads);
      if (!c.has('head_dim')) divides(c, 'hidden_size', d, heads, 'num_attention_heads');
      const positions = c.int('max_position_embeddings', dflt.positions);
      const seq = seqLen(Math.min(positions, 4096), positions);
      const act = c.str('hidden_act', 'silu');
      if (act !== 'silu' && act !== 'swish')
        notes.push(`hidden_act "${act}" is costed as SiLU (same memory traffic, similar FLOPs)`);
      // Qwen's configs switch the window on with use_sliding_window; Mistral's and Mixtral's by giving one.
      const qwen = type === 'qwen2' || type === 'qwen2_moe' || type === 'qwen3_moe';
      const window = qwen
        ? c.bool('use_sliding_window', false) && c.has('sliding_window')
          ? c.int('sliding_window')
          : undefined
        : (type === 'mistral' || type === 'mixtral') && c.has('sliding_window')
          ? c.int('sliding_window')
          : undefined;
      if (window !== undefined && window < seq)
        notes.push(`sliding-window attention: each token attends to its last ${window} positions`);
      // Qwen2 and Qwen2-MoE put biases on the Q/K/V projections only; Llama, Mistral, Mixtral and
      // Qwen3 on none (attention_bias / mlp_bias can switch them on).
      const qwen2 = type === 'qwen2' || type === 'qwen2_moe';
      const qkvBias = qwen2 ? true : c.bool('attention_bias', false);
      const layers = c.int('num_hidden_layers', dflt.layers);
      const moe = moeOf(type, c, layers, notes);
      return lm(seq, {
        layers,
        hidden: d,
        heads,
        kvHeads,
        ...(headDim !== d / heads ? { headDim } : {}),
        ffn: c.int('intermediate_size', dflt.ffn),
        vocab: c.int('vocab_size', dflt.vocab),
        norm: 'rmsnorm',
        mlp: 'swiglu',
        positions: 'rotary',
        bias: false,
        qkvBias,
        outBias: qwen2 ? false : c.bool('attention_bias', false),
        mlpBias: c.bool('mlp_bias', false),
        tiedHead: c.bool('tie_word_embeddings', false),
        dropout: c.num('attention_dropout', 0) > 0,
        ...(window !== undefined ? { attentionWindow: window } : {}),
        ...(moe ? { moe } : {}),
      });
    }
    case 'deepseek_v2':
    case 'deepseek_v3':
      return deepseek(type, c, seqLen, notes);
    case 'gpt_oss':
      return gptOss(c, seqLen, notes);
    case 'bert': {
      const d = c.int('hidden_size', 768),
        heads = c.int('num_attention_heads', 12);
      divides(c, 'hidden_size', d, heads, 'num_attention_heads');
      const positions = c.int('max_position_embeddings', 512);
      const arch = String((c.cfg.architectures as unknown[] | undefined)?.[0] ?? '');
      const head = /QuestionAnswering/.test(arch)
        ? 'squad'
        : /PreTraining/.test(arch)
          ? 'pretrain'
          : /SequenceClassification/.test(arch)
            ? 'classify'
            : 'mlm';
      if (!arch)
        notes.push('no "architectures" in the config: costed with the masked-LM head (BertForMaskedLM)');
      const labels =
        c.cfg.id2label && typeof c.cfg.id2label === 'object'
          ? Object.keys(c.cfg.id2label as object).length
          : c.int('num_labels', 2);
      // transformers' BertForMaskedLM and BertForPreTraining score every position (the loss skips
      // the unmasked ones): the vocabulary GEMM and its logits cost 100% of the tokens, not the
      // masked 15% NVIDIA's reference gathers first (the zoo's bert_large_pretrain).
      if (head === 'mlm' || head === 'pretrain')
        notes.push(
          "masked-LM head over every position, as transformers computes it (a reference that gathers the 15% masked positions first, like the zoo's bert_large_pretrain, costs less)",
        );
      const seq = seqLen(positions, positions);
      return {
        entry: {
          family: 'bert',
          batchElement: 'sequence',
          throughputUnit: 'sequences/s',
          unitsPerBatchElement: 1,
          seqLen: seq,
          batchSizes: [8, 16, 32],
          arch: {
            layers: c.int('num_hidden_layers', 12),
            hidden: d,
            heads,
            ffn: c.int('intermediate_size', 3072),
            vocab: c.int('vocab_size', 30522),
            maxPositions: positions,
            typeVocab: c.int('type_vocab_size', 2),
            head,
            mlmFraction: 1,
            mlmDecoderBias: true,
            numLabels: labels,
          },
        },
      };
    }
    case 't5': {
      const d = c.int('d_model', 512);
      const proj = c.str('feed_forward_proj', 'relu');
      const gated = proj.startsWith('gated-') || c.bool('is_gated_act', false);
      if (!['relu', 'gated-gelu', 'gelu', 'gated-silu'].includes(proj))
        notes.push(`feed_forward_proj "${proj}" is costed as ${gated ? 'gated-gelu' : 'relu'}`);
      const seq = seqLen(512, IMPORT_LIMITS.seqLen);
      notes.push(
        `encoder and decoder both ${seq} tokens per sample (T5 pre-training uses 512 in and 114 out; the target length is an upper bound here)`,
      );
      return {
        entry: {
          family: 't5',
          batchElement: 'sequence',
          throughputUnit: 'tokens/s',
          unitsPerBatchElement: 'seqLen',
          seqLen: seq,
          batchSizes: [4, 8, 16, 32],
          arch: {
            encLayers: c.int('num_layers', 6),
            decLayers: c.int('num_decoder_layers', c.int('num_layers', 6)),
            hidden: d,
            heads: c.int('num_heads', 8),
            headDim: c.int('d_kv', 64),
            ffn: c.int('d_ff', 2048),
            vocab: c.int('vocab_size', 32128),
            buckets: c.int('relative_attention_num_buckets', 32),
            ffnKind: gated ? 'gated-gelu' : 'relu',
            tiedHead: c.bool('tie_word_embeddings', true),
            dropout: c.num('dropout_rate', 0.1) > 0,
          },
        },
      };
    }
    case 'vit': {
      const d = c.int('hidden_size', 768),
        heads = c.int('num_attention_heads', 12);
      divides(c, 'hidden_size', d, heads, 'num_attention_heads');
      const configured = c.int('image_size', 224),
        patch = c.int('patch_size', 16);
      const size = seqLen(configured, IMPORT_LIMITS.seqLen, 'image size');
      if (size < patch) c.fail(`image size ${size} is smaller than patch_size ${patch}`);
      if (size !== configured)
        notes.push(
          `image size ${size} instead of the configured ${configured}: the position table grows with it (interpolated positions in practice)`,
        );
      // transformers' default without id2label or num_labels is 2 classes (PretrainedConfig), not
      // ImageNet's 1000: the model it builds, and so the one a user trains, has a 2-way head.
      const classes =
        c.cfg.id2label && typeof c.cfg.id2label === 'object'
          ? Object.keys(c.cfg.id2label as object).length
          : c.int('num_labels', 2);
      if (!c.bool('qkv_bias', true))
        notes.push('qkv_bias false: the Q/K/V biases are still counted (a few thousand parameters)');
      return {
        entry: {
          family: 'vit',
          batchElement: 'image',
          throughputUnit: 'images/s',
          unitsPerBatchElement: 1,
          imageSize: size,
          batchSizes: [32, 64, 128],
          arch: {
            patch,
            layers: c.int('num_hidden_layers', 12),
            hidden: d,
            heads,
            ffn: c.int('intermediate_size', 3072),
            numClasses: classes,
            dropout: c.num('hidden_dropout_prob', 0) > 0,
            channels: c.int('num_channels', 3),
          },
        },
      };
    }
  }
}
