// Feed-forward CNNs written out as data: AlexNet and VGG (plain conv/pool stacks) and the
// Inception family (modules of parallel branches concatenated along channels). models.json holds
// every conv's width and kernel; this file only walks the description.
import type { Layer } from '../types.js';
import { FeatureMap, loss, type Pair } from './common.js';
import { archOf, imageSizeOf, type ZooEntry } from './spec.js';

type Op =
  /** A convolution (plus BN and ReLU as `conv` says); p defaults to 'same' padding. */
  | { conv: number; k: Pair; s?: number; p?: Pair }
  | { pool: 'max' | 'avg'; k: number; s: number; p?: number }
  /** Parallel sub-branches from the same input, concatenated (Inception's 1x3 / 3x1 pairs). */
  | { split: Op[][] }
  /** A named module of `modules`, applied `times` times in a row. */
  | { module: string; times?: number };

interface ConvNetArch {
  /** How every conv is built: BN-ReLU without bias (Inception) or bias-ReLU (AlexNet, VGG). */
  conv: { bn: boolean; bias: boolean };
  layers: Op[];
  /** Module name -> its branches. */
  modules?: Record<string, Op[][]>;
  head: {
    /** 'global': global average pool; 'flatten': fully connected on the whole last map. */
    pool: 'global' | 'flatten';
    /** Hidden fully connected widths, each followed by ReLU (and dropout). */
    fc: number[];
    dropout: boolean;
    numClasses: number;
  };
}

function apply(f: FeatureMap, op: Op, a: ConvNetArch): void {
  if ('conv' in op) {
    const o = { stride: op.s, pad: op.p };
    if (a.conv.bn) f.convBn(op.conv, op.k, o);
    else f.conv(op.conv, op.k, { ...o, bias: a.conv.bias }).act('relu');
  } else if ('pool' in op) {
    f.pool(op.pool, op.k, op.s, op.p ?? 0);
  } else if ('split' in op) {
    f.concat(op.split.map((branch) => (g: FeatureMap) => branch.forEach((o) => apply(g, o, a))));
  } else {
    const branches = a.modules?.[op.module];
    if (!branches) throw new Error(`convnet: unknown module "${op.module}"`);
    const once = (g: FeatureMap) => apply(g, { split: branches }, a);
    once(f);
    f.repeat((op.times ?? 1) - 1, once);
  }
}

export function buildConvNet(e: ZooEntry): Layer[] {
  const a = archOf<ConvNetArch>(e, ['conv', 'layers', 'head']);
  const size = imageSizeOf(e);
  const f = new FeatureMap({ c: 3, h: size, w: size });
  for (const op of a.layers) apply(f, op, a);
  const { head } = a;
  if (head.pool === 'global') {
    if (head.fc.length) throw new Error(`convnet ${e.id}: hidden fc layers need head.pool 'flatten'`);
    return f.classify(head.numClasses, head.dropout).layers;
  }
  for (const width of head.fc) {
    f.linear(width).act('relu');
    if (head.dropout) f.dropout();
  }
  return f.linear(head.numClasses, 'fc').push(loss(head.numClasses)).layers;
}
