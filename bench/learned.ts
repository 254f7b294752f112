// Learned-model inference time: one batched onnxruntime call over N candidates' feature rows,
// and end-to-end recommend latency with and without the learned correction.
// Run: npx tsx bench/learned.ts
import { loadOnnxCorrection } from '../predictor/learned/onnx.js';
import { learnedPredictor } from '../predictor/learned/model.js';
import { defaultInterNodeGbps, LEARNED_MODEL_FILE, loadEfficiency } from '../seeds/catalog.js';
import { featureNames } from '../predictor/learned/features.js';
import { recommend } from '../optimizer/recommend.js';
import { recommendCorrected } from '../optimizer/recommend-corrected.js';
import { rng } from '../predictor/learned/gbdt.js';
import { benchRequest } from './requests.js';

const eff = loadEfficiency();

const runs = Number(process.env.BENCH_RUNS ?? 10);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(0.95 * xs.length))];
const d = featureNames(true).length;
const N = 100_000;
const X = new Float32Array(N * d);
const r = rng(3);
for (let i = 0; i < X.length; i++) X[i] = r() * 4;
for (const threads of [1, 2]) {
  const session = await loadOnnxCorrection(LEARNED_MODEL_FILE.pathname, d, threads);
  await session.run(X, N);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await session.run(X, N);
    times.push(performance.now() - t0);
  }
  console.log(
    `onnxruntime, ${N} candidates x ${d} features, ${threads} thread(s): median ${median(times).toFixed(1)} ms, p95 ${p95(times).toFixed(1)} ms`,
  );
}

const learned = await learnedPredictor();
for (const [modelId, maxNodes] of [
  ['resnet50_v1.5', 16],
  ['bert_large_squad', 8],
] as const) {
  const req = benchRequest(modelId, { maxNodes, interNodeGbps: (g) => defaultInterNodeGbps(g.id) });
  recommend(req, eff);
  await recommendCorrected(req, learned, eff);
  const a: number[] = [],
    b: number[] = [];
  let candidates = 0;
  for (let i = 0; i < runs; i++) {
    let t0 = performance.now();
    const x = recommend(req, eff);
    a.push(performance.now() - t0);
    t0 = performance.now();
    await recommendCorrected(req, learned, eff);
    b.push(performance.now() - t0);
    candidates = x.evaluated;
  }
  console.log(
    `recommend ${modelId} (${candidates} candidates): analytical median ${median(a).toFixed(1)} ms p95 ${p95(a).toFixed(1)} ms; with learned correction median ${median(b).toFixed(1)} ms p95 ${p95(b).toFixed(1)} ms`,
  );
}
