// Measurement rows (train.csv layout) -> predictions in the row's own unit. Used by predict-csv,
// evaluate and calibrate, so the three read a row the same way.
import type { Measurement } from '../seeds/catalog.js';
import { booleanCell, defaultInterNodeGbps, getGpu, loadUnitRules } from '../seeds/catalog.js';
import { predict, type Prediction } from './predict.js';
import { frameworkChannelsLast } from './software.js';
import type { Efficiency } from './step.js';
import type { ModelDef } from './types.js';
import { ATTENTION_IMPLEMENTATIONS, type AttentionImplementation } from '../seeds/types.js';
import { getModel, type ZooOverrides } from './zoo/index.js';
import { customUnitFactor, loadModelFile, looksLikeModelFile } from './import/index.js';
import {
  MASTER_WEIGHTS,
  OPTIMIZER_STATES,
  RECOMPUTE,
  type Parallelism,
  type RecomputeModule,
  type ZeroStage,
} from './parallel.js';
import { isAbsolute, resolve } from 'node:path';

/** The unit label without the source's parenthesised comment: "sequences/s (SQuAD ...)" -> "sequences/s". */
export const baseUnit = (u: string) => u.replace(/\s*\(.*$/, '').trim();

/**
 * Factor from the model's throughput unit to the row's unit, or a reason it is unknown.
 * Same unit: 1. Otherwise seeds/units.json must say (e.g. NCF's "million samples/s": 1e-6).
 */
export function unitFactor(model: ModelDef, rowUnit: string): number | string {
  const rule = loadUnitRules().find(
    (r) => r.model === model.id && (r.unit === rowUnit || r.unit === baseUnit(rowUnit)),
  );
  if (rule) return rule.factor;
  if (baseUnit(rowUnit) === model.throughputUnit) return 1;
  return `row unit "${rowUnit}" is not ${model.id}'s unit (${model.throughputUnit}) and seeds/units.json has no conversion`;
}

export interface RowPrediction {
  row: Measurement;
  /** The zoo model at the row's sequence length / image size. */
  model?: ModelDef;
  prediction?: Prediction;
  /** Predicted throughput in the row's unit, total over all GPUs. */
  predictedThroughput?: number;
  error?: string;
}

/**
 * How a row's zoo model is built: at the row's sequence length / image size, and as the row's
 * source ran it (seeds/measurements/as-run.json: its length where the row states none, its arch).
 */
function zooOverridesOf(row: Measurement): ZooOverrides | undefined {
  const seqLenOrImageSize = row.seqLenOrImageSize ?? row.asRun?.seqLen;
  const arch = row.asRun?.arch;
  if (seqLenOrImageSize === undefined && !arch) return undefined;
  return { ...(seqLenOrImageSize !== undefined ? { seqLenOrImageSize } : {}), ...(arch ? { arch } : {}) };
}

/** A row's zoo model as its source ran it (undefined when the row's model is not a zoo id). */
export const zooModelOf = (row: Measurement): ModelDef | undefined =>
  getModel(row.model, zooOverridesOf(row));

/**
 * A row's model: a zoo id, or (predict-csv) a path to a Hugging Face config.json, an .onnx graph or a
 * layer-list .json, relative to `baseDir` (the CSV's folder), at the row's seq_len_or_image_size.
 */
function rowModel(
  row: Measurement,
  baseDir: string | undefined,
): { model?: ModelDef; custom: boolean; error?: string } {
  const seqOrImage = row.seqLenOrImageSize ?? undefined;
  const zoo = zooModelOf(row);
  if (zoo || !looksLikeModelFile(row.model))
    return zoo
      ? { model: zoo, custom: false }
      : {
          custom: false,
          error: `model "${row.model}" is not in the zoo (nor a path to a config.json, .onnx or layer-list file)`,
        };
  const path = isAbsolute(row.model) || !baseDir ? row.model : resolve(baseDir, row.model);
  return {
    model: loadModelFile(path, {
      seqLen: seqOrImage,
      field: 'model',
      seqLenField: 'seq_len_or_image_size',
      name: row.model,
    }).model,
    custom: true,
  };
}

/**
 * Optional predict-csv columns tensor_parallel, pipeline_parallel, zero_stage, recompute
 * (none/selective/full), recompute_modules (under selective: `;`-separated, e.g. layernorm;moe_act),
 * expert_parallel (mixture-of-experts models), optimizer_state (fp32/bf16: Adam's moments) and
 * master_weights (fp32/remainders/bf16/none); predict checks each value against the model and mode.
 */
function rowParallelism(row: Measurement): Parallelism | undefined {
  const r = row.raw ?? {};
  const int = (k: string) => (r[k] === undefined || r[k] === '' ? undefined : Number(r[k]));
  const t = int('tensor_parallel'),
    p = int('pipeline_parallel'),
    z = int('zero_stage'),
    ep = int('expert_parallel');
  /** A cell naming one of `names` (lower case), or '' when empty; anything else is refused, naming the column. */
  const oneOf = <N extends string>(column: string, names: readonly N[]): N | '' => {
    const v = (r[column] ?? '').trim().toLowerCase();
    if (v && !(names as readonly string[]).includes(v))
      throw new Error(`${column} must be one of ${names.join(', ')} (got "${v}")`);
    return v as N | '';
  };
  const rc = oneOf('recompute', RECOMPUTE);
  // Megatron's names, lower case; an empty cell is no list (predict checks names, repeats, the mode).
  const modules = (r.recompute_modules ?? '').trim()
    ? r.recompute_modules.split(';').map((m) => m.trim().toLowerCase() as RecomputeModule)
    : undefined;
  const moments = oneOf('optimizer_state', OPTIMIZER_STATES),
    master = oneOf('master_weights', MASTER_WEIGHTS);
  if (
    t === undefined &&
    p === undefined &&
    z === undefined &&
    ep === undefined &&
    !rc &&
    !modules &&
    !moments &&
    !master
  )
    return undefined;
  return {
    tensorParallel: t ?? 1,
    pipelineParallel: p ?? 1,
    zeroStage: (z ?? 0) as ZeroStage,
    recompute: rc || 'none',
    ...(modules ? { recomputeModules: modules } : {}),
    ...(ep !== undefined ? { expertParallel: ep } : {}),
    ...(moments ? { optimizerState: moments } : {}),
    ...(master ? { masterWeights: master } : {}),
  };
}

/**
 * Whether a row's code stored convolution activations channels-last (NHWC) in 16-bit runs: its
 * optional channels_last column (predict-csv: true or false), else what its source's scripts asked
 * for (as-run.json), else what its framework does (software.ts frameworkChannelsLast); undefined
 * where nothing says, and the stack's layout holds.
 */
function channelsLastOf(row: Measurement): boolean | undefined {
  return (
    booleanCell('channels_last', row.raw?.channels_last) ??
    row.asRun?.channelsLast ??
    frameworkChannelsLast(row.framework)
  );
}

/**
 * How a row's code ran attention: its optional attention column (predict-csv: fused or eager);
 * undefined leaves the model's code's (ModelDef.attention, then fused).
 */
function attentionOf(row: Measurement): AttentionImplementation | undefined {
  const cell = (row.raw?.attention ?? '').trim().toLowerCase();
  if (!cell) return undefined;
  if (!(ATTENTION_IMPLEMENTATIONS as readonly string[]).includes(cell))
    throw new Error(`attention must be one of ${ATTENTION_IMPLEMENTATIONS.join(', ')} (got "${cell}")`);
  return cell as AttentionImplementation;
}

export function predictRow(
  row: Measurement,
  eff: Efficiency,
  opts: { baseDir?: string } = {},
): RowPrediction {
  const gpu = getGpu(row.gpu);
  if (!gpu) return { row, error: `unknown gpu "${row.gpu}"` };
  try {
    const found = rowModel(row, opts.baseDir);
    if (!found.model) return { row, error: found.error };
    const model = found.model;
    // A CSV without throughput_unit (predict-csv's minimal columns) is in the model's own unit.
    const unit = row.throughputUnit || model.throughputUnit;
    const factor = found.custom ? customUnitFactor(model, unit) : unitFactor(model, unit);
    if (typeof factor === 'string') return { row, error: factor };
    const accum = row.gradAccumSteps ?? 1;
    // Rows without a batch size get the model's first typical one (the prediction is then per
    // sample at that batch). Rows flagged batch_col_is_accumulated_batch_per_gpu print the batch
    // accumulated over grad_accum_steps micro-batches (e.g. BERT pre-training 8192 = 64 x 128).
    const printed = row.batchSizePerGpu ?? model.batchSizes[0];
    const flags = row.flags ?? ''; // a CSV may leave the column out
    const batch =
      flags.includes('batch_col_is_accumulated_batch_per_gpu') && accum > 1
        ? Math.max(1, Math.round(printed / accum))
        : printed;
    // Independent one-GPU trainings side by side (as-run.json): one GPU's step, times the GPUs.
    const replicas = row.asRun?.independentProcesses ? row.numGpus : 1;
    const channelsLast = channelsLastOf(row);
    const attention = attentionOf(row);
    const prediction = predict(
      {
        model,
        gpu,
        precision: row.precision,
        batchSizePerGpu: batch,
        gpusPerNode: replicas > 1 ? 1 : row.gpusPerNode,
        nodes: replicas > 1 ? 1 : row.numNodes,
        gradAccumSteps: accum,
        // FP32 rows measured on TF32-capable GPUs under NGC/TF defaults are flagged: they ran TF32 math.
        fp32UsesTf32: flags.includes('fp32_on_tf32_capable_gpu'),
        interNodeGbps: defaultInterNodeGbps(gpu.id),
        parallelism: rowParallelism(row),
        ...(channelsLast !== undefined ? { channelsLast } : {}),
        ...(attention ? { attention } : {}),
      },
      eff,
    );
    return { row, model, prediction, predictedThroughput: prediction.throughput * factor * replicas };
  } catch (e) {
    return { row, error: e instanceof Error ? e.message : String(e) };
  }
}

export const ape = (predicted: number, measured: number) => Math.abs(predicted - measured) / measured;
