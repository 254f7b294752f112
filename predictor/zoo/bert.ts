// BERT encoder (Devlin et al. 2019) with its fine-tuning (SQuAD span) or pre-training (masked LM
// + next sentence) head. Post-norm blocks, GELU feed-forward, dropout as in the reference.
import type { Layer } from '../types.js';
import { attention, feedForward, sublayer } from './attention.js';
import { act, add, dropout, embedding, linear, loss, norm, repeat } from './common.js';
import { archOf, seqLenOf, type ZooEntry } from './spec.js';

interface BertArch {
  layers: number;
  hidden: number;
  heads: number;
  ffn: number;
  vocab: number;
  maxPositions: number;
  typeVocab: number;
  head: 'squad' | 'pretrain';
  /** Masked-LM predictions per sequence position (max_predictions_per_seq / seq_len). */
  mlmFraction?: number;
}

function squadHead(tokens: number, hidden: number): Layer[] {
  return [linear(hidden, 2, { tokens, name: 'qa_outputs' }), loss(2 * tokens, 'span_loss')];
}

/**
 * The masked-LM head runs only on the masked positions (the reference gathers them first); its
 * decoder shares the word-embedding matrix. NSP classifies the pooled [CLS] vector.
 */
function pretrainHead(tokens: number, a: BertArch): Layer[] {
  if (a.mlmFraction === undefined) throw new Error('bert pretrain head needs arch.mlmFraction');
  const masked = Math.round(tokens * a.mlmFraction);
  const d = a.hidden;
  return [
    linear(d, d, { tokens: masked, name: 'mlm.transform' }),
    act('gelu', masked * d, 'mlm.act'),
    norm('layernorm', d, masked * d, 'mlm.norm'),
    linear(d, a.vocab, { tokens: masked, tied: true, name: 'mlm.decoder' }),
    loss(masked * a.vocab, 'mlm.loss'),
    linear(d, d, { name: 'pooler' }),
    act('tanh', d, 'pooler.act'),
    linear(d, 2, { name: 'nsp' }),
    loss(2, 'nsp.loss'),
  ];
}

export function buildBert(e: ZooEntry): Layer[] {
  const a = archOf<BertArch>(e, ['layers', 'hidden', 'heads', 'ffn', 'vocab', 'maxPositions', 'typeVocab', 'head']);
  const L = seqLenOf(e);
  const d = a.hidden;
  const x = L * d;
  const res = (name: string) => ({ name, tokens: L, hidden: d, norm: 'layernorm' as const, preNorm: false, dropout: true });
  const block = [
    ...sublayer(attention({ name: 'attn', queries: L, keys: L, hidden: d, heads: a.heads, headDim: d / a.heads, bias: true, probDropout: true }), res('attn')),
    ...sublayer(feedForward({ name: 'ffn', tokens: L, hidden: d, ffn: a.ffn, act: 'gelu', bias: true }), res('ffn')),
  ];
  return [
    embedding(a.vocab, d, L, 'word_embeddings'),
    embedding(a.maxPositions, d, L, 'position_embeddings'),
    embedding(a.typeVocab, d, L, 'token_type_embeddings'),
    add(x, 'embeddings.sum', 3),
    norm('layernorm', d, x, 'embeddings.norm'),
    dropout(x, 'embeddings.dropout'),
    ...repeat(block, a.layers),
    ...(a.head === 'squad' ? squadHead(L, d) : pretrainHead(L, a)),
  ];
}
