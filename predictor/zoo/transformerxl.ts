// Transformer-XL (Dai et al. 2019) as in NVIDIA DeepLearningExamples' mem_transformer.py:
// relative-position attention over [memory; segment], post-norm blocks, and adaptive input /
// adaptive softmax over a frequency-sorted vocabulary split into clusters.
import type { Layer } from '../types.js';
import { feedForward, sublayer } from './attention.js';
import { add, dropout, embedding, linear, loss, repeat, scale, softmax } from './common.js';
import { archOf, seqLenOf, type ZooEntry } from './spec.js';

interface TransformerXLArch {
  layers: number;
  hidden: number;
  heads: number;
  headDim: number;
  ffn: number;
  /** Cached hidden states from the previous segment that every layer attends to. */
  memLen: number;
  vocab: number;
  /** Vocabulary cut points of the adaptive embedding / softmax clusters. */
  cutoffs: number[];
  /** Cluster i embeds in hidden / divVal^i dimensions (1: one full-width table). */
  divVal: number;
  /** Share of target tokens falling in each tail cluster (cluster 1 onwards). */
  tailTokenFractions: number[];
  /** Dropout on attention probabilities. */
  dropAttention: boolean;
}

interface Cluster {
  size: number;
  dim: number;
  tokens: number;
}

/** Clusters with their vocabulary size, embedding width and the tokens (per sequence) they see. */
function clusters(a: TransformerXLArch, tgt: number): Cluster[] {
  const edges = [0, ...a.cutoffs, a.vocab];
  if (a.tailTokenFractions.length !== a.cutoffs.length)
    throw new Error('transformerxl: one tail fraction per cutoff');
  const tailShare = a.tailTokenFractions.reduce((s, f) => s + f, 0);
  return a.cutoffs.concat(a.vocab).map((_, i) => ({
    size: edges[i + 1] - edges[i],
    dim: Math.floor(a.hidden / a.divVal ** i),
    tokens: tgt * (i === 0 ? 1 - tailShare : a.tailTokenFractions[i - 1]),
  }));
}

/**
 * Adaptive input: each token is looked up in its cluster's table and, when that table is
 * narrower than the model, projected up. With divVal 1 it is one plain embedding.
 */
function adaptiveInput(a: TransformerXLArch, cs: Cluster[], tgt: number): Layer[] {
  if (a.divVal === 1) return [embedding(a.vocab, a.hidden, tgt, 'word_embeddings')];
  return cs.flatMap((c, i) => [
    embedding(c.size, c.dim, c.tokens, `word_embeddings.${i}`),
    linear(c.dim, a.hidden, { tokens: c.tokens, bias: false, name: `word_embeddings.proj${i}` }),
  ]);
}

/**
 * Adaptive softmax: every token scores the head (cluster 0 plus one logit per tail cluster);
 * only tokens whose target lies in a tail cluster score that cluster. Output weights are the
 * input embeddings (tied); with divVal > 1 the head keeps its own projection, the tails reuse the
 * input projections.
 */
function adaptiveSoftmax(a: TransformerXLArch, cs: Cluster[], tgt: number): Layer[] {
  const headSize = cs[0].size + cs.length - 1;
  const narrow = a.divVal !== 1;
  const layers: Layer[] = [];
  if (narrow) layers.push(linear(a.hidden, cs[0].dim, { tokens: tgt, bias: false, name: 'crit.head_proj' }));
  layers.push(linear(cs[0].dim, headSize, { tokens: tgt, tied: true, name: 'crit.head' }));
  cs.slice(1).forEach((c, j) => {
    if (narrow)
      layers.push(linear(a.hidden, c.dim, { tokens: c.tokens, tied: true, name: `crit.tail_proj${j + 1}` }));
    layers.push(linear(c.dim, c.size, { tokens: c.tokens, tied: true, name: `crit.tail${j + 1}` }));
  });
  const logits = tgt * headSize + cs.slice(1).reduce((s, c) => s + c.tokens * c.size, 0);
  // mem_transformer.py's criterion: F.log_softmax over each cluster's logits, then gather.
  layers.push(loss(logits, 'loss', 'log_softmax_nll'));
  return layers;
}

/**
 * Relative multi-head attention for one segment of `tgt` queries over `klen` = mem + tgt keys.
 * The QKV projection runs over the concatenated memory too (mem_transformer.py projects `cat`);
 * scores are content (AC) plus position (BD) terms, BD is realigned by a relative shift.
 */
function relativeAttention(a: TransformerXLArch, tgt: number, klen: number): Layer[] {
  const inner = a.heads * a.headDim;
  const scores = a.heads * tgt * klen;
  const q = tgt * inner;
  return [
    linear(a.hidden, 3 * inner, { tokens: klen, bias: false, name: 'attn.qkv' }),
    // r_net projects the position encodings once per batch, not per sample: one token keeps its
    // parameters with a per-sample cost that is negligible next to the rest.
    linear(a.hidden, inner, { tokens: 1, bias: false, name: 'attn.r_net' }),
    { ...add(q, 'attn.rel_bias'), count: 2 },
    {
      type: 'matmul',
      name: 'attn.scores_content_position',
      batches: a.heads,
      m: tgt,
      n: klen,
      k: a.headDim,
      count: 2,
    },
    scale(scores, 'attn.rel_shift'),
    add(scores, 'attn.ac_plus_bd'),
    scale(scores, 'attn.scale_mask'),
    softmax(scores, 'attn.softmax'),
    ...(a.dropAttention ? [dropout(scores, 'attn.prob_dropout')] : []),
    { type: 'matmul', name: 'attn.context', batches: a.heads, m: tgt, n: a.headDim, k: klen },
    linear(inner, a.hidden, { tokens: tgt, bias: false, name: 'attn.out' }),
  ];
}

export function buildTransformerXL(e: ZooEntry): Layer[] {
  const a = archOf<TransformerXLArch>(e, [
    'layers',
    'hidden',
    'heads',
    'headDim',
    'ffn',
    'memLen',
    'vocab',
    'cutoffs',
    'divVal',
    'tailTokenFractions',
    'dropAttention',
  ]);
  const tgt = seqLenOf(e);
  const klen = tgt + a.memLen;
  const x = tgt * a.hidden;
  const cs = clusters(a, tgt);
  const res = (name: string) => ({
    name,
    tokens: tgt,
    hidden: a.hidden,
    norm: 'layernorm' as const,
    preNorm: false,
    dropout: true,
  });
  const block = [
    ...sublayer(relativeAttention(a, tgt, klen), res('attn')),
    ...sublayer(
      feedForward({
        name: 'ff',
        tokens: tgt,
        hidden: a.hidden,
        ffn: a.ffn,
        act: 'relu',
        bias: true,
        innerDropout: true,
      }),
      res('ff'),
    ),
  ];
  return [
    ...adaptiveInput(a, cs, tgt),
    scale(x, 'embed_scale'),
    dropout(x, 'embed_dropout'),
    ...repeat(block, a.layers),
    dropout(x, 'output_dropout'),
    ...adaptiveSoftmax(a, cs, tgt),
  ];
}
