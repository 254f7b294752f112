// Measurement rows (train.csv layout) -> predictions in the row's own unit. Used by predict-csv,
// evaluate and calibrate, so the three read a row the same way.
import { readFileSync } from 'node:fs';
import type { Measurement } from '../seeds/catalog.js';
import { defaultInterNodeGbps, getGpu } from '../seeds/catalog.js';
import { predict, type Prediction } from './predict.js';
import type { Efficiency } from './step.js';
import type { ModelDef } from './types.js';
import { getModel } from './zoo/index.js';

interface UnitRule { model: string; unit: string; factor: number; why: string }
interface UnitsFile { rules: UnitRule[] }
let units: UnitsFile | undefined;
const unitRules = () => (units ??= JSON.parse(readFileSync(new URL('../seeds/units.json', import.meta.url), 'utf8')) as UnitsFile);

/** The unit label without the source's parenthesised comment: "sequences/s (SQuAD ...)" -> "sequences/s". */
export const baseUnit = (u: string) => u.replace(/\s*\(.*$/, '').trim();

/**
 * Factor from the model's throughput unit to the row's unit, or a reason it is unknown.
 * Same unit: 1. Otherwise seeds/units.json must say (e.g. NCF's "million samples/s": 1e-6).
 */
export function unitFactor(model: ModelDef, rowUnit: string): number | string {
  const rule = unitRules().rules.find((r) => r.model === model.id && (r.unit === rowUnit || r.unit === baseUnit(rowUnit)));
  if (rule) return rule.factor;
  if (baseUnit(rowUnit) === model.throughputUnit) return 1;
  return `row unit "${rowUnit}" is not ${model.id}'s unit (${model.throughputUnit}) and seeds/units.json has no conversion`;
}

export interface RowPrediction {
  row: Measurement;
  prediction?: Prediction;
  /** Predicted throughput in the row's unit, total over all GPUs. */
  predictedThroughput?: number;
  error?: string;
}

export function predictRow(row: Measurement, eff?: Efficiency): RowPrediction {
  const gpu = getGpu(row.gpu);
  if (!gpu) return { row, error: `unknown gpu "${row.gpu}"` };
  try {
    const seqOrImage = row.seqLenOrImageSize ?? undefined;
    const model = getModel(row.model, seqOrImage === undefined ? undefined : { seqLenOrImageSize: seqOrImage });
    if (!model) return { row, error: `model "${row.model}" is not in the zoo` };
    const factor = unitFactor(model, row.throughputUnit);
    if (typeof factor === 'string') return { row, error: factor };
    const accum = row.gradAccumSteps ?? 1;
    // Rows without a batch size get the model's first typical one (the prediction is then per
    // sample at that batch). Rows flagged batch_col_is_accumulated_batch_per_gpu print the batch
    // accumulated over grad_accum_steps micro-batches (e.g. BERT pre-training 8192 = 64 x 128).
    const printed = row.batchSizePerGpu ?? model.batchSizes[0];
    const batch = row.flags.includes('batch_col_is_accumulated_batch_per_gpu') && accum > 1 ? Math.max(1, Math.round(printed / accum)) : printed;
    const prediction = predict({
      model, gpu, precision: row.precision, batchSizePerGpu: batch, gpusPerNode: row.gpusPerNode, nodes: row.numNodes,
      gradAccumSteps: accum,
      // FP32 rows measured on TF32-capable GPUs under NGC/TF defaults are flagged: they ran TF32 math.
      fp32UsesTf32: row.flags.includes('fp32_on_tf32_capable_gpu'),
      interNodeGbps: defaultInterNodeGbps(gpu.id),
    }, eff);
    return { row, prediction, predictedThroughput: prediction.throughput * factor };
  } catch (e) {
    return { row, error: e instanceof Error ? e.message : String(e) };
  }
}

export const ape = (predicted: number, measured: number) => Math.abs(predicted - measured) / measured;
