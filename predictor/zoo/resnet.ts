// ResNet v1 / v1.5, ResNeXt and SE-ResNeXt: stacks of bottleneck blocks. The stem and stages are
// exported because SSD300 and Mask R-CNN use ResNet-50 as their backbone.
import type { Layer } from '../types.js';
import { FeatureMap } from './common.js';
import { archOf, imageSizeOf, type ZooEntry } from './spec.js';

export interface ResNetArch {
  stemWidth: number;
  /** Blocks per stage, e.g. [3, 4, 6, 3] for ResNet-50. */
  stages: number[];
  /** Bottleneck width per stage (the 3x3 conv's channels); a block outputs width * expansion. */
  widths: number[];
  expansion: number;
  /** Cardinality of the grouped 3x3 conv (ResNeXt); 1 for ResNet. */
  groups: number;
  /** v1.5 strides the 3x3 conv of a downsampling block, v1 strides its first 1x1 (fewer FLOPs). */
  stride3x3: boolean;
  /** Squeeze-and-excitation after conv3: a fixed bottleneck width, or channels / reduction. */
  se?: { squeezeChannels?: number; reduction?: number } | null;
  numClasses: number;
}

export const RESNET_KEYS = [
  'stemWidth',
  'stages',
  'widths',
  'expansion',
  'groups',
  'stride3x3',
  'numClasses',
] as const;

export function resnetStem(f: FeatureMap, width: number): void {
  f.convBn(width, 7, { stride: 2, name: 'conv1' }).pool('max', 3, 2, 1);
}

function seWidth(a: ResNetArch, channels: number): number | undefined {
  if (!a.se) return undefined;
  if (a.se.squeezeChannels) return a.se.squeezeChannels;
  if (a.se.reduction) return Math.floor(channels / a.se.reduction);
  throw new Error('se needs squeezeChannels or reduction');
}

function bottleneck(f: FeatureMap, a: ResNetArch, width: number, stride: number, name: string): void {
  const out = width * a.expansion;
  const se = seWidth(a, out);
  const projects = stride !== 1 || f.shape.c !== out;
  f.residual(
    (m) => {
      m.convBn(width, 1, { stride: a.stride3x3 ? 1 : stride, name: `${name}.conv1` });
      m.convBn(width, 3, { stride: a.stride3x3 ? stride : 1, groups: a.groups, name: `${name}.conv2` });
      m.convBn(out, 1, { act: null, name: `${name}.conv3` });
      if (se) m.squeezeExcite(se, 'relu');
    },
    projects ? (s) => s.convBn(out, 1, { stride, act: null, name: `${name}.downsample` }) : undefined,
  );
  f.act('relu');
}

/** Stage i: a first block that may stride and project, then identical blocks. */
export function resnetStage(f: FeatureMap, a: ResNetArch, i: number, stride: number): void {
  const name = `layer${i + 1}`;
  bottleneck(f, a, a.widths[i], stride, `${name}.0`);
  f.repeat(a.stages[i] - 1, (b) => bottleneck(b, a, a.widths[i], 1, `${name}.n`));
}

export function buildResNet(e: ZooEntry): Layer[] {
  const a = archOf<ResNetArch>(e, RESNET_KEYS);
  const size = imageSizeOf(e);
  const f = new FeatureMap({ c: 3, h: size, w: size });
  resnetStem(f, a.stemWidth);
  a.stages.forEach((_, i) => resnetStage(f, a, i, i === 0 ? 1 : 2));
  return f.classify(a.numClasses, false).layers;
}
