// `trainplan calibrate import FILE`: a user's measured runs (the harness's CSV or JSON, or a JSON
// list of MeasurementInput objects) into the store the server reads (SQLite under --data-dir /
// TRAINPLAN_DATA_DIR, or DATABASE_URL), through the same checks as the recordMeasurements
// mutation. A server sharing the store uses the runs on its next request.
import { readFileSync } from 'node:fs';
import { dirname, extname, isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { booleanCell, parseCsv } from '../seeds/catalog.js';
import { FRAMEWORKS, type Framework } from '../predictor/learned/features.js';
import { PRECISIONS, type Precision } from '../predictor/types.js';
import type { NetworkTransport } from '../seeds/types.js';
import { loadConfig, setRuntimeConfig, runtimeConfig } from '../service/config.js';
import { catalogGpuForDevice } from '../service/device-names.js';
import { closeMeasurementStore, recordRuns, type RunInput } from '../service/measurements.js';
import { refitOwner } from '../service/refit.js';
import { InputError } from '../service/validate.js';
import { costOf } from '../predictor/predict.js';
import { getModel } from '../predictor/zoo/index.js';
import { fromLayerList, parseHuggingFaceConfig } from '../predictor/import/index.js';

export const CALIBRATE_RUNS_HELP = `trainplan calibrate import FILE [--owner NAME] [--data-dir DIR] [--database-url URL]
  FILE: the harness's CSV (model, seq_len, gpu, nodes, gpus_per_node, batch_size_per_gpu,
  grad_accum_steps, precision, framework, step_time_ms, peak_memory_gb, source, note; optional
  channels_last: true if the run's convolutions were torch.channels_last; for a run across nodes,
  inter_node_gbps and inter_node_transport: RDMA or TCP, Ethernet only) or JSON (a list of those
  rows, or of MeasurementInput objects). model: a zoo id, or a path (relative to
  FILE) to a layer-list .json or a Hugging Face config.json; gpu: a catalog id, or the name the
  device reported (mapped to the catalog when unambiguous).`;

export const CALIBRATE_REFIT_HELP = `trainplan calibrate refit [--owner NAME] [--data-dir DIR] [--database-url URL]
  Refits the learned correction (the shipped model's trees, features and hyper-parameters) on the
  shipped training rows plus NAME's recorded runs (default owner: local) and writes
  refit-predictor.onnx and refit-predictor.json in the data dir (--data-dir / TRAINPLAN_DATA_DIR;
  also with --database-url, whose runs it reads). predict and recommend use it while NAME's runs
  are exactly the ones it trained on; after a run is recorded or deleted their evidence says the
  refit is stale and the shipped correction answers until you refit again. Runs of custom models
  and layouts no training row states are skipped (they still calibrate).`;

/** A run's model when it is a file: a layer list or a Hugging Face config's text. */
type CustomModel =
  | { layers: unknown; name: string; optimizer?: unknown }
  | { huggingFaceConfig: string; name: string }
  | undefined;

/** One row of the harness's layout -> a run, or why it cannot be one. */
export function runFromRow(row: Record<string, unknown>, baseDir: string): RunInput {
  if ('workload' in row) return row as unknown as RunInput; // already a MeasurementInput
  const str = (k: string) => (row[k] === undefined || row[k] === null ? '' : String(row[k]).trim());
  const num = (k: string) => (str(k) === '' ? undefined : Number(str(k)));
  const model = str('model');
  if (!model) throw new Error('model: missing');
  const looksLikeFile = /\.(json|onnx)$/i.test(model);
  // The model file a run trained, as the run's customModel: what its weights are checked against.
  let customModel: CustomModel;
  if (looksLikeFile) {
    const path = isAbsolute(model) ? model : resolve(baseDir, model);
    const text = readFileSync(path, 'utf8');
    const json = JSON.parse(text) as Record<string, unknown> | unknown[];
    customModel =
      Array.isArray(json) || 'layers' in json
        ? {
            layers: Array.isArray(json) ? json : json.layers,
            name: Array.isArray(json) ? model : ((json.name as string | undefined) ?? model),
            optimizer: Array.isArray(json) ? undefined : json.optimizer,
          }
        : { huggingFaceConfig: text, name: model };
  }
  let gpu = str('gpu');
  const resolved = catalogGpuForDevice(gpu, num('gpu_memory_gb'));
  if ('gpu' in resolved) gpu = resolved.gpu.id;
  else if (resolved.candidates.length)
    throw new Error(
      `gpu: "${gpu}" could be ${resolved.candidates.join(' or ')}; give the catalog id (measure.py --gpu ID)`,
    );
  const precision = str('precision');
  if (!(PRECISIONS as readonly string[]).includes(precision))
    throw new Error(`precision: "${precision}" is not one of ${PRECISIONS.join(', ')}`);
  checkTrainedWeights(str('note'), model, customModel, num('seq_len'));
  const framework = str('framework') || 'PyTorch';
  if (!(FRAMEWORKS as readonly string[]).includes(framework))
    throw new Error(`framework: "${framework}" is not one of ${FRAMEWORKS.join(', ')}`);
  return {
    workload: {
      model: looksLikeFile ? null : model,
      samples: 1,
      seqLen: num('seq_len') ?? null,
      customModel,
    },
    gpu,
    nodes: num('nodes') ?? 1,
    gpusPerNode: num('gpus_per_node') ?? 1,
    // Across nodes: the network and how NCCL crossed it (empty: the GPU's default network, RDMA).
    interNodeGbps: num('inter_node_gbps') ?? null,
    interNodeTransport: (str('inter_node_transport') || null) as NetworkTransport | null,
    batchSizePerGpu: num('batch_size_per_gpu') ?? NaN,
    gradAccumSteps: num('grad_accum_steps') ?? 1,
    precision: precision as Precision,
    framework: framework as Framework,
    xla: false,
    fp32UsesTf32: precision !== 'FP32', // the harness runs FP32 with TF32 off
    // An empty cell says nothing (the framework's layout holds); anything but true/false is refused.
    channelsLast: booleanCell('channels_last', str('channels_last')) ?? null,
    stepTimeMs: num('step_time_ms') ?? NaN,
    peakMemoryGb: num('peak_memory_gb') ?? null,
    source: str('source') || 'harness',
    note: str('note') || null,
  };
}

/**
 * The harness's note says how many weights the timed network trained ("parameters N"). A zoo model
 * or layer list with another count is another network: a torchvision build that is not the zoo's
 * (measure.py before it checked them timed torchvision's ResNeXt-101 32x8d, twice the weights, as
 * resnext101_32x4d), or a script of someone's own. Its step time would calibrate the wrong model,
 * so the row is refused. Allowed: 0.5% (tf_cnn_benchmarks' 1001-class heads are 0.02% apart).
 * A Hugging Face config is checked the same way: the importer reads it with transformers' defaults
 * and builds the class transformers builds (test/harness-transformers.test.ts compares the two on every
 * supported model_type; they differ by at most a few norms and gates, well under 0.5%), so another
 * count means the run timed another config.
 */
function checkTrainedWeights(note: string, model: string, custom: CustomModel, seqLen?: number) {
  const stated = /\bparameters (\d+)\b/.exec(note);
  if (!stated) return;
  const def =
    custom === undefined
      ? getModel(model, seqLen === undefined ? undefined : { seqLenOrImageSize: seqLen })
      : 'layers' in custom
        ? fromLayerList(custom.layers, { field: 'model' }).model
        : parseHuggingFaceConfig(custom.huggingFaceConfig, { field: 'model', seqLen, seqLenField: 'seq_len' })
            .model;
  if (!def) return; // not a zoo id: recordRuns refuses it with its own reason
  const trained = Number(stated[1]),
    expected = costOf(def).parameters;
  if (Math.abs(trained / expected - 1) > 0.005)
    throw new Error(
      `note: the run trained ${trained.toLocaleString('en-US')} weights, but ${model} has ${expected.toLocaleString('en-US')}: it timed another network (time it again with the measure.py this trainplan writes: trainplan harness)`,
    );
}

export function readRunsFile(path: string): Record<string, unknown>[] {
  const text = readFileSync(path, 'utf8');
  if (extname(path).toLowerCase() === '.json' || /^\s*\[/.test(text)) {
    const data = JSON.parse(text) as unknown;
    if (!Array.isArray(data)) throw new Error(`${path}: expected a JSON list of runs`);
    return data as Record<string, unknown>[];
  }
  return parseCsv(text);
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
  const runs: RunInput[] = [];
  const at: number[] = [];
  const problems: { index: number; reason: string }[] = [];
  rows.forEach((row, i) => {
    try {
      runs.push(runFromRow(row, dirname(resolve(file))));
      at.push(i);
    } catch (e) {
      problems.push({ index: i, reason: e instanceof Error ? e.message : String(e) });
    }
  });
  const result = await recordRuns(runs, values.owner!);
  await closeMeasurementStore();
  for (const r of result.rejected) problems.push({ index: at[r.index], reason: r.reason });
  const where = runtimeConfig().databaseUrl ? 'PostgreSQL (DATABASE_URL)' : runtimeConfig().dataDir;
  console.log(
    `stored ${result.stored} of ${rows.length} runs in ${where}${result.ids.length ? ` (ids ${result.ids.join(', ')})` : ''}`,
  );
  for (const p of problems.sort((a, b) => a.index - b.index))
    console.log(`  row ${p.index + 1}: rejected: ${p.reason}`);
  if (problems.length) process.exitCode = 1;
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
