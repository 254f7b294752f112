// A layer list in the zoo's vocabulary (predictor/import/layer-list.ts): checked field by field,
// costed exactly as the same layers in a zoo model.
import { describe, expect, it } from 'vitest';
import { fromLayerList, importModel, LAYER_TYPES } from '../predictor/import/index.js';
import { InputError } from '../predictor/input-error.js';
import { modelCost } from '../predictor/layers.js';
import { getModel, loadZoo } from '../predictor/zoo/index.js';
import { toy } from './fixtures.js';

describe('layer lists', () => {
  it("the zoo's own layers, as a list, cost exactly what the zoo model costs", () => {
    const zoo = getModel('gpt2_124m')!;
    const m = fromLayerList({
      name: 'gpt2 as a list',
      layers: zoo.layers,
      batchElement: 'sequence',
      throughputUnit: 'tokens/s',
      unitsPerBatchElement: 1024,
      seqLen: 1024,
    }).model;
    expect(modelCost(m)).toEqual(modelCost(zoo));
    expect(m).toMatchObject({
      name: 'gpt2 as a list',
      throughputUnit: 'tokens/s',
      unitsPerBatchElement: 1024,
      seqLen: 1024,
      optimizer: 'adam',
    });
    expect(m.id).toMatch(/^layers:[0-9a-f]{10}$/);
  });

  it('every zoo model, as a layer list, costs exactly what the zoo model costs: the API speaks the whole vocabulary', () => {
    // Frozen stems (Mask R-CNN), averaged rows per sample (Transformer-XL's adaptive softmax sees
    // 4.8 tokens per sample in a tail cluster), 2^30 attention scores per sample (Llama-2-70B).
    for (const zoo of loadZoo()) {
      const m = fromLayerList({
        layers: zoo.layers,
        batchElement: zoo.batchElement,
        throughputUnit: zoo.throughputUnit,
        unitsPerBatchElement: zoo.unitsPerBatchElement,
      }).model;
      expect(modelCost(m), zoo.id).toEqual(modelCost(zoo));
    }
  });

  it("Tacotron 2's layers (a decoder loop: per-step linears and convolutions, stepwise LSTMCells, copies) as a list cost what the zoo model costs", () => {
    const zoo = getModel('tacotron2')!;
    const m = fromLayerList({
      layers: zoo.layers,
      batchElement: 'sequence',
      throughputUnit: 'mels/s',
      unitsPerBatchElement: 566,
    }).model;
    expect(modelCost(m)).toEqual(modelCost(zoo));
    expect(modelCost(m).layers.some((l) => l.type === 'linear' && l.kernels > 1)).toBe(true);
  });

  it('a bare array works too, every layer type is accepted, and a missing loss is added with a note', () => {
    const r = fromLayerList(toy.layers.filter((l) => l.type !== 'loss'));
    expect(r.model.layers[r.model.layers.length - 1]).toMatchObject({ type: 'loss' });
    expect(r.notes[0]).toMatch(/no loss layer/);
    expect(LAYER_TYPES).toHaveLength(12);
  });

  it.each([
    [[{ type: 'conv3d', inC: 3 }], /\[0\]\.type must be one of conv2d, conv1d, linear/],
    [[{ type: 'linear', inFeatures: 8 }], /\[0\]: a linear layer needs "outFeatures"/],
    [
      [{ type: 'linear', inFeatures: 8, outFeatures: 4, kernel: 3 }],
      /\[0\]: a linear layer has no field "kernel" \(it takes inFeatures, outFeatures, tokens, bias, tied, steps, count, frozen, name\)/,
    ],
    [[{ type: 'linear', inFeatures: 8, outFeatures: 2.5 }], /\[0\]\.outFeatures must be an integer from 1/],
    [[{ type: 'softmax', elements: -4 }], /\[0\]\.elements must be a positive number up to 1000000000000000/],
    [[{ type: 'softmax', elements: 1e16 }], /\[0\]\.elements must be a positive number up to/],
    [
      [{ type: 'linear', inFeatures: 8, outFeatures: 4, tokens: 10, steps: 20 }],
      /\[0\]: steps \(20\) must be at most tokens \(10\)/,
    ],
    [
      [{ type: 'norm', kind: 'weird', channels: 4, elements: 4 }],
      /\[0\]\.kind must be one of batchnorm, layernorm, rmsnorm, groupnorm/,
    ],
    [
      [{ type: 'conv2d', inC: 3, outC: 8, kernel: 7, inH: 4, inW: 4 }],
      /a 7x7 kernel does not fit a 4x4 input/,
    ],
    [
      [{ type: 'conv2d', inC: 3, outC: 8, kernel: 3, inH: 8, inW: 8, groups: 2 }],
      /groups \(2\) must divide inC \(3\)/,
    ],
    [[], /at least one layer/],
  ])('%j is refused with a message naming the layer and field', (layers, message) => {
    try {
      importModel({ layers }, { field: 'workload.customModel' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      expect((e as InputError).field).toBe('workload.customModel.layers');
      expect((e as InputError).message).toMatch(message);
    }
  });

  it('a list fixes its own sizes: seqLen cannot rescale it', () => {
    expect(() =>
      fromLayerList({ layers: toy.layers, seqLen: 512 }, { seqLen: 1024, seqLenField: 'workload.seqLen' }),
    ).toThrow(/fixes its own sizes/);
    expect(fromLayerList({ layers: toy.layers, seqLen: 512 }, { seqLen: 512 }).model.seqLen).toBe(512);
  });

  it('exactly one form of custom model', () => {
    expect(() => importModel({}, { field: 'customModel' })).toThrow(
      /exactly one of huggingFaceConfig, onnxBase64 or layers \(got none\)/,
    );
    expect(() => importModel({ layers: toy.layers, huggingFaceConfig: '{}' })).toThrow(
      /got huggingFaceConfig, layers/,
    );
  });
});
