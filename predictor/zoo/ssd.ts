// SSD300 with a ResNet-50 backbone (NVIDIA DeepLearningExamples PyTorch/Detection/SSD): ResNet-50
// through conv4_x with conv4's first block unstrided (a 38x38 map at 300x300), five extra
// downsampling blocks, and 3x3 box / class heads on all six maps.
import type { Layer } from '../types.js';
import { FeatureMap, loss, type Shape } from './common.js';
import { resnetStage, resnetStem, type ResNetArch } from './resnet.js';
import { archOf, imageSizeOf, type ZooEntry } from './spec.js';

interface SsdArch {
  /** ResNet stages kept (numClasses unused); `stageStrides` overrides the usual 1, 2, 2. */
  backbone: ResNetArch;
  stageStrides: number[];
  /** Extra blocks: 1x1 conv to `width`, then 3x3 conv to `out`; the first `strided` are stride 2, padded. */
  extra: { widths: number[]; outs: number[]; strided: number };
  /** Default boxes per location on each detection map. */
  numDefaults: number[];
  numClasses: number;
}

export function buildSsd(e: ZooEntry): Layer[] {
  const a = archOf<SsdArch>(e, ['backbone', 'stageStrides', 'extra', 'numDefaults', 'numClasses']);
  const size = imageSizeOf(e);
  const f = new FeatureMap({ c: 3, h: size, w: size });
  resnetStem(f, a.backbone.stemWidth);
  a.stageStrides.forEach((stride, i) => resnetStage(f, a.backbone, i, stride));
  const maps: Shape[] = [f.shape];
  a.extra.widths.forEach((width, i) => {
    const strided = i < a.extra.strided;
    f.convBn(width, 1, { name: `extra${i}.reduce` });
    f.convBn(a.extra.outs[i], 3, { stride: strided ? 2 : 1, pad: strided ? 1 : 0, name: `extra${i}.conv` });
    maps.push(f.shape);
  });
  if (maps.length !== a.numDefaults.length)
    throw new Error(`${e.id}: ${maps.length} detection maps, ${a.numDefaults.length} numDefaults`);
  const heads = maps.flatMap((shape, i) => {
    const nd = a.numDefaults[i];
    const loc = new FeatureMap(shape).conv(nd * 4, 3, { bias: true, name: `loc${i}` });
    const conf = new FeatureMap(shape).conv(nd * a.numClasses, 3, { bias: true, name: `conf${i}` });
    return [...loc.layers, ...conf.layers];
  });
  const boxes = maps.reduce((s, m, i) => s + m.h * m.w * a.numDefaults[i], 0);
  // Cross-entropy over every default box (hard negatives are then selected) and smooth L1 on boxes.
  return [...f.layers, ...heads, loss(boxes * (a.numClasses + 4), 'conf_ce_and_loc_smooth_l1')];
}
