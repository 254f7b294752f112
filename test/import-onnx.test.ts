// ONNX graphs -> ModelDef (predictor/import/onnx-graph.ts). The graphs are built here with
// onnx-proto (no downloads), costed, and compared with the same model written in the layer
// vocabulary: same parameters, same matrix FLOPs, same transformer structure.
import { describe, expect, it } from 'vitest';
import { fromOnnx } from '../predictor/import/index.js';
import { InputError } from '../predictor/input-error.js';
import { modelCost } from '../predictor/layers.js';
import { activationBytesPerSampleOn, savedBytesPerLayer } from '../predictor/memory.js';
import { POLICIES } from '../predictor/precision.js';
import { loadEfficiency } from '../seeds/catalog.js';
import { parallelStructure } from '../predictor/parallel.js';
import type { ModelDef } from '../predictor/types.js';
import { modelFromZooEntry } from '../predictor/zoo/index.js';
import { FLOAT, OnnxBuilder, tinyGpt } from './import-fixtures.js';

const matmulFlops = (m: ModelDef) =>
  modelCost(m)
    .layers.filter((l) => l.opClass === 'matmul')
    .reduce((s, l) => s + l.forwardFlops * l.count, 0);

describe('a GPT-style decoder exported to ONNX', () => {
  const { bytes, parameters } = tinyGpt();
  const imported = fromOnnx(bytes, { seqLen: 32 });
  const m = imported.model;
  // The same decoder in the zoo's vocabulary: 2 pre-norm blocks, width 64, 4 heads, untied head, no dropout.
  const zoo = modelFromZooEntry({
    id: 'tiny',
    name: 'tiny',
    family: 'decoder',
    batchElement: 'sequence',
    throughputUnit: 'tokens/s',
    unitsPerBatchElement: 'seqLen',
    seqLen: 32,
    optimizer: 'adam',
    batchSizes: [8],
    source: 'test',
    arch: {
      layers: 2,
      hidden: 64,
      heads: 4,
      ffn: 256,
      vocab: 1000,
      norm: 'layernorm',
      mlp: 'gelu',
      positions: 'learned',
      maxPositions: 128,
      bias: true,
      tiedHead: false,
      dropout: false,
    },
  });

  it('counts every weight once: bias adds fold into their MatMul, shapes come from external data', () => {
    expect(modelCost(m).parameters).toBe(parameters);
    expect(modelCost(m).parameters).toBe(modelCost(zoo).parameters);
    expect(imported.unsupported).toEqual([]);
    expect(m.layers.filter((l) => l.type === 'linear' && l.bias).length).toBe(8);
  });

  it("has the zoo model's matrix FLOPs, resolving the dynamic Shape -> Gather -> Range position ids", () => {
    expect(matmulFlops(m)).toBe(matmulFlops(zoo));
    const pos = m.layers.find((l) => l.type === 'embedding' && l.vocab === 128);
    expect(pos).toMatchObject({ tokens: 32 });
  });

  it('is seen as a transformer: 2 blocks of 4 heads, 2 split linear pairs per block', () => {
    const s = parallelStructure(modelCost(m), m.layers);
    expect(s.blocks).toBe(2);
    expect(s.heads).toBe(4);
    expect(s.tpCollectives).toBe(4);
    expect(s.residualElements).toBe(32 * 64);
  });

  it('adds the loss an inference export lacks, and says so', () => {
    expect(m.layers[m.layers.length - 1]).toMatchObject({ type: 'loss', elements: 32 * 1000 });
    expect(imported.notes.join(' ')).toMatch(/no loss/);
  });

  it('symbolic dimensions need the sequence length, and the error names its field', () => {
    try {
      fromOnnx(bytes, { seqLenField: 'workload.seqLen' });
      expect.unreachable();
    } catch (e) {
      expect((e as InputError).field).toBe('workload.seqLen');
      expect((e as InputError).message).toMatch(/symbolic dimension "sequence"/);
    }
    // Twice the sequence: more than twice the attention FLOPs, the same weights.
    const long = fromOnnx(bytes, { seqLen: 64 }).model;
    expect(modelCost(long).parameters).toBe(parameters);
    expect(matmulFlops(long)).toBeGreaterThan(2 * matmulFlops(m));
  });
});

describe('a small CNN', () => {
  // Conv 3->16 3x3 pad 1, BatchNorm, Relu, MaxPool 2, Conv 16->32 3x3 stride 2 pad 1 (+bias), Relu,
  // GlobalAveragePool, Flatten, Gemm 32->10 (+bias), on 1x3x32x32.
  const b = new OnnxBuilder('cnn');
  const x = b.input('image', ['N', 3, 32, 32]);
  const c1 = b.node('Conv', [x, b.weight('w1', [16, 3, 3, 3])], { pads: [1, 1, 1, 1] })[0];
  const bn = b.node('BatchNormalization', [
    c1,
    b.weight('g', [16]),
    b.weight('beta', [16]),
    b.weight('mean', [16]),
    b.weight('var', [16]),
  ])[0];
  const p1 = b.node('MaxPool', [b.node('Relu', [bn])[0]], { kernel_shape: [2, 2], strides: [2, 2] })[0];
  const c2 = b.node('Conv', [p1, b.weight('w2', [32, 16, 3, 3]), b.weight('b2', [32])], {
    strides: [2, 2],
    pads: [1, 1, 1, 1],
  })[0];
  const gap = b.node('GlobalAveragePool', [b.node('Relu', [c2])[0]])[0];
  const logits = b.node(
    'Gemm',
    [b.node('Flatten', [gap])[0], b.weight('fc', [10, 32]), b.weight('fcb', [10])],
    { transB: 1 },
  )[0];
  b.output(logits, ['N', 10]);
  const m = fromOnnx(b.encode()).model;

  it('costs the convolutions, norm, pools and classifier by hand', () => {
    const c = modelCost(m);
    // Weights: 16*27 + 2*16 (BN scale, shift; running stats are not parameters) + 32*144 + 32 + 320 + 10.
    expect(c.parameters).toBe(432 + 32 + 4608 + 32 + 320 + 10);
    // MACs: 32x32x16x27 + 8x8x32x144 + 32x10.
    expect(matmulFlops(m)).toBe(2 * (32 * 32 * 16 * 27 + 8 * 8 * 32 * 144 + 32 * 10));
    expect(m.layers.map((l) => l.type)).toEqual([
      'conv2d',
      'norm',
      'activation',
      'pool',
      'conv2d',
      'activation',
      'pool',
      'linear',
      'loss',
    ]);
    expect(parallelStructure(c, m.layers).tensorParallelizable).toBe(false);
  });
});

describe('a residual block with a projection shortcut', () => {
  // Conv 3->16 3x3, Relu (x); main path Conv 16->16 3x3, Relu, Conv 16->16 3x3; shortcut Conv
  // 16->16 1x1 on x; Add, Relu, GlobalAveragePool, Flatten, Gemm 16->10, on 1x3x8x8.
  const b = new OnnxBuilder('residual');
  const image = b.input('image', ['N', 3, 8, 8]);
  const pads = { pads: [1, 1, 1, 1] };
  const x = b.node('Relu', [b.node('Conv', [image, b.weight('stem', [16, 3, 3, 3])], pads)[0]])[0];
  const a = b.node('Relu', [b.node('Conv', [x, b.weight('wa', [16, 16, 3, 3])], pads)[0]])[0];
  const main = b.node('Conv', [a, b.weight('wb', [16, 16, 3, 3])], pads)[0];
  const shortcut = b.node('Conv', [x, b.weight('ws', [16, 16, 1, 1])])[0];
  const sum = b.node('Relu', [b.node('Add', [main, shortcut])[0]])[0];
  const gap = b.node('GlobalAveragePool', [sum])[0];
  const logits = b.node('Gemm', [b.node('Flatten', [gap])[0], b.weight('fc', [10, 16])], { transB: 1 })[0];
  b.output(logits, ['N', 10]);
  const m = fromOnnx(b.encode()).model;

  it('keeps the block input the shortcut and the main path both read once', () => {
    // The shortcut convolution (layer 5) reads what the main path's first convolution (layer 2) read.
    expect(m.layers.map((l) => l.type).slice(0, 6)).toEqual([
      'conv2d',
      'activation',
      'conv2d',
      'activation',
      'conv2d',
      'conv2d',
    ]);
    expect(m.layers.map((l) => l.sameInputAs)).toEqual(m.layers.map((_, i) => (i === 5 ? 3 : undefined)));
    const saved = (model: ModelDef) =>
      activationBytesPerSampleOn(modelCost(model), 'FP32', 1, 'none', loadEfficiency().memory);
    const eachReaderItsOwn = { ...m, layers: m.layers.map(({ sameInputAs: _, ...l }) => l) };
    // Read as the previous layer's output the shortcut's input would be counted again: 16 x 8 x 8 fp32.
    expect(saved(eachReaderItsOwn) - saved(m)).toBe(16 * 8 * 8 * 4);
  });
});

describe('a squeeze-and-excitation gate', () => {
  // Conv 3->16 3x3 (x, 1x16x8x8); GlobalAveragePool, Conv 16->4 1x1, Relu, Conv 4->16 1x1, Sigmoid
  // (the gate, 16x1x1); Mul(x, gate) broadcasts the gate over the map.
  const b = new OnnxBuilder('squeeze_excite');
  const image = b.input('image', ['N', 3, 8, 8]);
  const x = b.node('Conv', [image, b.weight('stem', [16, 3, 3, 3])], { pads: [1, 1, 1, 1] })[0];
  const squeezed = b.node('Relu', [
    b.node('Conv', [b.node('GlobalAveragePool', [x])[0], b.weight('sq', [4, 16, 1, 1])])[0],
  ])[0];
  const gate = b.node('Sigmoid', [b.node('Conv', [squeezed, b.weight('ex', [16, 4, 1, 1])])[0]])[0];
  const gated = b.node('Mul', [x, gate])[0];
  b.output(gated, ['N', 16, 8, 8]);
  const m = fromOnnx(b.encode()).model;

  it('reads and keeps the map and one value per channel, not two maps', () => {
    const mul = m.layers.find((l) => l.type === 'elementwise' && l.kind === 'mul')!;
    expect(mul).toMatchObject({ elements: 16 * 8 * 8, inputs: 1 + 1 / (8 * 8) });
    const cost = modelCost(m);
    const i = m.layers.indexOf(mul);
    expect(cost.layers[i].inputElements).toBeCloseTo(16 * 8 * 8 + 16, 9);
    // FP32: mul keeps both factors, the map and the gate (which the sigmoid keeps too: the multiply
    // reads x beside the pool's path, so the gate is not matched as the previous layer's output and
    // its 16 values are counted again). Two maps would be 2 x 1,024 values.
    const saved = savedBytesPerLayer(cost, POLICIES.FP32, 'fused', [], loadEfficiency().memory);
    expect(m.layers[i].sameInputAs).toBeDefined();
    expect(saved[i]).toBe((16 * 8 * 8 + 16) * 4);
  });
});

describe('separate q, k and v projections of a norm', () => {
  // LayerNormalization, then three MatMuls on its output (q, k, v), summed: 1 x 8 tokens x 16.
  const b = new OnnxBuilder('qkv');
  const x = b.input('x', ['N', 8, 16]);
  const normed = b.node('LayerNormalization', [x, b.weight('g', [16]), b.weight('beta', [16])], {
    axis: -1,
  })[0];
  const [q, k, v] = ['wq', 'wk', 'wv'].map((w) => b.node('MatMul', [normed, b.weight(w, [16, 16])])[0]);
  const out = b.node('Add', [b.node('Add', [q, k])[0], v])[0];
  b.output(out, ['N', 8, 16]);
  const m = fromOnnx(b.encode()).model;

  it('keep the norm output once as it arrives, and a cast copy each where autocast casts it', () => {
    expect(m.layers.filter((l) => l.type === 'linear').map((l) => l.sameInputAs)).toEqual([undefined, 1, 1]);
    const eff = loadEfficiency();
    const linears = (precision: 'BF16' | 'AMP_BF16') => {
      const cost = modelCost(m);
      const saved = savedBytesPerLayer(cost, POLICIES[precision], 'fused', [], eff.memory);
      return cost.layers.flatMap((l, i) => (l.type === 'linear' ? [saved[i]] : []));
    };
    // BF16: the one bf16 tensor, kept by q. AMP_BF16: the norm's output is fp32; each MatMul casts it.
    expect(linears('BF16')).toEqual([8 * 16 * 2, 0, 0]);
    expect(linears('AMP_BF16')).toEqual([8 * 16 * 2, 8 * 16 * 2, 8 * 16 * 2]);
  });
});

describe('fused operators', () => {
  it('com.microsoft Attention costs its packed QKV projection and the attention core; LSTM an rnn layer', () => {
    const b = new OnnxBuilder('fused');
    const x = b.input('x', ['batch', 'seq', 256]);
    const att = b.node(
      'Attention',
      [x, b.weight('qkv', [256, 768]), b.weight('qkv_b', [768])],
      { num_heads: 8 },
      { domain: 'com.microsoft' },
    )[0];
    const proj = b.node('MatMul', [att, b.weight('o', [256, 256])])[0];
    const t = b.node('Transpose', [proj], { perm: [1, 0, 2] })[0]; // LSTM wants [seq, batch, input]
    const [y] = b.node(
      'LSTM',
      [t, b.weight('W', [1, 4 * 128, 256]), b.weight('R', [1, 4 * 128, 128]), b.weight('B', [1, 8 * 128])],
      { hidden_size: 128 },
      { outputs: 3 },
    );
    b.output(y, ['seq', 1, 'batch', 128]);
    const r = fromOnnx(b.encode(), { seqLen: 64 });
    const types = r.model.layers.map((l) => l.type);
    expect(types.slice(0, 6)).toEqual(['linear', 'matmul', 'elementwise', 'softmax', 'matmul', 'linear']);
    const rnn = r.model.layers.find((l) => l.type === 'rnn');
    // The transposed input is [seq, batch, 256] per sample: 64 steps.
    expect(rnn).toMatchObject({ cell: 'lstm', inputSize: 256, hiddenSize: 128, steps: 64 });
    expect(modelCost(r.model).parameters).toBe(256 * 768 + 768 + 256 * 256 + 4 * 128 * (256 + 128) + 8 * 128);
    expect(r.unsupported).toEqual([]);
  });
});

describe('operators it cannot cost are listed, never dropped', () => {
  it('lists unknown operators with count, node names and reason, and keeps costing what follows', () => {
    const b = new OnnxBuilder('odd');
    const x = b.input('x', ['batch', 16]);
    const h = b.node('MatMul', [x, b.weight('w', [16, 32])])[0];
    const odd1 = b.node('MyFancyOp', [h], {}, { domain: 'com.example', name: 'fancy_1' })[0];
    const odd2 = b.node('MyFancyOp', [odd1], {}, { domain: 'com.example', name: 'fancy_2' })[0];
    const nms = b.node('NonMaxSuppression', [odd2], {}, { name: 'nms' })[0];
    const y = b.node('MatMul', [odd2, b.weight('w2', [32, 4])])[0];
    b.output(y, ['batch', 4]);
    b.output(nms, ['batch', 3], FLOAT);
    const r = fromOnnx(b.encode());
    expect(r.unsupported).toEqual([
      {
        opType: 'MyFancyOp',
        domain: 'com.example',
        count: 2,
        nodes: ['fancy_1', 'fancy_2'],
        reason: 'operator domain "com.example" is not costed',
      },
      {
        opType: 'NonMaxSuppression',
        domain: '',
        count: 1,
        nodes: ['nms'],
        reason: 'no costing rule for NonMaxSuppression',
      },
    ]);
    // Both MatMuls are costed: the unknown operators are assumed to keep their input's shape.
    expect(
      r.model.layers
        .filter((l) => l.type === 'linear')
        .map((l) => l.type === 'linear' && [l.inFeatures, l.outFeatures]),
    ).toEqual([
      [16, 32],
      [32, 4],
    ]);
  });
});

describe('bad input', () => {
  it('bytes that are not ONNX, and graphs over the node limit, are refused naming the field', () => {
    const garbage = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]);
    expect(() => fromOnnx(garbage, { field: 'customModel.onnxBase64' })).toThrow(InputError);
    try {
      fromOnnx(garbage, { field: 'customModel.onnxBase64' });
    } catch (e) {
      expect((e as InputError).field).toBe('customModel.onnxBase64');
    }
    expect(() => fromOnnx(tinyGpt().bytes, { seqLen: 8, maxNodes: 10 })).toThrow(/nodes; at most 10/);
    expect(() => fromOnnx(new OnnxBuilder('empty').encode())).toThrow(/no nodes/);
  });
});
