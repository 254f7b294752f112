// What the runs page's "from other runs" column costs: every stored run re-predicted from the runs
// of other configurations, in at most 20 folds (service/measurements.ts heldOutPredictions), once
// per store version, for stores of 10 to 1,000 runs. The runs are train.csv rows of one GPU (H100-SXM5-80GB by default; GPU=... another),
// recorded as a user would; the shipped correction trained on those rows, so the errors printed
// beside the times are in-sample (bench/calibration.ts measures calibration held out by GPU).
// Run: npx tsx bench/held-out-runs.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEfficiency, loadMeasurements } from '../seeds/catalog.js';
import { examples } from '../predictor/learned/train.js';
import { runtimeConfig, setRuntimeConfig } from '../service/config.js';
import {
  closeMeasurementStore,
  deleteRuns,
  heldOutPredictions,
  listRuns,
  recordRuns,
  type RunInput,
} from '../service/measurements.js';

const gpu = process.env.GPU ?? 'H100-SXM5-80GB';
const dataDir = mkdtempSync(join(tmpdir(), 'trainplan-bench-held-out-'));
setRuntimeConfig({ ...runtimeConfig(), dataDir, databaseUrl: undefined });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
try {
  const rows = examples(loadMeasurements(), loadEfficiency()).filter(
    (e) => e.kind === 'benchmark' && e.row.gpu === gpu && e.row.throughput,
  );
  // A row's step time: its analytical step scaled by analytical over measured throughput.
  const runs: RunInput[] = rows.map((e) => ({
    workload: { model: e.row.model, samples: 1, seqLen: e.row.seqLenOrImageSize },
    gpu,
    // The configuration as the analytical prediction resolved it (a row may leave its batch to the model).
    nodes: e.aware.exec.nodes,
    gpusPerNode: e.aware.exec.gpusPerNode,
    batchSizePerGpu: e.aware.exec.batchSizePerGpu,
    gradAccumSteps: e.aware.exec.gradAccumSteps,
    precision: e.row.precision,
    framework: e.software.framework,
    xla: e.software.xla,
    fp32UsesTf32: e.aware.exec.fp32UsesTf32 ?? false,
    stepTimeMs: e.aware.stepMs * (e.aware.throughput / e.row.throughput!),
    source: e.row.id,
  }));
  console.log(`${gpu}: ${runs.length} train.csv rows (node ${process.version})`);
  console.log('runs | list ms | from other runs ms | median error without runs | from other runs');
  for (const n of [10, 40, 100, 200, 400, 1000].filter((n) => n <= runs.length)) {
    await deleteRuns('bench');
    const r = await recordRuns(runs.slice(0, n), 'bench');
    if (r.rejected.length) throw new Error(`rejected: ${r.rejected[0].reason}`);
    let t = performance.now();
    const list = await listRuns({});
    const listMs = performance.now() - t;
    t = performance.now();
    const held = await heldOutPredictions();
    const heldMs = performance.now() - t;
    const off = (ms: number, measured: number) => Math.abs(ms / measured - 1);
    const without = list.map((m) => off(m.predictedStepTimeMs!, m.step_time_ms));
    const others = list.map((m) => off(held.get(m.id)!, m.step_time_ms));
    console.log(
      `${String(n).padStart(4)} | ${listMs.toFixed(0).padStart(7)} | ${heldMs.toFixed(0).padStart(18)} | ${(100 * median(without)).toFixed(1).padStart(24)}% | ${(100 * median(others)).toFixed(1)}%`,
    );
  }
} finally {
  await closeMeasurementStore();
  rmSync(dataDir, { recursive: true, force: true });
}
