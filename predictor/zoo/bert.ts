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
  /**
   * squad: span start/end logits (fine-tuning); pretrain: masked LM + next sentence; mlm: masked LM
   * only (Hugging Face BertForMaskedLM); classify: pooled [CLS] -> numLabels (BertForSequenceClassification).
   */
  head: 'squad' | 'pretrain' | 'mlm' | 'classify';
  /**
   * Masked-LM predictions per sequence position: max_predictions_per_seq / seq_len where the code
   * gathers the masked positions first (NVIDIA's reference), 1 where it scores every position
   * (transformers' BertForMaskedLM; predictor/import/huggingface.ts).
   */
  mlmFraction?: number;
  /** The tied MLM decoder keeps its own bias over the vocabulary (Hugging Face's BertLMPredictionHead). */
  mlmDecoderBias?: boolean;
  /** Classes of the `classify` head. */
  numLabels?: number;
}

function squadHead(tokens: number, hidden: number): Layer[] {
  return [linear(hidden, 2, { tokens, name: 'qa_outputs' }), loss(2 * tokens, 'span_loss')];
}

/**
 * The masked-LM head runs on mlmFraction of the positions (only the masked ones where the code
 * gathers them first); its decoder shares the word-embedding matrix. NSP classifies the pooled
 * [CLS] vector.
 */
function pretrainHead(tokens: number, a: BertArch): Layer[] {
  return [...mlmHead(tokens, a), ...classifyHead(a.hidden, 2, 'nsp')];
}

function mlmHead(tokens: number, a: BertArch): Layer[] {
  if (a.mlmFraction === undefined) throw new Error(`bert ${a.head} head needs arch.mlmFraction`);
  const masked = Math.round(tokens * a.mlmFraction);
  const d = a.hidden;
  return [
    linear(d, d, { tokens: masked, name: 'mlm.transform' }),
    act('gelu', masked * d, 'mlm.act'),
    norm('layernorm', d, masked * d, 'mlm.norm'),
    linear(d, a.vocab, { tokens: masked, tied: true, name: 'mlm.decoder' }),
    // A bare learned vector is a one-row embedding in the layer vocabulary (see vit.ts's cls_token).
    ...(a.mlmDecoderBias ? [embedding(1, a.vocab, 1, 'mlm.decoder_bias')] : []),
    loss(masked * a.vocab, 'mlm.loss'),
  ];
}

/** The pooler (dense + tanh on the [CLS] vector) and a classifier over it. */
function classifyHead(d: number, labels: number, name: string): Layer[] {
  return [
    linear(d, d, { name: 'pooler' }),
    act('tanh', d, 'pooler.act'),
    linear(d, labels, { name }),
    loss(labels, `${name}.loss`),
  ];
}

function head(tokens: number, a: BertArch): Layer[] {
  switch (a.head) {
    case 'squad':
      return squadHead(tokens, a.hidden);
    case 'pretrain':
      return pretrainHead(tokens, a);
    case 'mlm':
      return mlmHead(tokens, a);
    case 'classify':
      return classifyHead(a.hidden, a.numLabels ?? 2, 'classifier');
  }
}

export function buildBert(e: ZooEntry): Layer[] {
  const a = archOf<BertArch>(e, [
    'layers',
    'hidden',
    'heads',
    'ffn',
    'vocab',
    'maxPositions',
    'typeVocab',
    'head',
  ]);
  const L = seqLenOf(e);
  const d = a.hidden;
  const x = L * d;
  const res = (name: string) => ({
    name,
    tokens: L,
    hidden: d,
    norm: 'layernorm' as const,
    preNorm: false,
    dropout: true,
  });
  const block = [
    ...sublayer(
      attention({
        name: 'attn',
        queries: L,
        keys: L,
        hidden: d,
        heads: a.heads,
        headDim: d / a.heads,
        bias: true,
        probDropout: true,
        // Separate query, key and value linears in NVIDIA's BERT (DeepLearningExamples modeling.py
        // BertSelfAttention) and in transformers'.
        separateProjections: true,
      }),
      res('attn'),
    ),
    ...sublayer(
      feedForward({ name: 'ffn', tokens: L, hidden: d, ffn: a.ffn, act: 'gelu', bias: true }),
      res('ffn'),
    ),
  ];
  return [
    embedding(a.vocab, d, L, 'word_embeddings'),
    embedding(a.maxPositions, d, L, 'position_embeddings'),
    embedding(a.typeVocab, d, L, 'token_type_embeddings'),
    add(x, 'embeddings.sum', 3),
    norm('layernorm', d, x, 'embeddings.norm'),
    dropout(x, 'embeddings.dropout'),
    ...repeat(block, a.layers),
    ...head(L, a),
  ];
}
