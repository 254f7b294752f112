// WaveGlow (Prenger et al. 2019) as in NVIDIA DeepLearningExamples: the mel spectrogram is
// upsampled to audio rate, audio is folded into groups of `group` samples, and `flows` steps of
// (invertible 1x1 conv, affine coupling whose scale/shift come from a WaveNet-like stack of
// dilated convolutions conditioned on the mel) transform it; every `earlyEvery` flows
// `earlySize` channels leave early to the loss. One batch element is one audio segment.
import type { Layer } from '../types.js';
import { act, add, loss, mul, repeat } from './common.js';
import { archOf, seqLenOf, type ZooEntry } from './spec.js';

interface WaveGlowArch {
  mels: number;
  flows: number;
  group: number;
  earlyEvery: number;
  earlySize: number;
  wnLayers: number;
  wnChannels: number;
  wnKernel: number;
  /** STFT hop (audio samples per mel frame) and the transposed-conv upsampler's kernel. */
  hop: number;
  upsampleKernel: number;
}

const conv1d = (
  inC: number,
  outC: number,
  kernel: number,
  inL: number,
  name: string,
  dilation = 1,
): Layer => ({
  type: 'conv1d',
  inC,
  outC,
  kernel,
  dilation,
  padding: (dilation * (kernel - 1)) / 2,
  inL,
  bias: true,
  name,
});

/**
 * The coupling network: start 1x1 conv, `wnLayers` dilated convs (dilation 2^i) each added to a
 * 1x1 projection of the mel, gated by tanh * sigmoid, then a 1x1 conv into residual and skip
 * paths; an end 1x1 conv emits log-scale and shift for the other half of the channels.
 */
function wn(a: WaveGlowArch, half: number, steps: number, flow: string): Layer[] {
  const c = a.wnChannels;
  const gate = c * steps;
  const layers: Layer[] = [conv1d(half, c, 1, steps, `${flow}.wn.start`)];
  for (let i = 0; i < a.wnLayers; i++) {
    const last = i === a.wnLayers - 1;
    layers.push(
      conv1d(c, 2 * c, a.wnKernel, steps, `${flow}.wn.in${i}`, 2 ** i),
      conv1d(a.mels * a.group, 2 * c, 1, steps, `${flow}.wn.cond${i}`),
      add(2 * gate, `${flow}.wn.in_plus_cond${i}`),
      act('tanh', gate),
      act('sigmoid', gate),
      mul(gate, `${flow}.wn.gate${i}`),
      conv1d(c, last ? c : 2 * c, 1, steps, `${flow}.wn.res_skip${i}`),
      ...(last ? [] : [add(gate, `${flow}.wn.residual${i}`)]),
      ...(i > 0 ? [add(gate, `${flow}.wn.skip_sum${i}`)] : []),
    );
  }
  layers.push(conv1d(c, 2 * half, 1, steps, `${flow}.wn.end`));
  return layers;
}

export function buildWaveGlow(e: ZooEntry): Layer[] {
  const a = archOf<WaveGlowArch>(e, [
    'mels',
    'flows',
    'group',
    'earlyEvery',
    'earlySize',
    'wnLayers',
    'wnChannels',
    'wnKernel',
    'hop',
    'upsampleKernel',
  ]);
  const samples = seqLenOf(e);
  const steps = samples / a.group;
  const frames = Math.floor(samples / a.hop) + 1; // centred STFT
  // ConvTranspose1d(mels, mels, upsampleKernel, stride=hop) costs frames*kernel*mels^2 MACs; as a
  // stride-1 conv1d over frames + kernel - 1 positions it has that cost and the same weights.
  const layers: Layer[] = [
    {
      type: 'conv1d',
      inC: a.mels,
      outC: a.mels,
      kernel: a.upsampleKernel,
      inL: frames + a.upsampleKernel - 1,
      bias: true,
      name: 'upsample',
    },
  ];
  // Flows between two early outputs see the same channel count and are identical layer for
  // layer (the dilations restart in every coupling network): one copy, repeated.
  for (let first = 0; first < a.flows; first += a.earlyEvery) {
    const channels = a.group - (first / a.earlyEvery) * a.earlySize;
    const half = channels / 2;
    const name = `flows${first}-${Math.min(first + a.earlyEvery, a.flows) - 1}`;
    const flow: Layer[] = [
      {
        type: 'conv1d',
        inC: channels,
        outC: channels,
        kernel: 1,
        inL: steps,
        bias: false,
        name: `${name}.invertible_1x1`,
      },
      ...wn(a, half, steps, name),
      // audio_1 = exp(log_s) * audio_1 + b. The vocabulary has no exp; sigmoid is the same kind
      // of one-transcendental-per-element pass.
      act('sigmoid', half * steps, `${name}.exp_log_s`),
      mul(half * steps, `${name}.affine_scale`),
      add(half * steps, `${name}.affine_shift`),
    ];
    layers.push(...repeat(flow, Math.min(a.earlyEvery, a.flows - first)));
  }
  layers.push(loss(samples + a.flows * (a.group / 2) * steps, 'flow_nll'));
  return layers;
}
