// GNMT v2 as in NVIDIA DeepLearningExamples (PyTorch/Translation/GNMT): LSTM encoder (first layer
// bidirectional) and decoder, normalized Bahdanau attention fed by the first decoder layer and
// concatenated into the inputs of the others, residual connections from the third layer, a
// shared embedding, and a full-vocabulary classifier. One batch element is a sentence pair.
import type { Layer } from '../types.js';
import { act, add, dropout, embedding, linear, loss, repeat, sharedEmbedding, softmax } from './common.js';
import { archOf, type ZooEntry } from './spec.js';

interface GnmtArch {
  hidden: number;
  encLayers: number;
  decLayers: number;
  vocab: number;
  /** Padded source / target lengths the GPU computes over (bucketed batches). */
  srcLen: number;
  tgtLen: number;
  sharedEmbedding: boolean;
}

const lstm = (
  inputSize: number,
  hiddenSize: number,
  steps: number,
  name: string,
  bidirectional = false,
): Layer => ({ type: 'rnn', cell: 'lstm', inputSize, hiddenSize, steps, bidirectional, name });

function encoder(a: GnmtArch): Layer[] {
  const h = a.hidden;
  const x = a.srcLen * h;
  const residualLayer = [
    dropout(x, 'enc.dropout'),
    lstm(h, h, a.srcLen, 'enc.lstm_residual'),
    add(x, 'enc.residual'),
  ];
  return [
    embedding(a.vocab, h, a.srcLen, 'embedding'),
    dropout(x, 'enc.dropout'),
    lstm(h, h, a.srcLen, 'enc.lstm0_bidir', true),
    dropout(2 * x, 'enc.dropout'),
    lstm(2 * h, h, a.srcLen, 'enc.lstm1'),
    ...repeat(residualLayer, a.encLayers - 2),
  ];
}

/**
 * Bahdanau scores: tanh(Wq q + Wk k + b) . v for every (query, key) pair; the add and tanh run
 * on a tgt x src x hidden tensor, which makes this attention memory-bound rather than a GEMM.
 */
function bahdanau(a: GnmtArch): Layer[] {
  const h = a.hidden;
  const pairs = a.tgtLen * a.srcLen;
  return [
    linear(h, h, { tokens: a.tgtLen, bias: false, name: 'attn.query' }),
    linear(h, h, { tokens: a.srcLen, bias: false, name: 'attn.key' }),
    add(pairs * h, 'attn.q_plus_k_plus_bias', 3),
    act('tanh', pairs * h, 'attn.tanh'),
    linear(h, 1, { tokens: pairs, bias: false, name: 'attn.v' }),
    softmax(pairs, 'attn.softmax'),
    { type: 'matmul', name: 'attn.context', m: a.tgtLen, n: h, k: a.srcLen },
  ];
}

function decoder(a: GnmtArch): Layer[] {
  const h = a.hidden;
  const y = a.tgtLen * h;
  const residualLayer = [
    dropout(y, 'dec.dropout'),
    lstm(2 * h, h, a.tgtLen, 'dec.lstm_residual'),
    add(y, 'dec.residual'),
  ];
  return [
    a.sharedEmbedding
      ? sharedEmbedding(h, a.tgtLen, 'dec.embedding')
      : embedding(a.vocab, h, a.tgtLen, 'dec.embedding'),
    dropout(y, 'dec.dropout'),
    lstm(h, h, a.tgtLen, 'dec.lstm0_attention'),
    ...bahdanau(a),
    dropout(y, 'dec.dropout'),
    lstm(2 * h, h, a.tgtLen, 'dec.lstm1'),
    ...repeat(residualLayer, a.decLayers - 2),
    linear(h, a.vocab, { tokens: a.tgtLen, name: 'classifier' }),
    loss(a.tgtLen * a.vocab, 'label_smoothed_ce'),
  ];
}

export function buildGnmt(e: ZooEntry): Layer[] {
  const a = archOf<GnmtArch>(e, [
    'hidden',
    'encLayers',
    'decLayers',
    'vocab',
    'srcLen',
    'tgtLen',
    'sharedEmbedding',
  ]);
  return [...encoder(a), ...decoder(a)];
}
