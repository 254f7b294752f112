// Transformer pieces shared by BERT, GPT/Llama, ViT, the WMT Transformer and Transformer-XL:
// multi-head attention, the feed-forward network, and the residual/norm wrapper around both.
import type { Layer } from '../types.js';
import {
  act,
  add,
  dropout,
  linear,
  mul,
  norm,
  scale,
  softmax,
  type ActKind,
  type NormKind,
} from './common.js';

export interface AttentionSpec {
  name: string;
  /** Query positions per sample. */
  queries: number;
  /** Positions attended to (= queries for full self-attention). */
  keys: number;
  hidden: number;
  heads: number;
  headDim: number;
  /** Grouped-query attention: K/V heads shared by several query heads (fewer K/V weights, same score math). */
  kvHeads?: number;
  bias: boolean;
  /** Bias on the output projection when it differs from the Q/K/V projections' (GPT-Neo: out only; Qwen2: q/k/v only). */
  outBias?: boolean;
  /** Dropout on the attention probabilities. */
  probDropout: boolean;
  /** Rotary position embedding on q and k: elementwise work, no parameters. */
  rotary?: boolean;
  /** Cross-attention: K/V come from other positions (the encoder's), projected separately from Q. */
  cross?: boolean;
  /** Key positions whose K/V this sample projects itself; defaults to `keys`. */
  projectedKeys?: number;
  /** A decoder's causal mask over full self-attention (queries = keys): fused kernels skip half the blocks. */
  causal?: boolean;
  /**
   * The model's code projects q, k and v with separate linears (Hugging Face's Llama, BERT, T5, ViT;
   * not GPT-2's c_attn): one fused layer here, marked with how many projections it stands for.
   */
  separateProjections?: boolean;
}

/** QKV projection, scores (heads x q x k), scale+mask, softmax, dropout, context, output projection. */
export function attention(s: AttentionSpec): Layer[] {
  const qDim = s.heads * s.headDim;
  const kvDim = (s.kvHeads ?? s.heads) * s.headDim;
  const o = { bias: s.bias };
  const separate = (n: number) => (s.separateProjections ? { projections: n } : {});
  const projections = s.cross
    ? [
        linear(s.hidden, qDim, { ...o, tokens: s.queries, name: `${s.name}.q` }),
        linear(s.hidden, 2 * kvDim, {
          ...o,
          ...separate(2),
          tokens: s.projectedKeys ?? s.keys,
          name: `${s.name}.kv`,
        }),
      ]
    : [
        linear(s.hidden, qDim + 2 * kvDim, {
          ...o,
          ...separate(3),
          tokens: s.queries,
          name: `${s.name}.qkv`,
        }),
      ];
  // x*cos + rotate(x)*sin on q and k: two multiplies and an add per element.
  const rotary: Layer[] = s.rotary
    ? [
        {
          type: 'elementwise' as const,
          kind: 'rotary' as const,
          elements: s.queries * (qDim + kvDim),
          inputs: 2,
          count: 3,
          name: `${s.name}.rotary`,
        },
      ]
    : [];
  return [
    ...projections,
    ...rotary,
    ...attentionCore(s),
    linear(qDim, s.hidden, { bias: s.outBias ?? s.bias, tokens: s.queries, name: `${s.name}.out` }),
  ];
}

/**
 * The weightless middle of attention on already-projected Q, K, V: scores (heads x q x k),
 * scale+mask, softmax, optional dropout, context. Also what an ONNX MultiHeadAttention node costs.
 */
export function attentionCore(
  s: Pick<AttentionSpec, 'name' | 'queries' | 'keys' | 'heads' | 'headDim' | 'probDropout' | 'causal'> & {
    /** Per-head width of the values where it differs from the queries' and keys' (latent attention). */
    valueDim?: number;
  },
): Layer[] {
  const scores = s.heads * s.queries * s.keys;
  const causal = s.causal && s.queries === s.keys ? { causal: true } : {};
  return [
    {
      type: 'matmul',
      name: `${s.name}.scores`,
      batches: s.heads,
      m: s.queries,
      n: s.keys,
      k: s.headDim,
      ...causal,
    },
    scale(scores, `${s.name}.scale_mask`),
    softmax(scores, `${s.name}.softmax`),
    ...(s.probDropout ? [dropout(scores, `${s.name}.prob_dropout`)] : []),
    {
      type: 'matmul',
      name: `${s.name}.context`,
      batches: s.heads,
      m: s.queries,
      n: s.valueDim ?? s.headDim,
      k: s.keys,
      ...causal,
    },
  ];
}

/** Multi-head latent attention's sizes (DeepSeek-V2/V3): low-rank query and key/value projections. */
export interface LatentAttentionSpec {
  name: string;
  tokens: number;
  hidden: number;
  heads: number;
  /** Rank of the query's down-projection; absent, the query is one projection from the hidden state (DeepSeek-V2-Lite's q_lora_rank null). */
  qLoraRank?: number;
  /** Rank of the shared key/value latent. */
  kvLoraRank: number;
  /** Per-head query/key width without positions, and the rotary part (one rotary key shared by the heads). */
  qkHeadDim: number;
  qkRopeHeadDim: number;
  vHeadDim: number;
  causal: boolean;
}

/**
 * Multi-head latent attention as DeepSeek-V3 trains it (DeepSeek-AI 2024, arXiv:2412.19437, sec. 2.1.1;
 * Megatron-Core's MLASelfAttention): the query and the key/value latent are projected down (each
 * followed by an RMSNorm), then up per head; a rotary key of qkRopeHeadDim is shared by all heads.
 * DeepSeek-V2-Lite has no query rank: its query is projected straight from the hidden state.
 * The down-projections and their norms come first, so Megatron's TP split (parallel.ts) keeps them
 * whole on every rank and splits the up-projections (column) and the output (row), as Megatron does.
 */
export function latentAttention(s: LatentAttentionSpec): Layer[] {
  const qk = s.qkHeadDim + s.qkRopeHeadDim;
  const o = { tokens: s.tokens, bias: false };
  const kvDown = [
    linear(s.hidden, s.kvLoraRank + s.qkRopeHeadDim, { ...o, name: `${s.name}.kv_down` }),
    norm('rmsnorm', s.kvLoraRank, s.tokens * s.kvLoraRank, `${s.name}.kv_norm`),
  ];
  // Without a query rank the query's one projection (Megatron-Core's linear_q_proj, column-parallel)
  // comes after the key/value down-projection, beside the key/value up-projection it pairs with.
  // Either way the second projection of the hidden state reads what the first read, two layers back.
  const query =
    s.qLoraRank === undefined
      ? [...kvDown, linear(s.hidden, s.heads * qk, { ...o, name: `${s.name}.q`, sameInputAs: 2 })]
      : [
          linear(s.hidden, s.qLoraRank, { ...o, name: `${s.name}.q_down` }),
          norm('rmsnorm', s.qLoraRank, s.tokens * s.qLoraRank, `${s.name}.q_norm`),
          { ...kvDown[0], sameInputAs: 2 },
          kvDown[1],
          linear(s.qLoraRank, s.heads * qk, { ...o, name: `${s.name}.q_up` }),
        ];
  return [
    ...query,
    linear(s.kvLoraRank, s.heads * (s.qkHeadDim + s.vHeadDim), { ...o, name: `${s.name}.kv_up` }),
    {
      type: 'elementwise',
      kind: 'rotary',
      elements: s.tokens * (s.heads + 1) * s.qkRopeHeadDim,
      inputs: 2,
      count: 3,
      name: `${s.name}.rotary`,
    },
    ...attentionCore({
      name: s.name,
      queries: s.tokens,
      keys: s.tokens,
      heads: s.heads,
      headDim: qk,
      valueDim: s.vHeadDim,
      probDropout: false,
      causal: s.causal,
    }),
    linear(s.heads * s.vHeadDim, s.hidden, { ...o, name: `${s.name}.out` }),
  ];
}

export interface FeedForwardSpec {
  name: string;
  tokens: number;
  hidden: number;
  ffn: number;
  act: ActKind;
  bias: boolean;
  /** Dropout after the activation (ViT, the WMT Transformer's relu_dropout). */
  innerDropout?: boolean;
  /** Gated linear unit (SwiGLU): act(x W_gate) * (x W_up), then W_down. */
  gated?: boolean;
}

export function feedForward(s: FeedForwardSpec): Layer[] {
  const inner = s.tokens * s.ffn;
  const o = { tokens: s.tokens, bias: s.bias };
  const up = s.gated
    ? [
        linear(s.hidden, s.ffn, { ...o, name: `${s.name}.gate` }),
        // The up projection reads the gate's input (the memory model keeps it once where it can).
        linear(s.hidden, s.ffn, { ...o, name: `${s.name}.up`, sameInputAs: 1 }),
      ]
    : [linear(s.hidden, s.ffn, { ...o, name: `${s.name}.up` })];
  return [
    ...up,
    act(s.act, inner, `${s.name}.act`),
    ...(s.gated ? [mul(inner, `${s.name}.gate_mul`)] : []),
    ...(s.innerDropout ? [dropout(inner, `${s.name}.inner_dropout`)] : []),
    linear(s.ffn, s.hidden, { ...o, name: `${s.name}.down` }),
  ];
}

export interface ResidualSpec {
  name: string;
  tokens: number;
  hidden: number;
  norm: NormKind;
  /** Pre-norm: x + f(norm(x)). Post-norm (BERT, original Transformer): norm(x + f(x)). */
  preNorm: boolean;
  /** Dropout on the sublayer's output before the add. */
  dropout: boolean;
}

/** A residual sublayer around `body`, with its norm, dropout and add. */
export function sublayer(body: Layer[], s: ResidualSpec): Layer[] {
  const e = s.tokens * s.hidden;
  const n = norm(s.norm, s.hidden, e, `${s.name}.norm`);
  const tail = [...(s.dropout ? [dropout(e, `${s.name}.dropout`)] : []), add(e, `${s.name}.residual`)];
  return s.preNorm ? [n, ...body, ...tail] : [...body, ...tail, n];
}
