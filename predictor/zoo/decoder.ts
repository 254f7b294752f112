// Decoder-only language models: GPT-2 (learned positions, LayerNorm, GELU, tied head, dropout)
// and Llama 2 (rotary positions, RMSNorm, SwiGLU, optional grouped-query attention, no biases).
// The optional fields cover the other decoder families Hugging Face configs describe
// (predictor/import/huggingface.ts): OPT (ReLU, post-norm and embedding projections in opt-350m),
// GPT-Neo (bias on the attention output only), GPT-J (parallel attention + MLP, biased head),
// Mistral (sliding-window attention), gpt-oss (the window on some layers only) and Qwen2 (bias on
// Q/K/V only). Absent, they change nothing.
import type { Layer } from '../types.js';
import { attention, feedForward, latentAttention, sublayer, type LatentAttentionSpec } from './attention.js';
import { act, add, dropout, embedding, linear, loss, mul, norm, repeat, softmax } from './common.js';
import { archOf, seqLenOf, type ZooEntry } from './spec.js';

interface DecoderArch {
  layers: number;
  hidden: number;
  heads: number;
  /** K/V heads for grouped-query attention; defaults to heads. */
  kvHeads?: number;
  /** Per-head width when heads x headDim != hidden (Mistral-Nemo); default hidden / heads. */
  headDim?: number;
  ffn: number;
  vocab: number;
  norm: 'layernorm' | 'rmsnorm';
  /** gelu_new: the tanh approximation as separate ops (Hugging Face's GPT-2, GPT-Neo, GPT-J). */
  mlp: 'gelu' | 'gelu_new' | 'relu' | 'swiglu';
  positions: 'learned' | 'rotary';
  /** Size of the learned position table. */
  maxPositions?: number;
  bias: boolean;
  /** Output projection shares the token-embedding matrix. */
  tiedHead: boolean;
  dropout: boolean;
  /** Per-projection biases where they differ from `bias`. */
  qkvBias?: boolean;
  outBias?: boolean;
  mlpBias?: boolean;
  /** The LM head has a bias (GPT-J). */
  headBias?: boolean;
  /**
   * Attention and MLP both read the block's input and are added to it together: GPT-J normalizes it
   * once for both ('shared-norm'), GPT-NeoX / Pythia once for each ('two-norms').
   */
  parallelBlock?: 'shared-norm' | 'two-norms';
  /** Sliding-window attention: each token attends to at most this many positions (Mistral). */
  attentionWindow?: number;
  /**
   * How many of the layers use attentionWindow; the others attend to the whole sequence (gpt-oss:
   * every other layer). Absent: all of them.
   */
  windowedLayers?: number;
  /** Post-norm blocks and no final norm (OPT-350m's do_layer_norm_before = false); default pre-norm. */
  preNorm?: boolean;
  /** Token embeddings narrower than the model, projected in and out (OPT-350m's word_embed_proj_dim). */
  embedDim?: number;
  /** Mixture-of-experts feed-forward layers in place of the dense MLP (Mixtral, Qwen3-MoE, gpt-oss, DeepSeek). */
  moe?: MoeArch;
  /** Multi-head latent attention (DeepSeek-V2/V3) in place of the Q/K/V projections. */
  latentAttention?: LatentAttentionArch;
  /** q, k and v are separate linears in the model's code (AttentionSpec.separateProjections). */
  separateQkv?: boolean;
}

export type LatentAttentionArch = Pick<
  LatentAttentionSpec,
  'qLoraRank' | 'kvLoraRank' | 'qkHeadDim' | 'qkRopeHeadDim' | 'vHeadDim'
>;

export interface MoeArch {
  /** Experts per MoE layer. */
  experts: number;
  /** Experts each token is routed to. */
  topK: number;
  /** One expert's FFN width (gated like the dense MLP). */
  ffn: number;
  /** A shared expert every token also passes (DeepSeek's, Llama 4's), its FFN width; absent = none. */
  sharedFfn?: number;
  /** The first this many layers keep the dense MLP (DeepSeek-V3: 3); default 0. */
  denseLayers?: number;
}

/**
 * A mixture-of-experts FFN as Megatron-Core runs it: the router's GEMM and softmax / top-k over the
 * experts, the tokens permuted into expert order (a copy), the experts' gated FFN as grouped GEMMs
 * over tokens x top-k routed tokens, and the weighted un-permute back (a multiply-add over the routed
 * copies); a shared expert, where there is one, is a dense FFN beside it.
 */
function moeFeedForward(
  m: MoeArch,
  o: {
    tokens: number;
    hidden: number;
    act: 'silu' | 'relu' | 'gelu' | 'gelu_new';
    gated: boolean;
    bias: boolean;
  },
): Layer[] {
  const routed = o.tokens * m.topK;
  const experts = (l: Layer): Layer => ({ ...l, experts: m.experts }) as Layer;
  const e = { tokens: routed, bias: o.bias };
  const inner = routed * m.ffn;
  return [
    {
      ...linear(o.hidden, m.experts, { tokens: o.tokens, bias: false, name: 'moe.router' }),
      router: true,
    } as Layer,
    softmax(o.tokens * m.experts, 'moe.router_probs'),
    { type: 'elementwise', kind: 'copy', elements: routed * o.hidden, name: 'moe.permute' },
    ...(o.gated ? [experts(linear(o.hidden, m.ffn, { ...e, name: 'moe.experts.gate' }))] : []),
    // Gated, the up projection reads the gate's input: one grouped GEMM keeps it once.
    experts(
      linear(o.hidden, m.ffn, { ...e, name: 'moe.experts.up', ...(o.gated ? { sameInputAs: 1 } : {}) }),
    ),
    act(o.act, inner, 'moe.experts.act'),
    ...(o.gated ? [mul(inner, 'moe.experts.gate_mul')] : []),
    experts(linear(m.ffn, o.hidden, { ...e, name: 'moe.experts.down' })),
    { type: 'elementwise', kind: 'combine', elements: routed * o.hidden, inputs: 1, name: 'moe.unpermute' },
    ...(m.sharedFfn
      ? feedForward({
          name: 'moe.shared',
          tokens: o.tokens,
          hidden: o.hidden,
          ffn: m.sharedFfn,
          act: o.act,
          bias: o.bias,
          gated: o.gated,
        })
      : []),
  ];
}

export function buildDecoder(e: ZooEntry): Layer[] {
  const a = archOf<DecoderArch>(e, [
    'layers',
    'hidden',
    'heads',
    'ffn',
    'vocab',
    'norm',
    'mlp',
    'positions',
    'bias',
    'tiedHead',
    'dropout',
  ]);
  const L = seqLenOf(e);
  const d = a.hidden;
  const x = L * d;
  const gated = a.mlp === 'swiglu';
  // SwiGLU's activation is SiLU on the gate.
  const act = a.mlp === 'swiglu' ? 'silu' : a.mlp;
  const preNorm = a.preNorm ?? true;
  const res = (name: string) => ({ name, tokens: L, hidden: d, norm: a.norm, preNorm, dropout: a.dropout });
  // One block kind per attention span: the windowed one (every layer, unless windowedLayers says
  // how many) and, where only some layers are windowed, a full-attention one.
  const blocksOf = (keys: number) => {
    const attn = a.latentAttention
      ? latentAttention({
          name: 'attn',
          tokens: L,
          hidden: d,
          heads: a.heads,
          causal: true,
          ...a.latentAttention,
        })
      : attention({
          name: 'attn',
          queries: L,
          keys,
          hidden: d,
          heads: a.heads,
          headDim: a.headDim ?? d / a.heads,
          kvHeads: a.kvHeads,
          bias: a.qkvBias ?? a.bias,
          outBias: a.outBias ?? a.bias,
          probDropout: a.dropout,
          rotary: a.positions === 'rotary',
          causal: true,
          separateProjections: a.separateQkv ?? false,
        });
    const mlp = feedForward({
      name: 'mlp',
      tokens: L,
      hidden: d,
      ffn: a.ffn,
      act,
      bias: a.mlpBias ?? a.bias,
      gated,
    });
    const block = a.parallelBlock
      ? [
          norm(a.norm, d, x, a.parallelBlock === 'two-norms' ? 'attn.norm' : 'block.norm'),
          ...attn,
          ...(a.parallelBlock === 'two-norms' ? [norm(a.norm, d, x, 'mlp.norm')] : []),
          ...mlp,
          ...(a.dropout ? [dropout(x, 'attn.dropout'), dropout(x, 'mlp.dropout')] : []),
          add(x, 'block.residual', 3),
        ]
      : [...sublayer(attn, res('attn')), ...sublayer(mlp, res('mlp'))];
    const moeBlock = a.moe
      ? [
          ...sublayer(attn, res('attn')),
          ...sublayer(
            moeFeedForward(a.moe, {
              tokens: L,
              hidden: d,
              act,
              gated,
              bias: a.mlpBias ?? a.bias,
            }),
            res('moe'),
          ),
        ]
      : [];
    return { block, moeBlock };
  };
  if (a.moe && a.parallelBlock) throw new Error(`${e.id}: a parallel block with experts is not modelled`);
  const denseLayers = a.moe ? Math.min(a.layers, a.moe.denseLayers ?? 0) : a.layers;
  const windowed = a.windowedLayers ?? a.layers;
  if (a.windowedLayers !== undefined) {
    if (!Number.isInteger(windowed) || windowed < 0 || windowed > a.layers)
      throw new Error(`${e.id}: windowedLayers must be an integer from 0 to ${a.layers} (got ${windowed})`);
    if (a.attentionWindow === undefined) throw new Error(`${e.id}: windowedLayers needs attentionWindow`);
  }
  // Each layer's cost does not depend on where it sits in the stack, so the windowed layers are
  // built first and the full-attention ones after them, whatever order the model interleaves them
  // in; the dense leading layers (denseLayers) take the window first.
  const kinds = blocksOf(Math.min(L, a.attentionWindow ?? L));
  const full = windowed < a.layers ? blocksOf(L) : kinds;
  const denseWindowed = Math.min(windowed, denseLayers);
  const moeWindowed = Math.max(0, windowed - denseLayers);
  if (a.positions === 'learned' && !a.maxPositions)
    throw new Error(`${e.id}: learned positions need arch.maxPositions`);
  const positions =
    a.positions === 'learned'
      ? [embedding(a.maxPositions!, d, L, 'position_embeddings'), add(x, 'embeddings.sum')]
      : [];
  const w = a.embedDim ?? d;
  return [
    embedding(a.vocab, w, L, 'token_embeddings'),
    ...(w !== d ? [linear(w, d, { tokens: L, bias: false, name: 'project_in' })] : []),
    ...positions,
    ...(a.dropout ? [dropout(x, 'embeddings.dropout')] : []),
    ...(denseWindowed > 0 ? repeat(kinds.block, denseWindowed) : []),
    ...(denseLayers > denseWindowed ? repeat(full.block, denseLayers - denseWindowed) : []),
    ...(a.moe && moeWindowed > 0 ? repeat(kinds.moeBlock, moeWindowed) : []),
    ...(a.moe && a.layers - denseLayers > moeWindowed
      ? repeat(full.moeBlock, a.layers - denseLayers - moeWindowed)
      : []),
    ...(preNorm ? [norm(a.norm, d, x, 'final_norm')] : []),
    ...(w !== d ? [linear(d, w, { tokens: L, bias: false, name: 'project_out' })] : []),
    linear(w, a.vocab, { tokens: L, bias: a.headBias ?? false, tied: a.tiedHead, name: 'lm_head' }),
    loss(L * a.vocab),
  ];
}
