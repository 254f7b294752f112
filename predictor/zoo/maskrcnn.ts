// Mask R-CNN with a ResNet-50-FPN backbone (He et al. 2017; maskrcnn-benchmark as used by NVIDIA
// DeepLearningExamples PyTorch/Segmentation/MaskRCNN). Approximations, all per image:
// - the input is one padded image of imageSize x (imageSize * aspectRatio) (batches pad to the largest);
// - the work between the networks (anchor generation, proposal decoding, NMS, RoI sampling and
//   target matching) is not in the layer vocabulary and is left out;
// - RoIAlign is an average pool over 2x2 bilinear samples per output cell;
// - layers whose weights are shared across FPN levels or RoIs run on all of them laid side by side
//   as one strip: same FLOPs and elements, parameters counted once, one kernel instead of several;
// - the transposed 2x2 stride-2 mask conv is a 1x1 conv to 4x the channels (same MACs, weights).
import type { Layer } from '../types.js';
import { act, add, FeatureMap, linear, loss, scale, type Shape } from './common.js';
import { resnetStage, resnetStem, type ResNetArch } from './resnet.js';
import { archOf, imageSizeOf, type ZooEntry } from './spec.js';

interface MaskRcnnArch {
  backbone: ResNetArch;
  /** Long side / short side of the padded input (imageSize is the short side). */
  aspectRatio: number;
  /** Inputs are padded to a multiple of this. */
  sizeDivisibility: number;
  fpnChannels: number;
  anchorsPerLocation: number;
  /** RPN levels: P2..P5 from the FPN plus P6 (max-pooled P5). */
  rpnLevels: number;
  rpnSampledAnchors: number;
  /** RoIs sampled per image for the box head, and the positives among them that reach the mask head. */
  boxRois: number;
  maskRois: number;
  boxPool: number;
  maskPool: number;
  representation: number;
  maskConvs: number;
  numClasses: number;
}

/** Lateral 1x1 convs, top-down upsample-and-add, 3x3 output convs; returns P2..P5 shapes. */
function fpn(levels: Shape[], ch: number): { layers: Layer[]; outs: Shape[] } {
  const layers: Layer[] = [];
  const outs = levels.map((c, i) => {
    const lateral = new FeatureMap(c).conv(ch, 1, { bias: true, name: `fpn.lateral${i + 2}` });
    if (i < levels.length - 1) {
      const e = lateral.elements;
      lateral.push(scale(e, `fpn.upsample${i + 3}`), add(e, `fpn.top_down${i + 2}`));
    }
    lateral.conv(ch, 3, { bias: true, name: `fpn.output${i + 2}` });
    layers.push(...lateral.layers);
    return lateral.shape;
  });
  return { layers, outs };
}

function rpn(a: MaskRcnnArch, levels: Shape[]): Layer[] {
  const positions = levels.reduce((s, l) => s + l.h * l.w, 0);
  const head = new FeatureMap({ c: a.fpnChannels, h: 1, w: positions });
  const branch = head.conv(a.fpnChannels, 3, { bias: true, name: 'rpn.conv' }).act('relu').fork();
  head.conv(a.anchorsPerLocation, 1, { bias: true, name: 'rpn.objectness' });
  branch.conv(4 * a.anchorsPerLocation, 1, { bias: true, name: 'rpn.bbox' });
  return [...head.layers, ...branch.layers, loss(5 * a.rpnSampledAnchors, 'rpn.loss')];
}

/** RoIAlign of `rois` regions to pool x pool: average of 2x2 samples per cell. */
const roiAlign = (channels: number, rois: number, pool: number, name: string): Layer => ({
  type: 'pool',
  kind: 'avg',
  channels,
  inH: 2 * pool,
  inW: 2 * pool * rois,
  kernel: 2,
  stride: 2,
  name,
});

function boxHead(a: MaskRcnnArch): Layer[] {
  const R = a.boxRois;
  const r = a.representation;
  return [
    roiAlign(a.fpnChannels, R, a.boxPool, 'box.roi_align'),
    linear(a.fpnChannels * a.boxPool ** 2, r, { tokens: R, name: 'box.fc6' }),
    act('relu', R * r),
    linear(r, r, { tokens: R, name: 'box.fc7' }),
    act('relu', R * r),
    linear(r, a.numClasses, { tokens: R, name: 'box.cls' }),
    linear(r, 4 * a.numClasses, { tokens: R, name: 'box.bbox' }),
    loss(R * (a.numClasses + 4), 'box.loss'),
  ];
}

function maskHead(a: MaskRcnnArch): Layer[] {
  const M = a.maskRois;
  const p = a.maskPool;
  const ch = a.fpnChannels;
  const m = new FeatureMap({ c: ch, h: p, w: p * M });
  m.repeat(a.maskConvs, (b) => b.conv(ch, 3, { bias: true, name: 'mask.conv' }).act('relu'));
  m.conv(4 * ch, 1, { bias: true, name: 'mask.deconv' }).act('relu');
  m.shape = { c: ch, h: 2 * p, w: 2 * p * M };
  m.conv(a.numClasses, 1, { bias: true, name: 'mask.logits' });
  // Per-pixel sigmoid cross-entropy on each RoI's own class channel.
  return [roiAlign(ch, M, p, 'mask.roi_align'), ...m.layers, loss(M * (2 * p) ** 2, 'mask.loss')];
}

export function buildMaskRcnn(e: ZooEntry): Layer[] {
  const a = archOf<MaskRcnnArch>(e, [
    'backbone',
    'aspectRatio',
    'sizeDivisibility',
    'fpnChannels',
    'anchorsPerLocation',
    'rpnLevels',
    'rpnSampledAnchors',
    'boxRois',
    'maskRois',
    'boxPool',
    'maskPool',
    'representation',
    'maskConvs',
    'numClasses',
  ]);
  const pad = (v: number) => Math.ceil(v / a.sizeDivisibility) * a.sizeDivisibility;
  const short = imageSizeOf(e);
  const f = new FeatureMap({ c: 3, h: pad(short), w: pad(short * a.aspectRatio) });
  // maskrcnn-benchmark's ResNet uses FrozenBatchNorm2d: the ImageNet statistics and affine, fixed.
  f.batchNorm = 'frozen_batchnorm';
  resnetStem(f, a.backbone.stemWidth);
  const stages = a.backbone.stages.map((_, i) => {
    resnetStage(f, a.backbone, i, i === 0 ? 1 : 2);
    // FREEZE_CONV_BODY_AT: 2 (DeepLearningExamples' configs): the stem and the first stage are not trained.
    if (i === 0) f.layers.forEach((l) => (l.frozen = true));
    return f.shape;
  });
  const { layers: fpnLayers, outs } = fpn(stages, a.fpnChannels);
  const p5 = outs[outs.length - 1];
  const p6 = new FeatureMap(p5).pool('max', 1, 2);
  const rpnInputs = [...outs, p6.shape].slice(0, a.rpnLevels);
  return [...f.layers, ...fpnLayers, ...p6.layers, ...rpn(a, rpnInputs), ...boxHead(a), ...maskHead(a)];
}
