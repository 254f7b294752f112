// Users' measured runs as rows (the harness's CSV or JSON, or MeasurementInput objects) -> runs the
// store checks and keeps (service/measurements.ts): the one reading of that layout, for
// `trainplan calibrate import FILE` and the importMeasurements mutation (the calibration page).
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { booleanCell, parseCsv } from '../seeds/catalog.js';
import { FRAMEWORKS, type Framework } from '../predictor/learned/features.js';
import { PRECISIONS, type Precision } from '../predictor/types.js';
import { RECOMPUTE, type GpuSpec, type NetworkTransport, type Recompute } from '../seeds/types.js';
import type { RecordedCapacity } from '../predictor/memory-calibration.js';
import { catalogGpuForDevice } from './device-names.js';
import { checkOwner, recordRuns, RUN_LIMITS, type RecordResult, type RunInput } from './measurements.js';
import { InputError } from './validate.js';
import { costOf } from '../predictor/predict.js';
import { parallelStructure, parametersPerGpu, PLAIN, type Parallelism } from '../predictor/parallel.js';
import { getModel } from '../predictor/zoo/index.js';
import { fromLayerList, parseHuggingFaceConfig } from '../predictor/import/index.js';

/**
 * A run's attention as a file writes it: the API's FUSED or EAGER (the harness's column), in either
 * case; empty says nothing. Anything else is left for the store's check to name.
 */
const attentionCell = (v: unknown): string | null =>
  typeof v === 'string' && v.trim() ? v.trim().toLowerCase() : null;

/**
 * A MeasurementInput object in a runs file, with the defaults the GraphQL input type gives the
 * fields it leaves out (nodes, GPUs per node and accumulation 1, PyTorch, TF32 allowed) and its
 * framework and attention read by either name (the API's PYTORCH and EAGER, or the measurements'
 * PyTorch and the predictor's eager).
 */
function measurementInputOf(row: Record<string, unknown>): RunInput {
  const framework = row.framework ?? 'PyTorch';
  const named = FRAMEWORKS.find(
    (f) => typeof framework === 'string' && f.toUpperCase() === framework.toUpperCase(),
  );
  return {
    nodes: 1,
    gpusPerNode: 1,
    gradAccumSteps: 1,
    xla: false,
    fp32UsesTf32: true,
    ...row,
    framework: (named ?? framework) as Framework,
    ...(row.attention != null ? { attention: attentionCell(row.attention) ?? row.attention } : {}),
  } as unknown as RunInput;
}

/**
 * What CUDA gave a harness row's process on its GPU, GiB: its `gpu_memory_gb` column, else the note
 * a harness before that column wrote it in ("...; gpu_memory_gb 79.2; driver ..."); undefined where
 * neither says (a CPU run, someone's own script). A cell that is not a number is returned as NaN
 * for the store's check to name.
 */
export function reportedGpuMemoryGb(row: Record<string, unknown>): number | undefined {
  const cell = row.gpu_memory_gb == null ? '' : String(row.gpu_memory_gb).trim();
  if (cell !== '') return Number(cell);
  const noted =
    typeof row.note === 'string' ? /(?:^|; )gpu_memory_gb (\d+(?:\.\d+)?)(?:;|$)/.exec(row.note) : null;
  return noted ? Number(noted[1]) : undefined;
}

/** A run's model when it is a file: a layer list or a Hugging Face config's text. */
type CustomModel =
  | { layers: unknown; name: string; optimizer?: unknown }
  | { huggingFaceConfig: string; name: string }
  | undefined;

/** One row of the harness's layout -> a run, or why it cannot be one. */
export function runFromRow(row: Record<string, unknown>, baseDir?: string): RunInput {
  if ('workload' in row) return measurementInputOf(row); // already a MeasurementInput
  const str = (k: string) => (row[k] === undefined || row[k] === null ? '' : String(row[k]).trim());
  const num = (k: string) => (str(k) === '' ? undefined : Number(str(k)));
  const model = str('model');
  if (!model) throw new Error('model: missing');
  const looksLikeFile = /\.(json|onnx)$/i.test(model);
  // The model file a run trained, as the run's customModel: what its weights are checked against.
  let customModel: CustomModel;
  if (looksLikeFile) {
    // Only a file beside the runs file: a server never reads a path a request names.
    if (baseDir === undefined)
      throw new Error(
        `model: "${model}" is a file, which only \`trainplan calibrate import FILE\` reads (beside FILE); here give a zoo id`,
      );
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
  const gpuMemoryGb = reportedGpuMemoryGb(row);
  const resolved = catalogGpuForDevice(gpu, Number.isFinite(gpuMemoryGb) ? gpuMemoryGb : undefined);
  if ('gpu' in resolved) gpu = resolved.gpu.id;
  else if (resolved.candidates.length)
    throw new Error(
      `gpu: "${gpu}" could be ${resolved.candidates.join(' or ')}; give the catalog id (measure.py --gpu ID)`,
    );
  const precision = str('precision');
  if (!(PRECISIONS as readonly string[]).includes(precision))
    throw new Error(`precision: "${precision}" is not one of ${PRECISIONS.join(', ')}`);
  // The harness's tensor, pipeline, expert and context parallelism and its model chunks per stage
  // (interleaved; empty: 1): the run's ranks each trained their share (context parallelism splits
  // the sequences, not the weights).
  const split = (column: string) => {
    const v = str(column) || '1';
    if (!/^[1-9]\d*$/.test(v)) throw new Error(`${column}: "${v}" is not a whole number of GPUs, 1 or more`);
    return v;
  };
  const tensorParallel = split('tensor_parallel'),
    pipelineParallel = split('pipeline_parallel'),
    virtualStages = split('virtual_pipeline_stages'),
    expertParallel = split('expert_parallel'),
    contextParallel = split('context_parallel');
  checkTrainedWeights(str('note'), model, customModel, num('seq_len'), {
    ...PLAIN,
    tensorParallel: Number(tensorParallel),
    expertParallel: Number(expertParallel),
  });
  const framework = str('framework') || 'PyTorch';
  if (!(FRAMEWORKS as readonly string[]).includes(framework))
    throw new Error(`framework: "${framework}" is not one of ${FRAMEWORKS.join(', ')}`);
  // The harness's recomputation (empty: none) and ZeRO stage (empty: 0); its runs are otherwise
  // data parallelism, with tensor and pipeline parallelism (above; the pipeline's micro-batches
  // are the accumulation steps, as the predictor takes them by default).
  const recompute = str('recompute') || 'none';
  if (!(RECOMPUTE as readonly string[]).includes(recompute))
    throw new Error(`recompute: "${recompute}" is not one of ${RECOMPUTE.join(', ')}`);
  const zeroStage = str('zero_stage') || '0';
  if (!['0', '1', '2', '3'].includes(zeroStage))
    throw new Error(`zero_stage: "${zeroStage}" is not one of 0, 1, 2, 3`);
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
    // How the attention cores ran (the harness says FUSED or EAGER; empty: predict's default).
    attention: attentionCell(str('attention')) as RunInput['attention'],
    ...(recompute !== 'none' ||
    zeroStage !== '0' ||
    tensorParallel !== '1' ||
    pipelineParallel !== '1' ||
    expertParallel !== '1' ||
    contextParallel !== '1'
      ? {
          parallelism: {
            tensorParallel: Number(tensorParallel),
            pipelineParallel: Number(pipelineParallel),
            ...(virtualStages !== '1' ? { virtualPipelineStages: Number(virtualStages) } : {}),
            ...(expertParallel !== '1' ? { expertParallel: Number(expertParallel) } : {}),
            ...(contextParallel !== '1' ? { contextParallel: Number(contextParallel) } : {}),
            zeroStage: Number(zeroStage),
            recompute: recompute as Recompute,
          },
        }
      : {}),
    stepTimeMs: num('step_time_ms') ?? NaN,
    peakMemoryGb: num('peak_memory_gb') ?? null,
    gpuMemoryGb: gpuMemoryGb ?? null,
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
function checkTrainedWeights(
  note: string,
  model: string,
  custom: CustomModel,
  seqLen: number | undefined,
  split: Parallelism,
) {
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
    cost = costOf(def);
  // Under tensor and expert parallelism each rank trained its share (measure.py keeps the norms and
  // the row-parallel biases whole, as Megatron does: a few hundredths of a percent more). Under
  // pipeline parallelism the note counts a rank's share over every stage of its pipeline: the same
  // figure, which `split` (pipeline left out) gives.
  const expected = parametersPerGpu(cost, parallelStructure(cost, def.layers), split);
  const per = [
    split.tensorParallel > 1 ? `tensor parallelism ${split.tensorParallel}` : '',
    (split.expertParallel ?? 1) > 1 ? `expert parallelism ${split.expertParallel}` : '',
  ].filter(Boolean);
  if (Math.abs(trained / expected - 1) > 0.005)
    throw new Error(
      `note: the run trained ${trained.toLocaleString('en-US')} weights, but ${model} has ${Math.round(expected).toLocaleString('en-US')}${per.length ? ` per GPU at ${per.join(' and ')}` : ''}: it timed another network (time it again with the measure.py this trainplan writes: trainplan harness)`,
    );
}

/** A runs file's text: a JSON list (of harness rows or MeasurementInput objects), else the harness's CSV. */
export function parseRunsText(
  raw: string,
  name = 'runs',
  json = /^\s*[[{]/.test(raw),
): Record<string, unknown>[] {
  // A spreadsheet that saved the CSV (Excel's "CSV UTF-8") starts it with a byte-order mark, which
  // would otherwise be part of the first column's name ("model: missing" on every row).
  const text = raw.replace(/^\uFEFF/, '');
  if (json) {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (e) {
      throw new Error(`${name}: not JSON (${e instanceof Error ? e.message : String(e)})`, { cause: e });
    }
    if (!Array.isArray(data)) throw new Error(`${name}: expected a JSON list of runs`);
    return data as Record<string, unknown>[];
  }
  return parseCsv(text);
}

/** What recording rows did; `rejected` indexes are the rows' (0-based), whichever check refused them. */
export type ImportResult = RecordResult;

/**
 * Rows -> the store: each row read (runFromRow) and checked (recordRuns); a row refused at either
 * step is listed with its reason and nothing of it is stored. `baseDir`: where a row's model file
 * is read from (the runs file's folder); without it a row naming a file is refused.
 */
export async function importRuns(
  rows: Record<string, unknown>[],
  owner: string,
  baseDir?: string,
): Promise<ImportResult> {
  const runs: RunInput[] = [];
  const at: number[] = [];
  const rejected: ImportResult['rejected'] = [];
  rows.forEach((row, i) => {
    try {
      runs.push(runFromRow(row, baseDir));
      at.push(i);
    } catch (e) {
      rejected.push({ index: i, reason: e instanceof Error ? e.message : String(e) });
    }
  });
  const result = await recordRuns(runs, owner);
  for (const r of result.rejected) rejected.push({ index: at[r.index], reason: r.reason });
  return { ...result, rejected: rejected.sort((a, b) => a.index - b.index) };
}

/**
 * What `trainplan calibrate import` says of a GPU its runs reported memory for: plans on it are fitted
 * from now on in the least CUDA gave a stored run's process there (memory-calibration.ts
 * withRecordedCapacity), against what the catalog fitted them in.
 */
export function capacityLine(
  catalog: Pick<GpuSpec, 'id' | 'memoryGb' | 'usableMemoryGb'>,
  recorded: RecordedCapacity,
): string {
  const runs = recorded.runs === 1 ? 'your stored run' : `your ${recorded.runs} stored runs`;
  const was =
    catalog.usableMemoryGb === catalog.memoryGb
      ? `${catalog.memoryGb.toFixed(2)}, its label: no source gives CUDA's total`
      : `${catalog.usableMemoryGb.toFixed(2)}, CUDA's total from a public capture (Gpu.usableMemorySource)`;
  return `  ${catalog.id}: plans fitted in ${recorded.gb.toFixed(2)} GiB, the least CUDA gave a process of ${runs} on it (the catalog's: ${was})`;
}

/**
 * Longest runs text the API reads (a request's body is also bounded: the server's --max-body-bytes,
 * default 1,000,000): 1,000 rows of the harness's CSV, notes included, are about 400,000 characters.
 */
export const RUNS_TEXT_LIMIT = 1_000_000;

/** A runs file's text as a request gives it (the calibration page): parsed, read and recorded; no file is read. */
export async function importRunsText(text: string, owner: string): Promise<ImportResult> {
  if (text.length > RUNS_TEXT_LIMIT)
    throw new InputError(
      'text',
      `at most ${RUNS_TEXT_LIMIT.toLocaleString('en-US')} characters (got ${text.length.toLocaleString('en-US')})`,
    );
  let rows: Record<string, unknown>[];
  try {
    rows = parseRunsText(text, 'text');
  } catch (e) {
    throw new InputError('text', e instanceof Error ? e.message.replace(/^text: /, '') : String(e));
  }
  if (rows.length === 0)
    throw new InputError(
      'text',
      "no runs: give the harness's CSV (a header line and a row per run) or a JSON list of runs",
    );
  if (rows.length > RUN_LIMITS.runsPerCall)
    throw new InputError('text', `at most ${RUN_LIMITS.runsPerCall} runs per call (got ${rows.length})`);
  return importRuns(rows, checkOwner(owner));
}
