// Malformed ONNX graphs at random (issue 14): a small Conv -> Relu -> Flatten -> Gemm graph with one
// to three random malformations (impossible dimensions, stride 0 or negative, missing or dangling
// names, unknown ops, a cycle, an empty graph). Whatever comes in, modelSummary and predict either
// answer with finite positive parameters, FLOPs, step time and memory, or refuse with
// BAD_USER_INPUT naming the custom model (or the seqLen an unset input dimension needs); never a crash, a hang or a negative or non-finite figure.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nonFinitePaths } from '../service/finite.js';
import { apolloForTests } from './graphql-client.js';
import { FLOAT, OnnxBuilder } from './import-fixtures.js';

const run = apolloForTests();

// Dimensions an attacker or a broken exporter might write: negative, zero, huge, past 2^53, and
// (onnx-proto writes int64 through Long) non-integers truncate, so they land as their integer part.
const badDim = fc.oneof(
  fc.constantFrom(-1, -3, 0, 1, 2e9, 1e9, 2 ** 31, 2 ** 53, -(2 ** 40), 3.5),
  fc.integer({ min: -1000, max: 1000 }),
);
const malformation = fc.oneof(
  fc.record({ kind: fc.constant('weightDim' as const), position: fc.nat(3), value: badDim }),
  fc.record({ kind: fc.constant('inputDim' as const), position: fc.nat(3), value: badDim }),
  fc.record({ kind: fc.constant('stride' as const), value: fc.constantFrom(0, -1, -2, 1e9) }),
  fc.record({ kind: fc.constant('pads' as const), value: fc.constantFrom(-5, 1e6, 1e9) }),
  fc.record({ kind: fc.constant('kernel' as const), value: badDim }),
  fc.record({ kind: fc.constant('gemmDim' as const), position: fc.nat(1), value: badDim }),
  fc.constant({ kind: 'missingWeight' as const }),
  fc.constant({ kind: 'missingInput' as const }),
  fc.constant({ kind: 'danglingOutput' as const }),
  fc.constant({ kind: 'unknownOp' as const }),
  fc.constant({ kind: 'cycle' as const }),
  fc.constant({ kind: 'empty' as const }),
  fc.constant({ kind: 'noOutputs' as const }),
);
type Malformation = typeof malformation extends fc.Arbitrary<infer T> ? T : never;

function graph(faults: Malformation[]): Uint8Array {
  const has = <K extends Malformation['kind']>(kind: K) =>
    faults.find((f): f is Extract<Malformation, { kind: K }> => f.kind === kind);
  const b = new OnnxBuilder('fuzzed');
  if (has('empty')) return b.encode();
  const inputDims: (number | string)[] = ['N', 3, 32, 32];
  const weightDims = [16, 3, 3, 3];
  const gemmDims = [16 * 30 * 30, 10];
  for (const f of faults) {
    if (f.kind === 'inputDim') inputDims[f.position] = f.value;
    if (f.kind === 'weightDim') weightDims[f.position] = f.value;
    if (f.kind === 'gemmDim') gemmDims[f.position] = f.value;
  }
  const x = b.input('image', inputDims);
  const w = has('missingWeight') ? 'no_such_weight' : b.weight('w', weightDims);
  const convInput = has('missingInput') ? 'no_such_tensor' : has('cycle') ? 'relu_1' : x;
  const stride = has('stride')?.value ?? 1;
  const pad = has('pads')?.value ?? 0;
  const kernel = has('kernel')?.value ?? 3;
  const y = b.node('Conv', [convInput, w], {
    strides: [stride, stride],
    pads: [pad, pad, pad, pad],
    kernel_shape: [kernel, kernel],
  })[0];
  const r = b.node(has('unknownOp') ? 'FrobnicateV9' : 'Relu', [y])[0];
  const flat = b.node('Flatten', [r], { axis: 1 })[0];
  const logits = b.node('Gemm', [flat, b.weight('fc', gemmDims)], { transB: 0 })[0];
  if (has('danglingOutput')) b.node('Relu', ['never_produced']);
  if (!has('noOutputs')) b.output(logits, ['N', 10], FLOAT);
  return b.encode();
}

const SUMMARY = `query($m: ModelInput!) { modelSummary(customModel: $m) { parameters forwardFlopsPerSample backwardFlopsPerSample activationGbPerSample layerCount } }`;
const PREDICT = `query($m: ModelInput!) { predict(input: { workload: { customModel: $m, samples: 1e6 }, gpu: "A100-SXM4-80GB", batchSizePerGpu: 8, precision: AMP_FP16 }) { stepTimeMs throughput totalHours costUsd memoryGbPerGpu memory { totalGb weightsGb activationsGb } } }`;

function expectClearRefusal(errors: readonly { message: string; extensions?: Record<string, unknown> }[]) {
  const e = errors[0];
  expect(e.extensions?.code, JSON.stringify(errors)).toBe('BAD_USER_INPUT');
  // The custom model, or the sequence length a symbolic (or unset) input dimension stands for.
  expect(String(e.extensions?.field ?? '')).toMatch(/customModel|seqLen/);
  expect(e.message.length).toBeGreaterThan(20);
  expect(e.message.length).toBeLessThanOrEqual(2000);
}

function expectPositiveFinite(values: Record<string, unknown>) {
  expect(nonFinitePaths(values), JSON.stringify(values)).toEqual([]);
  for (const [key, value] of Object.entries(values))
    if (typeof value === 'number') expect(value, key).toBeGreaterThanOrEqual(0);
}

describe('property: a malformed ONNX graph is answered finitely or refused by name, never crashes', () => {
  it('modelSummary and predict over random malformations of a Conv/Gemm graph', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(malformation, { minLength: 1, maxLength: 3 }), async (faults) => {
        const m = { onnxBase64: Buffer.from(graph(faults)).toString('base64') };
        const summary = await run(SUMMARY, { m });
        if (summary.errors) expectClearRefusal(summary.errors);
        else {
          const s = summary.data!.modelSummary;
          expectPositiveFinite(s);
          expect(s.parameters).toBeGreaterThan(0);
          expect(s.forwardFlopsPerSample).toBeGreaterThan(0);
        }
        const predicted = await run(PREDICT, { m });
        if (predicted.errors) expectClearRefusal(predicted.errors);
        else {
          const p = predicted.data!.predict;
          expectPositiveFinite(p);
          expect(p.stepTimeMs).toBeGreaterThan(0);
          expect(p.memory.totalGb).toBeGreaterThan(0);
        }
      }),
      { numRuns: 60, seed: 14 },
    );
  });

  it('a graph whose weights are missing or zero-sized is refused (it was answered with 0 parameters)', async () => {
    const m = {
      onnxBase64: Buffer.from(
        graph([{ kind: 'missingWeight' }, { kind: 'gemmDim', position: 1, value: 0 }]),
      ).toString('base64'),
    };
    const r = await run(SUMMARY, { m });
    expectClearRefusal(r.errors!);
    expect(r.errors![0].message).toMatch(/0 trainable parameters/);
  });

  it('the unmalformed graph answers, so the property is not vacuous', async () => {
    const m = { onnxBase64: Buffer.from(graph([])).toString('base64') };
    const r = await run(PREDICT, { m });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect(r.data!.predict.stepTimeMs).toBeGreaterThan(0);
  });
});
