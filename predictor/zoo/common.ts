// Small layer constructors shared by the builders, and FeatureMap, which tracks a convolutional
// network's (channels, height, width) so every layer gets its true spatial size.
import { convOut } from '../layers.js';
import type { Layer } from '../types.js';

export type ActKind = Extract<Layer, { type: 'activation' }>['kind'];
export type NormKind = Extract<Layer, { type: 'norm' }>['kind'];
export type Pair = number | [number, number];

const pair = (v: Pair): [number, number] => (Array.isArray(v) ? v : [v, v]);
const named = (name?: string) => (name ? { name } : {});

export const norm = (kind: NormKind, channels: number, elements: number, name?: string): Layer => ({
  type: 'norm',
  kind,
  channels,
  elements,
  ...named(name),
});
export const act = (kind: ActKind, elements: number, name?: string): Layer => ({
  type: 'activation',
  kind,
  elements,
  ...named(name),
});
export const dropout = (elements: number, name?: string): Layer => ({
  type: 'elementwise',
  kind: 'dropout',
  elements,
  ...named(name),
});
export const add = (elements: number, name?: string, inputs = 2): Layer => ({
  type: 'elementwise',
  kind: 'add',
  elements,
  inputs,
  ...named(name),
});
/** A concatenation (or masked fill): one kernel that reads and writes its elements. */
export const copy = (elements: number, name?: string): Layer => ({
  type: 'elementwise',
  kind: 'copy',
  elements,
  ...named(name),
});
export const mul = (elements: number, name?: string, inputs?: number): Layer => ({
  type: 'elementwise',
  kind: 'mul',
  elements,
  ...(inputs === undefined ? {} : { inputs }),
  ...named(name),
});
export const scale = (elements: number, name?: string): Layer => ({
  type: 'elementwise',
  kind: 'scale',
  elements,
  ...named(name),
});
export const softmax = (elements: number, name?: string): Layer => ({
  type: 'softmax',
  elements,
  ...named(name),
});
export const loss = (elements: number, name = 'loss', kind?: 'log_softmax_nll'): Layer => ({
  type: 'loss',
  elements,
  name,
  ...(kind ? { kind } : {}),
});

export interface LinearOpts {
  tokens?: number;
  bias?: boolean;
  tied?: boolean;
  name?: string;
  /** The tokens are this many sequential steps laid end to end (see the linear Layer's `steps`). */
  steps?: number;
  /** Separate projections of the input in the model's code (see the linear Layer's `projections`). */
  projections?: number;
  /** Reads the tensor the layer this many positions before read (Layer.sameInputAs). */
  sameInputAs?: number;
}
export const linear = (inFeatures: number, outFeatures: number, o: LinearOpts = {}): Layer => ({
  type: 'linear',
  inFeatures,
  outFeatures,
  tokens: o.tokens ?? 1,
  bias: o.bias ?? true,
  ...(o.tied ? { tied: true } : {}),
  ...(o.steps !== undefined ? { steps: o.steps } : {}),
  ...((o.projections ?? 1) > 1 ? { projections: o.projections } : {}),
  ...named(o.name),
  ...(o.sameInputAs !== undefined ? { sameInputAs: o.sameInputAs } : {}),
});

export const embedding = (vocab: number, dim: number, tokens: number, name?: string): Layer => ({
  type: 'embedding',
  vocab,
  dim,
  tokens,
  ...named(name),
});

/**
 * A lookup into a table that another layer owns (shared encoder/decoder embeddings). The
 * vocabulary has no `tied` flag for embeddings, so vocab 0 keeps the gather's cost (which does
 * not depend on the table size) without counting the table twice.
 */
export const sharedEmbedding = (dim: number, tokens: number, name?: string): Layer =>
  embedding(0, dim, tokens, name);

/** Repeat identical layers: every layer's count is multiplied, so parameters and costs scale too. */
export const repeat = (layers: Layer[], times: number): Layer[] =>
  layers.map((l) => ({ ...l, count: (l.count ?? 1) * times }));

// ------------------------------------------------------------------------------ feature maps

export interface Shape {
  c: number;
  h: number;
  w: number;
}

/**
 * Paths that all read one tensor, laid end to end: each path's first layer is marked as reading what
 * the previous path's first layer read (Layer.sameInputAs), so the memory model keeps that tensor once.
 */
function sideBySide(paths: Layer[][]): Layer[] {
  const out: Layer[] = [];
  let previousStart = -1;
  for (const path of paths) {
    if (path.length === 0) continue;
    const start = out.length;
    out.push(...path);
    if (previousStart >= 0 && out[start].sameInputAs === undefined)
      out[start] = { ...out[start], sameInputAs: start - previousStart };
    previousStart = start;
  }
  return out;
}

const sameShape = (a: Shape, b: Shape) => a.c === b.c && a.h === b.h && a.w === b.w;
const globalPoolOf = (s: Shape, name?: string): Layer => ({
  type: 'pool',
  kind: 'global_avg',
  channels: s.c,
  inH: s.h,
  inW: s.w,
  kernel: s.h,
  stride: 1,
  ...named(name),
});

export interface ConvOpts {
  stride?: number;
  /** 'same' pads kernel/2 on each side (the usual odd-kernel convolution). */
  pad?: Pair | 'same';
  groups?: number;
  bias?: boolean;
  name?: string;
}

export interface ConvBnOpts extends ConvOpts {
  /** null: no activation (e.g. before a residual add). */
  act?: ActKind | null;
}

/** A (c, h, w) tensor flowing through a CNN; methods append layers and update the shape. */
export class FeatureMap {
  readonly layers: Layer[] = [];
  /** The norm convBn puts after each convolution: batch norm, or frozen batch norm where the model fine-tunes with frozen statistics and affine (Mask R-CNN's backbone). */
  batchNorm: NormKind = 'batchnorm';

  constructor(public shape: Shape) {}

  get elements(): number {
    return this.shape.c * this.shape.h * this.shape.w;
  }

  push(...layers: Layer[]): this {
    this.layers.push(...layers);
    return this;
  }

  conv(outC: number, kernel: Pair, o: ConvOpts = {}): this {
    const [kh, kw] = pair(kernel);
    const [ph, pw] = o.pad === undefined || o.pad === 'same' ? [kh >> 1, kw >> 1] : pair(o.pad);
    const stride = o.stride ?? 1;
    const { c, h, w } = this.shape;
    this.push({
      type: 'conv2d',
      inC: c,
      outC,
      kernel: kh === kw ? kh : [kh, kw],
      stride,
      padding: ph === pw ? ph : [ph, pw],
      groups: o.groups ?? 1,
      inH: h,
      inW: w,
      bias: o.bias ?? false,
      ...named(o.name),
    });
    this.shape = { c: outC, h: convOut(h, kh, stride, ph), w: convOut(w, kw, stride, pw) };
    return this;
  }

  norm(kind: NormKind = 'batchnorm', name?: string): this {
    return this.push(norm(kind, this.shape.c, this.elements, name));
  }

  act(kind: ActKind = 'relu', name?: string): this {
    return this.push(act(kind, this.elements, name));
  }

  /** Convolution without bias, batch norm, activation: the unit almost every modern CNN is made of. */
  convBn(outC: number, kernel: Pair, o: ConvBnOpts = {}): this {
    this.conv(outC, kernel, { ...o, bias: false }).norm(this.batchNorm);
    if (o.act !== null) this.act(o.act ?? 'relu');
    return this;
  }

  pool(kind: 'max' | 'avg', kernel: number, stride: number, padding = 0): this {
    const { c, h, w } = this.shape;
    this.push({ type: 'pool', kind, channels: c, inH: h, inW: w, kernel, stride, padding });
    this.shape = { c, h: convOut(h, kernel, stride, padding), w: convOut(w, kernel, stride, padding) };
    return this;
  }

  globalPool(): this {
    this.push(globalPoolOf(this.shape));
    this.shape = { c: this.shape.c, h: 1, w: 1 };
    return this;
  }

  dropout(): this {
    return this.push(dropout(this.elements));
  }

  /** Fully connected layer on the flattened map; the result is a (features, 1, 1) vector. */
  linear(outFeatures: number, name?: string): this {
    this.push(linear(this.elements, outFeatures, { name }));
    this.shape = { c: outFeatures, h: 1, w: 1 };
    return this;
  }

  /**
   * Squeeze-and-excitation: pool, bottleneck MLP, sigmoid gate multiplied back onto the map. The gate
   * is one value per channel broadcast over the map, so the multiply reads the map and c more
   * elements, not two maps.
   */
  squeezeExcite(squeeze: number, inner: ActKind): this {
    const { c, h, w } = this.shape;
    return this.push(
      globalPoolOf(this.shape, 'se.pool'),
      linear(c, squeeze, { name: 'se.squeeze' }),
      act(inner, squeeze),
      linear(squeeze, c, { name: 'se.expand' }),
      act('sigmoid', c),
      mul(this.elements, 'se.gate', 1 + 1 / (h * w)),
    );
  }

  /** A parallel path from the current tensor. */
  fork(): FeatureMap {
    const f = new FeatureMap({ ...this.shape });
    f.batchNorm = this.batchNorm;
    return f;
  }

  /** Runs branches from the current tensor and concatenates them along channels. */
  concat(branches: ((f: FeatureMap) => void)[]): this {
    const outs = branches.map((build) => {
      const f = this.fork();
      build(f);
      return f;
    });
    const { h, w } = outs[0].shape;
    if (outs.some((o) => o.shape.h !== h || o.shape.w !== w)) {
      throw new Error(
        `concat of unequal spatial sizes: ${outs.map((o) => `${o.shape.h}x${o.shape.w}`).join(', ')}`,
      );
    }
    this.push(...sideBySide(outs.map((o) => o.layers)));
    this.shape = { c: outs.reduce((s, o) => s + o.shape.c, 0), h, w };
    return this;
  }

  /** out = main(x) + shortcut(x); shortcut defaults to identity. */
  residual(main: (f: FeatureMap) => void, shortcut?: (f: FeatureMap) => void): this {
    const m = this.fork();
    main(m);
    const s = this.fork();
    shortcut?.(s);
    if (!sameShape(m.shape, s.shape)) {
      throw new Error(`residual shapes differ: ${JSON.stringify(m.shape)} vs ${JSON.stringify(s.shape)}`);
    }
    this.push(...sideBySide([m.layers, s.layers]));
    this.shape = m.shape;
    return this.push(add(this.elements, 'residual'));
  }

  /** `times` copies of a shape-preserving block, as one block with counts multiplied. */
  repeat(times: number, block: (f: FeatureMap) => void): this {
    if (times <= 0) return this;
    const f = this.fork();
    block(f);
    if (!sameShape(f.shape, this.shape)) {
      throw new Error('repeat() needs a shape-preserving block');
    }
    return this.push(...repeat(f.layers, times));
  }

  /** Global pool, optional dropout, linear classifier and its cross-entropy. */
  classify(numClasses: number, withDropout: boolean): this {
    this.globalPool();
    if (withDropout) this.dropout();
    this.linear(numClasses, 'fc');
    return this.push(loss(numClasses));
  }
}
