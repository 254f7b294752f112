// Tacotron 2 (Shen et al. 2018) as in NVIDIA DeepLearningExamples: character embedding, conv +
// BiLSTM encoder, an autoregressive decoder (prenet, attention LSTM, location-sensitive attention,
// decoder LSTM, mel and stop-token projections) run with teacher forcing one frame per step, and
// a convolutional postnet. One batch element is one utterance.
import type { Layer } from '../types.js';
import { act, add, copy, dropout, embedding, linear, loss, norm, repeat, softmax } from './common.js';
import { archOf, type ZooEntry } from './spec.js';

interface Tacotron2Arch {
  symbols: number;
  embedding: number;
  encoderConvs: number;
  encoderKernel: number;
  attentionRnn: number;
  decoderRnn: number;
  prenet: number;
  attentionDim: number;
  locationFilters: number;
  locationKernel: number;
  postnetConvs: number;
  postnetChannels: number;
  postnetKernel: number;
  mels: number;
  /** Mean characters per utterance (the encoder LSTM packs sequences, so it sees true lengths). */
  textLen: number;
  /** Characters per utterance after padding to the longest in the batch (attention memory). */
  paddedTextLen: number;
  /** Decoder steps per utterance: mel frames padded to the longest in the batch. */
  paddedMelFrames: number;
}

const conv1d = (
  inC: number,
  outC: number,
  kernel: number,
  inL: number,
  name: string,
  bias = true,
  steps?: number,
): Layer => ({
  type: 'conv1d',
  inC,
  outC,
  kernel,
  padding: (kernel - 1) / 2,
  inL,
  bias,
  name,
  ...(steps !== undefined ? { steps } : {}),
});

/** conv1d -> batch norm -> activation -> dropout(0.5), the unit of encoder and postnet. */
function convBlock(
  inC: number,
  outC: number,
  kernel: number,
  len: number,
  actKind: 'relu' | 'tanh' | null,
  name: string,
): Layer[] {
  const e = outC * len;
  return [
    conv1d(inC, outC, kernel, len, name),
    norm('batchnorm', outC, e),
    ...(actKind ? [act(actKind, e)] : []),
    dropout(e),
  ];
}

function encoder(a: Tacotron2Arch): Layer[] {
  const d = a.embedding;
  return [
    embedding(a.symbols, d, a.paddedTextLen, 'symbols'),
    ...repeat(convBlock(d, d, a.encoderKernel, a.paddedTextLen, 'relu', 'encoder.conv'), a.encoderConvs),
    {
      type: 'rnn',
      cell: 'lstm',
      inputSize: d,
      hiddenSize: d / 2,
      steps: a.textLen,
      bidirectional: true,
      name: 'encoder.bilstm',
    },
  ];
}

/**
 * The decoder loop, one mel frame per step. Weight layers carry all steps in `tokens` (their
 * parameters must count once); the weightless per-step work is repeated with `count`, so the GPU
 * is seen launching its small kernels once per step, as it does.
 */
function decoder(a: Tacotron2Arch): Layer[] {
  const T = a.paddedMelFrames;
  const mem = a.paddedTextLen;
  const ctx = a.embedding;
  const att = a.attentionDim;
  const energies = mem * att;
  // Decoder.decode's per-step work besides the weighted layers, in its order: the concatenations
  // that build each cell's and projection's input are kernels of their own.
  const weightlessPerStep: Layer[] = [
    copy(a.prenet + ctx, 'attention_rnn.input_cat'),
    dropout(a.attentionRnn, 'attention_rnn.dropout'),
    copy(2 * mem, 'attention.weights_cat'),
    // Location-sensitive energies: query + location + memory terms, tanh, then softmax over the text.
    add(energies, 'attention.energy_sum', 3),
    act('tanh', energies, 'attention.tanh'),
    copy(mem, 'attention.mask_fill'),
    softmax(mem, 'attention.softmax'),
    { type: 'matmul', name: 'attention.context', m: 1, n: ctx, k: mem, sharedRight: true },
    add(mem, 'attention.cumulative_weights'),
    copy(a.attentionRnn + ctx, 'decoder_rnn.input_cat'),
    dropout(a.decoderRnn, 'decoder_rnn.dropout'),
    copy(a.decoderRnn + ctx, 'projection.input_cat'),
  ];
  return [
    linear(ctx, att, { tokens: mem, bias: false, name: 'attention.memory_layer' }),
    linear(a.mels, a.prenet, { tokens: T, bias: false, name: 'prenet.0' }),
    act('relu', T * a.prenet),
    dropout(T * a.prenet),
    linear(a.prenet, a.prenet, { tokens: T, bias: false, name: 'prenet.1' }),
    act('relu', T * a.prenet),
    dropout(T * a.prenet),
    {
      type: 'rnn',
      cell: 'lstm',
      inputSize: a.prenet + ctx,
      hiddenSize: a.attentionRnn,
      steps: T,
      // Decoder.decode: each step feeds the previous step's attention context (an LSTMCell).
      stepwiseInput: true,
      name: 'attention_rnn',
    },
    linear(a.attentionRnn, att, { tokens: T, bias: false, name: 'attention.query_layer', steps: T }),
    // Every step convolves the alignments over the whole text; laying the steps end to end as one
    // long sequence gives the same FLOPs while the filter's parameters count once. `steps` tells the
    // memory model that each step's tensors exist on their own.
    conv1d(2, a.locationFilters, a.locationKernel, T * mem, 'attention.location_conv', false, T),
    linear(a.locationFilters, att, {
      tokens: T * mem,
      bias: false,
      name: 'attention.location_dense',
      steps: T,
    }),
    linear(att, 1, { tokens: T * mem, bias: false, name: 'attention.v', steps: T }),
    ...repeat(weightlessPerStep, T),
    {
      type: 'rnn',
      cell: 'lstm',
      inputSize: a.attentionRnn + ctx,
      hiddenSize: a.decoderRnn,
      steps: T,
      stepwiseInput: true,
      name: 'decoder_rnn',
    },
    // Both read each step's decoder state as it is produced (Decoder.decode): a small GEMM per step.
    linear(a.decoderRnn + ctx, a.mels, { tokens: T, name: 'linear_projection', steps: T }),
    linear(a.decoderRnn + ctx, 1, { tokens: T, name: 'gate_layer', steps: T, sameInputAs: 1 }),
  ];
}

function postnet(a: Tacotron2Arch): Layer[] {
  const T = a.paddedMelFrames;
  const c = a.postnetChannels;
  const k = a.postnetKernel;
  const frames = a.mels * T;
  return [
    ...convBlock(a.mels, c, k, T, 'tanh', 'postnet.0'),
    ...repeat(convBlock(c, c, k, T, 'tanh', 'postnet.n'), a.postnetConvs - 2),
    ...convBlock(c, a.mels, k, T, null, 'postnet.last'),
    add(frames, 'postnet.residual'),
    loss(2 * frames + T, 'mel_mse_and_gate_bce'),
  ];
}

export function buildTacotron2(e: ZooEntry): Layer[] {
  const a = archOf<Tacotron2Arch>(e, [
    'symbols',
    'embedding',
    'encoderConvs',
    'encoderKernel',
    'attentionRnn',
    'decoderRnn',
    'prenet',
    'attentionDim',
    'locationFilters',
    'locationKernel',
    'postnetConvs',
    'postnetChannels',
    'postnetKernel',
    'mels',
    'textLen',
    'paddedTextLen',
    'paddedMelFrames',
  ]);
  return [...encoder(a), ...decoder(a), ...postnet(a)];
}
