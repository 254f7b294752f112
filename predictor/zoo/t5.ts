// T5 (Raffel et al. 2020), the encoder-decoder of Hugging Face's T5 configs: pre-norm blocks with a
// scale-only norm (RMSNorm), no biases anywhere, relative position buckets (one small learned table
// per stack, in its first layer, added to every layer's attention scores), ReLU (T5 1.0) or gated-GELU
// (T5 1.1, Flan-T5) feed-forward, and a shared input embedding. The LM head is tied to it in T5 1.0
// (with the decoder output scaled by d_model^-0.5 first) and separate in T5 1.1.
// One batch element is a pair of sequences: `seqLen` encoder tokens and `targetLen` decoder tokens.
import type { Layer } from '../types.js';
import { attention, feedForward, sublayer } from './attention.js';
import { add, dropout, embedding, linear, loss, norm, repeat, scale, sharedEmbedding } from './common.js';
import { archOf, seqLenOf, type ZooEntry } from './spec.js';

interface T5Arch {
  encLayers: number;
  decLayers: number;
  /** d_model */
  hidden: number;
  heads: number;
  /** d_kv: per-head width; heads x headDim need not equal hidden (t5-11b). */
  headDim: number;
  ffn: number;
  vocab: number;
  /** relative_attention_num_buckets */
  buckets: number;
  /** 'relu' (T5 1.0) or 'gated-gelu' (T5 1.1 / Flan-T5). */
  ffnKind: 'relu' | 'gated-gelu';
  tiedHead: boolean;
  dropout: boolean;
  /** Decoder tokens per sample; default: seqLen. */
  targetLen?: number;
}

export function buildT5(e: ZooEntry): Layer[] {
  const a = archOf<T5Arch>(e, [
    'encLayers',
    'decLayers',
    'hidden',
    'heads',
    'headDim',
    'ffn',
    'vocab',
    'buckets',
    'ffnKind',
    'tiedHead',
    'dropout',
  ]);
  const S = seqLenOf(e);
  const T = a.targetLen ?? S;
  const d = a.hidden;
  const gated = a.ffnKind === 'gated-gelu';
  const res = (name: string, tokens: number) => ({
    name,
    tokens,
    hidden: d,
    norm: 'rmsnorm' as const,
    preNorm: true,
    dropout: a.dropout,
  });
  const attn = (name: string, queries: number, keys: number, cross = false) => [
    ...attention({
      name,
      queries,
      keys,
      hidden: d,
      heads: a.heads,
      headDim: a.headDim,
      bias: false,
      probDropout: a.dropout,
      cross,
      // transformers' T5Attention: separate q, k and v linears.
      separateProjections: true,
    }),
  ];
  // Self-attention adds the position bias (heads x queries x keys) to its scores before the softmax.
  const selfAttn = (name: string, tokens: number) => {
    const layers = attn(name, tokens, tokens);
    const at = layers.findIndex((l) => l.name === `${name}.scale_mask`);
    layers.splice(at + 1, 0, add(a.heads * tokens * tokens, `${name}.position_bias`));
    return layers;
  };
  const ffn = (name: string, tokens: number) =>
    feedForward({
      name,
      tokens,
      hidden: d,
      ffn: a.ffn,
      act: gated ? 'gelu' : 'relu',
      bias: false,
      gated,
      innerDropout: a.dropout,
    });
  // The bucket table is looked up once per (query, key) pair and head, by the stack's first layer.
  const positionTable = (name: string, q: number, k: number) => embedding(a.buckets, a.heads, q * k, name);
  const encoderBlock = [
    ...sublayer(selfAttn('enc.self_attn', S), res('enc.self_attn', S)),
    ...sublayer(ffn('enc.ffn', S), res('enc.ffn', S)),
  ];
  const decoderBlock = [
    ...sublayer(selfAttn('dec.self_attn', T), res('dec.self_attn', T)),
    ...sublayer(attn('dec.cross_attn', T, S, true), res('dec.cross_attn', T)),
    ...sublayer(ffn('dec.ffn', T), res('dec.ffn', T)),
  ];
  return [
    embedding(a.vocab, d, S, 'shared_embeddings'),
    ...(a.dropout ? [dropout(S * d, 'enc.embed_dropout')] : []),
    positionTable('enc.relative_position_buckets', S, S),
    ...repeat(encoderBlock, a.encLayers),
    norm('rmsnorm', d, S * d, 'enc.final_norm'),
    sharedEmbedding(d, T, 'dec.embed'),
    ...(a.dropout ? [dropout(T * d, 'dec.embed_dropout')] : []),
    positionTable('dec.relative_position_buckets', T, T),
    ...repeat(decoderBlock, a.decLayers),
    norm('rmsnorm', d, T * d, 'dec.final_norm'),
    ...(a.tiedHead ? [scale(T * d, 'lm_head.rescale')] : []),
    linear(d, a.vocab, { tokens: T, bias: false, tied: a.tiedHead, name: 'lm_head' }),
    loss(T * a.vocab),
  ];
}
