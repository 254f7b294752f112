// The shape of one seeds/models.json entry. Numbers that come from papers and reference
// implementations live in the JSON; builders only interpret them.
import type { Layer, OptimizerKind, SampleUnit } from '../types.js';

export interface ZooEntry {
  id: string;
  name: string;
  /** Which builder reads `arch` (see BUILDERS in index.ts). */
  family: string;
  batchElement: SampleUnit;
  throughputUnit: string;
  /** A number, or "seqLen" when one batch element is a sequence and the unit counts its tokens. */
  unitsPerBatchElement: number | 'seqLen';
  seqLen?: number;
  imageSize?: number;
  optimizer: OptimizerKind;
  batchSizes: number[];
  source: string;
  /** Approximations and unit decisions, kept next to the numbers they qualify. */
  notes?: string[];
  /** The builder's hyper-parameters, in the builder's own shape. */
  arch: Record<string, unknown>;
}

export type Builder = (entry: ZooEntry) => Layer[];

/**
 * The entry's `arch` as the builder's type, after checking the required keys are there: a typo
 * in models.json should fail loudly at load, not build a model with NaN layers.
 */
export function archOf<T>(entry: ZooEntry, required: readonly (keyof T & string)[]): T {
  const missing = required.filter((k) => entry.arch[k] === undefined);
  if (missing.length) throw new Error(`models.json ${entry.id}: arch lacks ${missing.join(', ')}`);
  return entry.arch as T;
}

export function seqLenOf(entry: ZooEntry): number {
  if (!entry.seqLen) throw new Error(`models.json ${entry.id}: seqLen is required by family ${entry.family}`);
  return entry.seqLen;
}

export function imageSizeOf(entry: ZooEntry): number {
  if (!entry.imageSize)
    throw new Error(`models.json ${entry.id}: imageSize is required by family ${entry.family}`);
  return entry.imageSize;
}
