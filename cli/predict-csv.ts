// `trainplan predict-csv`: a CSV of configurations (train.csv's layout, or only model, gpu, num_gpus,
// batch_size_per_gpu, precision) -> the same rows with predictions appended. A row it cannot
// predict is written with the reason in `error`, never dropped.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { csvCell, getGpu, loadEfficiency, measurementFromRow, parseCsv } from '../seeds/catalog.js';
import { predictRow, type RowPrediction } from '../predictor/measured.js';
import { PRECISIONS } from '../predictor/types.js';
import { correctRows } from '../predictor/corrected.js';
import { utilizationAt } from '../predictor/predict.js';
import { learnedPredictor } from '../predictor/learned/model.js';
import type { Progress } from './progress.js';

export const PREDICTED_COLUMNS = [
  'predicted_throughput',
  'predicted_step_time_s',
  'predicted_step_time_p10_s',
  'predicted_step_time_p90_s',
  'predicted_forward_s',
  'predicted_backward_s',
  'predicted_optimizer_s',
  'predicted_communication_s',
  'analytical_throughput',
  'predicted_mfu',
  'predicted_memory_gb_per_gpu',
  'fits_in_memory',
  'predictor',
  'evidence',
  'error',
];

/** The columns a row needs; the rest of train.csv's layout is optional. */
export const REQUIRED_COLUMNS = ['model', 'gpu', 'num_gpus', 'batch_size_per_gpu', 'precision'];

export class CsvLayoutError extends Error {}

export function readRows(path: string): Record<string, string>[] {
  const rows = parseCsv(readFileSync(path, 'utf8'));
  const columns = new Set(rows.length ? Object.keys(rows[0]) : []);
  const missing = REQUIRED_COLUMNS.filter((c) => !columns.has(c));
  if (rows.length && missing.length)
    throw new CsvLayoutError(
      `${path}: missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (needed: ${REQUIRED_COLUMNS.join(', ')})`,
    );
  return rows;
}

export async function predictCsv(
  inPath: string,
  outPath: string,
  progress: (rows: number) => Progress,
): Promise<{ rows: number; predicted: number }> {
  const raw = readRows(inPath);
  const inputColumns = raw.length ? Object.keys(raw[0]) : [];
  const columns = [...inputColumns.filter((c) => !PREDICTED_COLUMNS.includes(c)), ...PREDICTED_COLUMNS];
  const bar = progress(raw.length);
  const efficiency = loadEfficiency();
  // A model cell is a zoo id or a path (relative to the CSV's folder) to a config.json, .onnx or layer-list file.
  const predictions = raw.map((r, i): RowPrediction => {
    bar.update(i + 1);
    const row = measurementFromRow(r);
    // The catalog reads an unknown precision cell as FP32; a user's row must not be predicted as such.
    if (!(PRECISIONS as readonly string[]).includes(r.precision))
      return { row, error: `unknown precision "${r.precision}"; allowed: ${PRECISIONS.join(', ')}` };
    return predictRow(row, efficiency, { baseDir: dirname(inPath) });
  });
  bar.finish();
  // The learned correction scales the analytical step (and every part of it) by one factor per row.
  const learned = await learnedPredictor();
  const corrections = await correctRows(predictions, learned);
  let predicted = 0;
  const lines = [columns.join(',')];
  raw.forEach((r, i) => {
    const p = predictions[i];
    const k = corrections[i];
    const b = p.prediction?.breakdown;
    const s = (ms: number | undefined, f = k.scale) => (ms === undefined ? undefined : (ms * f) / 1e3);
    // MFU at the corrected step time (predictor/utilization.ts); empty without a peak for its math.
    const mfu = p.prediction
      ? utilizationAt(p.prediction, getGpu(p.row.gpu)!, p.prediction.stepTimeMs * k.scale).mfu
      : undefined;
    const out: Record<string, unknown> = {
      ...r,
      predicted_throughput: p.predictedThroughput === undefined ? undefined : p.predictedThroughput / k.scale,
      predicted_step_time_s: s(p.prediction?.stepTimeMs),
      predicted_step_time_p10_s: s(p.prediction?.stepTimeMs, k.lo),
      predicted_step_time_p90_s: s(p.prediction?.stepTimeMs, k.hi),
      predicted_forward_s: s(b?.forwardMs),
      predicted_backward_s: s(b?.backwardMs),
      predicted_optimizer_s: b && s(b.optimizerMs + b.mixedPrecisionMs),
      predicted_communication_s: s(b?.communicationMs),
      analytical_throughput: p.predictedThroughput,
      predicted_mfu: mfu ?? undefined,
      predicted_memory_gb_per_gpu: p.prediction?.memory.totalGb,
      fits_in_memory: p.prediction ? String(p.prediction.fitsInMemory) : undefined,
      predictor: p.prediction ? (learned.predictor ? learned.predictor.name : 'analytical') : '',
      evidence: p.prediction ? k.evidence : '',
      error: p.error ?? '',
    };
    if (!p.error) predicted++;
    lines.push(columns.map((c) => csvCell(out[c])).join(','));
  });
  writeFileSync(outPath, lines.join('\n') + '\n');
  return { rows: raw.length, predicted };
}
