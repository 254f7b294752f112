// An ONNX model file -> ModelDef: the graph is decoded with onnx-proto's protobuf reader, shapes are
// inferred node by node (per sample: the first dimension of every graph input is the batch and is
// bound to 1; other symbolic dimensions take the sequence length), and each operator becomes layers
// of the zoo's vocabulary, so the ONNX graph is costed exactly like a zoo model:
//   MatMul / Gemm with a weight -> linear (a following bias Add folds into it); MatMul of two
//   activations -> matmul; Conv (1-D, 2-D), ConvTranspose -> conv; pools; BatchNormalization,
//   LayerNormalization, RMS/Group/InstanceNormalization -> norm; Gather on a weight -> embedding;
//   activations, Softmax, elementwise arithmetic and Dropout; copies (Transpose, Concat, Slice, ...) as
//   memory passes; LSTM / GRU -> rnn; the fused attention operators (com.microsoft Attention,
//   MultiHeadAttention, GroupQueryAttention; ai.onnx Attention) -> the zoo's attention layers;
//   losses -> loss (one is added when the graph, as exported for inference, has none).
// Shape-only operators (Reshape, Shape, Constant, Unsqueeze, ...) cost nothing; their integer values
// are evaluated so that dynamic reshapes resolve. An operator without a rule here is listed in
// `unsupported` with the reason, never silently dropped. Weights need not be inside the file: with
// external data the initializers keep their shapes, which is all this reads.
import { createHash } from 'node:crypto';
import onnxProto from 'onnx-proto';
import { InputError } from '../input-error.js';
import type { Layer, ModelDef } from '../types.js';
import { attentionCore } from '../zoo/attention.js';
import { linear } from '../zoo/common.js';
import { IMPORT_LIMITS, type ImportedModel, type ImportOptions, type UnsupportedOperator } from './types.js';

const { onnx } = onnxProto;
type Dims = number[];
type Long = { toNumber(): number } | number;
const num = (v: Long | null | undefined): number =>
  v === null || v === undefined ? 0 : typeof v === 'number' ? v : v.toNumber();
const numel = (d: Dims) => d.reduce((a, b) => a * b, 1);

// onnx.TensorProto.DataType: the floating types hold weights; the integer ones shape arithmetic.
const FLOAT_TYPES = new Set([1, 10, 11, 16]);
const INT_TYPES = new Set([2, 3, 4, 5, 6, 7, 9, 12, 13]);

const ACTIVATIONS: Record<string, Extract<Layer, { type: 'activation' }>['kind']> = {
  Relu: 'relu',
  LeakyRelu: 'relu',
  Clip: 'relu',
  Elu: 'relu',
  Selu: 'relu',
  Celu: 'relu',
  ThresholdedRelu: 'relu',
  Sigmoid: 'sigmoid',
  HardSigmoid: 'sigmoid',
  Tanh: 'tanh',
  Gelu: 'gelu',
  FastGelu: 'gelu',
  QuickGelu: 'gelu',
  BiasGelu: 'gelu',
  Erf: 'gelu',
  Softplus: 'swish',
  Softsign: 'swish',
  Mish: 'swish',
  HardSwish: 'swish',
};
const BINARY: Record<string, Extract<Layer, { type: 'elementwise' }>['kind']> = {
  Add: 'add',
  Sub: 'add',
  Sum: 'add',
  Mean: 'add',
  Max: 'add',
  Min: 'add',
  Mul: 'mul',
  Div: 'mul',
  Pow: 'mul',
  Mod: 'mul',
  PRelu: 'mul',
  Equal: 'scale',
  Greater: 'scale',
  Less: 'scale',
  GreaterOrEqual: 'scale',
  LessOrEqual: 'scale',
  And: 'scale',
  Or: 'scale',
  Xor: 'scale',
  Where: 'mul',
};
const UNARY = new Set([
  'Sqrt',
  'Reciprocal',
  'Exp',
  'Log',
  'Neg',
  'Abs',
  'Floor',
  'Ceil',
  'Round',
  'Sign',
  'Sin',
  'Cos',
  'Not',
  'IsNaN',
  'IsInf',
  'Cast',
  'CastLike',
]);
const REDUCTIONS = new Set([
  'ReduceMean',
  'ReduceSum',
  'ReduceMax',
  'ReduceMin',
  'ReduceProd',
  'ReduceL1',
  'ReduceL2',
  'ReduceSumSquare',
  'ReduceLogSumExp',
  'ArgMax',
  'ArgMin',
]);
/** Views and metadata: no data moves. */
const FREE = new Set([
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
const COPIES = new Set([
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
/** Operators whose outputs never carry data a layer computes on (only their integer values matter). */

interface Tensor {
  dims?: Dims;
  dtype: number;
  value?: number[];
  init?: boolean;
}

export interface OnnxOptions extends ImportOptions {
  /** Most nodes a graph may have. */
  maxNodes?: number;
}

/** Decodes an ONNX model (bytes of a .onnx file) and costs its graph. */
export function fromOnnx(bytes: Uint8Array, o: OnnxOptions = {}): ImportedModel {
  const field = o.field ?? 'onnx';
  const fail = (m: string): never => {
    throw new InputError(field, m);
  };
  if (bytes.length > IMPORT_LIMITS.onnxBytes)
    fail(
      `is ${bytes.length} bytes; at most ${IMPORT_LIMITS.onnxBytes} (export the weights as external data: only the graph and the initializers' shapes are read)`,
    );
  let model: onnxProto.onnx.ModelProto;
  try {
    model = onnx.ModelProto.decode(bytes);
  } catch (e) {
    return fail(`is not an ONNX model (protobuf decoding failed: ${(e as Error).message.slice(0, 160)})`);
  }
  const graph = model.graph as onnxProto.onnx.GraphProto | null | undefined;
  if (!graph || !graph.node?.length) return fail('is not an ONNX model with a graph (no nodes found)');
  const maxNodes = o.maxNodes ?? IMPORT_LIMITS.onnxNodes;
  if (graph.node.length > maxNodes) fail(`has ${graph.node.length} nodes; at most ${maxNodes}`);
  return new GraphCoster(model, graph, o, fail).run(bytes);
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

class GraphCoster {
  readonly tensors = new Map<string, Tensor>();
  readonly valueInfo = new Map<string, Dims>();
  readonly layers: Layer[] = [];
  readonly notes: string[] = [];
  readonly unsupported = new Map<string, UnsupportedOperator>();
  /** Float initializers feeding a costed operator, and those a layer already counts as its weights. */
  readonly usedInitializers = new Set<string>();
  readonly consumed = new Set<string>();
  /** Output name -> the linear layer that produced it (a following bias Add folds into it). */
  readonly linearByOutput = new Map<string, Extract<Layer, { type: 'linear' }>>();
  readonly batchSymbols = new Set<string>();
  usedSeqLen = false;
  fixedBatch: number | undefined;
  hasLoss = false;

  constructor(
    readonly model: onnxProto.onnx.ModelProto,
    readonly graph: onnxProto.onnx.GraphProto,
    readonly o: OnnxOptions,
    readonly fail: (m: string) => never,
  ) {}

  run(bytes: Uint8Array): ImportedModel {
    this.readInitializers();
    this.readInputs();
    for (const vi of this.graph.valueInfo ?? []) {
      const d = this.shapeOf(vi, false);
      if (d && vi.name) this.valueInfo.set(vi.name, d);
    }
    for (const vi of this.graph.output ?? []) {
      const d = this.shapeOf(vi, false);
      if (d && vi.name) this.valueInfo.set(vi.name, d);
    }
    this.graph.node.forEach((node) => this.visit(node));
    this.countLearnedTensors();
    if (!this.layers.length)
      this.fail(
        `no operator of the graph could be costed (${[...this.unsupported.values()].map((u) => u.opType).join(', ')})`,
      );
    if (!this.hasLoss) {
      const out = this.graph.output?.[0]?.name;
      const dims = out ? (this.tensors.get(out)?.dims ?? this.valueInfo.get(out)) : undefined;
      this.layers.push({ type: 'loss', elements: Math.max(1, dims ? numel(dims) : 1), name: 'loss (added)' });
      this.notes.push(
        `the graph has no loss (exported for inference); a loss over its output${out ? ` "${out}"` : ''} was added`,
      );
    }
    const hash = createHash('sha1')
      .update(bytes)
      .update(`@${this.o.seqLen ?? ''}`)
      .digest('hex')
      .slice(0, 10);
    const opset = (this.model.opsetImport ?? [])
      .map((x) => `${x.domain || 'ai.onnx'} ${num(x.version as Long)}`)
      .join(', ');
    const def: ModelDef = {
      id: `onnx:${hash}`,
      name: this.o.name ?? (this.graph.name || 'ONNX graph'),
      family: 'onnx',
      batchElement: 'sample',
      throughputUnit: 'samples/s',
      unitsPerBatchElement: this.fixedBatch ?? 1,
      ...(this.usedSeqLen && this.o.seqLen !== undefined ? { seqLen: this.o.seqLen } : {}),
      optimizer: this.o.optimizer ?? 'adam',
      batchSizes: [8, 16, 32],
      source: `ONNX graph${this.model.producerName ? ` from ${this.model.producerName}` : ''} (opset ${opset || 'unknown'}), ${this.graph.node.length} nodes`,
      layers: this.layers,
    };
    return { model: def, notes: this.notes, unsupported: [...this.unsupported.values()] };
  }

  // ------------------------------------------------------------------------------------ inputs

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
      if (this.o.seqLen === undefined) {
        if (!isInput) return undefined;
        throw new InputError(
          this.o.seqLenField ?? 'seqLen',
          `the graph's input "${vi.name}" has a symbolic dimension "${param || '?'}" (position ${i}); give the sequence length (or image size) it stands for`,
        );
      }
      this.usedSeqLen = true;
      out.push(this.o.seqLen);
    }
    return out;
  }

  readInputs() {
    for (const vi of this.graph.input ?? []) {
      if (!vi.name || this.tensors.has(vi.name)) continue; // initializers listed as inputs (IR < 4)
      const elem = vi.type?.tensorType?.elemType ?? 0;
      this.tensors.set(vi.name, { dims: this.shapeOf(vi, true), dtype: elem });
    }
    if (this.fixedBatch !== undefined)
      this.notes.push(
        `the graph's batch dimension is fixed at ${this.fixedBatch}: one batch element here is one run of the graph (${this.fixedBatch} samples)`,
      );
  }

  // ------------------------------------------------------------------------------------ nodes

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
  readonly derived = new Map<string, string>();

  set(name: string | undefined | null, dims: Dims | undefined, dtype = 1, value?: number[]) {
    if (!name) return;
    this.tensors.set(name, { dims: dims ?? this.valueInfo.get(name), dtype, value });
  }

  skip(node: onnxProto.onnx.INodeProto, reason: string) {
    const key = `${node.domain ?? ''}/${node.opType}/${reason}`;
    const u = this.unsupported.get(key) ?? {
      opType: node.opType ?? '?',
      domain: node.domain ?? '',
      count: 0,
      nodes: [],
      reason,
    };
    u.count++;
    if (u.nodes.length < 5)
      u.nodes.push(node.name || `#${this.graph.node.indexOf(node as onnxProto.onnx.NodeProto)}`);
    this.unsupported.set(key, u);
    // Downstream shapes: what the graph's value_info says, else the first input's (most operators keep it).
    const first = this.dims(node.input?.[0]);
    for (const out of node.output ?? [])
      this.set(out, this.valueInfo.get(out) ?? ((node.output?.length ?? 0) === 1 ? first : undefined));
  }

  push(node: onnxProto.onnx.INodeProto, ...layers: Layer[]) {
    const base = node.name || node.opType || 'node';
    for (const l of layers)
      this.layers.push(l.name ? { ...l, name: `${base}:${l.name}` } : { ...l, name: base });
    for (const i of node.input ?? []) if (i && this.tensors.get(i)?.init) this.usedInitializers.add(i);
  }

  visit(node: onnxProto.onnx.INodeProto) {
    const op = node.opType ?? '';
    const domain = node.domain ?? '';
    const ins = (node.input ?? []) as string[];
    const outs = (node.output ?? []) as string[];
    const a = attributes(node);
    if (domain !== '' && domain !== 'ai.onnx' && domain !== 'com.microsoft')
      return this.skip(node, `operator domain "${domain}" is not costed`);
    if (node.attribute?.some((x) => x.g || (x.graphs?.length ?? 0) > 0))
      return this.skip(node, 'control flow (subgraphs) is not costed');

    // Integer shape arithmetic on known values: evaluated, free.
    if (ins.length && ins.every((n) => !n || this.isConst(n)) && this.evalConst(op, node, ins, outs, a))
      return;
    // Weights reached through a conversion of an initializer.
    if (
      ['Transpose', 'Cast', 'Identity', 'DequantizeLinear', 'Reshape', 'Unsqueeze', 'Squeeze'].includes(op) &&
      this.weight(ins[0]) &&
      ins.slice(1).every((n) => !n || this.isConst(n))
    ) {
      const src = this.weight(ins[0])!;
      this.derived.set(outs[0], src);
      const d = this.dims(ins[0]);
      this.set(
        outs[0],
        op === 'Transpose' && d
          ? (a.ints('perm') ?? [...d.keys()].reverse()).map((p) => d[p])
          : op === 'Reshape'
            ? this.reshape(d, this.tensors.get(ins[1])?.value)
            : d,
        1,
      );
      return;
    }
    const x = this.dims(ins[0]);
    if (!x && !['Constant', 'ConstantOfShape', 'Range'].includes(op))
      return this.skip(node, 'its input shape is unknown (it follows an operator that could not be costed)');
    const X = x ?? [];

    if (op in ACTIVATIONS) {
      this.push(node, { type: 'activation', kind: ACTIVATIONS[op], elements: numel(X) });
      return this.set(outs[0], X);
    }
    if (op in BINARY || op === 'Where') {
      const shapes = ins.filter(Boolean).map((n) => this.dims(n));
      if (shapes.some((s) => !s)) return this.skip(node, 'an input shape is unknown');
      const out = shapes.reduce((acc, s) => broadcast(acc!, s!), [] as Dims)!;
      if (!out) return this.skip(node, 'inputs do not broadcast');
      // y = x W + b: the bias add of a linear layer is part of that layer.
      if (op === 'Add' && ins.length === 2) {
        const [l, b] = this.linearByOutput.has(ins[0])
          ? [this.linearByOutput.get(ins[0]), ins[1]]
          : [this.linearByOutput.get(ins[1]), ins[0]];
        const w = this.weight(b);
        if (l && w && !l.bias && numel(this.dims(b)!) === l.outFeatures) {
          l.bias = true;
          this.consumed.add(w);
          this.usedInitializers.add(w);
          this.linearByOutput.set(outs[0], l);
          return this.set(outs[0], out);
        }
      }
      this.push(node, {
        type: 'elementwise',
        kind: BINARY[op] ?? 'mul',
        elements: numel(out),
        inputs: Math.max(1, ins.filter((n) => n && !this.isConst(n)).length),
      });
      return this.set(outs[0], out);
    }
    if (UNARY.has(op)) {
      this.push(node, { type: 'elementwise', kind: 'scale', elements: numel(X), inputs: 1 });
      return this.set(outs[0], X, op === 'Cast' ? (a.int('to') ?? 1) : this.tensors.get(ins[0])?.dtype);
    }
    if (op === 'Dropout') {
      this.push(node, { type: 'elementwise', kind: 'dropout', elements: numel(X) });
      this.set(outs[0], X);
      return this.set(outs[1], X, 9);
    }
    if (op === 'Softmax' || op === 'LogSoftmax') {
      this.push(node, { type: 'softmax', elements: numel(X) });
      return this.set(outs[0], X);
    }
    if (REDUCTIONS.has(op)) {
      const axes = (
        a.ints('axes') ??
        (ins[1] ? this.tensors.get(ins[1])?.value : undefined) ??
        (a.int('noop_with_empty_axes') ? [] : [...X.keys()])
      ).map((v) => (v < 0 ? v + X.length : v));
      const keep = (a.int('keepdims') ?? 1) === 1;
      const axis = op.startsWith('Arg') ? [((a.int('axis') ?? 0) + X.length) % X.length] : axes;
      const out = X.flatMap((d, i) => (axis.includes(i) ? (keep ? [1] : []) : [d]));
      this.push(node, { type: 'elementwise', kind: 'scale', elements: numel(X), inputs: 1 });
      return this.set(outs[0], out);
    }
    switch (op) {
      case 'MatMul':
      case 'MatMulInteger':
      case 'FusedMatMul':
        return this.matmul(node, ins, outs, X);
      case 'Gemm':
        return this.gemm(node, ins, outs, X, a);
      case 'Conv':
      case 'ConvInteger':
        return this.conv(node, ins, outs, X, a);
      case 'ConvTranspose':
        return this.convTranspose(node, ins, outs, X, a);
      case 'MaxPool':
      case 'AveragePool':
      case 'LpPool':
        return this.pool(node, outs, X, a, op === 'MaxPool' ? 'max' : 'avg');
      case 'GlobalAveragePool':
      case 'GlobalMaxPool':
      case 'GlobalLpPool': {
        const spatial = X.slice(2);
        const out = [X[0], X[1], ...spatial.map(() => 1)];
        this.push(node, {
          type: 'pool',
          kind: 'global_avg',
          channels: X[1],
          inH: spatial[0] ?? 1,
          inW: numel(spatial.slice(1)),
          kernel: spatial[0] ?? 1,
          stride: 1,
        });
        return this.set(outs[0], out);
      }
      case 'BatchNormalization': {
        this.push(node, { type: 'norm', kind: 'batchnorm', channels: X[1] ?? 1, elements: numel(X) });
        for (const n of ins.slice(1)) {
          const w = this.weight(n);
          if (w) this.consumed.add(w);
        }
        return this.set(outs[0], X);
      }
      case 'InstanceNormalization':
      case 'GroupNormalization': {
        const scale = this.dims(ins[1]);
        this.push(node, {
          type: 'norm',
          kind: 'groupnorm',
          channels: scale ? numel(scale) : (X[1] ?? 1),
          elements: numel(X),
        });
        this.consumeAll(ins.slice(1));
        return this.set(outs[0], X);
      }
      case 'LayerNormalization':
      case 'SimplifiedLayerNormalization':
      case 'RMSNormalization':
      case 'SkipLayerNormalization':
      case 'SkipSimplifiedLayerNormalization': {
        const skip = op.startsWith('Skip');
        const gammaIdx = skip ? 2 : 1;
        const gamma = this.dims(ins[gammaIdx]);
        const channels = gamma ? numel(gamma) : X[X.length - 1];
        // A norm with a shift (beta) is LayerNorm's 2 x channels parameters; without, RMSNorm's channels.
        const hasBeta =
          op === 'LayerNormalization' ? !!ins[2] : op === 'SkipLayerNormalization' ? !!ins[3] : false;
        if (skip) this.push(node, { type: 'elementwise', kind: 'add', elements: numel(X), name: 'skip_add' });
        this.push(node, {
          type: 'norm',
          kind: hasBeta ? 'layernorm' : 'rmsnorm',
          channels,
          elements: numel(X),
        });
        this.consumeAll(ins.slice(gammaIdx));
        this.set(outs[0], X);
        if (skip) this.set(outs[3], X);
        return;
      }
      case 'Gather':
        return this.gather(node, ins, outs, X, a);
      case 'Attention':
        return domain === 'com.microsoft'
          ? this.msAttention(node, ins, outs, X, a)
          : this.onnxAttention(node, ins, outs, X, a);
      case 'MultiHeadAttention':
      case 'GroupQueryAttention':
        return this.mhaAttention(node, ins, outs, X, a);
      case 'LSTM':
      case 'GRU':
        return this.rnn(node, ins, outs, X, a, op === 'LSTM' ? 'lstm' : 'gru');
      case 'SoftmaxCrossEntropyLoss':
      case 'NegativeLogLikelihoodLoss':
        this.hasLoss = true;
        this.push(node, { type: 'loss', elements: numel(X) });
        return this.set(outs[0], []);
      case 'Einsum':
        return this.einsum(node, ins, outs, a);
      default:
        break;
    }
    if (FREE.has(op)) return this.freeShape(node, op, ins, outs, X, a);
    if (COPIES.has(op)) return this.copy(node, op, ins, outs, X, a);
    return this.skip(node, `no costing rule for ${domain ? `${domain}.` : ''}${op}`);
  }

  consumeAll(names: string[]) {
    for (const n of names) {
      const w = this.weight(n);
      if (w) this.consumed.add(w);
    }
  }

  // ------------------------------------------------------------------------------------ operators

  matmul(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], A: Dims) {
    const B = this.dims(ins[1]);
    if (!B) return this.skip(node, 'an input shape is unknown');
    const a = A.length === 1 ? [1, A[0]] : A,
      b = B.length === 1 ? [B[0], 1] : B;
    const M = a[a.length - 2],
      K = a[a.length - 1],
      N = b[b.length - 1];
    if (b[b.length - 2] !== K)
      return this.skip(node, `inner dimensions differ (${A.join('x')} @ ${B.join('x')})`);
    const batch = broadcast(a.slice(0, -2), b.slice(0, -2));
    if (!batch) return this.skip(node, 'batch dimensions do not broadcast');
    let out = [...batch, M, N];
    if (A.length === 1) out = out.filter((_, i) => i !== out.length - 2);
    if (B.length === 1) out = out.slice(0, -1);
    const wb = this.weight(ins[1]),
      wa = this.weight(ins[0]);
    if (wb && B.length === 2) {
      const l: Extract<Layer, { type: 'linear' }> = {
        type: 'linear',
        inFeatures: K,
        outFeatures: N,
        tokens: numel(A) / K,
        bias: false,
      };
      this.push(node, l);
      this.linearByOutput.set(
        outs[0],
        this.layers[this.layers.length - 1] as Extract<Layer, { type: 'linear' }>,
      );
      this.consumed.add(wb);
    } else if (wa && A.length === 2) {
      this.push(node, { type: 'linear', inFeatures: K, outFeatures: M, tokens: numel(B) / K, bias: false });
      this.consumed.add(wa);
    } else {
      this.push(node, { type: 'matmul', batches: numel(batch), m: M, n: N, k: K });
    }
    this.set(outs[0], out);
  }

  gemm(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], A: Dims, a: Attrs) {
    const B = this.dims(ins[1]);
    if (!B || A.length !== 2 || B.length !== 2)
      return this.skip(node, 'Gemm needs 2-D inputs of known shape');
    const [M, K] = a.int('transA') ? [A[1], A[0]] : A;
    const N = a.int('transB') ? B[0] : B[1];
    const w = this.weight(ins[1]);
    const bias = !!ins[2] && !!this.weight(ins[2]);
    if (w) {
      this.push(node, { type: 'linear', inFeatures: K, outFeatures: N, tokens: M, bias });
      this.consumed.add(w);
      if (bias) this.consumed.add(this.weight(ins[2])!);
    } else this.push(node, { type: 'matmul', m: M, n: N, k: K });
    this.set(outs[0], [M, N]);
  }

  conv(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], X: Dims, a: Attrs) {
    const W = this.dims(ins[1]);
    if (!W || W.length !== X.length || X.length < 3)
      return this.skip(node, 'Conv needs input and weight shapes of the same rank');
    if (X.length > 4) return this.skip(node, '3-D convolution is not in the layer vocabulary');
    const g = a.int('group') ?? 1;
    const k = W.slice(2),
      spatial = X.slice(2);
    const strides = a.ints('strides') ?? k.map(() => 1),
      dil = a.ints('dilations') ?? k.map(() => 1);
    const pads = this.pads(a, spatial, k, strides, dil);
    const outSpatial = spatial.map(
      (s, i) => Math.floor((s + pads[i] - dil[i] * (k[i] - 1) - 1) / strides[i]) + 1,
    );
    const bias = !!ins[2];
    // The layer computes its output size from kernel, stride and symmetric padding; dilation (which the
    // vocabulary lacks) widens the window without adding work, so it shows as less padding.
    const pad = (i: number) => (pads[i] - (dil[i] - 1) * (k[i] - 1)) / 2;
    if (strides.some((s) => s !== strides[0]))
      this.notes.push(`${node.name || 'Conv'}: unequal strides ${strides.join('x')} costed as ${strides[0]}`);
    if (X.length === 3) {
      this.push(node, {
        type: 'conv1d',
        inC: X[1],
        outC: W[0],
        kernel: k[0],
        stride: strides[0],
        padding: pad(0),
        groups: g,
        inL: spatial[0],
        bias,
      });
    } else {
      this.push(node, {
        type: 'conv2d',
        inC: X[1],
        outC: W[0],
        kernel: k[0] === k[1] ? k[0] : [k[0], k[1]],
        stride: strides[0],
        padding: [pad(0), pad(1)],
        groups: g,
        inH: spatial[0],
        inW: spatial[1],
        bias,
      });
    }
    this.consumeAll(ins.slice(1));
    this.set(outs[0], [X[0], W[0], ...outSpatial]);
  }

  convTranspose(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], X: Dims, a: Attrs) {
    const W = this.dims(ins[1]);
    if (!W || W.length !== 4 || X.length !== 4) return this.skip(node, 'only 2-D ConvTranspose is costed');
    const g = a.int('group') ?? 1;
    const k = W.slice(2),
      strides = a.ints('strides') ?? [1, 1],
      dil = a.ints('dilations') ?? [1, 1],
      outPad = a.ints('output_padding') ?? [0, 0];
    const p = a.ints('pads') ?? [0, 0, 0, 0];
    const outC = W[1] * g;
    const given = a.ints('output_shape');
    const outSpatial =
      given ??
      [0, 1].map(
        (i) => strides[i] * (X[2 + i] - 1) + outPad[i] + ((k[i] - 1) * dil[i] + 1) - p[i] - p[i + 2],
      );
    // Same multiply-adds and weights as a stride-1 convolution over the input grid (each input pixel
    // meets every kernel tap once); its output is the input grid, not the upsampled one.
    this.push(node, {
      type: 'conv2d',
      inC: X[1],
      outC,
      kernel: k[0] === k[1] ? k[0] : [k[0], k[1]],
      stride: 1,
      padding: [(k[0] - 1) / 2, (k[1] - 1) / 2],
      groups: g,
      inH: X[2],
      inW: X[3],
      bias: !!ins[2],
    });
    this.notes.push(
      `${node.name || 'ConvTranspose'}: costed as a stride-1 convolution over its input (same FLOPs and weights; activations of the input size)`,
    );
    this.consumeAll(ins.slice(1));
    this.set(outs[0], [X[0], outC, ...outSpatial]);
  }

  pads(a: Attrs, spatial: Dims, k: Dims, strides: Dims, dil: Dims): Dims {
    const auto = a.str('auto_pad') ?? 'NOTSET';
    if (auto === 'SAME_UPPER' || auto === 'SAME_LOWER') {
      return spatial.map((s, i) =>
        Math.max(0, (Math.ceil(s / strides[i]) - 1) * strides[i] + (k[i] - 1) * dil[i] + 1 - s),
      );
    }
    if (auto === 'VALID') return spatial.map(() => 0);
    const p = a.ints('pads') ?? spatial.flatMap(() => [0, 0]);
    return spatial.map((_, i) => p[i] + p[i + spatial.length]);
  }

  pool(node: onnxProto.onnx.INodeProto, outs: string[], X: Dims, a: Attrs, kind: 'max' | 'avg') {
    const k = a.ints('kernel_shape');
    if (!k || X.length < 3)
      return this.skip(node, 'pooling without kernel_shape or on a tensor without spatial dimensions');
    const spatial = X.slice(2);
    const strides = a.ints('strides') ?? k.map(() => 1),
      dil = a.ints('dilations') ?? k.map(() => 1);
    const pads = this.pads(a, spatial, k, strides, dil);
    const round = a.int('ceil_mode') ? Math.ceil : Math.floor;
    const outSpatial = spatial.map((s, i) => round((s + pads[i] - dil[i] * (k[i] - 1) - 1) / strides[i]) + 1);
    if (spatial.length === 2 && k[0] === k[1]) {
      this.push(node, {
        type: 'pool',
        kind,
        channels: X[1],
        inH: spatial[0],
        inW: spatial[1],
        kernel: k[0],
        stride: strides[0],
        padding: pads[0] / 2,
      });
    } else {
      // 1-D, 3-D or rectangular windows: a memory-bound pass over the input (what pooling costs anyway).
      this.push(node, { type: 'elementwise', kind: 'scale', elements: numel(X), inputs: 1 });
    }
    this.set(outs[0], [X[0], X[1], ...outSpatial]);
  }

  gather(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], X: Dims, a: Attrs) {
    const idx = this.dims(ins[1]);
    if (!idx) return this.skip(node, 'indices shape unknown');
    const axis = ((a.int('axis') ?? 0) + X.length) % X.length;
    const out = [...X.slice(0, axis), ...idx, ...X.slice(axis + 1)];
    const w = this.weight(ins[0]);
    if (w && X.length === 2 && axis === 0) {
      this.push(node, { type: 'embedding', vocab: X[0], dim: X[1], tokens: Math.max(1, numel(idx)) });
      this.consumed.add(w);
    } else this.push(node, { type: 'elementwise', kind: 'scale', elements: numel(out), inputs: 1 });
    this.set(outs[0], out);
  }

  msAttention(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], X: Dims, a: Attrs) {
    // com.microsoft Attention: input [B, S, H] through packed Q/K/V weights [H, 3H'] (+ bias), no output projection.
    const W = this.dims(ins[1]);
    const heads = a.int('num_heads');
    if (!W || !heads || X.length !== 3)
      return this.skip(node, 'Attention needs [batch, seq, hidden] input, weights and num_heads');
    const sizes = a.ints('qkv_hidden_sizes') ?? [W[1] / 3, W[1] / 3, W[1] / 3];
    const S = X[1];
    this.push(
      node,
      linear(X[2], W[1], { tokens: S, bias: !!ins[2], name: 'qkv' }),
      ...attentionCore({
        name: 'attn',
        queries: S,
        keys: S,
        heads,
        headDim: sizes[0] / heads,
        probDropout: false,
      }),
    );
    this.consumeAll(ins.slice(1, 3));
    this.set(outs[0], [X[0], S, sizes[2]]);
  }

  mhaAttention(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], Q: Dims, a: Attrs) {
    // com.microsoft MultiHeadAttention / GroupQueryAttention: already projected Q [B, S, D], K/V [B, L, Dkv].
    const heads = a.int('num_heads');
    const K = this.dims(ins[1]);
    if (!heads || Q.length !== 3) return this.skip(node, 'needs [batch, seq, hidden] query and num_heads');
    const keys = K ? (K.length === 4 ? K[2] : K[1]) : Q[1];
    const qHidden = K ? Q[2] : Q[2] / 3; // packed QKV when key is absent
    this.push(
      node,
      ...attentionCore({
        name: 'attn',
        queries: Q[1],
        keys,
        heads,
        headDim: qHidden / heads,
        probDropout: false,
      }),
    );
    this.set(outs[0], [Q[0], Q[1], qHidden]);
  }

  onnxAttention(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], Q: Dims, a: Attrs) {
    // ai.onnx Attention (opset 23): Q [B, q_heads, S, hd] or [B, S, q_heads x hd]; K, V likewise.
    const K = this.dims(ins[1]),
      V = this.dims(ins[2]);
    if (!K || !V) return this.skip(node, 'key/value shapes unknown');
    const four = Q.length === 4;
    const heads = four ? Q[1] : a.int('q_num_heads');
    if (!heads) return this.skip(node, '3-D inputs need q_num_heads');
    const S = four ? Q[2] : Q[1],
      L = four ? K[2] : K[1];
    const headDim = four ? Q[3] : Q[2] / heads;
    this.push(
      node,
      ...attentionCore({ name: 'attn', queries: S, keys: L, heads, headDim, probDropout: false }),
    );
    const vDim = four ? V[3] : V[2] / (a.int('kv_num_heads') ?? heads);
    this.set(outs[0], four ? [Q[0], heads, S, vDim] : [Q[0], S, heads * vDim]);
  }

  rnn(
    node: onnxProto.onnx.INodeProto,
    ins: string[],
    outs: string[],
    X: Dims,
    a: Attrs,
    cell: 'lstm' | 'gru',
  ) {
    const W = this.dims(ins[1]);
    const hidden = a.int('hidden_size');
    if (!W || !hidden || X.length !== 3)
      return this.skip(node, `${cell.toUpperCase()} needs X, W and hidden_size`);
    const layout = a.int('layout') ?? 0;
    const [steps, batch] = layout === 0 ? [X[0], X[1]] : [X[1], X[0]];
    const bidirectional = (a.str('direction') ?? 'forward') === 'bidirectional';
    const dirs = bidirectional ? 2 : 1;
    this.push(node, { type: 'rnn', cell, inputSize: X[2], hiddenSize: hidden, steps, bidirectional });
    this.consumeAll(ins.slice(1, 4));
    this.set(outs[0], layout === 0 ? [steps, dirs, batch, hidden] : [batch, steps, dirs, hidden]);
    this.set(outs[1], [dirs, batch, hidden]);
    this.set(outs[2], [dirs, batch, hidden]);
  }

  einsum(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], a: Attrs) {
    const eq = (a.str('equation') ?? '').replace(/\s/g, '');
    const [lhs, rhs] = eq.split('->');
    const terms = (lhs ?? '').split(',');
    if (!rhs || terms.length !== ins.length || eq.includes('.'))
      return this.skip(node, `Einsum "${eq}" (explicit output, no ellipsis) is costed; this one is not`);
    const size = new Map<string, number>();
    for (const [i, t] of terms.entries()) {
      const d = this.dims(ins[i]);
      if (!d || d.length !== t.length)
        return this.skip(node, 'operand shapes unknown or not matching the equation');
      [...t].forEach((ch, j) => size.set(ch, d[j]));
    }
    const out = [...rhs].map((ch) => size.get(ch) ?? 1);
    const contracted = [...size.keys()]
      .filter((ch) => !rhs.includes(ch))
      .reduce((p, ch) => p * size.get(ch)!, 1);
    this.push(node, { type: 'matmul', m: numel(out), n: 1, k: contracted });
    this.set(outs[0], out);
  }

  reshape(d: Dims | undefined, shape: number[] | undefined): Dims | undefined {
    if (!d || !shape) return undefined;
    const out = shape.map((s, i) => (s === 0 ? d[i] : s));
    const known = out.filter((s) => s !== -1).reduce((p, s) => p * s, 1);
    return out.map((s) => (s === -1 ? numel(d) / known : s));
  }

  freeShape(node: onnxProto.onnx.INodeProto, op: string, ins: string[], outs: string[], X: Dims, a: Attrs) {
    const value = (n: string | undefined) => (n ? this.tensors.get(n)?.value : undefined);
    let out: Dims | undefined;
    switch (op) {
      case 'Reshape':
        out = this.reshape(X, value(ins[1]));
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
        return;
      }
      case 'Size':
        this.set(outs[0], [], 7, [numel(X)]);
        return;
      case 'Identity':
        out = X;
        break;
      default:
        break;
    }
    if (!out || out.some((v) => !Number.isFinite(v) || v < 0))
      return this.skip(node, `${op}: output shape could not be inferred (its shape input is not a constant)`);
    this.set(outs[0], out, this.tensors.get(ins[0])?.dtype);
  }

  copy(node: onnxProto.onnx.INodeProto, op: string, ins: string[], outs: string[], X: Dims, a: Attrs) {
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
        if (all.some((d) => !d)) return this.skip(node, 'an input shape is unknown');
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
        if (!starts || !ends) return this.skip(node, 'Slice bounds are not constants');
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
      return this.skip(node, `${op}: output shape could not be inferred`);
    const moved = shapes.reduce((s, d) => s + numel(d!), 0);
    this.push(node, { type: 'elementwise', kind: 'scale', elements: Math.max(1, moved), inputs: 1 });
    shapes.forEach((s, i) => this.set(outs[i], s, this.tensors.get(ins[0])?.dtype));
  }

  /** Integer-valued operators on constants (shape arithmetic): evaluated; true when handled. */
  evalConst(op: string, node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], a: Attrs): boolean {
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

  /** Float initializers an operator used but no layer counts (position tables added directly, a decomposed norm's scale): learned tensors. */
  countLearnedTensors() {
    let total = 0,
      count = 0;
    for (const name of this.usedInitializers) {
      if (this.consumed.has(name)) continue;
      const t = this.tensors.get(name)!;
      if (!FLOAT_TYPES.has(t.dtype) || !t.dims || numel(t.dims) <= 1) continue;
      // A bare learned vector is a one-row embedding in the layer vocabulary (see zoo/vit.ts's cls_token).
      this.layers.push({
        type: 'embedding',
        vocab: 1,
        dim: numel(t.dims),
        tokens: 1,
        name: `${name} (learned tensor)`,
      });
      total += numel(t.dims);
      count++;
    }
    if (count)
      this.notes.push(
        `${count} initializer(s) (${total} values) feed operators other than a layer's weights (e.g. a position table added directly, a decomposed norm's scale): counted as parameters`,
      );
  }
}

// ------------------------------------------------------------------------------------ helpers

interface Attrs {
  int(name: string): number | undefined;
  ints(name: string): number[] | undefined;
  floats(name: string): number[] | undefined;
  str(name: string): string | undefined;
}

function attributes(node: onnxProto.onnx.INodeProto): Attrs {
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
function intValues(t: onnxProto.onnx.ITensorProto): number[] | undefined {
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
function broadcast(a: Dims, b: Dims): Dims | undefined {
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
