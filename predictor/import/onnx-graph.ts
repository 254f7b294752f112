// An ONNX model file -> ModelDef: the graph is decoded with onnx-proto's protobuf reader, shapes are
// inferred node by node (onnx-shapes.ts: per sample, the first dimension of every graph input is the
// batch and is bound to 1; other symbolic dimensions take the sequence length), and each operator
// becomes layers
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
import {
  attributes,
  broadcast,
  COPIES,
  FLOAT_TYPES,
  FREE,
  num,
  numel,
  reshape,
  ShapeTable,
  type Attrs,
  type Dims,
  type Long,
} from './onnx-shapes.js';
import { IMPORT_LIMITS, type ImportedModel, type ImportOptions, type UnsupportedOperator } from './types.js';

const { onnx } = onnxProto;
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

/** Turns each node of a graph into layers of the zoo's vocabulary, reading shapes from a ShapeTable. */
class GraphCoster {
  readonly shapes: ShapeTable;
  readonly layers: Layer[] = [];
  readonly notes: string[] = [];
  readonly unsupported = new Map<string, UnsupportedOperator>();
  /** Float initializers feeding a costed operator, and those a layer already counts as its weights. */
  readonly usedInitializers = new Set<string>();
  /** Per tensor, where the last layer that read it as its first input starts (Layer.sameInputAs). */
  private readonly lastReader = new Map<string, number>();
  readonly consumed = new Set<string>();
  /** Output name -> the linear layer that produced it (a following bias Add folds into it). */
  readonly linearByOutput = new Map<string, Extract<Layer, { type: 'linear' }>>();
  hasLoss = false;

  constructor(
    readonly model: onnxProto.onnx.ModelProto,
    readonly graph: onnxProto.onnx.GraphProto,
    readonly o: OnnxOptions,
    readonly fail: (m: string) => never,
  ) {
    this.shapes = new ShapeTable(graph, o.seqLen, o.seqLenField, fail);
  }

  run(bytes: Uint8Array): ImportedModel {
    this.shapes.readDeclaredShapes();
    if (this.shapes.fixedBatch !== undefined)
      this.notes.push(
        `the graph's batch dimension is fixed at ${this.shapes.fixedBatch}: one batch element here is one run of the graph (${this.shapes.fixedBatch} samples)`,
      );
    this.graph.node.forEach((node) => this.visit(node));
    this.countLearnedTensors();
    if (!this.layers.length)
      this.fail(
        `no operator of the graph could be costed (${[...this.unsupported.values()].map((u) => u.opType).join(', ')})`,
      );
    if (!this.hasLoss) {
      const out = this.graph.output?.[0]?.name;
      const dims = out ? (this.shapes.tensors.get(out)?.dims ?? this.shapes.valueInfo.get(out)) : undefined;
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
      unitsPerBatchElement: this.shapes.fixedBatch ?? 1,
      ...(this.shapes.usedSeqLen && this.o.seqLen !== undefined ? { seqLen: this.o.seqLen } : {}),
      optimizer: this.o.optimizer ?? 'adam',
      batchSizes: [8, 16, 32],
      source: `ONNX graph${this.model.producerName ? ` from ${this.model.producerName}` : ''} (opset ${opset || 'unknown'}), ${this.graph.node.length} nodes`,
      layers: this.layers,
    };
    return { model: def, notes: this.notes, unsupported: [...this.unsupported.values()] };
  }

  // ------------------------------------------------------------------------------------ nodes

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
    const first = this.shapes.dims(node.input?.[0]);
    for (const out of node.output ?? [])
      this.shapes.set(
        out,
        this.shapes.valueInfo.get(out) ?? ((node.output?.length ?? 0) === 1 ? first : undefined),
      );
  }

  push(node: onnxProto.onnx.INodeProto, ...layers: Layer[]) {
    const base = node.name || node.opType || 'node';
    const start = this.layers.length;
    for (const l of layers)
      this.layers.push(l.name ? { ...l, name: `${base}:${l.name}` } : { ...l, name: base });
    // A tensor several nodes read (a residual block's input, read by its first convolution and by
    // the projection shortcut): autograd keeps it once, so each later reader points at the one before.
    const read = node.input?.[0];
    if (read && layers.length > 0 && !this.shapes.tensors.get(read)?.init) {
      const before = this.lastReader.get(read);
      if (before !== undefined) this.layers[start].sameInputAs = start - before;
      this.lastReader.set(read, start);
    }
    for (const i of node.input ?? []) if (i && this.shapes.tensors.get(i)?.init) this.usedInitializers.add(i);
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
    if (
      ins.length &&
      ins.every((n) => !n || this.shapes.isConst(n)) &&
      this.shapes.foldConstant(op, node, ins, outs, a)
    )
      return;
    // Weights reached through a conversion of an initializer.
    if (
      ['Transpose', 'Cast', 'Identity', 'DequantizeLinear', 'Reshape', 'Unsqueeze', 'Squeeze'].includes(op) &&
      this.shapes.weight(ins[0]) &&
      ins.slice(1).every((n) => !n || this.shapes.isConst(n))
    ) {
      const src = this.shapes.weight(ins[0])!;
      this.shapes.derived.set(outs[0], src);
      const d = this.shapes.dims(ins[0]);
      this.shapes.set(
        outs[0],
        op === 'Transpose' && d
          ? (a.ints('perm') ?? [...d.keys()].reverse()).map((p) => d[p])
          : op === 'Reshape'
            ? reshape(d, this.shapes.tensors.get(ins[1])?.value)
            : d,
        1,
      );
      return;
    }
    const x = this.shapes.dims(ins[0]);
    if (!x && !['Constant', 'ConstantOfShape', 'Range'].includes(op))
      return this.skip(node, 'its input shape is unknown (it follows an operator that could not be costed)');
    const X = x ?? [];

    if (op in ACTIVATIONS) {
      this.push(node, { type: 'activation', kind: ACTIVATIONS[op], elements: numel(X) });
      return this.shapes.set(outs[0], X);
    }
    if (op in BINARY || op === 'Where') {
      const shapes = ins.filter(Boolean).map((n) => this.shapes.dims(n));
      if (shapes.some((s) => !s)) return this.skip(node, 'an input shape is unknown');
      const out = shapes.reduce((acc, s) => broadcast(acc!, s!), [] as Dims)!;
      if (!out) return this.skip(node, 'inputs do not broadcast');
      // y = x W + b: the bias add of a linear layer is part of that layer.
      if (op === 'Add' && ins.length === 2) {
        const [l, b] = this.linearByOutput.has(ins[0])
          ? [this.linearByOutput.get(ins[0]), ins[1]]
          : [this.linearByOutput.get(ins[1]), ins[0]];
        const w = this.shapes.weight(b);
        if (l && w && !l.bias && numel(this.shapes.dims(b)!) === l.outFeatures) {
          l.bias = true;
          this.consumed.add(w);
          this.usedInitializers.add(w);
          this.linearByOutput.set(outs[0], l);
          return this.shapes.set(outs[0], out);
        }
      }
      // What the op reads of each tensor operand, at the operand's own size: a broadcast one (a
      // squeeze-and-excitation gate, one value per channel) is read once, not once per output.
      const read = ins
        .filter((n) => n && !this.shapes.isConst(n))
        .reduce((sum, n) => sum + numel(this.shapes.dims(n)!), 0);
      this.push(node, {
        type: 'elementwise',
        kind: BINARY[op] ?? 'mul',
        elements: numel(out),
        inputs: Math.max(1, read / Math.max(1, numel(out))),
      });
      return this.shapes.set(outs[0], out);
    }
    if (UNARY.has(op)) {
      this.push(node, { type: 'elementwise', kind: 'scale', elements: numel(X), inputs: 1 });
      return this.shapes.set(
        outs[0],
        X,
        op === 'Cast' ? (a.int('to') ?? 1) : this.shapes.tensors.get(ins[0])?.dtype,
      );
    }
    if (op === 'Dropout') {
      this.push(node, { type: 'elementwise', kind: 'dropout', elements: numel(X) });
      this.shapes.set(outs[0], X);
      return this.shapes.set(outs[1], X, 9);
    }
    if (op === 'Softmax' || op === 'LogSoftmax') {
      this.push(node, { type: 'softmax', elements: numel(X) });
      return this.shapes.set(outs[0], X);
    }
    if (REDUCTIONS.has(op)) {
      const axes = (
        a.ints('axes') ??
        (ins[1] ? this.shapes.tensors.get(ins[1])?.value : undefined) ??
        (a.int('noop_with_empty_axes') ? [] : [...X.keys()])
      ).map((v) => (v < 0 ? v + X.length : v));
      const keep = (a.int('keepdims') ?? 1) === 1;
      const axis = op.startsWith('Arg') ? [((a.int('axis') ?? 0) + X.length) % X.length] : axes;
      const out = X.flatMap((d, i) => (axis.includes(i) ? (keep ? [1] : []) : [d]));
      this.push(node, { type: 'elementwise', kind: 'scale', elements: numel(X), inputs: 1 });
      return this.shapes.set(outs[0], out);
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
        return this.shapes.set(outs[0], out);
      }
      case 'BatchNormalization': {
        this.push(node, { type: 'norm', kind: 'batchnorm', channels: X[1] ?? 1, elements: numel(X) });
        for (const n of ins.slice(1)) {
          const w = this.shapes.weight(n);
          if (w) this.consumed.add(w);
        }
        return this.shapes.set(outs[0], X);
      }
      case 'InstanceNormalization':
      case 'GroupNormalization': {
        const scale = this.shapes.dims(ins[1]);
        this.push(node, {
          type: 'norm',
          kind: 'groupnorm',
          channels: scale ? numel(scale) : (X[1] ?? 1),
          elements: numel(X),
        });
        this.consumeAll(ins.slice(1));
        return this.shapes.set(outs[0], X);
      }
      case 'LayerNormalization':
      case 'SimplifiedLayerNormalization':
      case 'RMSNormalization':
      case 'SkipLayerNormalization':
      case 'SkipSimplifiedLayerNormalization': {
        const skip = op.startsWith('Skip');
        const gammaIdx = skip ? 2 : 1;
        const gamma = this.shapes.dims(ins[gammaIdx]);
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
        this.shapes.set(outs[0], X);
        if (skip) this.shapes.set(outs[3], X);
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
        return this.shapes.set(outs[0], []);
      case 'Einsum':
        return this.einsum(node, ins, outs, a);
      default:
        break;
    }
    if (FREE.has(op)) {
      if (!this.shapes.inferFree(op, ins, outs, X, a))
        this.skip(node, `${op}: output shape could not be inferred (its shape input is not a constant)`);
      return;
    }
    if (COPIES.has(op)) return this.copy(node, ins, outs, this.shapes.copyShapes(op, ins, outs, X, a));
    return this.skip(node, `no costing rule for ${domain ? `${domain}.` : ''}${op}`);
  }

  consumeAll(names: string[]) {
    for (const n of names) {
      const w = this.shapes.weight(n);
      if (w) this.consumed.add(w);
    }
  }

  // ------------------------------------------------------------------------------------ operators

  /** An operator that moves data once: a memory pass over its outputs (shapes from ShapeTable.copyShapes). */
  copy(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], shapes: Dims[] | string) {
    if (typeof shapes === 'string') return this.skip(node, shapes);
    const moved = shapes.reduce((s, d) => s + numel(d), 0);
    this.push(node, { type: 'elementwise', kind: 'scale', elements: Math.max(1, moved), inputs: 1 });
    shapes.forEach((s, i) => this.shapes.set(outs[i], s, this.shapes.tensors.get(ins[0])?.dtype));
  }

  matmul(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], A: Dims) {
    const B = this.shapes.dims(ins[1]);
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
    const wb = this.shapes.weight(ins[1]),
      wa = this.shapes.weight(ins[0]);
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
    this.shapes.set(outs[0], out);
  }

  gemm(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], A: Dims, a: Attrs) {
    const B = this.shapes.dims(ins[1]);
    if (!B || A.length !== 2 || B.length !== 2)
      return this.skip(node, 'Gemm needs 2-D inputs of known shape');
    const [M, K] = a.int('transA') ? [A[1], A[0]] : A;
    const N = a.int('transB') ? B[0] : B[1];
    const w = this.shapes.weight(ins[1]);
    const bias = !!ins[2] && !!this.shapes.weight(ins[2]);
    if (w) {
      this.push(node, { type: 'linear', inFeatures: K, outFeatures: N, tokens: M, bias });
      this.consumed.add(w);
      if (bias) this.consumed.add(this.shapes.weight(ins[2])!);
    } else this.push(node, { type: 'matmul', m: M, n: N, k: K });
    this.shapes.set(outs[0], [M, N]);
  }

  conv(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], X: Dims, a: Attrs) {
    const W = this.shapes.dims(ins[1]);
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
    this.shapes.set(outs[0], [X[0], W[0], ...outSpatial]);
  }

  convTranspose(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], X: Dims, a: Attrs) {
    const W = this.shapes.dims(ins[1]);
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
    this.shapes.set(outs[0], [X[0], outC, ...outSpatial]);
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
    this.shapes.set(outs[0], [X[0], X[1], ...outSpatial]);
  }

  gather(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], X: Dims, a: Attrs) {
    const idx = this.shapes.dims(ins[1]);
    if (!idx) return this.skip(node, 'indices shape unknown');
    const axis = ((a.int('axis') ?? 0) + X.length) % X.length;
    const out = [...X.slice(0, axis), ...idx, ...X.slice(axis + 1)];
    const w = this.shapes.weight(ins[0]);
    if (w && X.length === 2 && axis === 0) {
      this.push(node, { type: 'embedding', vocab: X[0], dim: X[1], tokens: Math.max(1, numel(idx)) });
      this.consumed.add(w);
    } else this.push(node, { type: 'elementwise', kind: 'scale', elements: numel(out), inputs: 1 });
    this.shapes.set(outs[0], out);
  }

  msAttention(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], X: Dims, a: Attrs) {
    // com.microsoft Attention: input [B, S, H] through packed Q/K/V weights [H, 3H'] (+ bias), no output projection.
    const W = this.shapes.dims(ins[1]);
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
    this.shapes.set(outs[0], [X[0], S, sizes[2]]);
  }

  mhaAttention(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], Q: Dims, a: Attrs) {
    // com.microsoft MultiHeadAttention / GroupQueryAttention: already projected Q [B, S, D], K/V [B, L, Dkv].
    const heads = a.int('num_heads');
    const K = this.shapes.dims(ins[1]);
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
    this.shapes.set(outs[0], [Q[0], Q[1], qHidden]);
  }

  onnxAttention(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], Q: Dims, a: Attrs) {
    // ai.onnx Attention (opset 23): Q [B, q_heads, S, hd] or [B, S, q_heads x hd]; K, V likewise.
    const K = this.shapes.dims(ins[1]),
      V = this.shapes.dims(ins[2]);
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
    this.shapes.set(outs[0], four ? [Q[0], heads, S, vDim] : [Q[0], S, heads * vDim]);
  }

  rnn(
    node: onnxProto.onnx.INodeProto,
    ins: string[],
    outs: string[],
    X: Dims,
    a: Attrs,
    cell: 'lstm' | 'gru',
  ) {
    const W = this.shapes.dims(ins[1]);
    const hidden = a.int('hidden_size');
    if (!W || !hidden || X.length !== 3)
      return this.skip(node, `${cell.toUpperCase()} needs X, W and hidden_size`);
    const layout = a.int('layout') ?? 0;
    const [steps, batch] = layout === 0 ? [X[0], X[1]] : [X[1], X[0]];
    const bidirectional = (a.str('direction') ?? 'forward') === 'bidirectional';
    const dirs = bidirectional ? 2 : 1;
    this.push(node, { type: 'rnn', cell, inputSize: X[2], hiddenSize: hidden, steps, bidirectional });
    this.consumeAll(ins.slice(1, 4));
    this.shapes.set(outs[0], layout === 0 ? [steps, dirs, batch, hidden] : [batch, steps, dirs, hidden]);
    this.shapes.set(outs[1], [dirs, batch, hidden]);
    this.shapes.set(outs[2], [dirs, batch, hidden]);
  }

  einsum(node: onnxProto.onnx.INodeProto, ins: string[], outs: string[], a: Attrs) {
    const eq = (a.str('equation') ?? '').replace(/\s/g, '');
    const [lhs, rhs] = eq.split('->');
    const terms = (lhs ?? '').split(',');
    if (!rhs || terms.length !== ins.length || eq.includes('.'))
      return this.skip(node, `Einsum "${eq}" (explicit output, no ellipsis) is costed; this one is not`);
    const size = new Map<string, number>();
    for (const [i, t] of terms.entries()) {
      const d = this.shapes.dims(ins[i]);
      if (!d || d.length !== t.length)
        return this.skip(node, 'operand shapes unknown or not matching the equation');
      [...t].forEach((ch, j) => size.set(ch, d[j]));
    }
    const out = [...rhs].map((ch) => size.get(ch) ?? 1);
    const contracted = [...size.keys()]
      .filter((ch) => !rhs.includes(ch))
      .reduce((p, ch) => p * size.get(ch)!, 1);
    this.push(node, { type: 'matmul', m: numel(out), n: 1, k: contracted });
    this.shapes.set(outs[0], out);
  }

  /** Float initializers an operator used but no layer counts (position tables added directly, a decomposed norm's scale): learned tensors. */
  countLearnedTensors() {
    let total = 0,
      count = 0;
    for (const name of this.usedInitializers) {
      if (this.consumed.has(name)) continue;
      const t = this.shapes.tensors.get(name)!;
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
