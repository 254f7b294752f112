import { describe, expect, it } from 'vitest';
import { convOut, layerCost, modelCost } from '../predictor/layers.js';

describe('layer math against hand computations', () => {
  it('conv2d: ResNet stem 7x7/2, 3->64 at 224x224', () => {
    const c = layerCost({
      type: 'conv2d',
      inC: 3,
      outC: 64,
      kernel: 7,
      stride: 2,
      padding: 3,
      inH: 224,
      inW: 224,
    });
    // output 112x112; weights 3*7*7*64 = 9408; MACs = 112*112*9408 = 118,013,952
    expect(c.parameters).toBe(9408);
    expect(c.forwardFlops).toBe(2 * 112 * 112 * 9408);
    expect(c.backwardFlops).toBe(2 * c.forwardFlops);
    expect(c.outputElements).toBe(64 * 112 * 112);
    expect(c.inputElements).toBe(3 * 224 * 224);
    expect(c.opClass).toBe('matmul');
  });

  it('grouped and depthwise convolutions divide weights by groups', () => {
    const dw = layerCost({
      type: 'conv2d',
      inC: 32,
      outC: 32,
      kernel: 3,
      padding: 1,
      groups: 32,
      inH: 112,
      inW: 112,
    });
    expect(dw.parameters).toBe(32 * 9);
    expect(dw.forwardFlops).toBe(2 * 112 * 112 * 32 * 9);
  });

  it('linear over tokens: BERT-large FFN up-projection at 384 tokens', () => {
    const l = layerCost({ type: 'linear', inFeatures: 1024, outFeatures: 4096, tokens: 384 });
    expect(l.parameters).toBe(1024 * 4096 + 4096);
    expect(l.forwardFlops).toBe(2 * 384 * 1024 * 4096);
    expect(
      layerCost({ type: 'linear', inFeatures: 768, outFeatures: 50257, tied: true, bias: false }).parameters,
    ).toBe(0);
  });

  it('attention score matmul has no parameters and scales with seq^2', () => {
    const m = layerCost({ type: 'matmul', m: 512, n: 512, k: 64, batches: 16 });
    expect(m.parameters).toBe(0);
    expect(m.forwardFlops).toBe(2 * 16 * 512 * 512 * 64);
  });

  it('LSTM: 4 gates over input and hidden, cuDNN double bias', () => {
    const r = layerCost({ type: 'rnn', cell: 'lstm', inputSize: 1024, hiddenSize: 1024, steps: 50 });
    expect(r.parameters).toBe(4 * 1024 * 2048 + 8 * 1024);
    expect(r.forwardFlops).toBe(2 * 50 * 4 * 1024 * 2048);
  });

  it('embedding is a gather: parameters but no forward math', () => {
    const e = layerCost({ type: 'embedding', vocab: 30522, dim: 1024, tokens: 384 });
    expect(e.parameters).toBe(30522 * 1024);
    expect(e.forwardFlops).toBe(0);
    expect(e.opClass).toBe('gather');
  });

  it('norms and softmax are reductions (autocast keeps them fp32); activations are pointwise', () => {
    expect(layerCost({ type: 'norm', kind: 'layernorm', channels: 768, elements: 768 * 128 }).opClass).toBe(
      'reduction',
    );
    expect(layerCost({ type: 'norm', kind: 'rmsnorm', channels: 4096, elements: 4096 }).parameters).toBe(
      4096,
    );
    expect(layerCost({ type: 'softmax', elements: 100 }).opClass).toBe('reduction');
    expect(layerCost({ type: 'activation', kind: 'relu', elements: 100 }).opClass).toBe('pointwise');
  });

  it('a broadcast multiply (a per-channel gate) reads the map and the gate; its backward forms the gate gradient at the map size', () => {
    // 64 channels of 8 x 8: the gate is 64 values, one per channel.
    const map = 64 * 8 * 8;
    const gate = layerCost({ type: 'elementwise', kind: 'mul', elements: map, inputs: 1 + 1 / 64 });
    expect(gate.inputElements).toBe(map + 64);
    expect(gate.gradientElements).toBe(2 * map);
    // Two same-sized factors: both read whole, their gradients the size of their inputs.
    const pair = layerCost({ type: 'elementwise', kind: 'mul', elements: map });
    expect(pair.inputElements).toBe(2 * map);
    expect(pair.gradientElements).toBeUndefined();
  });

  it('pooling output sizes follow the window arithmetic', () => {
    expect(convOut(112, 3, 2, 1)).toBe(56);
    const p = layerCost({
      type: 'pool',
      kind: 'max',
      channels: 64,
      inH: 112,
      inW: 112,
      kernel: 3,
      stride: 2,
      padding: 1,
    });
    expect(p.outputElements).toBe(64 * 56 * 56);
    const g = layerCost({
      type: 'pool',
      kind: 'global_avg',
      channels: 2048,
      inH: 7,
      inW: 7,
      kernel: 7,
      stride: 1,
    });
    expect(g.outputElements).toBe(2048);
  });

  it('modelCost multiplies by count', () => {
    const block = { type: 'linear' as const, inFeatures: 10, outFeatures: 10, count: 3 };
    const c = modelCost({ layers: [block] });
    expect(c.parameters).toBe(3 * 110);
    expect(c.forwardFlops).toBe(3 * 200);
  });
});
