// Which framework release the shipped measurements ran, read from train.csv's `software` column
// (predictor/learned/evidence.ts softwareRelease), and named in an estimate's evidence: the learned
// correction learned what those releases did, and newer releases ran the same configurations faster.
import { describe, expect, it } from 'vitest';
import { loadMeasurements, type Measurement } from '../seeds/catalog.js';
import { releasesOf, softwareRelease } from '../predictor/learned/evidence.js';
import { LearnedPredictor } from '../predictor/learned/model.js';
import { predictZoo } from './zoo-prediction.js';
import { apolloForTests } from './graphql-client.js';

const rows = loadMeasurements().filter((m) => m.throughput !== null);

/** Lambda's PyTorch rows by configuration, then by PyTorch release: mean throughput. */
function matchedConfigurations(ms: Measurement[]): Map<string, Map<string, number>> {
  const byConfig = new Map<string, Map<string, number[]>>();
  for (const m of ms) {
    const release = softwareRelease(m);
    if (m.source !== 'lambda_pytorch' || !release) continue;
    const key = [m.gpu, m.model, m.precision, m.batchSizePerGpu, m.numGpus].join('|');
    const r = byConfig.get(key) ?? new Map<string, number[]>();
    r.set(release, [...(r.get(release) ?? []), m.throughput!]);
    byConfig.set(key, r);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return new Map([...byConfig].map(([k, r]) => [k, new Map([...r].map(([rel, xs]) => [rel, mean(xs)]))]));
}

/** Mean log(throughput on `newer` / on `older`) over configurations measured on both, and how many. */
function releaseEffect(older: string, newer: string): { n: number; meanLog: number } {
  const logs = [...matchedConfigurations(rows).values()].flatMap((r) =>
    r.has(older) && r.has(newer) ? [Math.log(r.get(newer)! / r.get(older)!)] : [],
  );
  return { n: logs.length, meanLog: logs.reduce((a, b) => a + b, 0) / logs.length };
}

describe('software releases of the shipped measurements', async () => {
  const learned = await LearnedPredictor.load();

  it('reads a release from every Lambda row and every DeepLearningExamples row that names its NGC container', () => {
    for (const m of rows.filter((r) => r.source === 'lambda_pytorch'))
      expect(softwareRelease(m)).toMatch(/^PyTorch \d+\.\d+$/);
    for (const m of rows.filter((r) => r.source === 'lambda_tensorflow'))
      expect(softwareRelease(m)).toMatch(/^TensorFlow \d+\.\d+$/);
    const ngc = rows.filter((r) => r.source === 'dle' && /NGC/.test(r.software));
    expect(ngc.length).toBeGreaterThan(100);
    for (const m of ngc) expect(softwareRelease(m)).toMatch(/^NGC \S+ \d\d\.\d\d$/);
    // Rows that state nothing get nothing, not a guess.
    expect(softwareRelease({ software: '', framework: 'PyTorch' })).toBeUndefined();
    expect(softwareRelease({ software: 'L464: 21.02-py3 NGC container', framework: 'PyTorch' })).toBe(
      'NGC PyTorch 21.02',
    );
    expect(
      softwareRelease({ software: 'pytorch 1.13.0a0+d0d6b1f cuda V11.8.89', framework: 'PyTorch' }),
    ).toBe('PyTorch 1.13');
  });

  it('lists releases in version order, per model on a GPU and per GPU', () => {
    const r = releasesOf([
      { model: 'a', gpu: 'g', software: 'pytorch 1.13.0', framework: 'PyTorch' },
      { model: 'a', gpu: 'g', software: 'pytorch 1.4.0a0', framework: 'PyTorch' },
      { model: 'b', gpu: 'g', software: 'pytorch 2.3.0', framework: 'PyTorch' },
      { model: 'b', gpu: 'h', software: '', framework: 'PyTorch' },
    ]);
    expect(r.byPair.get('a|g')).toEqual(['PyTorch 1.4', 'PyTorch 1.13']);
    expect(r.byGpu.get('g')).toEqual(['PyTorch 1.4', 'PyTorch 1.13', 'PyTorch 2.3']);
    expect(r.byGpu.has('h')).toBe(false);
  });

  it('newer PyTorch releases ran the same configurations faster (PyTorch 1.4 -> 1.13, 1.13 -> 2.3)', () => {
    // The same GPU, model, precision, batch and GPU count measured by Lambda under two releases.
    const old = releaseEffect('PyTorch 1.4', 'PyTorch 1.13');
    const recent = releaseEffect('PyTorch 1.13', 'PyTorch 2.3');
    expect(old.n).toBeGreaterThanOrEqual(5);
    expect(recent.n).toBeGreaterThanOrEqual(30);
    expect(old.meanLog).toBeGreaterThan(0.05);
    expect(recent.meanLog).toBeGreaterThan(0.05);
  });

  it("names the releases behind an estimate: the model's on that GPU, else the GPU's, else none", async () => {
    const v100 = await predictZoo(learned, {
      model: 'tacotron2',
      gpu: 'V100-SXM2-16GB',
      precision: 'FP32',
      batchSizePerGpu: 64,
    });
    expect(v100.evidence).toContain(
      'its measurements on V100-SXM2-16GB ran NGC PyTorch 20.06, PyTorch 1.4, PyTorch 1.13',
    );
    // GPT-2 was never measured on an A40; other models were, under PyTorch 1.9.
    const a40 = await predictZoo(learned, {
      model: 'gpt2_124m',
      gpu: 'A40',
      precision: 'AMP_FP16',
      batchSizePerGpu: 8,
    });
    expect(a40.evidence).toContain('; the measurements on A40 ran PyTorch 1.9');
    // No training row on a B200: nothing to name.
    const b200 = await predictZoo(learned, {
      model: 'tacotron2',
      gpu: 'B200',
      precision: 'BF16',
      batchSizePerGpu: 64,
    });
    expect(b200.evidence).not.toMatch(/measurements on B200 ran/);
  });

  const run = apolloForTests();
  it('leaves them out of an LLM-style estimate, which rests on the published LLM runs', async () => {
    const q = `query($stack: SoftwareStack!) {
      predict(input: { workload: { model: "llama2_7b", samples: 1e9 }, gpu: "H100-SXM5-80GB", gpusPerNode: 8,
        batchSizePerGpu: 1, precision: BF16, softwareStack: $stack }) { evidence } }`;
    const megatron = await run(q, { stack: 'MEGATRON' });
    expect(megatron.errors).toBeUndefined();
    expect(megatron.data!.predict.evidence).toMatch(/published LLM runs/);
    expect(megatron.data!.predict.evidence).not.toMatch(/measurements on H100-SXM5-80GB ran/);
    // The same model in stock PyTorch is a benchmark-style estimate: the GPU's rows' releases are named.
    const eager = await run(q, { stack: 'PYTORCH_EAGER' });
    expect(eager.data!.predict.evidence).toContain('; the measurements on H100-SXM5-80GB ran ');
  });
});
