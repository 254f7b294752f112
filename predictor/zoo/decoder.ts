// Decoder-only language models: GPT-2 (learned positions, LayerNorm, GELU, tied head, dropout)
// and Llama 2 (rotary positions, RMSNorm, SwiGLU, optional grouped-query attention, no biases).
import type { Layer } from '../types.js';
import { attention, feedForward, sublayer } from './attention.js';
import { add, dropout, embedding, linear, loss, norm, repeat } from './common.js';
import { archOf, seqLenOf, type ZooEntry } from './spec.js';

interface DecoderArch {
  layers: number;
  hidden: number;
  heads: number;
  /** K/V heads for grouped-query attention; defaults to heads. */
  kvHeads?: number;
  ffn: number;
  vocab: number;
  norm: 'layernorm' | 'rmsnorm';
  mlp: 'gelu' | 'swiglu';
  positions: 'learned' | 'rotary';
  /** Size of the learned position table. */
  maxPositions?: number;
  bias: boolean;
  /** Output projection shares the token-embedding matrix. */
  tiedHead: boolean;
  dropout: boolean;
}

export function buildDecoder(e: ZooEntry): Layer[] {
  const a = archOf<DecoderArch>(e, ['layers', 'hidden', 'heads', 'ffn', 'vocab', 'norm', 'mlp', 'positions', 'bias', 'tiedHead', 'dropout']);
  const L = seqLenOf(e);
  const d = a.hidden;
  const x = L * d;
  const gated = a.mlp === 'swiglu';
  const res = (name: string) => ({ name, tokens: L, hidden: d, norm: a.norm, preNorm: true, dropout: a.dropout });
  const block = [
    ...sublayer(attention({
      name: 'attn', queries: L, keys: L, hidden: d, heads: a.heads, headDim: d / a.heads, kvHeads: a.kvHeads,
      bias: a.bias, probDropout: a.dropout, rotary: a.positions === 'rotary',
    }), res('attn')),
    ...sublayer(feedForward({ name: 'mlp', tokens: L, hidden: d, ffn: a.ffn, act: gated ? 'silu' : 'gelu', bias: a.bias, gated }), res('mlp')),
  ];
  if (a.positions === 'learned' && !a.maxPositions) throw new Error(`${e.id}: learned positions need arch.maxPositions`);
  const positions = a.positions === 'learned'
    ? [embedding(a.maxPositions!, d, L, 'position_embeddings'), add(x, 'embeddings.sum')]
    : [];
  return [
    embedding(a.vocab, d, L, 'token_embeddings'),
    ...positions,
    ...(a.dropout ? [dropout(x, 'embeddings.dropout')] : []),
    ...repeat(block, a.layers),
    norm(a.norm, d, x, 'final_norm'),
    linear(d, a.vocab, { tokens: L, bias: false, tied: a.tiedHead, name: 'lm_head' }),
    loss(L * a.vocab),
  ];
}
