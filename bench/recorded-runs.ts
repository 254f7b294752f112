// What a user's recorded runs cost a large recommend: the same search with the runs' evidence and
// calibration only, and with the neighbour transfer as well (predictor/learned/transfer.ts), for
// a GPU the shipped measurements never saw (A10, 3 runs of 3 models). With runs the search
// corrects every candidate (optimizer/pruned.ts cannot bound calibrated ones). The transfer's
// neighbours are related once per store version; each configuration's transfer is cached, so the
// first request after the store changes pays more than the next. Interleaved in one process.
// Run: npx tsx bench/recorded-runs.ts   (BENCH_RUNS=7 by default)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recommendCorrected } from '../optimizer/recommend-corrected.js';
import { searchSize } from '../optimizer/recommend.js';
import { selectOffers } from '../optimizer/offers.js';
import { loadEfficiency } from '../seeds/catalog.js';
import { learnedPredictor } from '../predictor/learned/model.js';
import { runtimeConfig, setRuntimeConfig } from '../service/config.js';
import { closeMeasurementStore, recordRuns, userEvidence } from '../service/measurements.js';
import { predictConfiguration } from '../service/planning.js';
import { benchRequest } from './requests.js';

const runs = Number(process.env.BENCH_RUNS ?? 7);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dataDir = mkdtempSync(join(tmpdir(), 'trainplan-bench-runs-'));
setRuntimeConfig({ ...runtimeConfig(), dataDir, databaseUrl: undefined });
try {
  const learned = await learnedPredictor();
  if (!learned.predictor) throw new Error(learned.reason);
  // Three runs on A10 at 1.2x the current prediction (synthetic: what is timed is their use).
  const recorded = [];
  for (const [model, batch] of [
    ['gnmt_v2', 80],
    ['tacotron2', 52],
    ['bert_base_squad', 16],
  ] as const) {
    const config = {
      workload: { model, samples: 1e5 },
      gpu: 'A10',
      nodes: 1,
      gpusPerNode: 1,
      batchSizePerGpu: batch,
      gradAccumSteps: 1,
      precision: 'FP32' as const,
      framework: 'PyTorch' as const,
      xla: false,
      fp32UsesTf32: true,
    };
    const p = await predictConfiguration(config);
    recorded.push({ ...config, stepTimeMs: p.stepTimeMs * 1.2 });
  }
  const stored = await recordRuns(recorded, 'bench');
  if (stored.stored !== 3) throw new Error(JSON.stringify(stored.rejected));
  const user = await userEvidence(learned);
  if (!user?.transfer) throw new Error('no transfer built');
  const withoutTransfer = { ...user, transfer: undefined };
  const base = benchRequest('resnet50_v1.5', {
    offers: selectOffers({ catalog: true, own: [], perGpuPrices: [] }),
  });
  const req = { ...base, maxNodes: Math.ceil(1e5 / searchSize(base)) };
  const eff = loadEfficiency();
  const software = { framework: 'PyTorch' as const, xla: false };
  const time = async (u: typeof user | typeof withoutTransfer) => {
    const t0 = performance.now();
    const r = await recommendCorrected(req, learned, eff, software, u);
    return { ms: performance.now() - t0, r };
  };
  await time(withoutTransfer); // warm-up: model costs, JIT, onnxruntime
  const first = await time(user); // the transfer's per-configuration cache is empty
  const a: number[] = [],
    b: number[] = [];
  for (let i = 0; i < runs; i++) {
    a.push((await time(withoutTransfer)).ms);
    b.push((await time(user)).ms);
  }
  console.log(
    `recommend resnet50_v1.5 over ${searchSize(req)} candidates (${first.r.evaluated} evaluated, maxNodes ${req.maxNodes}), 3 runs on A10, ${runs} runs each, node ${process.version}:`,
  );
  console.log(
    `  runs' evidence and calibration only: median ${median(a).toFixed(0)} ms; with the neighbour transfer: first ${first.ms.toFixed(0)} ms, then median ${median(b).toFixed(0)} ms; ratio ${(median(b) / median(a)).toFixed(2)} (first ${(first.ms / median(a)).toFixed(2)})`,
  );
} finally {
  await closeMeasurementStore();
  rmSync(dataDir, { recursive: true, force: true });
}
