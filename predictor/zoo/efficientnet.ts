// EfficientNet: MBConv blocks (expand 1x1, depthwise kxk, squeeze-excite, project 1x1) with the
// compound scaling of Tan & Le (2019), rounded the way the reference implementations round.
import type { Layer } from '../types.js';
import { FeatureMap } from './common.js';
import { archOf, imageSizeOf, type ZooEntry } from './spec.js';

interface Stage {
  kernel: number;
  stride: number;
  repeats: number;
  expansion: number;
  channels: number;
}

interface EfficientNetArch {
  stemChannels: number;
  featureChannels: number;
  /** The B0 stages; other variants scale them with widthMult / depthMult. */
  stages: Stage[];
  widthMult: number;
  depthMult: number;
  /** Channel counts are rounded to multiples of this. */
  divisor: number;
  /** SE bottleneck = block input channels * seRatio. */
  seRatio: number;
  dropout: boolean;
  numClasses: number;
}

/** Round to the divisor, never more than 10% down (DLE / TF reference `round_filters`). */
function scaleWidth(channels: number, mult: number, divisor: number): number {
  const c = channels * mult;
  let rounded = Math.max(divisor, Math.floor((c + divisor / 2) / divisor) * divisor);
  if (rounded < 0.9 * c) rounded += divisor;
  return rounded;
}

function mbconv(f: FeatureMap, out: number, s: Stage, stride: number, seRatio: number): void {
  const inC = f.shape.c;
  const hidden = inC * s.expansion;
  const squeeze = Math.max(1, Math.floor(inC * seRatio));
  const body = (m: FeatureMap) => {
    if (s.expansion !== 1) m.convBn(hidden, 1, { act: 'silu', name: 'expand' });
    m.convBn(hidden, s.kernel, { stride, groups: hidden, act: 'silu', name: 'depthwise' });
    m.squeezeExcite(squeeze, 'silu');
    m.convBn(out, 1, { act: null, name: 'project' });
  };
  if (stride === 1 && inC === out) f.residual(body);
  else body(f);
}

export function buildEfficientNet(e: ZooEntry): Layer[] {
  const a = archOf<EfficientNetArch>(e, [
    'stemChannels',
    'featureChannels',
    'stages',
    'widthMult',
    'depthMult',
    'divisor',
    'seRatio',
    'dropout',
    'numClasses',
  ]);
  const width = (c: number) => scaleWidth(c, a.widthMult, a.divisor);
  const size = imageSizeOf(e);
  const f = new FeatureMap({ c: 3, h: size, w: size });
  f.convBn(width(a.stemChannels), 3, { stride: 2, act: 'silu', name: 'stem' });
  for (const s of a.stages) {
    const out = width(s.channels);
    mbconv(f, out, s, s.stride, a.seRatio);
    f.repeat(Math.ceil(s.repeats * a.depthMult) - 1, (b) => mbconv(b, out, s, 1, a.seRatio));
  }
  f.convBn(width(a.featureChannels), 1, { act: 'silu', name: 'features' });
  return f.classify(a.numClasses, a.dropout).layers;
}
