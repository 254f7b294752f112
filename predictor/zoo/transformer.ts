// The encoder-decoder Transformer for WMT translation (Vaswani et al. 2017, "big"), as in
// fairseq's transformer_wmt_en_de_big_t2t (pre-norm). Its batches are sized in tokens, so one
// batch element here is one token position: one source token through the encoder and one target
// token through the decoder, each attending over a sentence of `contextLen` positions.
import type { Layer } from '../types.js';
import { attention, feedForward, sublayer } from './attention.js';
import { add, dropout, embedding, linear, loss, norm, repeat, scale, sharedEmbedding } from './common.js';
import { archOf, type ZooEntry } from './spec.js';

interface TransformerArch {
  encLayers: number;
  decLayers: number;
  hidden: number;
  heads: number;
  ffn: number;
  vocab: number;
  /** Padded sentence length the attention spans (an average of the training data). */
  contextLen: number;
  preNorm: boolean;
  /** Encoder, decoder and output projection share one embedding matrix. */
  sharedEmbeddings: boolean;
}

export function buildTransformer(e: ZooEntry): Layer[] {
  const a = archOf<TransformerArch>(e, [
    'encLayers',
    'decLayers',
    'hidden',
    'heads',
    'ffn',
    'vocab',
    'contextLen',
    'preNorm',
    'sharedEmbeddings',
  ]);
  const d = a.hidden;
  const L = a.contextLen;
  const attn = {
    queries: 1,
    keys: L,
    hidden: d,
    heads: a.heads,
    headDim: d / a.heads,
    bias: true,
    probDropout: true,
  };
  const res = (name: string) => ({
    name,
    tokens: 1,
    hidden: d,
    norm: 'layernorm' as const,
    preNorm: a.preNorm,
    dropout: true,
  });
  const ffn = (name: string) =>
    feedForward({ name, tokens: 1, hidden: d, ffn: a.ffn, act: 'relu', bias: true, innerDropout: true });
  // Token embedding scaled by sqrt(d), plus the sinusoidal position (no parameters), then dropout.
  const embed = (table: Layer, side: string) => [
    table,
    scale(d, `${side}.embed_scale`),
    add(d, `${side}.positions`),
    dropout(d, `${side}.embed_dropout`),
  ];
  const finalNorm = (side: string) => (a.preNorm ? [norm('layernorm', d, d, `${side}.final_norm`)] : []);
  const encoderBlock = [
    ...sublayer(attention({ ...attn, name: 'enc.self_attn' }), res('enc.self_attn')),
    ...sublayer(ffn('enc.ffn'), res('enc.ffn')),
  ];
  const decoderBlock = [
    ...sublayer(attention({ ...attn, name: 'dec.self_attn' }), res('dec.self_attn')),
    // Each element projects K/V for its own source token; the other positions belong to other elements.
    ...sublayer(
      attention({ ...attn, name: 'dec.cross_attn', cross: true, projectedKeys: 1 }),
      res('dec.cross_attn'),
    ),
    ...sublayer(ffn('dec.ffn'), res('dec.ffn')),
  ];
  const decoderTable = a.sharedEmbeddings
    ? sharedEmbedding(d, 1, 'dec.embed')
    : embedding(a.vocab, d, 1, 'dec.embed');
  return [
    ...embed(embedding(a.vocab, d, 1, 'enc.embed'), 'enc'),
    ...repeat(encoderBlock, a.encLayers),
    ...finalNorm('enc'),
    ...embed(decoderTable, 'dec'),
    ...repeat(decoderBlock, a.decLayers),
    ...finalNorm('dec'),
    linear(d, a.vocab, { bias: false, tied: a.sharedEmbeddings, name: 'output_projection' }),
    loss(a.vocab),
  ];
}
