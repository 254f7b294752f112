// `trainplan calibrate import FILE`: a user's measured runs (the harness's CSV or JSON, or a JSON
// list of MeasurementInput objects) into the store the server reads (SQLite under --data-dir /
// TRAINPLAN_DATA_DIR, or DATABASE_URL), through the same checks as the recordMeasurements
// mutation. A server sharing the store uses the runs on its next request.
import { readFileSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig, setRuntimeConfig, runtimeConfig } from '../service/config.js';
import { closeMeasurementStore, listRuns, userEvidence, type StoredRun } from '../service/measurements.js';
import {
  memoryKey,
  type MemoryCalibrations,
  type RecordedCapacities,
} from '../predictor/memory-calibration.js';
import { getGpu } from '../seeds/catalog.js';
import type { Precision } from '../predictor/types.js';
import { capacityLine, importRuns, parseRunsText } from '../service/run-rows.js';
import { refitOwner } from '../service/refit.js';
import { InputError } from '../service/validate.js';

export const CALIBRATE_RUNS_HELP = `trainplan calibrate import FILE [--owner NAME] [--data-dir DIR] [--database-url URL]
  FILE: the harness's CSV (model, seq_len, gpu, nodes, gpus_per_node, batch_size_per_gpu,
  grad_accum_steps, precision, framework, step_time_ms, peak_memory_gb, source, note; optional
  gpu_memory_gb: what CUDA gave the run's process (GiB; plans on that GPU are fitted in it);
  channels_last: true if the run's convolutions were torch.channels_last; recompute: full or
  selective if it recomputed; zero_stage: 1-3 if it sharded (ZeRO); tensor_parallel: its degree
  if it split the layers (measure.py --tensor-parallel); pipeline_parallel: its stages if it ran a
  pipeline (measure.py --pipeline-parallel), virtual_pipeline_stages: its model chunks per stage if
  interleaved; expert_parallel: its degree if it spread the experts (measure.py --expert-parallel);
  context_parallel: its ring's size if it split the sequences (measure.py --context-parallel); for a
  run across nodes,
  inter_node_gbps and inter_node_transport: RDMA or TCP, Ethernet only) or JSON (a list of those
  rows, or of MeasurementInput objects). model: a zoo id, or a path (relative to FILE) to a
  layer-list .json or a Hugging Face config.json; gpu: a catalog id, or the name the device
  reported (mapped to the catalog when unambiguous).`;

export const CALIBRATE_REFIT_HELP = `trainplan calibrate refit [--owner NAME] [--data-dir DIR] [--database-url URL]
  Refits the learned correction (the shipped model's trees, features and hyper-parameters) on the
  shipped training rows plus NAME's recorded runs (default owner: local) and writes
  refit-predictor.onnx and refit-predictor.json in the data dir (--data-dir / TRAINPLAN_DATA_DIR;
  also with --database-url, whose runs it reads). predict and recommend use it while NAME's runs
  are exactly the ones it trained on; after a run is recorded or deleted their evidence says the
  refit is stale and the shipped correction answers until you refit again. Runs of custom models
  and layouts no training row states are skipped (they still calibrate).`;

export function readRunsFile(path: string): Record<string, unknown>[] {
  const text = readFileSync(path, 'utf8');
  return parseRunsText(text, path, extname(path).toLowerCase() === '.json' || undefined);
}

export async function calibrateRuns(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      owner: { type: 'string', default: 'local' },
      'data-dir': { type: 'string' },
      'database-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (sub === 'refit' && !values.help && positionals.length === 0) {
    setRuntimeConfig({
      ...runtimeConfig(),
      ...loadConfig(process.env, { 'data-dir': values['data-dir'], 'database-url': values['database-url'] }),
    });
    await refit(values.owner!);
    return;
  }
  if (values.help || sub !== 'import' || positionals.length !== 1) {
    console.log(sub === 'refit' ? CALIBRATE_REFIT_HELP : CALIBRATE_RUNS_HELP);
    process.exitCode = values.help ? 0 : 2;
    return;
  }
  setRuntimeConfig({
    ...runtimeConfig(),
    ...loadConfig(process.env, { 'data-dir': values['data-dir'], 'database-url': values['database-url'] }),
  });
  const file = positionals[0];
  const rows = readRunsFile(file);
  const result = await importRuns(rows, values.owner!, dirname(resolve(file)));
  // The imported runs as stored, and what all stored runs now say, read once for both kinds of line.
  const imported = result.ids.length ? (await listRuns({})).filter((r) => result.ids.includes(r.id)) : [];
  const evidence = imported.length ? await userEvidence() : undefined;
  const memory = memoryLines(imported, evidence?.memory);
  const capacity = capacityLines(imported, evidence?.capacities);
  await closeMeasurementStore();
  const where = runtimeConfig().databaseUrl ? 'PostgreSQL (DATABASE_URL)' : runtimeConfig().dataDir;
  console.log(
    `stored ${result.stored} of ${rows.length} runs in ${where}${result.ids.length ? ` (ids ${result.ids.join(', ')})` : ''}`,
  );
  for (const line of memory) console.log(line);
  for (const line of capacity) console.log(line);
  for (const p of result.rejected) console.log(`  row ${p.index + 1}: rejected: ${p.reason}`);
  if (result.rejected.length) process.exitCode = 1;
}

/**
 * What the stored runs' peaks now say of the imported runs' models (predictor/memory-calibration.ts),
 * one line per model and precision: what predict and recommend size them with from now on.
 */
function memoryLines(imported: readonly StoredRun[], calibrations: MemoryCalibrations | undefined): string[] {
  const lines = new Map<string, string>();
  for (const r of imported) {
    const key = memoryKey(r.model, r.precision as Precision);
    const m = calibrations?.get(key);
    if (m && !lines.has(key))
      lines.set(
        key,
        `  memory: ${r.model} in ${r.precision}: activations ${m.scale.toFixed(2)}x what trainplan counts, from the peak memory of ${m.runs} run${m.runs > 1 ? 's' : ''} (predict and recommend size it so)`,
      );
  }
  return [...lines.values()];
}

/**
 * Where the imported runs said what CUDA gave their processes: what plans on their GPUs are fitted
 * in from now on (the least any stored run there had), one line per GPU.
 */
function capacityLines(imported: readonly StoredRun[], capacities: RecordedCapacities | undefined): string[] {
  const lines = new Map<string, string>();
  for (const r of imported) {
    if (r.gpu_memory_gb == null) continue;
    const gpu = getGpu(r.gpu),
      recorded = capacities?.get(r.gpu);
    if (gpu && recorded && !lines.has(r.gpu)) lines.set(r.gpu, capacityLine(gpu, recorded));
  }
  return [...lines.values()];
}

/** `trainplan calibrate refit`: exit 1 with the reason when the owner has no run to refit on. */
async function refit(owner: string): Promise<void> {
  try {
    const r = await refitOwner(owner);
    console.log(
      `refitted the learned correction on ${r.shippedRows} shipped rows and ${r.runs} of ${owner}'s runs; wrote ${r.files.model} and ${r.files.meta}`,
    );
    for (const s of r.skipped) console.log(`  run ${s.id}: not trained on: ${s.reason}`);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    console.error(`trainplan calibrate refit: ${e.message}`);
    process.exitCode = 1;
  } finally {
    await closeMeasurementStore();
  }
}
