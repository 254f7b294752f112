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
}

/** QKV projection, scores (heads x q x k), scale+mask, softmax, dropout, context, output projection. */
export function attention(s: AttentionSpec): Layer[] {
  const qDim = s.heads * s.headDim;
  const kvDim = (s.kvHeads ?? s.heads) * s.headDim;
  const o = { bias: s.bias };
  const projections = s.cross
    ? [
        linear(s.hidden, qDim, { ...o, tokens: s.queries, name: `${s.name}.q` }),
        linear(s.hidden, 2 * kvDim, { ...o, tokens: s.projectedKeys ?? s.keys, name: `${s.name}.kv` }),
      ]
    : [linear(s.hidden, qDim + 2 * kvDim, { ...o, tokens: s.queries, name: `${s.name}.qkv` })];
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
  s: Pick<AttentionSpec, 'name' | 'queries' | 'keys' | 'heads' | 'headDim' | 'probDropout' | 'causal'>,
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
      n: s.headDim,
      k: s.keys,
      ...causal,
    },
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
        linear(s.hidden, s.ffn, { ...o, name: `${s.name}.up` }),
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
