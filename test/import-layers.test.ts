// A layer list in the zoo's vocabulary (predictor/import/layer-list.ts): checked field by field,
// costed exactly as the same layers in a zoo model.
import { describe, expect, it } from 'vitest';
import { fromLayerList, importModel, LAYER_TYPES } from '../predictor/import/index.js';
import { InputError } from '../predictor/input-error.js';
import { modelCost } from '../predictor/layers.js';
import { llmModel } from '../predictor/llm.js';
import { parallelStructure } from '../predictor/parallel.js';
import { predict } from '../predictor/predict.js';
import type { ModelDef } from '../predictor/types.js';
import { getModel, loadZoo } from '../predictor/zoo/index.js';
import { getGpu, loadEfficiency } from '../seeds/catalog.js';
import { loadLlmArchitectures } from '../seeds/llm.js';
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
    // The id names the layers, not the order their keys were written in: the same list with every
    // layer's keys reversed (as a file and GraphQL's field order may give them) is the same model,
    // so a run recorded from one calibrates predictions of the other. A changed layer is another.
    const reversed = zoo.layers.map((l) => Object.fromEntries(Object.entries(l).reverse()));
    expect(fromLayerList({ layers: reversed, seqLen: 1024 }).model.id).toBe(m.id);
    const wider = zoo.layers.map((l, i) => (i === 0 ? { ...l, dim: 1024 } : l));
    expect(fromLayerList({ layers: wider, seqLen: 1024 }).model.id).not.toBe(m.id);
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
        ...(zoo.attention ? { attention: zoo.attention } : {}),
      }).model;
      expect(modelCost(m), zoo.id).toEqual(modelCost(zoo));
    }
  });

  it('a list says how its code runs attention ("eager": the scores written to memory); anything else is refused', () => {
    const bert = getModel('bert_large_squad')!;
    const list = { layers: bert.layers, batchElement: bert.batchElement };
    expect(fromLayerList(list).model.attention).toBeUndefined();
    const eager = fromLayerList({ ...list, attention: 'eager' }).model;
    expect(eager.attention).toBe('eager');
    expect(eager.id).not.toBe(fromLayerList(list).model.id);
    expect(() => fromLayerList({ ...list, attention: 'flash' })).toThrow(
      /"attention" must be one of fused, eager/,
    );
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

  it('mixture-of-experts decoders (Qwen3-30B-A3B, gpt-oss-20b) as lists cost what their builds cost, and predict the same expert-parallel step', () => {
    const eff = loadEfficiency();
    for (const name of ['Qwen3-30B-A3B', 'gpt-oss-20b']) {
      const built = llmModel(
        loadLlmArchitectures().find((a) => a.model === name)!,
        4096,
      ) as ModelDef;
      const m = fromLayerList({
        layers: built.layers,
        batchElement: 'sequence',
        throughputUnit: 'tokens/s',
        unitsPerBatchElement: 4096,
        seqLen: 4096,
      }).model;
      expect(modelCost(m), name).toEqual(modelCost(built));
      const s = parallelStructure(modelCost(m), m.layers);
      expect(s, name).toEqual(parallelStructure(modelCost(built), built.layers));
      expect(s.experts, name).toBeGreaterThan(1);
      expect(s.moeLayers, name).toBe(name === 'Qwen3-30B-A3B' ? 48 : 24);
      // The same request on 16 H100s with the experts spread 8 ways: the same step, to the bit.
      const request = (model: ModelDef) => ({
        model,
        gpu: getGpu('H100-SXM5-80GB')!,
        precision: 'BF16' as const,
        batchSizePerGpu: 1,
        gpusPerNode: 8,
        nodes: 2,
        gradAccumSteps: 8,
        interNodeGbps: 3200,
        parallelism: {
          tensorParallel: 1,
          pipelineParallel: 1,
          zeroStage: 1 as const,
          recompute: 'none' as const,
          expertParallel: 8,
        },
      });
      const a = predict(request(m), eff),
        b = predict(request(built), eff);
      expect(a.breakdown.expertParallelCommMs, name).toBeGreaterThan(0);
      expect(a.stepTimeMs, name).toBe(b.stepTimeMs);
      expect(a.memory, name).toEqual(b.memory);
    }
  });

  it('experts before any router are accepted with a note: no all-to-all is counted for them', () => {
    const r = fromLayerList([
      { type: 'linear', inFeatures: 64, outFeatures: 128, tokens: 32, experts: 8 },
      { type: 'loss', elements: 1 },
    ]);
    expect(r.notes.join(' ')).toMatch(/\[0\] has experts but no router linear comes before it/);
    const routed = fromLayerList([
      { type: 'linear', inFeatures: 64, outFeatures: 8, tokens: 16, router: true },
      { type: 'linear', inFeatures: 64, outFeatures: 128, tokens: 32, experts: 8 },
      { type: 'loss', elements: 1 },
    ]);
    expect(routed.notes).toEqual([]);
    // 8 copies of a 64 x 128 weight and bias; each of the 32 routed tokens through one of them.
    const experts = modelCost(routed.model).layers[1];
    expect(experts.parameters).toBe(8 * (64 * 128 + 128));
    expect(experts.forwardFlops).toBe(2 * 32 * 64 * 128);
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
      /\[0\]: a linear layer has no field "kernel" \(it takes inFeatures, outFeatures, tokens, bias, tied, steps, experts, router, projections, count, frozen, sameInputAs, name\)/,
    ],
    [
      [{ type: 'linear', inFeatures: 8, outFeatures: 4, experts: 1 }],
      /\[0\]\.experts must be an integer from 2 to 4096 \(got 1; one expert is a plain linear/,
    ],
    [
      [{ type: 'linear', inFeatures: 8, outFeatures: 4, experts: 5000 }],
      /\[0\]\.experts must be an integer from 2 to 4096/,
    ],
    [[{ type: 'linear', inFeatures: 8, outFeatures: 4, experts: 2.5 }], /\[0\]\.experts must be an integer/],
    [
      [
        { type: 'linear', inFeatures: 8, outFeatures: 4 },
        { type: 'linear', inFeatures: 8, outFeatures: 4, sameInputAs: 2 },
      ],
      /\[1\]\.sameInputAs must be from 1 to 1 \(the layer that many before this one reads the same tensor; got 2\)/,
    ],
    [
      [{ type: 'linear', inFeatures: 8, outFeatures: 4, router: 'yes' }],
      /\[0\]\.router must be true or false/,
    ],
    [[{ type: 'matmul', m: 8, n: 8, k: 8, experts: 4 }], /\[0\]: a matmul layer has no field "experts"/],
    [
      [{ type: 'conv2d', inC: 3, outC: 8, kernel: 3, inH: 8, inW: 8, router: true }],
      /\[0\]: a conv2d layer has no field "router"/,
    ],
    [
      [{ type: 'linear', inFeatures: 8, outFeatures: 4, experts: 4, router: true }],
      /\[0\]: a linear with experts cannot also be a router/,
    ],
    [
      [{ type: 'linear', inFeatures: 8, outFeatures: 4, tokens: 8, experts: 4, steps: 2 }],
      /\[0\]: a linear with experts cannot also be "steps"/,
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
