// Shape inference for an ONNX graph: what is known of every value (shape, element type, small
// integer values), bound per sample (the first dimension of every graph input is the batch, bound
// to 1; other symbolic dimensions take the sequence length), propagated through the operators that
// only move or reshape data, with integer shape arithmetic on constants evaluated so that dynamic
// reshapes resolve. Costing the operators is onnx-graph.ts's job; nothing here makes a layer.
import onnxProto from 'onnx-proto';
import { InputError } from '../input-error.js';
import { IMPORT_LIMITS } from './types.js';

export type Dims = number[];
export type Long = { toNumber(): number } | number;
export const num = (v: Long | null | undefined): number =>
  v === null || v === undefined ? 0 : typeof v === 'number' ? v : v.toNumber();
export const numel = (d: Dims) => d.reduce((a, b) => a * b, 1);

// onnx.TensorProto.DataType: the floating types hold weights; the integer ones shape arithmetic.
export const FLOAT_TYPES = new Set([1, 10, 11, 16]);
export const INT_TYPES = new Set([2, 3, 4, 5, 6, 7, 9, 12, 13]);

/** Views and metadata: no data moves. */
export const FREE = new Set([
  'Reshape',
  'Flatten',
  'Squeeze',
  'Unsqueeze',
  'Shape',
  'Size',
  'Constant',
  'ConstantOfShape',
  'Range',
  'Identity',
]);
/** Data moves once: a memory pass over the output. */
export const COPIES = new Set([
  'Transpose',
  'Concat',
  'Split',
  'Slice',
  'Expand',
  'Tile',
  'Pad',
  'Gather',
  'GatherElements',
  'GatherND',
  'Resize',
  'Upsample',
  'Trilu',
  'CumSum',
  'ScatterND',
  'ScatterElements',
  'DepthToSpace',
  'SpaceToDepth',
]);

/** What is known of one value of the graph. */
export interface Tensor {
  dims?: Dims;
  dtype: number;
  value?: number[];
  init?: boolean;
}

/**
 * ONNX dimensions are non-negative integers; the import takes them up to IMPORT_LIMITS.dimension.
 * A negative one would give negative parameters, FLOPs and memory that predict would answer with.
 */
function checkDims(what: string, dims: number[], fail: (m: string) => never): void {
  for (const [i, d] of dims.entries())
    if (!Number.isSafeInteger(d) || d < 0 || d > IMPORT_LIMITS.dimension)
      fail(
        `${what} has dimension ${d} at position ${i}; dimensions are integers from 0 to ${IMPORT_LIMITS.dimension.toExponential()}`,
      );
}

/** Everything known of the graph's values, node by node. */
export class ShapeTable {
  readonly tensors = new Map<string, Tensor>();
  /** Shapes the graph itself declares (value_info and outputs), used where inference cannot tell. */
  readonly valueInfo = new Map<string, Dims>();
  /** Value -> the initializer it is a conversion of (a weight reached through Transpose, Cast, ...). */
  readonly derived = new Map<string, string>();
  /** Symbols standing for the batch: bound to 1 wherever they appear. */
  readonly batchSymbols = new Set<string>();
  usedSeqLen = false;
  /** The batch a graph input fixes (a number, not a symbol), when greater than 1. */
  fixedBatch: number | undefined;

  constructor(
    readonly graph: onnxProto.onnx.GraphProto,
    /** What symbolic dimensions other than the batch stand for; absent: a graph input with one is refused. */
    readonly seqLen: number | undefined,
    readonly seqLenField: string | undefined,
    /** Throws the import's InputError, naming the field the graph came in. */
    readonly fail: (m: string) => never,
  ) {}

  /** The shapes the graph states: initializers, inputs (symbols bound), value_info and outputs. */
  readDeclaredShapes() {
    this.readInitializers();
    for (const vi of this.graph.input ?? []) {
      if (!vi.name || this.tensors.has(vi.name)) continue; // initializers listed as inputs (IR < 4)
      const elem = vi.type?.tensorType?.elemType ?? 0;
      this.tensors.set(vi.name, { dims: this.shapeOf(vi, true), dtype: elem });
    }
    for (const vi of this.graph.valueInfo ?? []) {
      const d = this.shapeOf(vi, false);
      if (d && vi.name) this.valueInfo.set(vi.name, d);
    }
    for (const vi of this.graph.output ?? []) {
      const d = this.shapeOf(vi, false);
      if (d && vi.name) this.valueInfo.set(vi.name, d);
    }
  }

  readInitializers() {
    for (const t of this.graph.initializer ?? []) {
      if (!t.name) continue;
      const dims = (t.dims ?? []).map((d) => num(d as Long));
      checkDims(`initializer "${t.name.slice(0, 80)}"`, dims, this.fail);
      this.tensors.set(t.name, {
        dims,
        dtype: t.dataType ?? 0,
        init: true,
        value: INT_TYPES.has(t.dataType ?? 0) && numel(dims) <= 64 ? intValues(t) : undefined,
      });
    }
  }

  /** A value's shape with symbols bound: batch symbols (first dimension of a graph input) to 1, others to the sequence length. */
  shapeOf(vi: onnxProto.onnx.IValueInfoProto, isInput: boolean): Dims | undefined {
    const dims = vi.type?.tensorType?.shape?.dim;
    if (!dims) return undefined;
    const out: Dims = [];
    for (const [i, d] of dims.entries()) {
      const value = num(d.dimValue as Long),
        param = d.dimParam ?? '';
      if (!param) checkDims(`"${(vi.name ?? '').slice(0, 80)}"`, [value], this.fail);
      if (!param && value > 0) {
        if (isInput && i === 0 && value > 1) this.fixedBatch = value;
        out.push(value);
        continue;
      }
      if ((isInput && i === 0) || this.batchSymbols.has(param)) {
        if (param) this.batchSymbols.add(param);
        out.push(1);
        continue;
      }
      if (!isInput && i === 0) {
        out.push(1);
        continue;
      }
      if (this.seqLen === undefined) {
        if (!isInput) return undefined;
        throw new InputError(
          this.seqLenField ?? 'seqLen',
          `the graph's input "${vi.name}" has a symbolic dimension "${param || '?'}" (position ${i}); give the sequence length (or image size) it stands for`,
        );
      }
      this.usedSeqLen = true;
      out.push(this.seqLen);
    }
    return out;
  }

  dims(name: string | undefined | null): Dims | undefined {
    if (!name) return undefined;
    return this.tensors.get(name)?.dims ?? this.valueInfo.get(name);
  }

  isConst(name: string): boolean {
    const t = this.tensors.get(name);
    return !!t && (t.init === true || t.value !== undefined);
  }

  /** The initializer a tensor is (weights may reach an operator through Transpose/Cast/Identity/DequantizeLinear of one). */
  weight(name: string | undefined | null): string | undefined {
    if (!name) return undefined;
    const t = this.tensors.get(name);
    if (t?.init && FLOAT_TYPES.has(t.dtype)) return name;
    return this.derived.get(name);
  }

  set(name: string | undefined | null, dims: Dims | undefined, dtype = 1, value?: number[]) {
    if (!name) return;
    this.tensors.set(name, { dims: dims ?? this.valueInfo.get(name), dtype, value });
  }

  /**
   * A shape operator that moves no data (FREE: Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size,
   * Identity): records its output; false when the output shape cannot be inferred.
   */
  inferFree(op: string, ins: string[], outs: string[], X: Dims, a: Attrs): boolean {
    const value = (n: string | undefined) => (n ? this.tensors.get(n)?.value : undefined);
    let out: Dims | undefined;
    switch (op) {
      case 'Reshape':
        out = reshape(X, value(ins[1]));
        break;
      case 'Flatten': {
        const ax = ((a.int('axis') ?? 1) + X.length) % (X.length || 1);
        out = [numel(X.slice(0, ax)), numel(X.slice(ax))];
        break;
      }
      case 'Squeeze': {
        const axes = (a.ints('axes') ?? value(ins[1]))?.map((v) => (v < 0 ? v + X.length : v));
        out = X.filter((d, i) => (axes ? !axes.includes(i) : d !== 1));
        break;
      }
      case 'Unsqueeze': {
        const axes = a.ints('axes') ?? value(ins[1]);
        if (axes) {
          const r = X.length + axes.length;
          const ax = axes.map((v) => (v < 0 ? v + r : v));
          out = [];
          let j = 0;
          for (let i = 0; i < r; i++) out.push(ax.includes(i) ? 1 : X[j++]);
        }
        break;
      }
      case 'Shape': {
        const start = a.int('start') ?? 0,
          end = a.int('end') ?? X.length;
        this.set(
          outs[0],
          [X.slice(start < 0 ? start + X.length : start, end < 0 ? end + X.length : end).length],
          7,
          X.slice(start, end),
        );
        return true;
      }
      case 'Size':
        this.set(outs[0], [], 7, [numel(X)]);
        return true;
      case 'Identity':
        out = X;
        break;
      default:
        break;
    }
    if (!out || out.some((v) => !Number.isFinite(v) || v < 0)) return false;
    this.set(outs[0], out, this.tensors.get(ins[0])?.dtype);
    return true;
  }

  /**
   * Output shapes of an operator that moves data once (COPIES: Transpose, Concat, Slice, ...), or
   * why they cannot be inferred.
   */
  copyShapes(op: string, ins: string[], outs: string[], X: Dims, a: Attrs): Dims[] | string {
    const value = (n: string | undefined) => (n ? this.tensors.get(n)?.value : undefined);
    const axisOf = (r: number) => ((a.int('axis') ?? 0) + r) % r;
    let shapes: (Dims | undefined)[];
    switch (op) {
      case 'Transpose': {
        const perm = a.ints('perm') ?? [...X.keys()].reverse();
        shapes = [perm.map((p) => X[p])];
        break;
      }
      case 'Concat': {
        const all = ins.map((n) => this.dims(n));
        if (all.some((d) => !d)) return 'an input shape is unknown';
        const ax = axisOf(X.length);
        shapes = [X.map((d, i) => (i === ax ? all.reduce((s, e) => s + e![i], 0) : d))];
        break;
      }
      case 'Split': {
        const ax = axisOf(X.length);
        const split =
          a.ints('split') ?? value(ins[1]) ?? Array.from({ length: outs.length }, () => X[ax] / outs.length);
        shapes = split.map((s) => X.map((d, i) => (i === ax ? s : d)));
        break;
      }
      case 'Slice': {
        const starts = value(ins[1]) ?? a.ints('starts'),
          ends = value(ins[2]) ?? a.ints('ends');
        if (!starts || !ends) return 'Slice bounds are not constants';
        const axes = value(ins[3]) ?? a.ints('axes') ?? starts.map((_, i) => i),
          steps = value(ins[4]) ?? starts.map(() => 1);
        const out = [...X];
        axes.forEach((axRaw, i) => {
          const ax = axRaw < 0 ? axRaw + X.length : axRaw,
            dim = X[ax],
            st = steps[i];
          const clamp = (v: number, lo: number, hi: number) =>
            Math.min(Math.max(v < 0 ? v + dim : v, lo), hi);
          const s = st > 0 ? clamp(starts[i], 0, dim) : clamp(starts[i], -1, dim - 1),
            e = st > 0 ? clamp(ends[i], 0, dim) : clamp(ends[i], -1, dim - 1);
          out[ax] = Math.max(0, Math.ceil((e - s) / st));
        });
        shapes = [out];
        break;
      }
      case 'Expand': {
        const s = value(ins[1]);
        shapes = [s ? broadcast(X, s) : undefined];
        break;
      }
      case 'Tile': {
        const r = value(ins[1]);
        shapes = [r ? X.map((d, i) => d * r[i]) : undefined];
        break;
      }
      case 'Pad': {
        const p = value(ins[1]) ?? a.ints('pads');
        shapes = [p ? X.map((d, i) => d + p[i] + p[i + X.length]) : undefined];
        break;
      }
      case 'Gather':
      case 'GatherElements':
      case 'GatherND': {
        const idx = this.dims(ins[1]);
        shapes = [op === 'GatherElements' ? idx : undefined];
        break;
      }
      case 'Resize':
      case 'Upsample': {
        const scales = value(ins[2]) ?? value(ins[1]) ?? a.floats('scales');
        const sizes = value(ins[3]);
        shapes = [sizes ?? (scales ? X.map((d, i) => Math.floor(d * scales[i])) : undefined)];
        break;
      }
      case 'DepthToSpace': {
        const b = a.int('blocksize') ?? 1;
        shapes = [[X[0], X[1] / (b * b), X[2] * b, X[3] * b]];
        break;
      }
      case 'SpaceToDepth': {
        const b = a.int('blocksize') ?? 1;
        shapes = [[X[0], X[1] * b * b, X[2] / b, X[3] / b]];
        break;
      }
      default:
        shapes = [X]; // Trilu, CumSum, ScatterND, ScatterElements keep the first input's shape
    }
    shapes = shapes.map((s, i) => s ?? this.valueInfo.get(outs[i]));
    if (shapes.some((s) => !s || s.some((v) => !Number.isFinite(v) || v < 0)))
      return `${op}: output shape could not be inferred`;
    return shapes as Dims[];
  }

  /** Integer-valued operators on constants (shape arithmetic): evaluated; true when handled. */
  foldConstant(
    op: string,
    node: onnxProto.onnx.INodeProto,
    ins: string[],
    outs: string[],
    a: Attrs,
  ): boolean {
    const v = (n: string | undefined) => (n ? this.tensors.get(n)?.value : undefined);
    const first = v(ins[0]);
    const put = (value: number[] | undefined, dims?: Dims) => {
      if (!value) return false;
      this.set(outs[0], dims ?? [value.length], 7, value);
      return true;
    };
    switch (op) {
      case 'Constant': {
        const t = node.attribute?.find((x) => x.name === 'value')?.t;
        if (t) {
          const dims = (t.dims ?? []).map((d) => num(d as Long));
          const dtype = t.dataType ?? 1;
          this.tensors.set(outs[0], {
            dims,
            dtype,
            value: INT_TYPES.has(dtype) && numel(dims) <= 64 ? intValues(t) : undefined,
            init: FLOAT_TYPES.has(dtype) ? undefined : true,
          });
          return true;
        }
        const ints = a.ints('value_ints'),
          i = a.int('value_int');
        return put(ints ?? (i !== undefined ? [i] : undefined), ints ? [ints.length] : []);
      }
      case 'Identity':
      case 'Cast':
      case 'Squeeze':
      case 'Unsqueeze':
      case 'Reshape':
      case 'Flatten':
        return put(first);
      case 'Concat': {
        const parts = ins.map(v);
        return parts.every(Boolean) ? put(parts.flatMap((p) => p!)) : false;
      }
      case 'Gather': {
        const idx = v(ins[1]);
        if (!first || !idx) return false;
        const picked = idx.map((i) => first[i < 0 ? i + first.length : i]);
        return put(picked, (this.dims(ins[1])?.length ?? 1) === 0 ? [] : [picked.length]);
      }
      case 'Slice': {
        const s = v(ins[1]),
          e = v(ins[2]);
        if (!first || !s || !e) return false;
        const n = first.length,
          clamp = (x: number) => Math.min(Math.max(x < 0 ? x + n : x, 0), n);
        return put(first.slice(clamp(s[0]), clamp(e[0])));
      }
      case 'Add':
      case 'Sub':
      case 'Mul':
      case 'Div': {
        const b = v(ins[1]);
        if (!first || !b) return false;
        const f = {
          Add: (x: number, y: number) => x + y,
          Sub: (x: number, y: number) => x - y,
          Mul: (x: number, y: number) => x * y,
          Div: (x: number, y: number) => Math.trunc(x / y),
        }[op];
        const n = Math.max(first.length, b.length);
        return put(
          Array.from({ length: n }, (_, i) =>
            f(first[first.length === 1 ? 0 : i], b[b.length === 1 ? 0 : i]),
          ),
          this.dims(ins[0]),
        );
      }
      case 'Range': {
        const [start, limit, delta] = [first?.[0], v(ins[1])?.[0], v(ins[2])?.[0]];
        if (start === undefined || limit === undefined || !delta) return false;
        const n = Math.max(0, Math.ceil((limit - start) / delta));
        this.tensors.set(outs[0], {
          dims: [n],
          dtype: 7,
          value: n <= 64 ? Array.from({ length: n }, (_, i) => start + i * delta) : undefined,
          init: n > 64 ? true : undefined,
        });
        return true;
      }
      case 'Shape':
        return false; // a Shape of a constant is handled as a free shape op
      default:
        return false;
    }
  }
}

/** Reshape's output: 0 keeps the input's dimension, -1 takes what is left. */
export function reshape(d: Dims | undefined, shape: number[] | undefined): Dims | undefined {
  if (!d || !shape) return undefined;
  const out = shape.map((s, i) => (s === 0 ? d[i] : s));
  const known = out.filter((s) => s !== -1).reduce((p, s) => p * s, 1);
  return out.map((s) => (s === -1 ? numel(d) / known : s));
}

/** A node's attributes by name. */
export interface Attrs {
  int(name: string): number | undefined;
  ints(name: string): number[] | undefined;
  floats(name: string): number[] | undefined;
  str(name: string): string | undefined;
}

export function attributes(node: onnxProto.onnx.INodeProto): Attrs {
  const by = new Map((node.attribute ?? []).map((x) => [x.name ?? '', x]));
  return {
    int: (n) => {
      const x = by.get(n);
      return x && x.i !== undefined && x.i !== null ? num(x.i as Long) : undefined;
    },
    ints: (n) => {
      const x = by.get(n);
      return x?.ints?.length ? x.ints.map((v) => num(v as Long)) : undefined;
    },
    floats: (n) => {
      const x = by.get(n);
      return x?.floats?.length ? [...x.floats] : undefined;
    },
    str: (n) => {
      const x = by.get(n);
      return x?.s?.length ? Buffer.from(x.s).toString('utf8') : undefined;
    },
  };
}

/** Values of a small integer tensor (int64/int32 fields or little-endian raw data). */
export function intValues(t: onnxProto.onnx.ITensorProto): number[] | undefined {
  if (t.int64Data?.length) return t.int64Data.map((v) => num(v as Long));
  if (t.int32Data?.length) return [...t.int32Data];
  const raw = t.rawData;
  if (!raw?.length)
    return (t.dims ?? []).length === 0 || numel((t.dims ?? []).map((d) => num(d as Long))) === 0
      ? []
      : undefined;
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const dt = t.dataType;
  const size = dt === 7 || dt === 13 ? 8 : dt === 6 || dt === 12 ? 4 : dt === 5 || dt === 4 ? 2 : 1;
  const out: number[] = [];
  for (let i = 0; i + size <= raw.byteLength; i += size) {
    out.push(
      size === 8
        ? Number(view.getBigInt64(i, true))
        : size === 4
          ? view.getInt32(i, true)
          : size === 2
            ? view.getInt16(i, true)
            : view.getInt8(i),
    );
  }
  return out;
}

/** Numpy broadcasting of two shapes; undefined when they do not broadcast. */
export function broadcast(a: Dims, b: Dims): Dims | undefined {
  const n = Math.max(a.length, b.length),
    out: Dims = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1,
      y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) return undefined;
    out.push(x === 1 ? y : x);
  }
  return out;
}
